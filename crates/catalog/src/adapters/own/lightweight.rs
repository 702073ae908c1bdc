//! Lightweight block ciphers and NIST-LWC AEADs: adapters to crates.io implementations and
//! registration of the own `lwcbench-lightweight` code, with their known-answer tests.
//!
//! Crate-backed (the crate does the work, the adapter only maps bytes and errors):
//! * **AES-128** — RustCrypto `aes` 0.9 (FIPS 197), the RR% baseline. The crate picks its
//!   backend at run time (`cpufeatures`): with AVX-512F + VAES (as on this VM) block calls go
//!   to its VAES-512 backend, else VAES-256, else AES-NI; key expansion uses AES-NI. All are
//!   constant time in hardware. Without AES-NI it falls back to a constant-time fixsliced
//!   software implementation (forced with `--cfg aes_backend="soft"`).
//! * **Ascon-AEAD128** (NIST SP 800-232) — RustCrypto `ascon-aead128` 0.1; **Ascon-128 v1.2**
//!   (CAESAR / NIST-LWC final submission) — RustCrypto `ascon-aead` 0.4 (the last release with
//!   the v1.2 variants; 0.5+ implement only SP 800-232). The permutation is a bitsliced
//!   5-bit S-box plus xor/rotate linear layer on 64-bit words, no tables: constant time;
//!   both crates compare tags in constant time (`subtle` / `ctutils`).
//! * **SPECK** (all ten sizes of ePrint 2013/404) — RustCrypto `speck-cipher` 0.1. ARX:
//!   constant time. The crate reads words big-endian, most significant word first (the
//!   paper's printed order); this adapter exposes the common byte convention (little-endian
//!   words, k[0] first, y before x — Crypto++, Linux, Wycheproof) by reversing key and block.
//! * **XTEA** — RustCrypto `xtea` 0.1. ARX, key-word index depends only on the public round
//!   sum: constant time. The crate reads little-endian words; XTEA's de-facto standard
//!   (Needham–Wheeler reference code, Botan, Crypto++) is big-endian, so the adapter
//!   byte-swaps each 32-bit word of key and block.
//!
//! Own code (`lwcbench-lightweight`, see its module docs): LEA-128, HIGHT, SIMON (ten sizes),
//! TinyJAMBU-128 (v2), Xoodyak, SCHWAEMM256-128, Grain-128AEADv2.
//!
//! Ids: names avoid '/' (it separates cipher and implementation), so SPECK64/128 is
//! `SPECK-64-128/rustcrypto` and SIMON64/128 `SIMON-64-128/rust-ref`. For AEADs `block_bits`
//! is the rate (bytes absorbed per permutation call).

use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, BlockSizeUser, KeyInit};
use lwcbench_core::{
    check_len, iv_err, key_err, Aead, BitOrder, BlockCipher, CipherError, CipherInfo, Family, Language, Origin,
};
use lwcbench_lightweight as lw;

use crate::conformance::{self, check_block};
use crate::entry::Entry;
use crate::kat::block::{block_cryptopp, block_kv, KvFormat};
use crate::kat::{lwc, repo_file, shared};
use crate::verify::{Check, VerifyCtx};

pub fn register(r: &mut Vec<Entry>) {
    r.push(Entry::block(mk_aes128, verify_aes128).mcu("rc_aes128"));
    r.push(Entry::aead(mk_ascon_aead128, verify_ascon_aead128).mcu("rc_ascon_aead128"));
    r.push(Entry::aead(mk_ascon128, verify_ascon128).mcu("rc_ascon128"));
    for s in SPECKS {
        r.push(s.entry());
    }
    r.push(Entry::block(mk_xtea, verify_xtea).mcu("rc_xtea"));
    r.push(Entry::block(mk_lea128, verify_lea128).mcu("lea128"));
    r.push(Entry::block(mk_hight, verify_hight).mcu("hight"));
    for s in SIMONS {
        r.push(s.entry());
    }
    r.push(Entry::aead(mk_tinyjambu, verify_tinyjambu).mcu("tinyjambu"));
    r.push(Entry::aead(mk_xoodyak, verify_xoodyak).mcu("xoodyak"));
    r.push(Entry::aead(mk_schwaemm, verify_schwaemm).mcu("schwaemm"));
    r.push(Entry::aead(mk_grain128aead, verify_grain128aead).mcu("grain128aead"));
}

