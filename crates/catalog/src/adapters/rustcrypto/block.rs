//! Block ciphers from RustCrypto crates behind one generic adapter ([`RcBlock`]):
//! * **AES-128** — RustCrypto `aes` 0.9 (FIPS 197), the RR% baseline. The crate picks its
//!   backend at run time (`cpufeatures`): with AVX-512F + VAES (as on this VM) block calls go
//!   to its VAES-512 backend, else VAES-256, else AES-NI; key expansion uses AES-NI. All are
//!   constant time in hardware. Without AES-NI it falls back to a constant-time fixsliced
//!   software implementation (forced with `--cfg aes_backend="soft"`).
//! * **SPECK** (all ten sizes of ePrint 2013/404) — RustCrypto `speck-cipher` 0.1. ARX:
//!   constant time. The crate reads words big-endian, most significant word first (the
//!   paper's printed order); this adapter exposes the common byte convention (little-endian
//!   words, `k[0]` first, y before x — Crypto++, Linux, Wycheproof) by reversing key and block.
//! * **XTEA** — RustCrypto `xtea` 0.1. ARX, key-word index depends only on the public round
//!   sum: constant time. The crate reads little-endian words; XTEA's de-facto standard
//!   (Needham–Wheeler reference code, Botan, Crypto++) is big-endian, so the adapter
//!   byte-swaps each 32-bit word of key and block.
//!
//! Ids: names avoid '/' (it separates cipher and implementation), so SPECK64/128 is
//! `SPECK-64-128/rustcrypto`. The AES modes and the other AES libraries are in `crate::aes`.
use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, BlockSizeUser, KeyInit};
use lwcbench_core::{check_len, key_err, BitOrder, BlockCipher, CipherError, CipherInfo, Family, Language, Origin};

use crate::conformance::check_block;
use crate::entry::{Entry, McuImage};
use crate::kat::block::{block_cryptopp, block_kv, KvFormat};
use crate::kat::{repo_file, shared};
use crate::verify::{Check, VerifyCtx};

/// AES-128 (registered before the Ascon entries, as it always was: listing order).
pub fn register_aes(r: &mut Vec<Entry>) {
    r.push(Entry::block(mk_aes128, verify_aes128).mcu("rc_aes128", "lwc_mcu_images::rc::RcBlock<aes::Aes128>"));
}

/// SPECK (ten sizes) and XTEA.
pub fn register(r: &mut Vec<Entry>) {
    for s in SPECKS {
        r.push(s.entry());
    }
    r.push(Entry::block(mk_xtea, verify_xtea).mcu("rc_xtea", "lwc_mcu_images::rc::RcBlock<xtea::Xtea>"));
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
    /// An instance without key, with its metadata and byte-convention map `xf`.
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
// SPECK (all ten sizes) and XTEA

/// One registered SPECK or SIMON size (SIMON, own code, uses it too).
pub(crate) struct SpeckEntry {
    pub(crate) mk: fn() -> Box<dyn BlockCipher + Send>,
    pub(crate) verify: crate::entry::Verify,
    pub(crate) mcu: Option<McuImage>,
}

impl SpeckEntry {
    pub(crate) fn entry(&self) -> Entry {
        let e = Entry::block(self.mk, self.verify);
        match self.mcu {
            Some(m) => e.with_mcu(m),
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
                // the image's adapter over the same crate type (mcu/images/src/rc.rs)
                mcu: match $mcu {
                    Some(name) => Some(McuImage::new(name, concat!("lwc_mcu_images::rc::RcBlock<speck_cipher::", stringify!($ty), ">"))),
                    None => None,
                },
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
