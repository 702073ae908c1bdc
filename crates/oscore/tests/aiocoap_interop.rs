//! Interop with aiocoap's OSCORE on loopback, both ways, with pre-shared contexts, for each
//! algorithm: this crate's client against an aiocoap server (which also refuses a replayed,
//! an altered and an out-of-window request, each with its own code), and an aiocoap client against a server
//! built on this crate. The aiocoap side is tests/aiocoap_peer.py.
//!
//! The Python is `$LWCBENCH_AIOCOAP_PYTHON`, else the checkout's `.venv/bin/python`, where
//! `scripts/setup.sh --test` installs `aiocoap[oscore]` 0.4.17. Without it the tests skip with
//! a line saying so, and fail under `LWCBENCH_REQUIRE_SERVICES=1` (CI). Traffic stays on
//! 127.0.0.1; every wait is bounded (socket timeouts here, a 20 s deadline in the peer).
// The helpers outside #[test] functions panic on bad input too: a panic is the failure report.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use lwcbench_oscore::alg::ALL;
use lwcbench_oscore::coap::{mtype, opt, Message};
use lwcbench_oscore::{
    protect_request, protect_response, unprotect_request, unprotect_response, Algorithm, MemorySequence, ReplayWindow,
    SecurityContext, SecurityParams,
};

const SECRET: [u8; 16] = *b"interop-secret-1";
const SALT: [u8; 4] = *b"salt";
const CLIENT_ID: &[u8] = b"\x0c";
const SERVER_ID: &[u8] = b"\x5e";

/// A Python with aiocoap's OSCORE, or None (skip) when there is none and CI does not require it.
fn python() -> Option<String> {
    let py = std::env::var("LWCBENCH_AIOCOAP_PYTHON").unwrap_or_else(|_| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python").to_string_lossy().into_owned()
    });
    let ok = Command::new(&py)
        .args(["-c", "import aiocoap.oscore"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        return Some(py);
    }
    let why = format!("aiocoap[oscore] not importable by {py} (scripts/setup.sh --test installs it)");
    assert!(std::env::var("LWCBENCH_REQUIRE_SERVICES").as_deref() != Ok("1"), "required: {why}");
    eprintln!("skipped: {why}");
    None
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/aiocoap_peer.py")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// aiocoap's context directory for the side whose Sender ID is `sender`.
fn aiocoap_context(dir: &Path, alg: Algorithm, sender: &[u8], recipient: &[u8]) {
    let settings = format!(
        "{{\"algorithm\": \"{}\", \"sender-id_hex\": \"{}\", \"recipient-id_hex\": \"{}\", \
         \"secret_hex\": \"{}\", \"salt_hex\": \"{}\"}}",
        alg.name(),
        hex(sender),
        hex(recipient),
        hex(&SECRET),
        hex(&SALT)
    );
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("settings.json"), settings).unwrap();
}

