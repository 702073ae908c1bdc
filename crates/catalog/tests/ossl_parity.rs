//! The OpenSSL adapters cost what a plain EVP loop costs, give or take the adapter's own
//! checks: instructions per 16-byte AEAD encryption through the catalogue's trait object
//! against the same EVP calls made directly (init with the nonce, update in place, final, get
//! tag), both counted by valgrind's callgrind (deterministic, unlike a timed test). The
//! `openssl` crate's safe wrappers query the context before every call, about 230–260
//! instructions more per message on OpenSSL 3.0; the bound below fails if they return.
//! Needs valgrind (scripts/setup.sh installs it); without it the test skips, or fails under
//! LWCBENCH_REQUIRE_SERVICES=1 (tests/support/required.rs).
#![cfg(feature = "openssl")]
#[path = "../../../tests/support/required.rs"]
mod required;
use std::hint::black_box;
use std::process::Command;

use foreign_types::ForeignTypeRef;
use openssl::cipher::Cipher;
use openssl::cipher_ctx::CipherCtx;
use openssl_sys as ffi;

const CHILD: &str = "LWC_OSSL_PARITY_CHILD";
const OPS: u64 = 16;
/// Extra instructions per message the adapter may cost over the plain loop: its argument
/// checks, the trait-object call and the Result plumbing (measured: about 100–170).
const MAX_EXTRA: f64 = 250.0;

#[inline(never)]
fn parity_counted_adapter(a: &mut dyn lwcbench_core::Aead, nonce: &[u8], buf: &mut [u8], tag: &mut [u8]) {
    for _ in 0..OPS {
        a.encrypt(nonce, &[], buf, tag).expect("encrypt");
        black_box(&mut *buf);
    }
}

#[inline(never)]
fn parity_counted_plain(c: &mut CipherCtx, nonce: &[u8], buf: &mut [u8], tag: &mut [u8]) {
    for _ in 0..OPS {
        plain_op(c, nonce, buf, tag);
        black_box(&mut *buf);
    }
}

fn plain_op(c: &mut CipherCtx, nonce: &[u8], buf: &mut [u8], tag: &mut [u8]) {
    let (mut outl, mut fin) = (0, 0);
    let p = c.as_ptr();
    // SAFETY: a keyed context; 12-byte nonce, in-place update of a stream-like mode, 16-byte tag.
    unsafe {
        assert_eq!(
            ffi::EVP_EncryptInit_ex(p, std::ptr::null(), std::ptr::null_mut(), std::ptr::null(), nonce.as_ptr()),
            1
        );
        assert_eq!(ffi::EVP_EncryptUpdate(p, buf.as_mut_ptr(), &mut outl, buf.as_ptr(), buf.len() as i32), 1);
        assert_eq!(ffi::EVP_EncryptFinal_ex(p, buf.as_mut_ptr().add(outl as usize), &mut fin), 1);
        assert_eq!(ffi::EVP_CIPHER_CTX_ctrl(p, ffi::EVP_CTRL_GCM_GET_TAG, 16, tag.as_mut_ptr().cast()), 1);
    }
}

/// Child side: one kind of loop, 4 untimed operations then `OPS` counted ones.
#[test]
fn parity_child() {
    let Ok(what) = std::env::var(CHILD) else { return };
    let (id, which) = what.split_once('=').expect("ID=adapter|plain");
    let key_len = if id.starts_with("ChaCha20") { 32 } else { 16 };
    let key: Vec<u8> = (0..key_len as u8).collect();
    let nonce: Vec<u8> = (0..12).collect();
    let (mut buf, mut tag) = ([7u8; 16], [0u8; 16]);
    if which == "adapter" {
        let Ok(mk) = lwcbench_catalog::find(id).expect("registered").aead_make() else { panic!("{id}: not an AEAD") };
        let mut a = mk();
        a.set_key(&key).expect("key");
        for _ in 0..4 {
            a.encrypt(&nonce, &[], &mut buf, &mut tag).expect("encrypt");
        }
        parity_counted_adapter(a.as_mut(), &nonce, &mut buf, &mut tag);
    } else {
        let cipher = if key_len == 32 { Cipher::chacha20_poly1305() } else { Cipher::aes_128_gcm() };
        let mut c = CipherCtx::new().expect("ctx");
        c.encrypt_init(Some(cipher), Some(&key), None).expect("key");
        for _ in 0..4 {
            plain_op(&mut c, &nonce, &mut buf, &mut tag);
        }
        parity_counted_plain(&mut c, &nonce, &mut buf, &mut tag);
    }
}

/// Instructions per operation of one loop, counted by callgrind in a child run of this test binary.
fn count(id: &str, which: &str) -> f64 {
    let dir = std::env::temp_dir().join(format!("lwc-ossl-parity-{}-{which}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("cg.out");
    let st = Command::new("valgrind")
        .args(["--tool=callgrind", "--collect-atstart=no"])
        .arg(format!("--toggle-collect=*parity_counted_{which}*"))
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(std::env::current_exe().expect("test binary"))
        .args(["--exact", "parity_child", "--test-threads=1"])
        .env(CHILD, format!("{id}={which}"))
        .output()
        .expect("valgrind runs");
    assert!(st.status.success(), "callgrind child failed: {}", String::from_utf8_lossy(&st.stderr));
    let text = std::fs::read_to_string(&out).expect("callgrind output");
    std::fs::remove_dir_all(&dir).ok();
    let total: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("totals: ").or_else(|| l.strip_prefix("summary: ")))
        .and_then(|v| v.trim().parse().ok())
        .expect("a totals line");
    total / OPS as f64
}

#[test]
fn openssl_aead_costs_what_a_plain_evp_loop_costs() {
    if Command::new("valgrind").arg("--version").output().is_err() {
        required::missing("valgrind not installed (scripts/setup.sh installs it)");
        return;
    }
    for id in ["ChaCha20-Poly1305/openssl", "AES-128-GCM/openssl"] {
        let (adapter, plain) = (count(id, "adapter"), count(id, "plain"));
        eprintln!("{id}: adapter {adapter:.1}, plain EVP loop {plain:.1} instructions per 16-byte message");
        assert!(plain > 1000.0, "{id}: the plain loop was not counted ({plain})");
        assert!(
            adapter - plain <= MAX_EXTRA,
            "{id}: the adapter costs {:.0} instructions per message more than a plain EVP loop (at most {MAX_EXTRA})",
            adapter - plain
        );
    }
}
