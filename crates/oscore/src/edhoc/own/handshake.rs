//! The handshake (RFC 9528 §5): the Initiator and the Responder as states that consume the
//! peer's message and answer the next, and the completed session that exports the OSCORE
//! context (Appendix A.1) and runs EDHOC-KeyUpdate (Appendix H).
use alloc::format;
use alloc::string::ToString;
use alloc::vec::Vec;
use core::fmt;

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use super::cbor::{self, Reader};
use super::credential::{kid_of, kind_for};
use super::schedule::{self, Prk, Th};
use super::{messages, refuse, suites, Credential, EdhocSuite, Error, Identity, Method};
use crate::edhoc::Role;
use crate::{Algorithm, SecurityContext, SecurityParams};

/// What both sides of a handshake are configured with.
#[derive(Clone, Copy, Debug)]
pub struct Params<'a> {
    /// The cipher suite.
    pub suite: EdhocSuite,
    /// The method.
    pub method: Method,
    /// This endpoint's identity.
    pub own: &'a Identity,
    /// The credential the peer must authenticate with.
    pub peer: &'a Credential,
}

impl Params<'_> {
    fn check(&self) -> Result<(), Error> {
        check_kind(self.suite, self.method, "own", &self.own.cred)?;
        check_kind(self.suite, self.method, "peer's", self.peer)
    }
}

/// Refuse a credential whose key does not fit the suite and method (`who` names it).
fn check_kind(suite: EdhocSuite, method: Method, who: &str, c: &Credential) -> Result<(), Error> {
    let kind = kind_for(suite, method)?;
    if c.kind != kind {
        return Err(Error::new(
            "credential",
            format!(
                "the {who} credential holds a {:?} key; method {} with {suite} needs {kind:?}",
                c.kind,
                method.id()
            ),
        ));
    }
    Ok(())
}

/// A fresh ephemeral private key from the operating system, valid on the suite's curve.
#[cfg(feature = "std")]
fn ephemeral(suite: EdhocSuite) -> Result<Zeroizing<[u8; 32]>, Error> {
    use rand_core::RngCore;
    for _ in 0..8 {
        let mut k = Zeroizing::new([0u8; 32]);
        rand_core::OsRng.try_fill_bytes(&mut *k).map_err(|_| Error::new("message_1", "no random numbers"))?;
        // Any 32 bytes are an X25519 key; a P-256 one must be a scalar 1..n-1 (checked without
        // the scalar multiplication the public key costs).
        if suite == EdhocSuite::Suite0 || p256::SecretKey::from_bytes(&(*k).into()).is_ok() {
            return Ok(k);
        }
    }
    Err(Error::new("message_1", "no valid ephemeral key drawn"))
}

fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

fn id_enc(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 1);
    cbor::put_id(&mut out, raw);
    out
}

/// An Initiator that sent message_1 and waits for message_2.
pub struct Initiator {
    suite: EdhocSuite,
    method: Method,
    own: Identity,
    peer: Credential,
    x: Zeroizing<[u8; 32]>,
    c_i: Vec<u8>,
    message_1: Vec<u8>,
}

/// An Initiator that sent message_3 and waits for message_4 (or for the first OSCORE response,
/// which also confirms the Responder's keys).
pub struct InitiatorSentM3 {
    done: Established,
    prk_4e3m: Prk,
    th_4: Th,
}

impl Initiator {
    /// Start with a fresh ephemeral key: message_1 offering `params.suite` alone, with the
    /// connection identifier C_I = `c_i` (raw bytes; at most 7).
    #[cfg(feature = "std")]
    pub fn start(params: &Params<'_>, c_i: &[u8]) -> Result<(Initiator, Vec<u8>), Error> {
        let x = ephemeral(params.suite)?;
        Initiator::start_with(params, c_i, &[params.suite.id()], &x)
    }

