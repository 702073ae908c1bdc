//! The benchmark suites as they run on a board, printing the line format of `docs/board.md`
//! (version 2). Shared unchanged by every Rust board image; a board supplies only [`Board`]
//! (a tick counter, an optional cycle counter, a way to write bytes) and its [`BoardInfo`].
//!
//! What is measured mirrors the host engine (`crates/engine/src/runner.rs`, docs/measurement.md):
//! per group (cipher × scenario × key/IV variant × size) a batch is calibrated so one sample
//! lasts at least `min_sample_ticks`, then `warmup` + `reps` samples are timed, each after an
//! untimed preparation (fresh key/IV for the random variants, `init`, payload restored).
//! `init` times `init(key, iv)`; `keystream` times `keystream_bits(out, n)`; `full` times
//! `apply_bits(buf, n)` (keystream + XOR into the payload). AEADs: `keysetup` times
//! `set_key(key)`, `encrypt` times `encrypt(nonce, [], msg, tag)` — the call of the emulated
//! images (mcu/images `aead_image!`), through the same adapters ([`rc`]). No floating point,
//! no allocator.
#![cfg_attr(not(test), no_std)]

use core::fmt::Write;
use core::hint::black_box;

use lwcbench_core::{Aead, StreamCipher};

pub use lwcbench_draco::{DracoFast, DracoRef};
pub use lwcbench_estream::{Grain128a, Trivium};

/// The RustCrypto adapters of the emulated images: mcu/images/src/rc.rs itself, compiled in
/// here (as mcu/hostref does), so a board runs the code whose cycles were emulated.
#[path = "../../../mcu/images/src/rc.rs"]
pub mod rc;