// ---------------------------------------------------------------------------------------
// Generic adapter for RustCrypto `cipher` 0.5 block ciphers.

/// A RustCrypto block cipher behind [`BlockCipher`]. `xf` maps the lwcbench byte convention
/// to the crate's (an involution applied to key and block on the way in and out).
pub struct RcBlock<C> {
    inner: Option<C>, // the crates zeroize their round keys on drop (feature "zeroize")
    info: CipherInfo,
    xf: fn(&mut [u8]),
}

impl<C> RcBlock<C> {
    pub fn new(info: CipherInfo, xf: fn(&mut [u8])) -> Self {
        RcBlock { inner: None, info, xf }
    }
}

fn identity(_: &mut [u8]) {}
fn reverse(b: &mut [u8]) {
    b.reverse()
}
fn swap_words32(b: &mut [u8]) {
    for w in b.chunks_exact_mut(4) {
        w.reverse();
    }
}

impl<C: BlockCipherEncrypt + BlockCipherDecrypt + KeyInit + BlockSizeUser + Send> BlockCipher for RcBlock<C> {
    fn info(&self) -> CipherInfo {
        self.info
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), self.info.key_bytes(), key_err)?;
        let mut k = [0u8; 32];
        let k = &mut k[..key.len()];
        k.copy_from_slice(key);
        (self.xf)(k);
        self.inner = Some(C::new_from_slice(k).expect("length checked"));
        // `cipher` re-exports zeroize because the xtea/speck-cipher "zeroize" features enable it
        xtea::cipher::zeroize::Zeroize::zeroize(k);
        Ok(())
    }
    fn encrypt_block(&self, block: &mut [u8]) {
        let c = self.inner.as_ref().expect("encrypt_block before set_key");
        (self.xf)(block);
        c.encrypt_block(block.try_into().expect("one whole block"));
        (self.xf)(block);
    }
    fn decrypt_block(&self, block: &mut [u8]) {
        let c = self.inner.as_ref().expect("decrypt_block before set_key");
        (self.xf)(block);
        c.decrypt_block(block.try_into().expect("one whole block"));
        (self.xf)(block);
    }
}

const fn block_info(
    name: &'static str,
    key_bits: u16,
    block_bits: u16,
    state_bytes: u32,
    crate_name: &'static str,
    version: &'static str,
) -> CipherInfo {
    CipherInfo {
        name,
        implementation: "rustcrypto",
        family: Family::Block,
        key_bits,
        iv_bits: 0,
        block_bits,
        tag_bits: 0,
        state_bytes,
        origin: Origin::Crate { name: crate_name, version },
        language: Language::Rust,
        bit_order: BitOrder::MsbFirst,
        bit_granular: false,
        note: "",
    }
}

// ---------------------------------------------------------------------------------------
// AES-128

fn mk_aes128() -> Box<dyn BlockCipher + Send> {
    // 11 round keys × 16 bytes
    Box::new(RcBlock::<aes::Aes128>::new(block_info("AES-128", 128, 128, 176, "aes", "0.9"), identity))
}

fn verify_aes128(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_aes128;
    let id = "AES-128/rustcrypto";
    let mut v = vec![
        check_block(mk),
        block_cryptopp(mk, &repo_file("lw-aes.txt"), &["AES/ECB"], None),
        shared(ctx, id, "cryptopp-testvectors/aes.txt", |p| {
            block_cryptopp(mk, p, &["AES/ECB", "AES/CBC", "AES/CTR"], None)
        }),
    ];
    for f in [
        "KAT_AES/ECBGFSbox128.rsp",
        "KAT_AES/ECBKeySbox128.rsp",
        "KAT_AES/ECBVarKey128.rsp",
        "KAT_AES/ECBVarTxt128.rsp",
        "aesmmt/ECBMMT128.rsp",
    ] {
        v.push(shared(ctx, id, &format!("nist/cavp/{f}"), |p| block_kv(mk, p, KvFormat::CavpEcb)));
    }
    v
}

// ---------------------------------------------------------------------------------------
// Ascon

