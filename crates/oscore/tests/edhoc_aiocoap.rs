//! EDHOC (RFC 9528, method 3, cipher suite 2) over CoAP (Appendix A.2) with aiocoap 0.4.17 and
//! lakers-python on loopback, both ways, then OSCORE under the context each side derived on its
//! own (Appendix A.1): this crate's Initiator against an aiocoap Responder, and an aiocoap
//! Initiator against this crate's Responder. Altered message_2 and message_3 are refused on both
//! sides. The aiocoap side is tests/aiocoap_edhoc_peer.py, with the credentials and static keys
//! of RFC 9529 Section 3.
//!
//! The Python is `$LWCBENCH_AIOCOAP_PYTHON`, else the checkout's `.venv/bin/python`, where
//! `scripts/setup.sh --test` installs `aiocoap[oscore]` 0.4.17 and lakers-python. Without them
//! the tests skip with a line saying so, and fail under `LWCBENCH_REQUIRE_SERVICES=1` (CI).
//! Traffic stays on 127.0.0.1; every wait is bounded (socket timeouts here, 20 s in the peer).
// The helpers outside #[test] functions panic on bad input too: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lwcbench_oscore::coap::{mtype, opt, Message};
use lwcbench_oscore::edhoc::{self, credential, CoapEdhocRequest, Error, Identity, Initiator, Responder};
use lwcbench_oscore::{protect_request, protect_response, unprotect_request, unprotect_response};
use lwcbench_oscore::{MemorySequence, ReplayWindow};

mod common;
use common::*;

// RFC 9529 Section 3's keys and credentials (tests/common); the peer script holds the same.

/// A Python with aiocoap's EDHOC (and lakers-python), or None (skip) when there is none and
/// CI does not require it.
fn python() -> Option<String> {
    let py = std::env::var("LWCBENCH_AIOCOAP_PYTHON").unwrap_or_else(|_| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python").to_string_lossy().into_owned()
    });
    let ok = Command::new(&py)
        .args(["-c", "import aiocoap.oscore, aiocoap.edhoc, lakers"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(py);
    }
    let why =
        format!("aiocoap[oscore] with lakers-python not importable by {py} (scripts/setup.sh --test installs them)");
    assert!(std::env::var("LWCBENCH_REQUIRE_SERVICES").as_deref() != Ok("1"), "required: {why}");
    eprintln!("skipped: {why}");
    None
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/aiocoap_edhoc_peer.py")
}

fn finish(mut child: Child, mut stdout: impl Read) -> (String, String, bool) {
    let mut out = String::new();
    let mut err = String::new();
    stdout.read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let ok = child.wait().unwrap().success();
    (out, err, ok)
}

/// Send a request, return the response (skipping an empty ACK of a separate response).
fn exchange(sock: &UdpSocket, m: &Message) -> Message {
    sock.send(&m.encode().unwrap()).unwrap();
    let mut buf = [0u8; 2048];
    for _ in 0..3 {
        let n = sock.recv(&mut buf).expect("no answer from the aiocoap server within 5 s");
        let r = Message::parse(&buf[..n]).unwrap();
        if r.code == 0 {
            continue;
        }
        if r.mtype == mtype::CON {
            sock.send(&Message::new(mtype::ACK, 0, r.message_id, &[]).encode().unwrap()).unwrap();
        }
        assert_eq!(r.token, m.token, "a response to another request");
        return r;
    }
    panic!("no response after an empty ACK");
}

/// A POST of an EDHOC message to /.well-known/edhoc.
fn edhoc_post(mid: u16, payload: Vec<u8>) -> Message {
    let mut m = Message::new(mtype::CON, 0x02, mid, &mid.to_be_bytes());
    for seg in edhoc::WELL_KNOWN_EDHOC {
        m.add_option(opt::URI_PATH, seg.as_bytes());
    }
    m.payload = payload;
    m
}

fn reading(mid: u16, payload: &str) -> Message {
    let mut m = Message::new(mtype::CON, 0x02, mid, &mid.to_be_bytes());
    m.add_option(opt::URI_PATH, b"r");
    m.payload = payload.as_bytes().to_vec();
    m
}

fn identities() -> (Identity, Identity) {
    (Identity::new(&h(SK_I), &h(CRED_I)).unwrap(), Identity::new(&h(SK_R), &h(CRED_R)).unwrap())
}

