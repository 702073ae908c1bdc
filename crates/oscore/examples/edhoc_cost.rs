//! The host cost of EDHOC as this crate runs it: the time of each side's steps over whole
//! in-process handshakes, medians over `N` runs on this machine, for method 3 at cipher suite 2
//! through lakers and through this crate's own EDHOC (`edhoc::own`), for the own EDHOC's
//! suite 0 with static DH (X25519) and with signatures (Ed25519, RFC 9529 §2's certificates),
//! and of the one operations each is made of (a P-256 ECDH, an X25519 ECDH, an Ed25519
//! signature and its verification). Figures for docs/protocols.md:
//! `cargo run --profile citest -p lwcbench-oscore --example edhoc_cost`.
// An example prints its figures and panics on a failed step: that is its report.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use lwcbench_oscore::edhoc::own::{self, suites, EdhocSuite, Method, Params};
use lwcbench_oscore::edhoc::{credential, Identity, Initiator, Responder};
use p256::elliptic_curve::sec1::ToEncodedPoint;

#[path = "../tests/common/mod.rs"]
mod common;
use common::*;

// RFC 9529 Section 2: Ed25519 keys and X.509 certificates.
const SIG_SK_I: &str = "4c5b25878f507c6b9dae68fbd4fd3ff997533db0af00b25d324ea28e6c213bc8";
const SIG_SK_R: &str = "ef140ff900b0ab03f0c08d879cbbd4b31ea71e6e7ee7ffcb7e7955777a332799";
const CERT_I: &str = "3081ee3081a1a003020102020462319ea0300506032b6570301d311b301906035504030c124544484f4320526f6f7420\
    45643235353139301e170d3232303331363038323430305a170d3239313233313233303030305a30223120301e060355\
    04030c174544484f4320496e69746961746f722045643235353139302a300506032b6570032100ed06a8ae61a829ba5f\
    a54525c9d07f48dd44a302f43e0f23d8cc20b73085141e300506032b6570034100521241d8b3a770996bcfc9b9ead4e7\
    e0a1c0db353a3bdf2910b39275ae48b756015981850d27db6734e37f67212267dd05eeff27b9e7a813fa574b72a00b43\
    0b";
const CERT_R: &str = "3081ee3081a1a003020102020462319ec4300506032b6570301d311b301906035504030c124544484f4320526f6f7420\
    45643235353139301e170d3232303331363038323433365a170d3239313233313233303030305a30223120301e060355\
    04030c174544484f4320526573706f6e6465722045643235353139302a300506032b6570032100a1db47b95184854ad1\
    2a0c1a354e418aace33aa0f2c662c00b3ac55de92f9359300506032b6570034100b723bc01eab0928e8b2b6c98de19cc\
    3823d46e7d6987b032478fecfaf14537a1af14cc8be829c6b73044101837eb4abc949565d86dce51cfae52ab82c152cb\
    02";
// RFC 7748 §6.1: X25519 key pairs (Alice as Initiator, Bob as Responder).
const X_SK_I: &str = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
const X_PK_I: &str = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
const X_SK_R: &str = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
const X_PK_R: &str = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
const N: usize = 201;

/// A CCS with an X25519 COSE_Key and a one-byte kid.
fn x25519_ccs(kid: u8, x: &[u8]) -> Vec<u8> {
    let mut c = vec![0xa2, 0x02, 0x61, b'x', 0x08, 0xa1, 0x01, 0xa4, 0x01, 0x01, 0x02, 0x41, kid];
    c.extend_from_slice(&[0x20, 0x04, 0x21, 0x58, 0x20]);
    c.extend_from_slice(x);
    c
}

/// Median per-side times (Initiator, Responder) of `N` handshakes of the own EDHOC, and the
/// message sizes.
fn own_handshakes(suite: EdhocSuite, method: Method, i: &own::Identity, r: &own::Identity) -> (f64, f64, [usize; 4]) {
    let pi = Params { suite, method, own: i, peer: r.credential() };
    let pr = Params { suite, method, own: r, peer: i.credential() };
    let (mut ti, mut tr, mut sizes) = (Vec::new(), Vec::new(), [0; 4]);
    for _ in 0..N {
        let t = Instant::now();
        let (init, m1) = own::Initiator::start(&pi, &[0x37]).unwrap();
        let a = t.elapsed();
        let t = Instant::now();
        let (resp, m2) = own::Responder::process_message_1(&pr, &m1, &[0x27]).unwrap();
        let b = t.elapsed();
        let t = Instant::now();
        let (sent3, m3) = init.process_message_2(&m2).unwrap();
        let c = t.elapsed();
        let t = Instant::now();
        let (est_r, m4) = resp.process_message_3(&m3).unwrap();
        let _ = est_r.oscore_context().unwrap();
        let d = t.elapsed();
        let t = Instant::now();
        let est_i = sent3.process_message_4(&m4).unwrap();
        let _ = est_i.oscore_context().unwrap();
        let e = t.elapsed();
        ti.push(a + c + e);
        tr.push(b + d);
        sizes = [m1.len(), m2.len(), m3.len(), m4.len()];
    }
    (median(ti), median(tr), sizes)
}