const ASCON_AEAD128_INFO: CipherInfo = CipherInfo {
    name: "Ascon-AEAD128",
    implementation: "rustcrypto",
    family: Family::Aead,
    key_bits: 128,
    iv_bits: 128,
    block_bits: 128, // rate
    tag_bits: 128,
    state_bytes: 40,
    origin: Origin::Crate { name: "ascon-aead128", version: "0.1" },
    language: Language::Rust,
    bit_order: BitOrder::MsbFirst,
    bit_granular: false,
    note: "NIST SP 800-232",
};

fn tag_err(expected: usize, got: usize) -> CipherError {
    CipherError::TagLength { expected, got }
}

/// Ascon-AEAD128 (NIST SP 800-232) from `ascon-aead128`.
#[derive(Default)]
pub struct AsconAead128 {
    inner: Option<ascon_aead128::AsconAead128>, // zeroized on drop by the crate
}

impl Aead for AsconAead128 {
    fn info(&self) -> CipherInfo {
        ASCON_AEAD128_INFO
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        check_len(key.len(), 16, key_err)?;
        self.inner = Some(ascon_aead128::AsconAead128::new_from_slice(key).expect("length checked"));
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        use ascon_aead128::aead::AeadInOut;
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 16, iv_err)?;
        check_len(tag.len(), 16, tag_err)?;
        let n = ascon_aead128::AsconAead128Nonce::try_from(nonce).expect("length checked");
        let t = c.encrypt_inout_detached(&n, ad, buf.into()).map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        use ascon_aead128::aead::AeadInOut;
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 16, iv_err)?;
        check_len(tag.len(), 16, tag_err)?;
        let n = ascon_aead128::AsconAead128Nonce::try_from(nonce).expect("length checked");
        let t = ascon_aead128::AsconAead128Tag::try_from(tag).expect("length checked");
        c.decrypt_inout_detached(&n, ad, (&mut *buf).into(), &t).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

fn mk_ascon_aead128() -> Box<dyn Aead + Send> {
    Box::new(AsconAead128::default())
}

fn verify_ascon_aead128(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_ascon_aead128;
    vec![
        conformance::check_aead(mk),
        lwc::aead_lwc(mk, &repo_file("lw-ascon-aead128.txt")),
        shared(ctx, "Ascon-AEAD128/rustcrypto", "ascon-c/asconaead128_SP800-232/LWC_AEAD_KAT_128_128.txt", |p| {
            lwc::aead_lwc(mk, p)
        }),
    ]
}

/// Ascon-128 v1.2 from `ascon-aead` 0.4.
#[derive(Default)]
pub struct Ascon128 {
    inner: Option<ascon_aead::Ascon128>, // zeroized on drop by the crate
}

impl Aead for Ascon128 {
    fn info(&self) -> CipherInfo {
        CipherInfo {
            name: "Ascon-128",
            block_bits: 64,
            origin: Origin::Crate { name: "ascon-aead", version: "0.4" },
            note: "v1.2 (CAESAR portfolio / NIST-LWC submission); superseded by Ascon-AEAD128",
            ..ASCON_AEAD128_INFO
        }
    }
    fn set_key(&mut self, key: &[u8]) -> Result<(), CipherError> {
        use ascon_aead::aead::KeyInit as _;
        check_len(key.len(), 16, key_err)?;
        self.inner = Some(ascon_aead::Ascon128::new_from_slice(key).expect("length checked"));
        Ok(())
    }
    fn encrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &mut [u8]) -> Result<(), CipherError> {
        use ascon_aead::aead::AeadInPlace;
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 16, iv_err)?;
        check_len(tag.len(), 16, tag_err)?;
        let t = c
            .encrypt_in_place_detached(ascon_aead::Nonce::<ascon_aead::Ascon128>::from_slice(nonce), ad, buf)
            .map_err(|_| CipherError::DataLength { got: buf.len() })?;
        tag.copy_from_slice(&t);
        Ok(())
    }
    fn decrypt(&mut self, nonce: &[u8], ad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), CipherError> {
        use ascon_aead::aead::AeadInPlace;
        let c = self.inner.as_ref().ok_or(CipherError::NotInitialized)?;
        check_len(nonce.len(), 16, iv_err)?;
        check_len(tag.len(), 16, tag_err)?;
        let n = ascon_aead::Nonce::<ascon_aead::Ascon128>::from_slice(nonce);
        let t = ascon_aead::Tag::<ascon_aead::Ascon128>::from_slice(tag);
        c.decrypt_in_place_detached(n, ad, buf, t).map_err(|_| {
            buf.fill(0);
            CipherError::AuthenticationFailed
        })
    }
}