/// Declares the AEAD types a board runs and [`AEAD_IMAGES`], which names each one's emulated
/// image and keeps the type as written (a test checks it against that image's source).
macro_rules! aead_images {
    ($($(#[$m:meta])* $alias:ident = $ty:ty => $name:literal, $image:literal, $key:literal, $nonce:literal, $tag:literal;)*) => {
        $($(#[$m])* pub type $alias = $ty;)*
        /// The AEADs of [`RcAeads`], in its order: names, emulated image and lengths.
        pub const AEAD_IMAGES: &[AeadImage] = &[$(AeadImage {
            name: $name,
            image: $image,
            ty: stringify!($ty),
            key_bytes: $key,
            nonce_bytes: $nonce,
            tag_bytes: $tag,
        }),*];
    };
}

aead_images! {
    /// Ascon-AEAD128 (NIST SP 800-232), image `rc_ascon_aead128`.
    AsconAead128 = rc::RcAead6<ascon_aead128::AsconAead128> => "Ascon-AEAD128", "rc_ascon_aead128", 16, 16, 16;
    /// ChaCha20-Poly1305 (RFC 8439), image `rc_chacha20poly1305`.
    ChaCha20Poly1305 = rc::RcAead6<chacha20poly1305::ChaCha20Poly1305> => "ChaCha20-Poly1305", "rc_chacha20poly1305", 32, 12, 16;
    /// AES-128-CCM, 16-byte tag, 12-byte nonce, image `rc_aes128_ccm`.
    Aes128Ccm = rc::RcAead6<ccm::Ccm<aes::Aes128, ccm::consts::U16, ccm::consts::U12>> => "AES-128-CCM", "rc_aes128_ccm", 16, 12, 16;
    /// AES-128-GCM, image `rc_aes128_gcm`.
    Aes128Gcm = rc::RcAead6<aes_gcm::Aes128Gcm> => "AES-128-GCM", "rc_aes128_gcm", 16, 12, 16;
}

/// One AEAD of the emulated images: what the header and sample lines call it, and its lengths.
#[derive(Clone, Copy, Debug)]
pub struct AeadImage {
    /// Algorithm name, as data/emulated-cycles.csv has it (`cipher`).
    pub name: &'static str,
    /// The mcu/images binary with the same code (`image` of data/emulated-cycles.csv).
    pub image: &'static str,
    /// The adapter type as written here (`rc::…`).
    pub ty: &'static str,
    /// Key length in bytes.
    pub key_bytes: usize,
    /// Nonce length in bytes (at least 8: its last 8 bytes carry the run's nonce counter).
    pub nonce_bytes: usize,
    /// Tag length in bytes.
    pub tag_bytes: usize,
}

/// The implementation name of the adapters (`implementation` of data/emulated-cycles.csv).
pub const RC_IMPLEMENTATION: &str = "rustcrypto";

/// An AEAD a run measures, with its names and lengths.
pub struct AeadUnder<'a> {
    /// Names and lengths.
    pub image: AeadImage,
    /// Implementation name (`rustcrypto`).
    pub implementation: &'static str,
    /// The cipher, keyed by the run.
    pub c: &'a mut dyn Aead,
}

/// The four AEADs of [`AEAD_IMAGES`], unkeyed (each adapter is `None` until `set_key`).
#[derive(Default)]
pub struct RcAeads {
    ascon: AsconAead128,
    chacha: ChaCha20Poly1305,
    ccm: Aes128Ccm,
    gcm: Aes128Gcm,
}

impl RcAeads {
    /// The AEADs in the order of [`AEAD_IMAGES`], for [`run_suite`].
    pub fn under(&mut self) -> [AeadUnder<'_>; 4] {
        let i = |k: usize| AEAD_IMAGES[k];
        [
            AeadUnder { image: i(0), implementation: RC_IMPLEMENTATION, c: &mut self.ascon },
            AeadUnder { image: i(1), implementation: RC_IMPLEMENTATION, c: &mut self.chacha },
            AeadUnder { image: i(2), implementation: RC_IMPLEMENTATION, c: &mut self.ccm },
            AeadUnder { image: i(3), implementation: RC_IMPLEMENTATION, c: &mut self.gcm },
        ]
    }
}

/// How this code was built (from build.rs), for `BoardInfo`.
pub mod build {
    /// `rustc -V` of the compiler that built the firmware.
    pub const COMPILER: &str = env!("BOARD_RUSTC");
    /// Cargo profile (`release`, `debug`).
    pub const PROFILE: &str = env!("BOARD_PROFILE");
    /// Optimisation level of that profile (`3`, `s`, …).
    pub const OPT: &str = env!("BOARD_OPT");
    /// Target triple (`thumbv7m-none-eabi`, …).
    pub const TARGET: &str = env!("BOARD_TARGET");
    /// Git commit of the checkout, `-dirty` when it had changes; `unknown` outside git.
    pub const COMMIT: &str = env!("BOARD_COMMIT");
}

/// What a board provides.
pub trait Board {
    /// Monotonic tick counter at `BoardInfo::tick_hz` (a board extends narrow hardware
    /// counters to 64 bits).
    fn ticks(&mut self) -> u64;
    /// Free-running core-cycle counter, wrapping at `2^BoardInfo::cycle_bits`; None if none.
    fn cycles(&mut self) -> Option<u32>;
    /// Send bytes to the host (blocking until queued).
    fn write(&mut self, bytes: &[u8]);
    /// Drive the power logger's trigger pin (docs/power.md); a board without one ignores it.
    fn trigger(&mut self, _high: bool) {}
}

/// The power logger's trigger (docs/power.md): the board drives a pin high while each timed
/// batch runs and prints a marker line (`LWCB M`) with the batch's ticks.
#[derive(Clone, Copy)]
pub struct Trigger {
    /// The pin, as printed in the header (`trigger=GP15`).
    pub pin: &'static str,
    /// Ticks the board waits with the pin low before each batch, so the logger sees the idle
    /// draw between batches (its baseline).
    pub idle_ticks: u64,
}

/// Facts printed in the header line (see docs/board.md for each key).
pub struct BoardInfo {
    /// The board's name (`board=`).
    pub board: &'static str,
    /// The microcontroller (`mcu=`).
    pub mcu: &'static str,
    /// Core clock in Hz (`cpu_hz=`).
    pub cpu_hz: u32,
    /// Rate of `Board::ticks` in Hz (`tick_hz=`).
    pub tick_hz: u32,
    /// The timer behind `Board::ticks` (`timer=`).
    pub timer: &'static str,
    /// "none" when `Board::cycles` returns None.
    pub cycles: &'static str,
    /// Width of the cycle counter (24 for SysTick, 32 for DWT CYCCNT).
    pub cycle_bits: u32,
    /// Firmware name and version (`firmware=`).
    pub firmware: &'static str,
    /// Compiler version (`compiler=`, usually [`build::COMPILER`]).
    pub compiler: &'static str,
    /// Build profile (`profile=`, usually [`build::PROFILE`]).
    pub profile: &'static str,
    /// Optimisation level (`opt=`, usually [`build::OPT`]).
    pub opt: &'static str,
    /// Target triple (`target=`, usually [`build::TARGET`]).
    pub target: &'static str,
    /// Source commit (`commit=`, usually [`build::COMMIT`]).
    pub commit: &'static str,
}

/// The run's settings.
#[derive(Clone, Copy)]
pub struct Config {
    /// Timed samples per group.
    pub reps: u32,
    /// Warm-up samples per group, run first and printed as `LWCB W` lines.
    pub warmup: u32,
    /// Shortest sample in ticks; the batch size is calibrated to reach it.
    pub min_sample_ticks: u64,
    /// Seed of the random key/IV variants and payloads.
    pub seed: u64,
    /// Message sizes in bits (1..=1024; at most 8 are run).
    pub sizes: &'static [usize],
    /// AEAD message sizes in bits (whole bytes, 8..=1024; at most 8 are run).
    pub aead_sizes: &'static [usize],
    /// The power logger's trigger; None = no pin, no marker lines.
    pub trigger: Option<Trigger>,
}

/// The DRACO study's suite: 1, 8, 128 and 1024 bits.
pub const SIZES: &[usize] = &[1, 8, 128, 1024];
/// The emulated tables' message lengths: 16 and 128 bytes.
pub const AEAD_SIZES: &[usize] = &[128, 1024];
/// Line format version (docs/board.md): 2 adds the header key `ad_bytes`.
pub const FORMAT_VERSION: u32 = 2;
/// Associated data of every AEAD `encrypt` sample: none, as in the emulated images.
const AD_BYTES: usize = 0;
const MAX_BYTES: usize = 128;
const MAX_TAG: usize = 16;
const MAX_BATCH: u64 = 1 << 20;
const KIVS: [(&str, bool, bool); 4] =
    [("s,s", false, false), ("s,r", false, true), ("r,s", true, false), ("r,r", true, true)];

#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Init,
    Keystream,
    Full,
    Keysetup,
    Encrypt,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Init => "init",
            Scenario::Keystream => "keystream",
            Scenario::Full => "full",
            Scenario::Keysetup => "keysetup",
            Scenario::Encrypt => "encrypt",
        }
    }
}

