//! The host cost of EDHOC (method 3, cipher suite 2) as this crate runs it: the time of each
//! side's steps over whole in-process handshakes, and of one P-256 scalar multiplication (the
//! operation the key exchange is made of), medians over `N` runs on this machine. Figures for
//! docs/protocols.md: `cargo run --profile citest -p lwcbench-oscore --example edhoc_cost`.
// An example prints its figures and panics on a failed step: that is its report.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use lwcbench_oscore::edhoc::{credential, Identity, Initiator, Responder};
use p256::elliptic_curve::sec1::ToEncodedPoint;

fn h(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

// RFC 9529 Section 3.
const SK_I: &str = "fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b";
const SK_R: &str = "72cc4761dbd4c78f758931aa589d348d1ef874a7e303ede2f140dcf3e6aa4aac";
const CRED_I: &str = "a2027734322d35302d33312d46462d45462d33372d33322d333908a101a5010202412b2001215820ac75e9ece3\
                      e50bfc8ed60399889522405c47bf16df96660a41298cb4307f7eb62258206e5de611388a4b8a8211334ac7\
                      d37ecb52a387d257e6db3c2a93df21ff3affc8";
const CRED_R: &str = "a2026b6578616d706c652e65647508a101a501020241322001215820bbc34960526ea4d32e940cad2a234148dd\
                      c21791a12afbcbac93622046dd44f02258204519e257236b2a0ce2023f0931f1f386ca7afda64fcde0108c22\
                      4c51eabf6072";
const N: usize = 200;

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
    println!("host-measured, this machine, median of {N}, lakers 0.8 + RustCrypto p256 0.13, profile citest:");
    println!("initiator (message_1, message_2 -> message_3, message_4, OSCORE context): {:.0} us", median(ti));
    println!("responder (message_1 -> message_2, message_3 -> message_4, OSCORE context): {:.0} us", median(tr));
    println!("one P-256 ECDH (variable-base scalar multiplication): {:.0} us", median(tx));
}