fn mk_ascon128() -> Box<dyn Aead + Send> {
    Box::new(Ascon128::default())
}

fn verify_ascon128(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_ascon128;
    vec![
        conformance::check_aead(mk),
        lwc::aead_lwc(mk, &repo_file("lw-ascon128v12.txt")),
        shared(ctx, "Ascon-128/rustcrypto", "ascon-c/ascon128v12_v1.2/LWC_AEAD_KAT_128_128.txt", |p| {
            lwc::aead_lwc(mk, p)
        }),
    ]
}

// ---------------------------------------------------------------------------------------
// SPECK (all ten sizes) and XTEA

/// One registered SPECK or SIMON size.
struct SpeckEntry {
    mk: fn() -> Box<dyn BlockCipher + Send>,
    verify: crate::entry::Verify,
    mcu: Option<&'static str>,
}

impl SpeckEntry {
    fn entry(&self) -> Entry {
        let e = Entry::block(self.mk, self.verify);
        match self.mcu {
            Some(m) => e.mcu(m),
            None => e,
        }
    }
}

macro_rules! speck {
    ($($ty:ident, $name:literal, $paper:literal, $cpp:expr, $block:literal, $key:literal, $rounds:literal, $mcu:expr;)*) => {
        const SPECKS: &[SpeckEntry] = &[$(
            SpeckEntry {
                mk: || -> Box<dyn BlockCipher + Send> {
                    // round keys: rounds × one n-bit word
                    let info = block_info($name, $key, $block, $rounds * $block / 16, "speck-cipher", "0.1");
                    Box::new(RcBlock::<speck_cipher::$ty>::new(info, reverse))
                },
                verify: |e: &Entry, ctx: &VerifyCtx| -> Vec<Check> {
                    let mk = match e.block_make() {
                        Ok(mk) => mk,
                        Err(c) => return vec![c],
                    };
                    let id = &e.id();
                    let mut v = vec![
                        check_block(mk),
                        block_kv(mk, &repo_file("lw-simon-speck.txt"), KvFormat::Paper($paper)),
                        shared(ctx, id, "simon-speck-paper/simon_speck_eprint2013-404_appendixB_C.txt", |p| block_kv(mk, p, KvFormat::Paper($paper))),
                    ];
                    let cpp: Option<&str> = $cpp;
                    if let Some(n) = cpp {
                        let names = [format!("{n}/ECB"), format!("{n}/CBC"), format!("{n}/CTR")];
                        let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                        v.push(shared(ctx, id, "cryptopp-testvectors/speck.txt", |p| block_cryptopp(mk, p, &names, None)));
                    }
                    v
                },
                mcu: $mcu,
            },
        )*];
    };
}

// Names avoid '/' (it separates cipher and implementation in ids): SPECK-<block>-<key>.
speck! {
    Speck32_64, "SPECK-32-64", "SPECK32/64", None, 32, 64, 22, None;
    Speck48_72, "SPECK-48-72", "SPECK48/72", None, 48, 72, 22, None;
    Speck48_96, "SPECK-48-96", "SPECK48/96", None, 48, 96, 23, None;
    Speck64_96, "SPECK-64-96", "SPECK64/96", Some("SPECK-64"), 64, 96, 26, None;
    Speck64_128, "SPECK-64-128", "SPECK64/128", Some("SPECK-64"), 64, 128, 27, Some("rc_speck64_128");
    Speck96_96, "SPECK-96-96", "SPECK96/96", None, 96, 96, 28, None;
    Speck96_144, "SPECK-96-144", "SPECK96/144", None, 96, 144, 29, None;
    Speck128_128, "SPECK-128-128", "SPECK128/128", Some("SPECK-128"), 128, 128, 32, Some("rc_speck128_128");
    Speck128_192, "SPECK-128-192", "SPECK128/192", Some("SPECK-128"), 128, 192, 33, None;
    Speck128_256, "SPECK-128-256", "SPECK128/256", Some("SPECK-128"), 128, 256, 34, None;
}