/// CRC-32 (IEEE 802.3, as zlib), continued from `crc`.
pub fn crc32_update(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

/// xorshift64* — not cryptographic; it only has to make the random key/IV variants differ
/// from sample to sample.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn fill(&mut self, b: &mut [u8]) {
        for chunk in b.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// Longest output line: the header with every key, long build strings and the trigger.
const LINE_MAX: usize = 768;

/// One output line being built: body, then ` *crc\r\n`.
struct Line {
    buf: [u8; LINE_MAX],
    len: usize,
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let b = s.as_bytes();
        let end = self.len + b.len();
        if end > self.buf.len() - 16 {
            return Err(core::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(b);
        self.len = end;
        Ok(())
    }
}

/// A field value with spaces, `%` and non-printable bytes percent-encoded (docs/board.md).
struct Pct<'a>(&'a str);

impl core::fmt::Display for Pct<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for &b in self.0.as_bytes() {
            if b == b'%' || b == b'+' || b <= b' ' || b >= 0x7f {
                write!(f, "%{b:02X}")?;
            } else {
                f.write_char(b as char)?;
            }
        }
        Ok(())
    }
}

struct Out<'b, B: Board> {
    board: &'b mut B,
    line: Line,
    seq: u64,
    run_crc: u32,
    samples: u64,
    warmups: u64,
    /// Next marker line's batch id.
    batch: u64,
}

impl<B: Board> Out<'_, B> {
    fn start(&mut self) -> &mut Line {
        self.line.len = 0;
        &mut self.line
    }
    /// Close the line with its CRC and send it; `in_run` adds it to the run checksum.
    fn finish(&mut self, in_run: bool) {
        let body_len = self.line.len;
        let crc = crc32_update(0, &self.line.buf[..body_len]);
        if in_run {
            self.run_crc = crc32_update(self.run_crc, &self.line.buf[..body_len]);
            self.run_crc = crc32_update(self.run_crc, b"\n");
        }
        let _ = write!(self.line, " *{crc:08x}\r\n");
        self.board.write(&self.line.buf[..self.line.len]);
    }
    fn info(&mut self, msg: core::fmt::Arguments<'_>) {
        let l = self.start();
        let _ = l.write_str("LWCB I ");
        let _ = l.write_fmt(msg);
        self.finish(false);
    }
}

/// Print an `LWCB I` line (ignored by the collector; for a human watching the terminal).
pub fn info_line<B: Board>(board: &mut B, msg: &str) {
    let mut o =
        Out { board, line: Line { buf: [0; LINE_MAX], len: 0 }, seq: 0, run_crc: 0, samples: 0, warmups: 0, batch: 0 };
    o.info(format_args!("{msg}"));
}

fn ticks_since<B: Board>(b: &mut B, t0: u64) -> u64 {
    b.ticks().wrapping_sub(t0)
}

/// Median ticks of an empty timed region (start + stop).
fn overhead<B: Board>(b: &mut B) -> u64 {
    let mut v = [0u64; 31];
    for x in v.iter_mut() {
        let t0 = b.ticks();
        *x = ticks_since(b, t0);
    }
    v.sort_unstable();
    v[v.len() / 2]
}

/// The cipher under test.
enum Under<'c> {
    Stream(&'c mut dyn StreamCipher),
    Aead(&'c mut dyn Aead),
}

/// The cipher under test and its working buffers for one group.
struct Work<'c> {
    c: Under<'c>,
    sc: Scenario,
    nbits: usize,
    key: [u8; 32],
    iv: [u8; 32],
    klen: usize,
    ivlen: usize,
    taglen: usize,
    /// The run's AEAD nonce counter: every `encrypt` writes it, big-endian, into the nonce's
    /// last 8 bytes and then increments it, and it never restarts within a run, so no
    /// (key, nonce) pair repeats (a few instructions per call, in the timed region).
    nonce_ctr: u64,
    payload: [u8; MAX_BYTES],
    buf: [u8; MAX_BYTES],
    tag: [u8; MAX_TAG],
}

impl Work<'_> {
    fn prepare(&mut self) {
        self.buf = self.payload;
        // A cipher whose init fails here has a wrong key/IV length in INFO: a bug, not data.
        let r = match &mut self.c {
            Under::Stream(c) => c.init(&self.key[..self.klen], &self.iv[..self.ivlen]),
            Under::Aead(c) => c.set_key(&self.key[..self.klen]),
        };
        r.expect("init with INFO lengths");
    }
    #[inline(never)]
    fn run(&mut self, batch: u64) {
        let nb = self.nbits.div_ceil(8);
        let (key, iv) = (&self.key[..self.klen], &mut self.iv[..self.ivlen]);
        for _ in 0..batch {
            let r = match (&mut self.c, self.sc) {
                (Under::Stream(c), Scenario::Init) => c.init(key, iv),
                (Under::Stream(c), Scenario::Keystream) => c.keystream_bits(&mut self.buf[..nb], self.nbits),
                (Under::Stream(c), Scenario::Full) => c.apply_bits(&mut self.buf[..nb], self.nbits),
                (Under::Aead(c), Scenario::Keysetup) => c.set_key(key),
                (Under::Aead(c), Scenario::Encrypt) => {
                    let n = iv.len();
                    iv[n - 8..].copy_from_slice(&self.nonce_ctr.to_be_bytes());
                    self.nonce_ctr += 1;
                    c.encrypt(iv, &[0u8; AD_BYTES], &mut self.buf[..nb], &mut self.tag[..self.taglen])
                }
                _ => unreachable!("the plan pairs stream scenarios with stream ciphers, AEAD ones with AEADs"),
            };
            black_box(&mut self.buf);
            black_box(&mut self.tag);
            black_box(r).expect("cipher call with valid lengths");
        }
    }
}