#[test]
fn our_initiator_to_an_aiocoap_responder() {
    let Some(python) = python() else { return };
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = {
        let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let mut child = Command::new(&python)
        .arg(script())
        .args(["server", "--port", &port.to_string(), "--requests", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first, "ready\n", "the aiocoap server did not start");
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    sock.connect(("127.0.0.1", port)).unwrap();
    let (me, _) = identities();
    let peer = || credential(&h(CRED_R)).unwrap();

    // An altered message_2 (its last byte, in MAC_2): this crate refuses it.
    let (init, m1) = Initiator::start(&me, peer(), 0x0a).unwrap();
    let r = exchange(&sock, &edhoc_post(1, edhoc::coap_message_1(&m1)));
    assert_eq!(r.code, 0x44, "message_1 answered {r:?}");
    let mut m2 = r.payload;
    *m2.last_mut().unwrap() ^= 0x01;
    let e = init.process_message_2(&m2).unwrap_err();
    assert_eq!(e, Error::Protocol { step: "message_2", reason: lakers::EDHOCError::MacVerificationFailed });

    // An altered message_3: aiocoap refuses it, and the OSCORE context this side would have
    // is unknown to it.
    let (init, m1) = Initiator::start(&me, peer(), 0x0b).unwrap();
    let r = exchange(&sock, &edhoc_post(2, edhoc::coap_message_1(&m1)));
    let (sent3, mut m3) = init.process_message_2(&r.payload).unwrap();
    *m3.last_mut().unwrap() ^= 0x01;
    let r = exchange(&sock, &edhoc_post(3, edhoc::coap_message_3(sent3.c_r(), &m3)));
    // aiocoap 0.4.17 lets lakers-python's exception through: 5.00, not the 4.00 with an EDHOC
    // error message that RFC 9528 Appendix A.2 describes.
    assert_eq!(r.code, 0xa0, "an altered message_3 answered {r:?}");
    let bad = sent3.complete().unwrap().oscore_context().unwrap();
    let (prot, _) = protect_request(&bad, &mut MemorySequence::new(0), &reading(4, "never")).unwrap();
    let r = exchange(&sock, &prot);
    assert_eq!((r.code, r.payload.as_slice()), (0x80, &b"EDHOC incomplete"[..]), "answered {r:?}");
    assert_eq!(r.option_values(opt::OSCORE).count(), 0);

    // The handshake, then a reading under the context both derived.
    let t0 = Instant::now();
    let (init, m1) = Initiator::start(&me, peer(), 0x37).unwrap();
    let r = exchange(&sock, &edhoc_post(5, edhoc::coap_message_1(&m1)));
    let m2 = r.payload;
    let (sent3, m3) = init.process_message_2(&m2).unwrap();
    let r = exchange(&sock, &edhoc_post(6, edhoc::coap_message_3(sent3.c_r(), &m3)));
    assert_eq!(r.code, 0x44, "message_3 answered {r:?}");
    let m4 = r.payload;
    let mut est = sent3.process_message_4(&m4).unwrap();
    let elapsed = t0.elapsed();
    let client = est.oscore_context().unwrap();
    assert_eq!(client.recipient_id(), [0x37], "Appendix A.1: the Initiator receives under C_I");
    let (prot, binding) = protect_request(&client, &mut MemorySequence::new(0), &reading(7, "edhoc-a")).unwrap();
    let r = exchange(&sock, &prot);
    let plain = unprotect_response(&client, &binding, &r.encode().unwrap()).unwrap();
    assert_eq!((plain.code, plain.payload.as_slice()), (0x44, &b"stored:edhoc-a"[..]));
    eprintln!(
        "measured (host, loopback, aiocoap responder): message_1 {} B, message_2 {} B, message_3 {} B, \
         message_4 {} B, 2 round trips, {:.1} ms",
        m1.len(),
        m2.len(),
        m3.len(),
        m4.len(),
        elapsed.as_secs_f64() * 1e3
    );
    assert_eq!([m1.len(), m2.len(), m3.len(), m4.len()], [37, 45, 19, 9], "RFC 9528 §5 sizes (tests/edhoc.rs)");

    let (out, err, ok) = finish(child, stdout);
    assert!(ok, "the aiocoap server failed: {err}");
    assert_eq!(out, "got edhoc-a\n", "{err}");
}

/// What this crate's Responder does wrong on purpose.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tamper {
    None,
    /// Flip the last byte of message_2 (in MAC_2) before sending it.
    Message2,
    /// Flip the last byte of message_3 (in its AEAD tag) as received.
    Message3,
}

/// Serve one aiocoap client: EDHOC as Responder, then its OSCORE request. Returns the client's
/// stdout and success, and this side's refusal, if any.
fn serve(python: &str, tamper: Tamper) -> (String, bool, Option<Error>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let port = sock.local_addr().unwrap().port();
    let mut child = Command::new(python)
        .arg(script())
        .args(["client", "--port", &port.to_string(), "--payload", "edhoc-b"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (_, me) = identities();
    let mut responder: Option<Responder> = None;
    let mut server = None;
    let mut refused = None;
    let mut buf = [0u8; 2048];
    // At most 8 datagrams: message_1, message_3, the request, and retransmissions.
    for _ in 0..8 {
        let (n, from) = sock.recv_from(&mut buf).expect("no request from the aiocoap client within 10 s");
        let req = Message::parse(&buf[..n]).unwrap();
        let path: Vec<&[u8]> = req.option_values(opt::URI_PATH).collect();
        let mut reply = Message::new(mtype::ACK, 0x44, req.message_id, &req.token);
        if path == [b".well-known".as_slice(), b"edhoc"] {
            match CoapEdhocRequest::parse(&req.payload).unwrap() {
                CoapEdhocRequest::Message1(m1) => {
                    let (r, mut m2) =
                        Responder::process_message_1(&me, credential(&h(CRED_I)).unwrap(), m1, 0x20).unwrap();
                    if tamper == Tamper::Message2 {
                        *m2.last_mut().unwrap() ^= 0x01;
                    }
                    responder = Some(r);
                    reply.payload = m2;
                }
                CoapEdhocRequest::Message3 { c_r, message_3 } => {
                    assert_eq!(c_r, 0x20, "message_3 names another C_R");
                    let mut m3 = message_3.to_vec();
                    if tamper == Tamper::Message3 {
                        *m3.last_mut().unwrap() ^= 0x01;
                    }
                    match responder.take().expect("message_3 before message_1").process_message_3(&m3) {
                        Ok((mut est, m4)) => {
                            server = Some(est.oscore_context().unwrap());
                            reply.payload = m4;
                        }
                        Err(e) => {
                            reply.code = e.coap_code();
                            reply.payload = e.to_string().into_bytes();
                            refused = Some(e);
                        }
                    }
                }
            }
        } else {
            let ctx = server.as_ref().expect("an OSCORE request before EDHOC completed");
            let (plain, binding) = unprotect_request(ctx, &mut ReplayWindow::default(), &buf[..n]).unwrap();
            let mut resp = Message::new(mtype::ACK, 0x44, req.message_id, &req.token);
            resp.payload = [b"stored:".as_slice(), &plain.payload].concat();
            reply = protect_response(ctx, &binding, &resp, None).unwrap();
        }
        sock.send_to(&reply.encode().unwrap(), from).unwrap();
        if reply.option_values(opt::OSCORE).count() > 0 || refused.is_some() || tamper == Tamper::Message2 {
            break;
        }
    }
    let stdout = child.stdout.take().unwrap();
    let (out, err, ok) = finish(child, stdout);
    (format!("{out}{err}"), ok, refused)
}

#[test]
fn an_aiocoap_initiator_to_our_responder() {
    let Some(python) = python() else { return };
    let (out, ok, refused) = serve(&python, Tamper::None);
    assert!(ok && refused.is_none(), "{out}");
    assert_eq!(out, "code 2.04 payload stored:edhoc-b\n");
}

#[test]
fn altered_messages_between_aiocoap_and_our_responder_are_refused() {
    let Some(python) = python() else { return };
    // message_2 altered on the way: lakers-python in aiocoap refuses it (its MAC_2).
    let (out, ok, _) = serve(&python, Tamper::Message2);
    assert!(!ok, "the aiocoap client accepted an altered message_2: {out}");
    assert!(out.contains("MacVerificationFailed"), "{out}");
    // message_3 altered on the way: refused here with 4.00, the client fails.
    let (out, ok, refused) = serve(&python, Tamper::Message3);
    assert!(!ok, "{out}");
    assert_eq!(refused, Some(Error::Protocol { step: "message_3", reason: lakers::EDHOCError::MacVerificationFailed }));
    assert!(out.starts_with("error:"), "{out}");
}