    /// Start with the ephemeral private key `x` and SUITES_I = `suites_i` (the last one must be
    /// `params.suite`): for replaying a trace; a live handshake uses [`Initiator::start`]. An
    /// ephemeral key used twice links the sessions and loses the forward secrecy it gives.
    pub fn start_with(
        params: &Params<'_>,
        c_i: &[u8],
        suites_i: &[u8],
        x: &[u8; 32],
    ) -> Result<(Initiator, Vec<u8>), Error> {
        params.check()?;
        if suites_i.last() != Some(&params.suite.id()) || suites_i.len() > messages::MAX_SUITES {
            return Err(Error::new("message_1", "SUITES_I must end with the selected suite and list at most 10"));
        }
        if c_i.len() > cbor::MAX_ID {
            return Err(Error::new("message_1", "C_I longer than 7 bytes"));
        }
        let g_x = params.suite.public_key(x).map_err(refuse("message_1"))?;
        let m1 = messages::message_1(params.method.id(), suites_i, &g_x, c_i);
        let i = Initiator {
            suite: params.suite,
            method: params.method,
            own: params.own.clone(),
            peer: params.peer.clone(),
            x: Zeroizing::new(*x),
            c_i: c_i.to_vec(),
            message_1: m1.clone(),
        };
        Ok((i, m1))
    }

    /// C_I (raw).
    pub fn c_i(&self) -> &[u8] {
        &self.c_i
    }

    /// Verify message_2 (the Responder must authenticate with the expected credential) and
    /// answer message_3.
    pub fn process_message_2(self, message_2: &[u8]) -> Result<(InitiatorSentM3, Vec<u8>), Error> {
        let step = "message_2";
        let e = refuse(step);
        let (g_y, ct_2) = messages::parse_message_2(message_2).map_err(&e)?;
        let g_xy = self.suite.ecdh(&self.x, g_y).map_err(&e)?;
        let th_2 = schedule::th_2(g_y, &self.message_1);
        let prk_2e = schedule::prk_2e(&th_2, &*g_xy);
        let ks = schedule::keystream_2(&prk_2e, &th_2, ct_2.len()).ok_or_else(|| e("CIPHERTEXT_2 too long"))?;
        let pt_2: Zeroizing<Vec<u8>> = Zeroizing::new(ct_2.iter().zip(ks.iter()).map(|(c, k)| c ^ k).collect());
        let p = messages::parse_plaintext_2(&pt_2).map_err(&e)?;
        if p.id_cred != self.peer.id_cred {
            return Err(e("ID_CRED_R names another credential than the one expected"));
        }
        if p.c_r == self.c_i {
            // Appendix A.1: C_R must differ from C_I, or both directions share a Sender ID.
            return Err(e("C_R equals C_I"));
        }
        let g_rx = if self.method.signs() { None } else { Some(self.suite.ecdh(&self.x, &self.peer.key).map_err(&e)?) };
        let prk_3e2m = schedule::prk_3e2m(&prk_2e, &th_2, g_rx.as_ref().map(|g| &g[..]));
        let c_r_enc = id_enc(&p.c_r);
        let mac_2 =
            schedule::mac_2(&prk_3e2m, &c_r_enc, &p.id_cred, &th_2, &self.peer.cred, p.ead, self.method.mac_len());
        if self.method.signs() {
            let tbs = schedule::to_be_signed(&p.id_cred, &th_2, &self.peer.cred, p.ead, &mac_2);
            suites::ed25519_verify(&self.peer.key, &tbs, p.sig_or_mac).map_err(&e)?;
        } else if !ct_eq(&mac_2, p.sig_or_mac) {
            return Err(e("MAC_2 does not verify (altered, or another key)"));
        }
        let th_3 = schedule::th_next(&th_2, &pt_2, &self.peer.cred);

        let e = refuse("message_3");
        let own = &self.own.cred;
        let g_iy = if self.method.signs() { None } else { Some(self.suite.ecdh(&self.own.secret, g_y).map_err(&e)?) };
        let prk_4e3m = schedule::prk_4e3m(&prk_3e2m, &th_3, g_iy.as_ref().map(|g| &g[..]));
        let mac_3 = schedule::mac_3(&prk_4e3m, &own.id_cred, &th_3, &own.cred, &[], self.method.mac_len());
        let sig_or_mac_3 = if self.method.signs() {
            let tbs = schedule::to_be_signed(&own.id_cred, &th_3, &own.cred, &[], &mac_3);
            Zeroizing::new(suites::ed25519_sign(&self.own.secret, &tbs).to_vec())
        } else {
            mac_3
        };
        let pt_3 = Zeroizing::new(messages::plaintext_3(&own.id_cred, &sig_or_mac_3));
        let (k_3, iv_3, aad_3) = schedule::aead_inputs(&prk_3e2m, &th_3, 3);
        let mut ct_3 = pt_3.to_vec();
        Algorithm::AesCcm16_64_128
            .seal(&k_3, &iv_3, &aad_3, &mut ct_3)
            .map_err(|err| Error::new("message_3", err.to_string()))?;
        let m3 = messages::bstr_message(&ct_3);
        let th_4 = schedule::th_next(&th_3, &pt_3, &own.cred);
        let prk_out = schedule::prk_out(&prk_4e3m, &th_4);
        let done = Established::new(Role::Initiator, self.suite, self.c_i, p.c_r, prk_out);
        Ok((InitiatorSentM3 { done, prk_4e3m, th_4 }, m3))
    }
}