fn mk_xtea() -> Box<dyn BlockCipher + Send> {
    // XTEA has no expanded schedule: the 16-byte key is used directly
    Box::new(RcBlock::<xtea::Xtea>::new(block_info("XTEA", 128, 64, 16, "xtea", "0.1"), swap_words32))
}

fn verify_xtea(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_xtea;
    let id = "XTEA/rustcrypto";
    vec![
        check_block(mk),
        block_kv(mk, &repo_file("lw-xtea.txt"), KvFormat::Botan),
        shared(ctx, id, "botan/xtea.vec", |p| block_kv(mk, p, KvFormat::Botan)),
        shared(ctx, id, "cryptopp-testvectors/tea.txt", |p| block_cryptopp(mk, p, &["XTEA/ECB"], Some("32"))),
    ]
}

// ---------------------------------------------------------------------------------------
// Own block ciphers

macro_rules! simon {
    ($($ty:ident, $name:literal, $paper:literal, $cpp:expr, $mcu:expr;)*) => {
        const SIMONS: &[SpeckEntry] = &[$(
            SpeckEntry {
                mk: || -> Box<dyn BlockCipher + Send> { Box::new(lw::simon::Simon::<lw::simon::$ty>::default()) },
                verify: |e: &Entry, ctx: &VerifyCtx| -> Vec<Check> {
                    let mk = match e.block_make() {
                        Ok(mk) => mk,
                        Err(c) => return vec![c],
                    };
                    let id = &e.id();
                    let mut v = vec![
                        check_block(mk),
                        block_kv(mk, &repo_file("lw-simon-speck.txt"), KvFormat::Paper($paper)),
                        shared(ctx, id, "simon-speck-paper/simon_speck_eprint2013-404_appendixB_C.txt", |p| block_kv(mk, p, KvFormat::Paper($paper))),
                    ];
                    let cpp: Option<&str> = $cpp;
                    if let Some(n) = cpp {
                        let names = [format!("{n}/ECB"), format!("{n}/CBC"), format!("{n}/CTR")];
                        let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                        v.push(shared(ctx, id, "cryptopp-testvectors/simon.txt", |p| block_cryptopp(mk, p, &names, None)));
                    }
                    v
                },
                mcu: $mcu,
            },
        )*];
    };
}

simon! {
    Simon32_64, "SIMON-32-64", "SIMON32/64", None, None;
    Simon48_72, "SIMON-48-72", "SIMON48/72", None, None;
    Simon48_96, "SIMON-48-96", "SIMON48/96", None, None;
    Simon64_96, "SIMON-64-96", "SIMON64/96", Some("SIMON-64"), None;
    Simon64_128, "SIMON-64-128", "SIMON64/128", Some("SIMON-64"), Some("simon64_128");
    Simon96_96, "SIMON-96-96", "SIMON96/96", None, None;
    Simon96_144, "SIMON-96-144", "SIMON96/144", None, None;
    Simon128_128, "SIMON-128-128", "SIMON128/128", Some("SIMON-128"), Some("simon128_128");
    Simon128_192, "SIMON-128-192", "SIMON128/192", Some("SIMON-128"), None;
    Simon128_256, "SIMON-128-256", "SIMON128/256", Some("SIMON-128"), None;
}

fn mk_lea128() -> Box<dyn BlockCipher + Send> {
    Box::new(lw::lea::Lea128::default())
}

fn verify_lea128(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_lea128;
    vec![
        check_block(mk),
        block_cryptopp(mk, &repo_file("lw-lea.txt"), &["LEA-128/ECB"], None),
        shared(ctx, "LEA-128/rust-ref", "cryptopp-testvectors/lea.txt", |p| {
            block_cryptopp(mk, p, &["LEA-128/ECB", "LEA-128/CBC", "LEA-128/CTR"], None)
        }),
    ]
}

fn mk_hight() -> Box<dyn BlockCipher + Send> {
    Box::new(lw::hight::Hight::default())
}

