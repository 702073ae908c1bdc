//! One catalogue entry: every fact about one implementation of one algorithm. A leaf module
//! (it imports no other module of this crate except the `verify` result types), so adapters
//! depend on it and `registry.rs` depends on the adapters, never the other way round.
use lwcbench_core::{Aead, BlockCipher, CipherInfo, CipherMode, Family, StreamCipher};

use crate::verify::{Check, VerifyCtx};

/// How to make a fresh instance of an implementation.
#[derive(Clone, Copy)]
pub enum Make {
    /// A stream cipher.
    Stream(fn() -> Box<dyn StreamCipher + Send>),
    /// A block cipher.
    Block(fn() -> Box<dyn BlockCipher + Send>),
    /// An AEAD.
    Aead(fn() -> Box<dyn Aead + Send>),
    /// A confidentiality-only block-cipher mode (AES-ECB/CBC/CFB/OFB/CTR; see `crate::aes`).
    Mode(fn() -> Box<dyn CipherMode + Send>),
}

/// Runs an entry's known-answer and cross-check tests. It receives the entry it verifies, so
/// the constructor is written once (in the registration) and read back from `e.make`.
pub type Verify = fn(&Entry, &VerifyCtx) -> Vec<Check>;

/// One implementation of one algorithm.
#[derive(Clone)]
pub struct Entry {
    /// The implementation's metadata.
    pub info: CipherInfo,
    /// How to make an instance in this process. `None` for an implementation that lives in
    /// another process (an external engine's offer, `engine::external`): it is timed and
    /// checked there, and nothing here can construct it.
    pub make: Option<Make>,
    /// Runs this implementation's known-answer and cross-check tests (call [`Entry::checks`]);
    /// `None` where the implementation is checked elsewhere (an engine's answers are checked
    /// against the built-in ciphers when the engine starts).
    pub verify: Option<Verify>,
    /// Applied by the benchmark engine to every IV it draws at random, so that a drawn IV
    /// selects the mode the entry is measured in (Grain-128a: IV bit 0 would otherwise pick
    /// the half-rate authentication mode for half the draws). `None`: any IV is as good.
    pub iv_rule: Option<fn(&mut [u8])>,
    /// Symbol-name markers of this implementation's machine code (a module or type path such
    /// as `lwcbench_estream::trivium::`, or a C symbol prefix such as `draco_fast_`), read by
    /// the engine's code-size measurement (`resources/codesize.rs`, docs/metrics.md
    /// "code_bytes"). Empty: code size is not measured for this entry.
    pub code_markers: &'static [&'static str],
    /// This implementation's microcontroller image, if it has one: `mcu/images.json`, the
    /// image source and the host oracle's arm are generated from it and `info` (`mcu_glue`).
    pub mcu_image: Option<McuImage>,
    /// The known-answer files of an entry verified by a table-driven verification (an LWC
    /// AEAD's `kat::lwc::verify_lwc_aead`); `None` where the verify function names its own.
    pub kat: Option<KatFiles>,
}

/// The vector files a table-driven verification runs for one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KatFiles {
    /// A transcribed file in `crates/catalog/kat-data/`, so the entry verifies without the
    /// shared folder.
    pub repo: &'static str,
    /// Files under `shared/vectors/`, run when the folder is present (skipped otherwise).
    pub shared: &'static [&'static str],
}

/// How a microcontroller image holds the cipher state (a static in `.bss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McuState {
    /// An `Option` that `lwc_init` fills with `Default`: no claim about which bit patterns of
    /// the type are valid (every block cipher and AEAD, the RustCrypto stream adapters).
    Built,
    /// The zero-filled static itself (a stream cipher whose every field is an integer, an
    /// integer array or a `bool`, and whose `init` resets all of it): no constructor runs.
    Zeroed,
}

/// An entry's microcontroller image. With the entry's `info` (family, key, IV, tag and block
/// sizes) it is every fact `mcu/images/src/bin/<name>.rs` and the `mcu/hostref` arm repeat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McuImage {
    /// The image (binary) name, `[a-z0-9_]`, used by `mcu/` and the data tables.
    pub name: &'static str,
    /// The implementation's type as `mcu/images` names it (`no_std`, no allocation,
    /// `Default`): an own type such as `lwcbench_lightweight::xoodyak::Xoodyak`, or an adapter
    /// of `mcu/images/src/rc.rs` such as `lwc_mcu_images::rc::RcBlock<aes::Aes128>`.
    pub ty: &'static str,
    /// How the image holds the state.
    pub state: McuState,
}

impl McuImage {
    /// An image whose state `lwc_init` builds with `Default` ([`McuState::Built`]).
    pub const fn new(name: &'static str, ty: &'static str) -> Self {
        McuImage { name, ty, state: McuState::Built }
    }
    /// A stream-cipher image whose state is the zero-filled static ([`McuState::Zeroed`]).
    pub const fn zeroed(name: &'static str, ty: &'static str) -> Self {
        McuImage { name, ty, state: McuState::Zeroed }
    }
}