impl InitiatorSentM3 {
    /// C_R (raw), the Responder's connection identifier.
    pub fn c_r(&self) -> &[u8] {
        &self.done.c_r
    }

    /// Verify message_4 and complete.
    pub fn process_message_4(self, message_4: &[u8]) -> Result<Established, Error> {
        let e = refuse("message_4");
        let ct = messages::parse_bstr_message(message_4).map_err(&e)?;
        let (k_4, iv_4, aad_4) = schedule::aead_inputs(&self.prk_4e3m, &self.th_4, 8);
        let mut pt = Zeroizing::new(ct.to_vec());
        Algorithm::AesCcm16_64_128
            .open(&k_4, &iv_4, &aad_4, &mut pt)
            .map_err(|_| e("the AEAD tag does not verify (altered, or another key)"))?;
        cbor::skip_ead(&mut Reader::new(&pt)).map_err(&e)?;
        Ok(self.done)
    }

    /// Complete without message_4 (the first OSCORE response from the Responder then confirms
    /// its keys, RFC 9528 §5.4.2).
    pub fn complete(self) -> Established {
        self.done
    }
}

/// The reason a Responder refuses a message_1 whose C_I is the C_R it chose (Appendix A.1:
/// both directions would share a Sender ID): a caller choosing C_R itself tries another.
pub const C_R_TAKEN: &str = "C_I equals the C_R chosen here";

/// A Responder that answered message_1 with message_2 and waits for message_3: the state
/// [`Responder`] and [`OpenResponder`] share.
struct Answered {
    suite: EdhocSuite,
    method: Method,
    y: Zeroizing<[u8; 32]>,
    c_i: Vec<u8>,
    c_r: Vec<u8>,
    prk_3e2m: Prk,
    th_3: Th,
}