/// Number of groups a run of `n_ciphers` stream ciphers measures with these sizes.
pub fn groups(n_ciphers: usize, sizes: &[usize]) -> usize {
    n_ciphers * KIVS.len() * (1 + 2 * sizes.len().min(8))
}

/// Number of groups a run of `n_aeads` AEADs measures with these sizes (`keysetup`, then
/// `encrypt` per size, each with the four key/nonce variants).
pub fn aead_groups(n_aeads: usize, sizes: &[usize]) -> usize {
    n_aeads * KIVS.len() * (1 + sizes.len().min(8))
}

/// Run every group for every stream cipher and print the whole run (header … end line).
pub fn run<B: Board>(board: &mut B, info: &BoardInfo, cfg: &Config, ciphers: &mut [&mut dyn StreamCipher]) {
    run_suite(board, info, cfg, ciphers, &mut [])
}

/// Run every group for every stream cipher, then for every AEAD, and print the whole run.
pub fn run_suite<B: Board>(
    board: &mut B,
    info: &BoardInfo,
    cfg: &Config,
    ciphers: &mut [&mut dyn StreamCipher],
    aeads: &mut [AeadUnder<'_>],
) {
    assert!(cfg.sizes.iter().all(|&s| s > 0 && s <= MAX_BYTES * 8), "sizes must be 1..=1024 bits");
    assert!(
        cfg.aead_sizes.iter().all(|&s| s > 0 && s % 8 == 0 && s <= MAX_BYTES * 8),
        "AEAD sizes must be whole bytes, 8..=1024 bits"
    );
    assert!(
        aeads.iter().all(|a| a.image.nonce_bytes >= 8
            && a.image.nonce_bytes <= 32
            && a.image.key_bytes <= 32
            && a.image.tag_bytes <= MAX_TAG),
        "AEAD lengths: nonce 8..=32, key ≤ 32, tag ≤ 16 bytes"
    );
    let ovh = overhead(board);
    let mut o =
        Out { board, line: Line { buf: [0; LINE_MAX], len: 0 }, seq: 0, run_crc: 0, samples: 0, warmups: 0, batch: 0 };
    let n_groups = groups(ciphers.len(), cfg.sizes) + aead_groups(aeads.len(), cfg.aead_sizes);
    {
        let l = o.start();
        let _ = write!(
            l,
            "LWCB H {FORMAT_VERSION} board={} mcu={} cpu_hz={} tick_hz={} timer={} cycles={} overhead_ticks={ovh} reps={} warmup={} groups={n_groups} min_sample_ticks={} seed={} ad_bytes={AD_BYTES} ciphers=",
            Pct(info.board), Pct(info.mcu), info.cpu_hz, info.tick_hz, Pct(info.timer), Pct(info.cycles), cfg.reps, cfg.warmup, cfg.min_sample_ticks, cfg.seed
        );
        let names = ciphers
            .iter()
            .map(|c| {
                let ci = c.info();
                (ci.name, ci.implementation, ci.language.as_str())
            })
            .chain(aeads.iter().map(|a| (a.image.name, a.implementation, "Rust")));
        for (i, (name, imp, lang)) in names.enumerate() {
            let _ = write!(l, "{}{}/{}/{}", if i > 0 { "," } else { "" }, Pct(name), Pct(imp), Pct(lang));
        }
        let _ = write!(
            l,
            " firmware={} compiler={} profile={} opt={} target={} commit={}",
            Pct(info.firmware),
            Pct(info.compiler),
            Pct(info.profile),
            Pct(info.opt),
            Pct(info.target),
            Pct(info.commit)
        );
        if let Some(tr) = cfg.trigger {
            let _ = write!(l, " trigger={} idle_ticks={}", Pct(tr.pin), tr.idle_ticks);
        }
    }
    o.finish(false);
    let mut rng = Rng(cfg.seed ^ 0x9E37_79B9_7F4A_7C15);
    for c in ciphers.iter_mut() {
        let ci = c.info();
        o.info(format_args!("cipher {}/{}", Pct(ci.name), Pct(ci.implementation)));
        let mut plan = [(Scenario::Init, 0usize); 1 + 2 * 8];
        let mut np = 1;
        for &s in cfg.sizes.iter().take(8) {
            plan[np] = (Scenario::Keystream, s);
            plan[np + 1] = (Scenario::Full, s);
            np += 2;
        }
        for &(sc, nbits) in &plan[..np] {
            for &(kiv, rk, riv) in &KIVS {
                let mut w = Work {
                    c: Under::Stream(&mut **c),
                    sc,
                    nbits,
                    key: core::array::from_fn(|i| i as u8),
                    iv: core::array::from_fn(|i| i as u8),
                    klen: ci.key_bytes(),
                    ivlen: ci.iv_bytes(),
                    taglen: 0,
                    nonce_ctr: 0,
                    payload: [0; MAX_BYTES],
                    buf: [0; MAX_BYTES],
                    tag: [0; MAX_TAG],
                };
                rng.fill(&mut w.payload);
                measure_group(
                    &mut o,
                    &mut w,
                    info,
                    cfg,
                    &mut rng,
                    (ci.name, ci.implementation, ci.language.as_str(), kiv, rk, riv),
                );
            }
        }
    }
    let mut nonce_ctr = 0u64;
    for a in aeads.iter_mut() {
        let im = a.image;
        o.info(format_args!("cipher {}/{}", Pct(im.name), Pct(a.implementation)));
        let mut plan = [(Scenario::Keysetup, 0usize); 1 + 8];
        let mut np = 1;
        for &s in cfg.aead_sizes.iter().take(8) {
            plan[np] = (Scenario::Encrypt, s);
            np += 1;
        }
        for &(sc, nbits) in &plan[..np] {
            for &(kiv, rk, riv) in &KIVS {
                let mut w = Work {
                    c: Under::Aead(&mut *a.c),
                    sc,
                    nbits,
                    key: core::array::from_fn(|i| i as u8),
                    iv: core::array::from_fn(|i| i as u8),
                    klen: im.key_bytes,
                    ivlen: im.nonce_bytes,
                    taglen: im.tag_bytes,
                    nonce_ctr,
                    payload: [0; MAX_BYTES],
                    buf: [0; MAX_BYTES],
                    tag: [0; MAX_TAG],
                };
                rng.fill(&mut w.payload);
                measure_group(&mut o, &mut w, info, cfg, &mut rng, (im.name, a.implementation, "Rust", kiv, rk, riv));
                nonce_ctr = w.nonce_ctr;
            }
        }
    }
    let (ns, nw, crc) = (o.samples, o.warmups, o.run_crc);
    let l = o.start();
    let _ = write!(l, "LWCB E samples={ns} warmup={nw} crc={crc:08x}");
    o.finish(false);
}

fn measure_group<B: Board>(
    o: &mut Out<'_, B>,
    w: &mut Work<'_>,
    info: &BoardInfo,
    cfg: &Config,
    rng: &mut Rng,
    (name, imp, lang, kiv, rk, riv): (&str, &str, &str, &str, bool, bool),
) {
    // Calibrate: double the batch until one sample lasts min_sample_ticks, then size it.
    let mut batch = 1u64;
    loop {
        w.prepare();
        let t0 = o.board.ticks();
        w.run(batch);
        let t = ticks_since(o.board, t0);
        if t >= cfg.min_sample_ticks || batch >= MAX_BATCH {
            batch = (cfg.min_sample_ticks * batch).div_ceil(t.max(1)).clamp(1, MAX_BATCH);
            break;
        }
        batch *= 2;
    }
    // An interrupt during calibration inflates `t` and shrinks the batch: confirm it.
    for _ in 0..20 {
        w.prepare();
        let t0 = o.board.ticks();
        w.run(batch);
        if ticks_since(o.board, t0) >= cfg.min_sample_ticks / 2 || batch >= MAX_BATCH {
            break;
        }
        batch *= 2;
    }
    let size = if matches!(w.sc, Scenario::Init | Scenario::Keysetup) { 0 } else { w.nbits };
    let family = if matches!(w.c, Under::Aead(_)) { "aead" } else { "stream" };
    let cycle_limit = if info.cycle_bits >= 32 { u32::MAX as u64 } else { (1u64 << info.cycle_bits) - 1 };
    for i in 0..cfg.warmup + cfg.reps {
        if rk {
            rng.fill(&mut w.key[..w.klen]);
        }
        if riv {
            rng.fill(&mut w.iv[..w.ivlen]);
        }
        w.prepare();
        if let Some(tr) = cfg.trigger {
            let idle = o.board.ticks();
            while ticks_since(o.board, idle) < tr.idle_ticks {}
            o.board.trigger(true);
        }
        let c0 = o.board.cycles();
        let t0 = o.board.ticks();
        w.run(batch);
        let t = ticks_since(o.board, t0);
        let c1 = o.board.cycles();
        if cfg.trigger.is_some() {
            o.board.trigger(false);
        }
        // The cycle counter wraps: trust its difference only well inside one period, judged
        // by the tick counter.
        let expect_cycles = t as u128 * info.cpu_hz as u128 / info.tick_hz.max(1) as u128;
        let cycles = match (c0, c1) {
            (Some(a), Some(b)) if expect_cycles < (cycle_limit as u128) * 3 / 4 => {
                Some(b.wrapping_sub(a) as u64 & cycle_limit)
            }
            _ => None,
        };
        let warm = i < cfg.warmup;
        let rep = if warm { i } else { i - cfg.warmup };
        let seq = o.seq;
        if cfg.trigger.is_some() {
            // Outside seq and the end line's crc: the S/W lines are those of a run without it.
            let id = o.batch;
            let l = o.start();
            let _ = write!(l, "LWCB M {id} {seq} {batch} {t0} {}", t0.wrapping_add(t));
            o.finish(false);
            o.batch += 1;
        }
        let l = o.start();
        let _ = write!(
            l,
            "LWCB {} {seq} {} {} {} {family} {} {kiv} {size} random {rep} {batch} {t} ",
            if warm { "W" } else { "S" },
            Pct(name),
            Pct(imp),
            Pct(lang),
            w.sc.name()
        );
        let _ = match cycles {
            Some(c) => write!(l, "{c}"),
            None => l.write_str("-"),
        };
        o.finish(true);
        o.seq += 1;
        if warm {
            o.warmups += 1;
        } else {
            o.samples += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A board whose clock advances 7 ticks per read and whose cycle counter is 24 bits.
    struct Fake {
        t: u64,
        out: Vec<u8>,
        /// (tick, level) of every trigger change.
        pin: Vec<(u64, bool)>,
    }
    impl Board for Fake {
        fn ticks(&mut self) -> u64 {
            self.t += 7;
            self.t
        }
        fn cycles(&mut self) -> Option<u32> {
            Some((self.t as u32).wrapping_mul(3) & 0xFF_FFFF)
        }
        fn write(&mut self, b: &[u8]) {
            self.out.extend_from_slice(b);
        }
        fn trigger(&mut self, high: bool) {
            self.pin.push((self.t, high));
        }
    }

    const INFO: BoardInfo = BoardInfo {
        board: "fake board",
        mcu: "none",
        cpu_hz: 3,
        tick_hz: 1,
        timer: "t",
        cycles: "c",
        cycle_bits: 24,
        firmware: "0",
        compiler: "rustc",
        profile: "test",
        opt: "0",
        target: "host",
        commit: "x",
    };

    #[test]
    fn crc_check_value() {
        assert_eq!(crc32_update(0, b"123456789"), 0xCBF4_3926); // the CRC-32 check value
    }

    #[test]
    fn run_prints_the_promised_lines() {
        let mut b = Fake { t: 0, out: Vec::new(), pin: Vec::new() };
        let cfg = Config {
            reps: 3,
            warmup: 1,
            min_sample_ticks: 5,
            seed: 1,
            sizes: &[8, 1024],
            aead_sizes: AEAD_SIZES,
            trigger: None,
        };
        let mut t = Trivium::default();
        let mut d = DracoRef::default();
        run(&mut b, &INFO, &cfg, &mut [&mut t, &mut d]);
        let text = String::from_utf8(b.out).unwrap();
        let lines: Vec<&str> = text.split("\r\n").filter(|l| !l.is_empty()).collect();
        let count = |k: &str| lines.iter().filter(|l| l.starts_with(k)).count();
        let g = groups(2, &[8, 1024]);
        assert_eq!(g, 2 * 4 * 5);
        assert_eq!(count("LWCB S "), g * 3);
        assert_eq!(count("LWCB W "), g);
        assert!(lines[0].starts_with("LWCB H 2 board=fake%20board "), "{}", lines[0]);
        assert!(
            lines[0].contains(" groups=40 ") && lines[0].contains("ciphers=Trivium/rust/Rust,DRACO/rust-ref/Rust ")
        );
        assert!(lines.last().unwrap().starts_with(&format!("LWCB E samples={} warmup={} crc=", g * 3, g)));
        // each line's own checksum
        for l in &lines {
            let (body, crc) = l.rsplit_once(" *").unwrap();
            assert_eq!(u32::from_str_radix(crc, 16).unwrap(), crc32_update(0, body.as_bytes()), "{l}");
        }
        // a keystream sample: 14 fields, batch ≥ 1; the cycle reads enclose the two tick reads,
        // and the second tick read advances the fake clock by 7 more: cycles = 3 × (ticks + 7)
        let s = lines.iter().find(|l| l.contains(" keystream r,s 1024 ")).unwrap();
        let f: Vec<&str> = s.split(' ').collect();
        assert_eq!(f.len(), 16, "{s}");
        let (ticks, cycles): (u64, u64) = (f[13].parse().unwrap(), f[14].parse().unwrap());
        assert!(f[12].parse::<u64>().unwrap() >= 1);
        assert_eq!(cycles, 3 * (ticks + 7));
        assert!(b.pin.is_empty() && count("LWCB M ") == 0);
    }

    /// The QEMU image's header with the trigger keys overflowed a 512-byte line (the collector
    /// then found no header at all); the same strings with a whole commit id must fit.
    #[test]
    fn a_long_header_with_the_trigger_keeps_its_checksum() {
        let mut b = Fake { t: 0, out: Vec::new(), pin: Vec::new() };
        let info = BoardInfo {
            board: "qemu-lm3s6965evb",
            mcu: "Cortex-M3 (QEMU TCG, -icount)",
            timer: "SysTick (core clock) extended to 64 bits",
            cpu_hz: 12_500_000,
            tick_hz: 12_500_000,
            cycles: "none",
            firmware: "0.1.0",
            compiler: "rustc 1.95.0 (59807616e 2026-04-14)",
            profile: "release",
            opt: "3",
            target: "thumbv7m-none-eabi",
            // a whole commit id, as a build from a detached checkout may give
            commit: "984892ae76c5f0d2c8a41e3b9d7f6a5c4b3e2d1f",
            ..INFO
        };
        let tr = Trigger { pin: "markers-only", idle_ticks: 0 };
        let cfg = Config {
            reps: 1,
            warmup: 0,
            min_sample_ticks: 5,
            seed: 1,
            sizes: &[8],
            aead_sizes: AEAD_SIZES,
            trigger: Some(tr),
        };
        let (mut r, mut f, mut t, mut g) =
            (DracoRef::default(), DracoFast::default(), Trivium::default(), Grain128a::default());
        run(&mut b, &info, &cfg, &mut [&mut r, &mut f, &mut t, &mut g]);
        let text = String::from_utf8(b.out).unwrap();
        let header = text.split("\r\n").next().unwrap();
        let (body, crc) = header.rsplit_once(" *").expect("the header has its checksum");
        assert!(body.ends_with(" trigger=markers-only idle_ticks=0"), "{body}");
        assert_eq!(u32::from_str_radix(crc, 16).unwrap(), crc32_update(0, body.as_bytes()));
    }

    #[test]
    fn the_trigger_encloses_each_timed_batch_and_its_marker_names_it() {
        let mut b = Fake { t: 0, out: Vec::new(), pin: Vec::new() };
        let tr = Trigger { pin: "GP15", idle_ticks: 50 };
        let cfg = Config {
            reps: 2,
            warmup: 1,
            min_sample_ticks: 5,
            seed: 1,
            sizes: &[8],
            aead_sizes: AEAD_SIZES,
            trigger: Some(tr),
        };
        let mut t = Trivium::default();
        run(&mut b, &INFO, &cfg, &mut [&mut t]);
        let text = String::from_utf8(b.out).unwrap();
        let lines: Vec<&str> = text.split("\r\n").filter(|l| !l.is_empty()).collect();
        assert!(lines[0].contains(" trigger=GP15 idle_ticks=50 *"), "{}", lines[0]);
        let g = groups(1, &[8]);
        let markers: Vec<Vec<u64>> = lines
            .iter()
            .filter(|l| l.starts_with("LWCB M "))
            .map(|l| l.rsplit_once(" *").unwrap().0.split(' ').skip(2).map(|x| x.parse().unwrap()).collect())
            .collect();
        assert_eq!(markers.len(), g * 3, "one marker per warm-up and measured sample");
        assert_eq!(b.pin.len(), 2 * markers.len());
        for (i, m) in markers.iter().enumerate() {
            let (id, seq, ops, start, end) = (m[0], m[1], m[2], m[3], m[4]);
            assert_eq!((id, seq), (i as u64, i as u64));
            // the sample line right after the marker: same seq, batch and ticks
            let at = lines.iter().position(|l| l.starts_with(&format!("LWCB M {id} "))).unwrap();
            let f: Vec<&str> = lines[at + 1].split(' ').collect();
            assert!(f[1] == "S" || f[1] == "W");
            assert_eq!(f[2].parse::<u64>().unwrap(), seq);
            assert_eq!(f[12].parse::<u64>().unwrap(), ops);
            assert_eq!(f[13].parse::<u64>().unwrap(), end - start);
            // the pin rises before the first tick read and falls after the last; the fake
            // clock advances 7 per read, so the idle wait shows as ≥ 50 ticks low before it
            let ((rise, hi), (fall, lo)) = (b.pin[2 * i], b.pin[2 * i + 1]);
            assert!(hi && !lo && rise < start && fall >= end, "{rise} {start} {end} {fall}");
            if i > 0 {
                assert!(rise - b.pin[2 * i - 1].0 >= 50);
            }
        }
        // markers are outside the run checksum: the end line's crc covers S/W lines only
        let mut crc = 0;
        for l in lines.iter().filter(|l| l.starts_with("LWCB S ") || l.starts_with("LWCB W ")) {
            crc = crc32_update(crc, l.rsplit_once(" *").unwrap().0.as_bytes());
            crc = crc32_update(crc, b"\n");
        }
        assert!(lines.last().unwrap().contains(&format!("crc={crc:08x}")));
    }

    /// The AEADs a board runs are the emulated images' adapters: each type, name and length
    /// here is the one its generated mcu/images binary passes to `aead_image!`.
    #[test]
    fn the_aeads_are_the_emulated_images() {
        let squash = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        assert_eq!(AEAD_IMAGES.len(), 4);
        for a in AEAD_IMAGES {
            let path = format!("{}/../../mcu/images/src/bin/{}.rs", env!("CARGO_MANIFEST_DIR"), a.image);
            let src = std::fs::read_to_string(&path).unwrap();
            let want = format!(
                "lwc_mcu_images::aead_image!(lwc_mcu_images::{},{},{},{});",
                squash(a.ty),
                a.key_bytes,
                a.nonce_bytes,
                a.tag_bytes
            );
            assert!(squash(&src).contains(&want), "{path} does not call {want}");
            assert!(src.starts_with(&format!("//! {}/{RC_IMPLEMENTATION} (", a.name)), "{path}");
        }
    }

    /// An AEAD that records every (key, nonce) pair it encrypts under and the AD length.
    #[derive(Default)]
    struct Recorder {
        key: Vec<u8>,
        seen: Vec<(Vec<u8>, Vec<u8>)>,
        ad_lens: Vec<usize>,
        msg_lens: Vec<usize>,
    }
    impl Aead for Recorder {
        fn info(&self) -> lwcbench_core::CipherInfo {
            AsconAead128::default().info()
        }
        fn set_key(&mut self, key: &[u8]) -> Result<(), lwcbench_core::CipherError> {
            self.key = key.to_vec();
            Ok(())
        }
        fn encrypt(
            &mut self,
            nonce: &[u8],
            ad: &[u8],
            buf: &mut [u8],
            tag: &mut [u8],
        ) -> Result<(), lwcbench_core::CipherError> {
            self.seen.push((self.key.clone(), nonce.to_vec()));
            self.ad_lens.push(ad.len());
            self.msg_lens.push(buf.len());
            tag.fill(0xA5);
            Ok(())
        }
        fn decrypt(&mut self, _: &[u8], _: &[u8], _: &mut [u8], _: &[u8]) -> Result<(), lwcbench_core::CipherError> {
            Ok(())
        }
    }

    #[test]
    fn aead_groups_encrypt_without_repeating_a_key_and_nonce() {
        let mut b = Fake { t: 0, out: Vec::new(), pin: Vec::new() };
        let cfg = Config {
            reps: 3,
            warmup: 1,
            min_sample_ticks: 5,
            seed: 1,
            sizes: &[8],
            aead_sizes: AEAD_SIZES,
            trigger: None,
        };
        let (mut r1, mut r2) = (Recorder::default(), Recorder::default());
        let im = AEAD_IMAGES[1]; // 12-byte nonce
        let mut aeads = [
            AeadUnder { image: im, implementation: "rec", c: &mut r1 },
            AeadUnder { image: AeadImage { name: "Other", ..AEAD_IMAGES[0] }, implementation: "rec", c: &mut r2 },
        ];
        run_suite(&mut b, &INFO, &cfg, &mut [], &mut aeads);
        let text = String::from_utf8(b.out).unwrap();
        let lines: Vec<&str> = text.split("\r\n").filter(|l| !l.is_empty()).collect();
        // 2 AEADs × 4 key/nonce variants × (keysetup + 2 sizes)
        assert_eq!(aead_groups(2, AEAD_SIZES), 24);
        assert!(lines[0].contains(" groups=24 ") && lines[0].contains(" ad_bytes=0 "), "{}", lines[0]);
        assert!(lines[0].contains(" ciphers=ChaCha20-Poly1305/rec/Rust,Other/rec/Rust "), "{}", lines[0]);
        let samples: Vec<Vec<&str>> =
            lines.iter().filter(|l| l.starts_with("LWCB S ")).map(|l| l.split(' ').collect()).collect();
        assert_eq!(samples.len(), 24 * 3);
        // family, scenario, size: keysetup 0 and encrypt at 16 and 128 bytes
        let mut kinds: Vec<(&str, &str, &str)> = samples.iter().map(|f| (f[6], f[7], f[9])).collect();
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds, [("aead", "encrypt", "1024"), ("aead", "encrypt", "128"), ("aead", "keysetup", "0")]);
        for r in [&r1, &r2] {
            assert!(!r.seen.is_empty() && r.ad_lens.iter().all(|&n| n == 0));
            assert!(r.msg_lens.iter().all(|&n| n == 16 || n == 128));
            let mut pairs = r.seen.clone();
            pairs.sort();
            pairs.dedup();
            assert_eq!(pairs.len(), r.seen.len(), "a (key, nonce) pair was used twice");
        }
        // the static-nonce variants keep the static bytes before the 8-byte counter
        assert!(r1.seen.iter().any(|(_, n)| n.len() == 12 && n[..4] == [0, 1, 2, 3]));
        assert!(r2.seen.iter().all(|(_, n)| n.len() == 16));
    }

    /// The real adapters run through the suite: every AEAD's groups are printed, and a longer
    /// message costs the fake clock no less (it only counts reads, so equal is allowed).
    #[test]
    fn the_four_aeads_run_on_a_board() {
        let mut b = Fake { t: 0, out: Vec::new(), pin: Vec::new() };
        let cfg = Config {
            reps: 1,
            warmup: 0,
            min_sample_ticks: 5,
            seed: 1,
            sizes: &[8],
            aead_sizes: AEAD_SIZES,
            trigger: None,
        };
        let mut rc = RcAeads::default();
        let mut t = Trivium::default();
        run_suite(&mut b, &INFO, &cfg, &mut [&mut t], &mut rc.under());
        let text = String::from_utf8(b.out).unwrap();
        let lines: Vec<&str> = text.split("\r\n").filter(|l| !l.is_empty()).collect();
        assert!(lines[0].contains(
            " ciphers=Trivium/rust/Rust,Ascon-AEAD128/rustcrypto/Rust,ChaCha20-Poly1305/rustcrypto/Rust,AES-128-CCM/rustcrypto/Rust,AES-128-GCM/rustcrypto/Rust "
        ));
        for name in ["Ascon-AEAD128", "ChaCha20-Poly1305", "AES-128-CCM", "AES-128-GCM"] {
            for (sc, size) in [("keysetup", "0"), ("encrypt", "128"), ("encrypt", "1024")] {
                let want = format!(" {name} rustcrypto Rust aead {sc} s,s {size} random 0 ");
                assert!(lines.iter().any(|l| l.starts_with("LWCB S ") && l.contains(&want)), "{want}");
            }
        }
        let n = groups(1, &[8]) + aead_groups(4, AEAD_SIZES);
        assert!(lines.last().unwrap().starts_with(&format!("LWCB E samples={n} warmup=0 crc=")));
    }
}