impl Entry {
    /// An in-process entry with no IV rule, no code markers and no MCU image.
    pub fn from_parts(info: CipherInfo, make: Make, verify: Verify) -> Self {
        Entry {
            info,
            make: Some(make),
            verify: Some(verify),
            iv_rule: None,
            code_markers: &[],
            mcu_image: None,
            kat: None,
        }
    }
    /// An implementation in another process: described by `info`, with no constructor and no
    /// in-process verification (see [`Entry::make`]).
    pub fn elsewhere(info: CipherInfo) -> Self {
        Entry { info, make: None, verify: None, iv_rule: None, code_markers: &[], mcu_image: None, kat: None }
    }
    /// Can this process construct (and so time) the implementation?
    pub fn in_process(&self) -> bool {
        self.make.is_some()
    }
    fn checked(make: Make, family: Family, verify: Verify) -> Self {
        let info = match make {
            Make::Stream(m) => m().info(),
            Make::Block(m) => m().info(),
            Make::Aead(m) => m().info(),
            Make::Mode(m) => m().info(),
        };
        assert_eq!(info.family, family, "{} registered as {family:?}", info.name);
        Entry::from_parts(info, make, verify)
    }
    /// A stream-cipher entry; panics if `make` builds something of another family (a
    /// registration bug, caught by the registry's tests).
    pub fn stream(make: fn() -> Box<dyn StreamCipher + Send>, verify: Verify) -> Self {
        Entry::checked(Make::Stream(make), Family::Stream, verify)
    }
    /// A block-cipher entry; panics like [`Entry::stream`].
    pub fn block(make: fn() -> Box<dyn BlockCipher + Send>, verify: Verify) -> Self {
        Entry::checked(Make::Block(make), Family::Block, verify)
    }
    /// An AEAD entry; panics like [`Entry::stream`].
    pub fn aead(make: fn() -> Box<dyn Aead + Send>, verify: Verify) -> Self {
        Entry::checked(Make::Aead(make), Family::Aead, verify)
    }
    /// A block-cipher-mode entry; panics like [`Entry::stream`].
    pub fn mode(make: fn() -> Box<dyn CipherMode + Send>, verify: Verify) -> Self {
        Entry::checked(Make::Mode(make), Family::Mode, verify)
    }
    /// This entry with a rule for drawn IVs (see `iv_rule`).
    pub fn with_iv_rule(mut self, rule: fn(&mut [u8])) -> Self {
        self.iv_rule = Some(rule);
        self
    }
    /// This entry with its code-size markers (see `code_markers`).
    pub fn code(mut self, markers: &'static [&'static str]) -> Self {
        self.code_markers = markers;
        self
    }
    /// This entry with a microcontroller image `name` of type `ty` whose state `lwc_init`
    /// builds (see [`McuImage`]).
    pub fn mcu(self, name: &'static str, ty: &'static str) -> Self {
        self.with_mcu(McuImage::new(name, ty))
    }
    /// This stream-cipher entry with an image whose state is the zero-filled static (see
    /// [`McuState::Zeroed`]).
    pub fn mcu_zeroed(self, name: &'static str, ty: &'static str) -> Self {
        self.with_mcu(McuImage::zeroed(name, ty))
    }
    /// This entry with its microcontroller image (see `mcu_image`).
    pub fn with_mcu(mut self, image: McuImage) -> Self {
        self.mcu_image = Some(image);
        self
    }
    /// This entry with the vector files of a table-driven verification (see `kat`).
    pub fn kat(mut self, repo: &'static str, shared: &'static [&'static str]) -> Self {
        self.kat = Some(KatFiles { repo, shared });
        self
    }
    /// Run this entry's verification.
    pub fn checks(&self, ctx: &VerifyCtx) -> Vec<Check> {
        match self.verify {
            Some(v) => v(self, ctx),
            None => Vec::new(),
        }
    }
    /// Does a user's selector name this entry? A bare algorithm name selects every
    /// implementation of it; "name/impl" selects one (both case-insensitive; `-star` may stand
    /// for the `*` of CCM*, see [`star`]).
    pub fn matches(&self, selector: &str) -> bool {
        let s = star(selector);
        self.info.name.eq_ignore_ascii_case(&s) || self.id().eq_ignore_ascii_case(&s)
    }
    /// This implementation's stable cipher number in the link's frame, if the link offers it
    /// (`crate::link_ids`).
    pub fn link_id(&self) -> Option<u8> {
        let id = self.id();
        crate::link_ids::LINK_IDS.iter().find(|(_, n)| *n == id).map(|&(k, _)| k)
    }
    /// "cipher/implementation", the id used on the command line.
    pub fn id(&self) -> String {
        format!("{}/{}", self.info.name, self.info.implementation)
    }
    /// The stream constructor, or a failed check naming the mismatch (for verify functions).
    pub fn stream_make(&self) -> Result<fn() -> Box<dyn StreamCipher + Send>, Check> {
        match self.make {
            Some(Make::Stream(m)) => Ok(m),
            _ => Err(self.wrong_family("stream")),
        }
    }
    /// The block-cipher constructor, or a failed check naming the mismatch.
    pub fn block_make(&self) -> Result<fn() -> Box<dyn BlockCipher + Send>, Check> {
        match self.make {
            Some(Make::Block(m)) => Ok(m),
            _ => Err(self.wrong_family("block")),
        }
    }
    /// The AEAD constructor, or a failed check naming the mismatch.
    pub fn aead_make(&self) -> Result<fn() -> Box<dyn Aead + Send>, Check> {
        match self.make {
            Some(Make::Aead(m)) => Ok(m),
            _ => Err(self.wrong_family("aead")),
        }
    }
    fn wrong_family(&self, want: &str) -> Check {
        let mut c = Check::new(self.id(), "registration");
        c.fail(format!("verification expects a {want} entry, found {:?}", self.info.family));
        c
    }
}

/// `selector` with every `-star` (any case) as `*`: `AES-128-CCM-STAR-8` names AES-128-CCM*-8
/// without the `*` that shells refusing an unmatched glob (zsh) would need quoted.
pub(crate) fn star(selector: &str) -> String {
    let lower = selector.to_ascii_lowercase();
    let mut out = String::with_capacity(selector.len());
    let mut i = 0;
    while let Some(at) = lower[i..].find("-star") {
        out.push_str(&selector[i..i + at]);
        out.push('*');
        i += at + "-star".len();
    }
    out.push_str(&selector[i..]);
    out
}