impl Answered {
    /// Process message_1 for a Responder with `suite`, `method` and identity `own` (its
    /// credential already checked against them), answering message_2.
    fn process_message_1(
        suite: EdhocSuite,
        method: Method,
        own: &Identity,
        message_1: &[u8],
        c_r: &[u8],
        y: &[u8; 32],
    ) -> Result<(Answered, Vec<u8>), Error> {
        let e = refuse("message_1");
        if c_r.len() > cbor::MAX_ID {
            return Err(e("C_R longer than 7 bytes"));
        }
        let m = messages::parse_message_1(message_1).map_err(&e)?;
        if m.method != i64::from(method.id()) {
            return Err(Error::new("message_1", format!("method {} (this Responder: {})", m.method, method.id())));
        }
        let selected = m.suites.last().copied().unwrap_or(-1);
        if EdhocSuite::from_id(selected) != Some(suite) {
            return Err(Error::new(
                "message_1",
                format!("selected cipher suite {selected} (this Responder: {})", suite.id()),
            ));
        }
        let g_x: &[u8; 32] = m.g_x.try_into().map_err(|_| e("G_X is not 32 bytes"))?;
        if m.c_i == c_r {
            return Err(e(C_R_TAKEN));
        }
        let g_xy = suite.ecdh(y, g_x).map_err(&e)?;

        let e = refuse("message_2");
        let g_y = suite.public_key(y).map_err(&e)?;
        let th_2 = schedule::th_2(&g_y, message_1);
        let prk_2e = schedule::prk_2e(&th_2, &*g_xy);
        let cred = &own.cred;
        let g_rx = if method.signs() { None } else { Some(suite.ecdh(&own.secret, g_x).map_err(&e)?) };
        let prk_3e2m = schedule::prk_3e2m(&prk_2e, &th_2, g_rx.as_ref().map(|g| &g[..]));
        let mac_2 = schedule::mac_2(&prk_3e2m, &id_enc(c_r), &cred.id_cred, &th_2, &cred.cred, &[], method.mac_len());
        let sig_or_mac_2 = if method.signs() {
            let tbs = schedule::to_be_signed(&cred.id_cred, &th_2, &cred.cred, &[], &mac_2);
            Zeroizing::new(suites::ed25519_sign(&own.secret, &tbs).to_vec())
        } else {
            mac_2
        };
        let pt_2 = Zeroizing::new(messages::plaintext_2(c_r, &cred.id_cred, &sig_or_mac_2));
        let ks = schedule::keystream_2(&prk_2e, &th_2, pt_2.len()).ok_or_else(|| e("PLAINTEXT_2 too long"))?;
        let ct_2: Vec<u8> = pt_2.iter().zip(ks.iter()).map(|(p, k)| p ^ k).collect();
        let m2 = messages::message_2(&g_y, &ct_2);
        let th_3 = schedule::th_next(&th_2, &pt_2, &cred.cred);
        let a = Answered { suite, method, y: Zeroizing::new(*y), c_i: m.c_i, c_r: c_r.to_vec(), prk_3e2m, th_3 };
        Ok((a, m2))
    }

    /// Verify message_3 against the credential `resolve` gives for its ID_CRED_I (full form),
    /// complete, and build message_4.
    fn process_message_3(
        self,
        message_3: &[u8],
        resolve: impl FnOnce(&[u8]) -> Result<Credential, Error>,
    ) -> Result<(Established, Vec<u8>), Error> {
        let e = refuse("message_3");
        let ct = messages::parse_bstr_message(message_3).map_err(&e)?;
        let (k_3, iv_3, aad_3) = schedule::aead_inputs(&self.prk_3e2m, &self.th_3, 3);
        let mut pt_3 = Zeroizing::new(ct.to_vec());
        Algorithm::AesCcm16_64_128
            .open(&k_3, &iv_3, &aad_3, &mut pt_3)
            .map_err(|_| e("the AEAD tag does not verify (altered, or another key)"))?;
        let p = messages::parse_plaintext_3(&pt_3).map_err(&e)?;
        let peer = resolve(&p.id_cred)?;
        let g_iy = if self.method.signs() { None } else { Some(self.suite.ecdh(&self.y, &peer.key).map_err(&e)?) };
        let prk_4e3m = schedule::prk_4e3m(&self.prk_3e2m, &self.th_3, g_iy.as_ref().map(|g| &g[..]));
        let mac_3 = schedule::mac_3(&prk_4e3m, &p.id_cred, &self.th_3, &peer.cred, p.ead, self.method.mac_len());
        if self.method.signs() {
            let tbs = schedule::to_be_signed(&p.id_cred, &self.th_3, &peer.cred, p.ead, &mac_3);
            suites::ed25519_verify(&peer.key, &tbs, p.sig_or_mac).map_err(&e)?;
        } else if !ct_eq(&mac_3, p.sig_or_mac) {
            return Err(e("MAC_3 does not verify (altered, or another key)"));
        }
        let th_4 = schedule::th_next(&self.th_3, &pt_3, &peer.cred);
        let prk_out = schedule::prk_out(&prk_4e3m, &th_4);
        let (k_4, iv_4, aad_4) = schedule::aead_inputs(&prk_4e3m, &th_4, 8);
        let mut ct_4 = Vec::new();
        Algorithm::AesCcm16_64_128
            .seal(&k_4, &iv_4, &aad_4, &mut ct_4)
            .map_err(|err| Error::new("message_4", err.to_string()))?;
        let done = Established::new(Role::Responder, self.suite, self.c_i, self.c_r, prk_out);
        Ok((done, messages::bstr_message(&ct_4)))
    }
}