fn verify_hight(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_hight;
    vec![
        check_block(mk),
        block_cryptopp(mk, &repo_file("lw-hight.txt"), &["HIGHT/ECB"], None),
        shared(ctx, "HIGHT/rust-ref", "cryptopp-testvectors/hight.txt", |p| {
            block_cryptopp(mk, p, &["HIGHT/ECB", "HIGHT/CBC", "HIGHT/CTR"], None)
        }),
    ]
}

// ---------------------------------------------------------------------------------------
// Own AEADs (NIST LWC finalists)

fn mk_tinyjambu() -> Box<dyn Aead + Send> {
    Box::new(lw::tinyjambu::TinyJambu128::default())
}

fn verify_tinyjambu(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_tinyjambu;
    vec![
        conformance::check_aead(mk),
        lwc::aead_lwc(mk, &repo_file("lw-tinyjambu128.txt")),
        shared(ctx, "TinyJAMBU-128/rust-ref", "lwc-finalists-rweather/TinyJAMBU-128.txt", |p| lwc::aead_lwc(mk, p)),
    ]
}

fn mk_xoodyak() -> Box<dyn Aead + Send> {
    Box::new(lw::xoodyak::Xoodyak::default())
}

fn verify_xoodyak(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_xoodyak;
    vec![
        conformance::check_aead(mk),
        lwc::aead_lwc(mk, &repo_file("lw-xoodyak.txt")),
        shared(ctx, "Xoodyak/rust-ref", "lwc-finalists-rweather/Xoodyak.txt", |p| lwc::aead_lwc(mk, p)),
    ]
}

fn mk_schwaemm() -> Box<dyn Aead + Send> {
    Box::new(lw::schwaemm::Schwaemm256_128::default())
}

fn verify_schwaemm(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_schwaemm;
    vec![
        conformance::check_aead(mk),
        lwc::aead_lwc(mk, &repo_file("lw-schwaemm256-128.txt")),
        shared(ctx, "SCHWAEMM256-128/rust-ref", "lwc-finalists-rweather/Schwaemm256-128.txt", |p| lwc::aead_lwc(mk, p)),
    ]
}

fn mk_grain128aead() -> Box<dyn Aead + Send> {
    Box::new(lw::grain128aead::Grain128AeadV2::default())
}