/// The median time of `f` over `N` runs, in microseconds.
fn time(mut f: impl FnMut()) -> f64 {
    median(
        (0..N)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e6
}

fn main() {
    let i = Identity::new(&h(SK_I), &h(CRED_I)).unwrap();
    let r = Identity::new(&h(SK_R), &h(CRED_R)).unwrap();
    let (cred_i, cred_r) = (credential(&h(CRED_I)).unwrap(), credential(&h(CRED_R)).unwrap());
    let (mut ti, mut tr, mut tx) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..N {
        let t = Instant::now();
        let (init, m1) = Initiator::start(&i, cred_r, 0x37).unwrap();
        let a = t.elapsed();
        let t = Instant::now();
        let (resp, m2) = Responder::process_message_1(&r, cred_i, &m1, 0x27).unwrap();
        let b = t.elapsed();
        let t = Instant::now();
        let (sent3, m3) = init.process_message_2(&m2).unwrap();
        let c = t.elapsed();
        let t = Instant::now();
        let (mut est_r, m4) = resp.process_message_3(&m3).unwrap();
        let _ = est_r.oscore_context().unwrap();
        let d = t.elapsed();
        let t = Instant::now();
        let mut est_i = sent3.process_message_4(&m4).unwrap();
        let _ = est_i.oscore_context().unwrap();
        let e = t.elapsed();
        ti.push(a + c + e);
        tr.push(b + d);
        // One P-256 ECDH: a variable-base scalar multiplication (and the shared x out).
        let sk = p256::SecretKey::from_bytes(h(SK_I).as_slice().into()).unwrap();
        let pk = p256::SecretKey::from_bytes(h(SK_R).as_slice().into()).unwrap().public_key();
        let t = Instant::now();
        let s = p256::ecdh::diffie_hellman(sk.to_nonzero_scalar(), pk.as_affine());
        tx.push(t.elapsed());
        std::hint::black_box((s.raw_secret_bytes()[0], pk.to_encoded_point(true).len()));
    }
    println!("host-measured, this machine, median of {N} handshakes, profile citest; each side's steps");
    println!("(initiator: message_1, message_2 -> message_3, message_4, OSCORE context;");
    println!(" responder: message_1 -> message_2, message_3 -> message_4, OSCORE context):");
    println!(
        "suite 2, method 3, lakers 0.8 + p256 0.13: initiator {:.0} us, responder {:.0} us",
        median(ti),
        median(tr)
    );

    let pi = own::Identity::new(&h(SK_I), own::Credential::ccs_kid(&h(CRED_I)).unwrap()).unwrap();
    let pr = own::Identity::new(&h(SK_R), own::Credential::ccs_kid(&h(CRED_R)).unwrap()).unwrap();
    let xi = own::Identity::new(&h(X_SK_I), own::Credential::ccs_kid(&x25519_ccs(0x0a, &h(X_PK_I))).unwrap()).unwrap();
    let xr = own::Identity::new(&h(X_SK_R), own::Credential::ccs_kid(&x25519_ccs(0x0b, &h(X_PK_R))).unwrap()).unwrap();
    let si = own::Identity::new(&h(SIG_SK_I), own::Credential::x509_x5t(&h(CERT_I)).unwrap()).unwrap();
    let sr = own::Identity::new(&h(SIG_SK_R), own::Credential::x509_x5t(&h(CERT_R)).unwrap()).unwrap();
    for (label, suite, method, i, r) in [
        ("suite 2, method 3, own + p256 0.13", EdhocSuite::Suite2, Method::StaticDh, &pi, &pr),
        ("suite 0, method 3, own + x25519-dalek 2", EdhocSuite::Suite0, Method::StaticDh, &xi, &xr),
        ("suite 0, method 0, own + dalek 2 (x5t)", EdhocSuite::Suite0, Method::Signatures, &si, &sr),
    ] {
        let (a, b, sizes) = own_handshakes(suite, method, i, r);
        println!("{label}: initiator {a:.0} us, responder {b:.0} us, messages {sizes:?} bytes");
    }
    let k = [7u8; 32];
    let peer = EdhocSuite::Suite0.public_key(&[9; 32]).unwrap();
    println!("one P-256 ECDH (variable-base scalar multiplication): {:.0} us", median(tx));
    println!(
        "one X25519 ECDH: {:.0} us",
        time(|| {
            std::hint::black_box(EdhocSuite::Suite0.ecdh(&k, &peer).unwrap()[0]);
        })
    );
    println!(
        "one Ed25519 signature: {:.0} us",
        time(|| {
            std::hint::black_box(suites::ed25519_sign(&k, b"message to be signed")[0]);
        })
    );
    let (pk, sig) = (suites::ed25519_public(&k), suites::ed25519_sign(&k, b"m"));
    println!(
        "one Ed25519 verification: {:.0} us",
        time(|| {
            std::hint::black_box(suites::ed25519_verify(&pk, b"m", &sig).is_ok());
        })
    );
}