/// A Responder that answered message_1 with message_2 and waits for message_3 from the one
/// Initiator it expects.
pub struct Responder {
    state: Answered,
    peer: Credential,
}

impl Responder {
    /// Process message_1 (its selected suite must be `params.suite`, its method
    /// `params.method`) and answer message_2 with C_R = `c_r` (raw bytes, other than C_I),
    /// with a fresh ephemeral key.
    #[cfg(feature = "std")]
    pub fn process_message_1(params: &Params<'_>, message_1: &[u8], c_r: &[u8]) -> Result<(Responder, Vec<u8>), Error> {
        let y = ephemeral(params.suite)?;
        Responder::process_message_1_with(params, message_1, c_r, &y)
    }

    /// As [`Responder::process_message_1`] with the ephemeral private key `y` (for replaying a
    /// trace; never with a key used before).
    pub fn process_message_1_with(
        params: &Params<'_>,
        message_1: &[u8],
        c_r: &[u8],
        y: &[u8; 32],
    ) -> Result<(Responder, Vec<u8>), Error> {
        params.check()?;
        let (state, m2) = Answered::process_message_1(params.suite, params.method, params.own, message_1, c_r, y)?;
        Ok((Responder { state, peer: params.peer.clone() }, m2))
    }

    /// C_I (raw), the Initiator's connection identifier.
    pub fn c_i(&self) -> &[u8] {
        &self.state.c_i
    }
    /// C_R (raw), this Responder's connection identifier.
    pub fn c_r(&self) -> &[u8] {
        &self.state.c_r
    }

    /// Verify message_3 (the Initiator must authenticate with the expected credential),
    /// complete, and build message_4.
    pub fn process_message_3(self, message_3: &[u8]) -> Result<(Established, Vec<u8>), Error> {
        let peer = self.peer;
        self.state.process_message_3(message_3, |id_cred| {
            if id_cred == peer.id_cred {
                Ok(peer)
            } else {
                Err(Error::new("message_3", "ID_CRED_I names another credential than the one expected"))
            }
        })
    }
}

/// What a Responder serving many Initiators ([`OpenResponder`]) is configured with.
#[derive(Clone, Copy, Debug)]
pub struct ResponderConfig<'a> {
    /// The cipher suite: a message_1 selecting another is refused with that reason.
    pub suite: EdhocSuite,
    /// The method.
    pub method: Method,
    /// This endpoint's identity.
    pub own: &'a Identity,
}

/// A Responder serving many Initiators (a gateway): it learns which one it talks to from the
/// kid of ID_CRED_I in message_3 and looks its credential up then. It answered message_1
/// with message_2 and waits for message_3.
pub struct OpenResponder {
    state: Answered,
}