fn ours(alg: Algorithm, sender: &[u8], recipient: &[u8]) -> SecurityContext {
    SecurityContext::derive(&SecurityParams {
        alg,
        master_secret: &SECRET,
        master_salt: &SALT,
        id_context: None,
        sender_id: sender,
        recipient_id: recipient,
    })
    .unwrap()
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The rest of the child's stdout (from `out`), its stderr, and whether it succeeded, once it
/// ended (bounded by its own deadline).
fn finish(mut child: Child, mut stdout: impl Read) -> (String, String, bool) {
    let mut out = String::new();
    let mut err = String::new();
    stdout.read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let ok = child.wait().unwrap().success();
    (out, err, ok)
}

/// Send `bytes`, return the response (skipping an empty ACK of a separate response).
fn exchange(sock: &UdpSocket, bytes: &[u8]) -> Message {
    sock.send(bytes).unwrap();
    let mut buf = [0u8; 2048];
    for _ in 0..3 {
        let n = sock.recv(&mut buf).expect("no answer from the aiocoap server within 5 s");
        let m = Message::parse(&buf[..n]).unwrap();
        if m.code == 0 {
            continue; // empty ACK: the response follows
        }
        if m.mtype == mtype::CON {
            sock.send(&Message::new(mtype::ACK, 0, m.message_id, &[]).encode().unwrap()).unwrap();
        }
        return m;
    }
    panic!("no response after an empty ACK");
}

fn request(mid: u16, payload: &str) -> Message {
    let mut m = Message::new(mtype::CON, 0x02, mid, &[mid as u8, 0x42]);
    m.add_option(opt::URI_PATH, b"r");
    m.payload = payload.as_bytes().to_vec();
    m
}

#[test]
fn our_client_to_an_aiocoap_server() {
    let Some(python) = python() else { return };
    for alg in ALL {
        let d = tempfile::tempdir().unwrap();
        aiocoap_context(d.path(), alg, SERVER_ID, CLIENT_ID);
        let port = free_port();
        let mut child = Command::new(&python)
            .arg(script())
            .args(["server", "--port", &port.to_string(), "--requests", "4", "--ctx"])
            .arg(d.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        assert_eq!(first, "ready\n", "{}: the aiocoap server did not start", alg.name());

        let client = ours(alg, CLIENT_ID, SERVER_ID);
        let mut seq = MemorySequence::new(0);
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        sock.connect(("127.0.0.1", port)).unwrap();

        let (prot, binding) = protect_request(&client, &mut seq, &request(1, "reading-a")).unwrap();
        let bytes = prot.encode().unwrap();
        let resp = exchange(&sock, &bytes);
        let plain = unprotect_response(&client, &binding, &resp.encode().unwrap()).unwrap();
        assert_eq!((plain.code, plain.payload.as_slice()), (0x44, &b"stored:reading-a"[..]), "{}", alg.name());

        // The same OSCORE request under a new Message ID and token (a replay past CoAP's
        // deduplication): 4.01 Unauthorized, unprotected.
        let mut replay = prot.clone();
        replay.message_id = 2;
        replay.token = vec![2, 0x42];
        let r = exchange(&sock, &replay.encode().unwrap());
        assert_eq!(r.code, 0x81, "{}: replay answered {:?}", alg.name(), r);
        assert_eq!(r.option_values(opt::OSCORE).count(), 0);
        assert_eq!(r.payload, b"Replay detected", "{}: aiocoap's diagnostic", alg.name());
        // An altered tag: 4.00 Bad Request.
        let (prot3, _) = protect_request(&client, &mut seq, &request(3, "reading-x")).unwrap();
        let mut altered = prot3.encode().unwrap();
        *altered.last_mut().unwrap() ^= 0x01;
        let r = exchange(&sock, &altered);
        assert_eq!(r.code, 0x80, "{}: altered request answered {:?}", alg.name(), r);
        assert_eq!(r.payload, b"Decryption failed", "{}: aiocoap's diagnostic", alg.name());
        // The server still takes a fresh request.
        let (prot4, b4) = protect_request(&client, &mut seq, &request(4, "reading-b")).unwrap();
        let resp = exchange(&sock, &prot4.encode().unwrap());
        assert_eq!(unprotect_response(&client, &b4, &resp.encode().unwrap()).unwrap().payload, b"stored:reading-b");
        // Sequence number 100 moves aiocoap's window; then 10, never used but below the window
        // (RFC 8613 §7.4): 4.01 Unauthorized; 101 is taken again.
        let at = |s: u64, mid: u16, text: &str| {
            let (p, b) = protect_request(&client, &mut MemorySequence::new(s), &request(mid, text)).unwrap();
            (exchange(&sock, &p.encode().unwrap()), b)
        };
        let (r, b) = at(100, 5, "reading-c");
        assert_eq!(unprotect_response(&client, &b, &r.encode().unwrap()).unwrap().payload, b"stored:reading-c");
        let (r, _) = at(10, 6, "reading-old");
        assert_eq!(r.code, 0x81, "{}: a sequence number below the window answered {:?}", alg.name(), r);
        assert_eq!(r.option_values(opt::OSCORE).count(), 0);
        let (r, b) = at(101, 7, "reading-d");
        assert_eq!(unprotect_response(&client, &b, &r.encode().unwrap()).unwrap().payload, b"stored:reading-d");

        let (out, err, ok) = finish(child, stdout);
        assert!(ok, "{}: the aiocoap server failed: {err}", alg.name());
        assert_eq!(out, "got reading-a\ngot reading-b\ngot reading-c\ngot reading-d\n", "{}: {err}", alg.name());
    }
}

#[test]
fn an_aiocoap_client_to_our_server() {
    let Some(python) = python() else { return };
    for alg in ALL {
        let d = tempfile::tempdir().unwrap();
        aiocoap_context(d.path(), alg, CLIENT_ID, SERVER_ID);
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let port = sock.local_addr().unwrap().port();
        let mut child = Command::new(&python)
            .arg(script())
            .args(["client", "--port", &port.to_string(), "--count", "3", "--payload", "t", "--ctx"])
            .arg(d.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();

        let server = ours(alg, SERVER_ID, CLIENT_ID);
        let mut window = ReplayWindow::default();
        let mut got = Vec::new();
        let mut first: Option<Vec<u8>> = None;
        let mut buf = [0u8; 2048];
        // At most 10 datagrams: 3 requests and any retransmissions.
        for _ in 0..10 {
            if got.len() == 3 {
                break;
            }
            let (n, from) = sock.recv_from(&mut buf).expect("no request from the aiocoap client within 10 s");
            first.get_or_insert_with(|| buf[..n].to_vec());
            let reply = match unprotect_request(&server, &mut window, &buf[..n]) {
                Ok((req, binding)) => {
                    got.push(String::from_utf8_lossy(&req.payload).to_string());
                    let mut resp = Message::new(mtype::ACK, 0x44, req.message_id, &req.token);
                    resp.payload = [b"stored:".as_slice(), &req.payload].concat();
                    protect_response(&server, &binding, &resp, None).unwrap()
                }
                Err(e) => {
                    // §8.2: error responses are not protected.
                    let m = Message::parse(&buf[..n]).unwrap();
                    let mut r = Message::new(mtype::ACK, e.coap_code(), m.message_id, &m.token);
                    r.payload = e.to_string().into_bytes();
                    r
                }
            };
            sock.send_to(&reply.encode().unwrap(), from).unwrap();
        }
        let stdout = child.stdout.take().unwrap();
        let (out, err, ok) = finish(child, stdout);
        assert!(ok, "{}: the aiocoap client failed: {err}", alg.name());
        assert_eq!(got, ["t-0", "t-1", "t-2"], "{}", alg.name());
        // aiocoap's first request again: a replay; with a changed tag: not decryptable.
        let first = first.unwrap();
        let e = unprotect_request(&server, &mut window, &first).unwrap_err();
        assert!(matches!(e, lwcbench_oscore::Error::Replayed(_)), "{}: {e}", alg.name());
        // Once the window has moved past it (a request with sequence number 100 accepted), the
        // same request is out of the window: refused as too old, not as a replay.
        window.accept(100).unwrap();
        let e = unprotect_request(&server, &mut window, &first).unwrap_err();
        assert_eq!(e, lwcbench_oscore::Error::TooOld(0), "{}", alg.name());
        let mut altered = first.clone();
        *altered.last_mut().unwrap() ^= 0x80;
        let e = unprotect_request(&server, &mut ReplayWindow::default(), &altered).unwrap_err();
        assert_eq!(e, lwcbench_oscore::Error::DecryptionFailed, "{}", alg.name());
        assert_eq!(
            out,
            "code 2.04 payload stored:t-0\ncode 2.04 payload stored:t-1\ncode 2.04 payload stored:t-2\n",
            "{}: {err}",
            alg.name()
        );
    }
}