fn verify_grain128aead(_: &Entry, ctx: &VerifyCtx) -> Vec<Check> {
    let mk = mk_grain128aead;
    let id = "Grain-128AEADv2/rust-ref";
    vec![
        conformance::check_aead(mk),
        lwc::aead_lwc(mk, &repo_file("lw-grain128aeadv2.txt")),
        shared(ctx, id, "grain128aead-designers/v2_final_Noxet-Grain-128AEAD/LWC_AEAD_KAT_128_96.txt", |p| {
            lwc::aead_lwc(mk, p)
        }),
        shared(ctx, id, "lwc-finalists-rweather/Grain-128AEAD.txt", |p| lwc::aead_lwc(mk, p)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registered entry's verification (what `lwcbench verify` runs).
    fn verify(id: &str, ctx: &VerifyCtx) -> Vec<Check> {
        crate::find(id).unwrap_or_else(|| panic!("{id} registered")).checks(ctx)
    }
    /// Every registered entry of this module whose name starts with `prefix`.
    fn entries(prefix: &str) -> Vec<Entry> {
        let mut r = Vec::new();
        register(&mut r);
        r.retain(|e| e.info.name.starts_with(prefix));
        r
    }

    fn assert_all(checks: Vec<Check>) {
        for c in checks {
            assert!(c.ok(), "{}: {} {:?}", c.id, c.what, c.failures);
            eprintln!("{}: {}: {} passed{}", c.id, c.what, c.passed, if c.skipped { " (skipped)" } else { "" });
        }
    }

    #[test]
    fn aes128() {
        assert_all(verify("AES-128/rustcrypto", &VerifyCtx::discover()));
    }
    #[test]
    fn ascon() {
        let ctx = VerifyCtx::discover();
        assert_all(verify("Ascon-AEAD128/rustcrypto", &ctx));
        assert_all(verify("Ascon-128/rustcrypto", &ctx));
    }
    #[test]
    fn speck() {
        let ctx = VerifyCtx::discover();
        let specks = entries("SPECK-");
        assert_eq!(specks.len(), 10);
        for e in specks {
            assert_all(e.checks(&ctx));
        }
    }
    #[test]
    fn simon() {
        let ctx = VerifyCtx::discover();
        let simons = entries("SIMON-");
        assert_eq!(simons.len(), 10);
        for e in simons {
            let v = e.checks(&ctx);
            assert!(v.len() >= 3);
            assert_all(v);
        }
    }
    #[test]
    fn xtea() {
        assert_all(verify("XTEA/rustcrypto", &VerifyCtx::discover()));
    }
    #[test]
    fn lea_and_hight() {
        let ctx = VerifyCtx::discover();
        assert_all(verify("LEA-128/rust-ref", &ctx));
        assert_all(verify("HIGHT/rust-ref", &ctx));
    }
    #[test]
    fn lwc_finalists() {
        let ctx = VerifyCtx::discover();
        for id in ["TinyJAMBU-128/rust-ref", "Xoodyak/rust-ref", "SCHWAEMM256-128/rust-ref", "Grain-128AEADv2/rust-ref"]
        {
            let v = verify(id, &ctx);
            if ctx.vectors.is_some() {
                assert_eq!(v[2].passed, 1089 * 3, "{}", v[2].what);
            }
            assert_all(v);
        }
    }

    #[test]
    fn repo_vectors_alone_suffice() {
        // Without the shared folder every entry still verifies from kat-data (shared checks skip).
        let ctx = VerifyCtx::default();
        let mut r = Vec::new();
        register(&mut r);
        for e in &r {
            let checks = e.checks(&ctx);
            assert!(checks.iter().any(|c| !c.skipped && c.what.starts_with("kat-data/")), "{}", e.id());
            assert_all(checks);
        }
    }

    #[test]
    fn shared_vector_counts() {
        // The whole files must be used, not a prefix: 1089 vectors × 3 comparisons each.
        let ctx = VerifyCtx::discover();
        if ctx.vectors.is_none() {
            return;
        }
        let v = verify("Ascon-AEAD128/rustcrypto", &ctx);
        assert_eq!(v[2].passed, 1089 * 3);
        let v = verify("Ascon-128/rustcrypto", &ctx);
        assert_eq!(v[2].passed, 1089 * 3);
    }

    #[test]
    fn runners_can_fail() {
        // A cipher that is not AES must fail the AES vectors; a damaged file must fail loudly.
        let chk = block_cryptopp(mk_hight, &repo_file("lw-lea.txt"), &["LEA-128/ECB"], None);
        assert!(!chk.ok(), "HIGHT cannot pass LEA vectors (sizes differ → no usable test)");
        let chk = block_cryptopp(mk_lea128, &repo_file("lw-aes.txt"), &["AES/ECB"], None);
        assert!(!chk.ok() && !chk.failures.is_empty());
        let chk = lwc::aead_lwc(mk_ascon128, &repo_file("lw-ascon-aead128.txt"));
        assert!(!chk.ok(), "Ascon-128 v1.2 must not pass Ascon-AEAD128 vectors");
        let ctx = VerifyCtx::discover();
        if let Some(p) = ctx.file("grain128aead-designers/v1_round2_Grain-128AEAD-sw-ref/LWC_AEAD_KAT_128_96.txt") {
            // the obsolete v1 KAT must fail for every vector (encryption differs)
            let chk = lwc::aead_lwc(mk_grain128aead, &p);
            assert!(chk.failures.iter().filter(|f| f.contains("encrypt")).count() == 1089, "{}", chk.failures.len());
        }
        let dir = std::env::temp_dir().join(format!("lwcbench-lw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.txt");
        std::fs::write(&bad, "Count = 1\nKey = 00\nNonce = zz\n").unwrap();
        assert!(!lwc::aead_lwc(mk_ascon128, &bad).ok());
        std::fs::write(&bad, "[XTEA]\nKey 00\n").unwrap();
        assert!(!block_kv(mk_xtea, &bad, KvFormat::Botan).ok());
        std::fs::remove_dir_all(&dir).ok();
    }
}