/// A kid as `h'…'` (hex), for a refusal naming it.
fn kid_hex(kid: &[u8]) -> alloc::string::String {
    let hex: alloc::string::String = kid.iter().map(|b| format!("{b:02x}")).collect();
    format!("h'{hex}'")
}

impl OpenResponder {
    /// Process message_1 (its selected suite must be `config.suite`, its method
    /// `config.method`) and answer message_2 with C_R = `c_r` (raw bytes, at most 7, other
    /// than C_I: a C_R equal to it is refused, so the caller tries another), with a fresh
    /// ephemeral key.
    #[cfg(feature = "std")]
    pub fn process_message_1(
        config: &ResponderConfig<'_>,
        message_1: &[u8],
        c_r: &[u8],
    ) -> Result<(OpenResponder, Vec<u8>), Error> {
        let y = ephemeral(config.suite)?;
        OpenResponder::process_message_1_with(config, message_1, c_r, &y)
    }

    /// As [`OpenResponder::process_message_1`] with the ephemeral private key `y` (for
    /// replaying a trace; never with a key used before).
    pub fn process_message_1_with(
        config: &ResponderConfig<'_>,
        message_1: &[u8],
        c_r: &[u8],
        y: &[u8; 32],
    ) -> Result<(OpenResponder, Vec<u8>), Error> {
        check_kind(config.suite, config.method, "own", &config.own.cred)?;
        let (state, m2) = Answered::process_message_1(config.suite, config.method, config.own, message_1, c_r, y)?;
        Ok((OpenResponder { state }, m2))
    }

    /// C_I (raw), the Initiator's connection identifier.
    pub fn c_i(&self) -> &[u8] {
        &self.state.c_i
    }
    /// C_R (raw), this Responder's connection identifier.
    pub fn c_r(&self) -> &[u8] {
        &self.state.c_r
    }

    /// Verify message_3 against the credential `lookup` gives for the kid of ID_CRED_I,
    /// complete, and build message_4. Returns the session, message_4 and that kid. An
    /// ID_CRED_I that is not a kid (1 to 7 bytes), a kid `lookup` does not know, a credential
    /// with another kid or a key that does not fit the suite and method, are refused, naming
    /// the kid. `lookup` sees the kid only after message_3's AEAD tag verified (a message
    /// altered on the way never reaches it); the MAC_3 check then proves the Initiator holds
    /// that credential's private key.
    pub fn process_message_3(
        self,
        message_3: &[u8],
        lookup: impl FnOnce(&[u8]) -> Option<Credential>,
    ) -> Result<(Established, Vec<u8>, Vec<u8>), Error> {
        let (suite, method) = (self.state.suite, self.state.method);
        let mut kid = Vec::new();
        let (done, m4) = self.state.process_message_3(message_3, |id_cred| {
            let e = |r: alloc::string::String| Error::new("message_3", r);
            kid = kid_of(id_cred)
                .map(<[u8]>::to_vec)
                .ok_or_else(|| e("ID_CRED_I is not a kid of 1 to 7 bytes".to_string()))?;
            let name = kid_hex(&kid);
            let c = lookup(&kid).ok_or_else(|| e(format!("no credential known for kid {name}")))?;
            if c.id_cred != id_cred {
                return Err(e(format!("the credential found for kid {name} has another kid")));
            }
            let want = kind_for(suite, method)?;
            if c.kind != want {
                let m = method.id();
                return Err(e(format!(
                    "the credential of kid {name} holds a {:?} key; method {m} with {suite} needs {want:?}",
                    c.kind
                )));
            }
            Ok(c)
        })?;
        Ok((done, m4, kid))
    }
}

/// A completed EDHOC session: exports OSCORE security contexts and renews them with
/// EDHOC-KeyUpdate. Holds PRK_out and PRK_exporter (wiped on drop, never printed).
pub struct Established {
    role: Role,
    suite: EdhocSuite,
    c_i: Vec<u8>,
    c_r: Vec<u8>,
    prk_out: Prk,
    prk_exporter: Prk,
}

impl Established {
    fn new(role: Role, suite: EdhocSuite, c_i: Vec<u8>, c_r: Vec<u8>, prk_out: Prk) -> Established {
        let prk_exporter = schedule::prk_exporter(&prk_out);
        Established { role, suite, c_i, c_r, prk_out, prk_exporter }
    }
    /// Which side this endpoint was.
    pub fn role(&self) -> Role {
        self.role
    }
    /// The cipher suite.
    pub fn suite(&self) -> EdhocSuite {
        self.suite
    }
    /// C_I (raw), an OSCORE ID (RFC 9528 Appendix A.1).
    pub fn c_i(&self) -> &[u8] {
        &self.c_i
    }
    /// C_R (raw).
    pub fn c_r(&self) -> &[u8] {
        &self.c_r
    }

    /// EDHOC_Exporter(label, context, length) (RFC 9528 §4.2.1).
    pub fn exporter(&self, label: u64, context: &[u8], length: usize) -> Result<Zeroizing<Vec<u8>>, Error> {
        schedule::kdf(&self.prk_exporter, label, context, length)
            .ok_or_else(|| Error::new("OSCORE context", format!("exporter output of {length} bytes (at most 8160)")))
    }

    /// The OSCORE security context of RFC 9528 Appendix A.1: Master Secret =
    /// EDHOC_Exporter(0, h'', 16), Master Salt = EDHOC_Exporter(1, h'', 8), the Initiator's
    /// Sender ID C_R and Recipient ID C_I, AES-CCM-16-64-128 (both suites' application AEAD).
    pub fn oscore_context(&self) -> Result<SecurityContext, Error> {
        let secret = self.exporter(0, &[], 16)?;
        let salt = self.exporter(1, &[], 8)?;
        let (sender, recipient) = match self.role {
            Role::Initiator => (&self.c_r, &self.c_i),
            Role::Responder => (&self.c_i, &self.c_r),
        };
        SecurityContext::derive(&SecurityParams {
            alg: Algorithm::AesCcm16_64_128,
            master_secret: &secret,
            master_salt: &salt,
            id_context: None,
            sender_id: sender,
            recipient_id: recipient,
        })
        .map_err(|err| Error::new("OSCORE context", err.to_string()))
    }

    /// EDHOC-KeyUpdate (RFC 9528 Appendix H) with `context` (both peers use the same one), then
    /// the renewed OSCORE context; the old one must be dropped (its keys are no longer
    /// derivable here, and the new one restarts sequence numbers under new keys).
    pub fn key_update(&mut self, context: &[u8]) -> Result<SecurityContext, Error> {
        self.prk_out = schedule::key_update(&self.prk_out, context);
        self.prk_exporter = schedule::prk_exporter(&self.prk_out);
        self.oscore_context()
    }
}

// The handshake states hold secrets: their Debug shows the connection identifiers only.
impl fmt::Debug for Initiator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Initiator").field("suite", &self.suite).field("c_i", &self.c_i).finish_non_exhaustive()
    }
}

impl fmt::Debug for InitiatorSentM3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InitiatorSentM3").field("done", &self.done).finish_non_exhaustive()
    }
}

impl fmt::Debug for Responder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Responder").field("c_i", &self.state.c_i).field("c_r", &self.state.c_r).finish_non_exhaustive()
    }
}

impl fmt::Debug for OpenResponder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenResponder")
            .field("suite", &self.state.suite)
            .field("c_i", &self.state.c_i)
            .field("c_r", &self.state.c_r)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Established {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Established")
            .field("role", &self.role)
            .field("suite", &self.suite)
            .field("c_i", &self.c_i)
            .field("c_r", &self.c_r)
            .finish_non_exhaustive()
    }
}
