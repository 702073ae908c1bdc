//! What to measure: scenarios, key/IV variants, sizes, and the groups they expand to.
use std::fmt;

use lwcbench_catalog::{registry, Entry};
use lwcbench_core::Family;

/// A timed scenario. What each one's timed region contains is documented in
/// `docs/measurement.md` and on [`Scenario::timed_region`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scenario {
    /// Stream: keystream generation + XOR with the payload + store.
    Full,
    /// Stream: keystream generation only.
    Keystream,
    /// Stream: key/IV setup only.
    Init,
    /// Block/AEAD: key schedule only.
    Keysetup,
    /// Block/AEAD: encrypt the payload (AEAD: + tag).
    Encrypt,
    /// Block/AEAD: decrypt the payload (AEAD: + tag check).
    Decrypt,
    /// Stream/AEAD: one 32-bit sensor reading sent on its own — fresh IV/nonce from a
    /// per-device counter, init (stream) or key-loaded encrypt (AEAD), encrypt 4 bytes.
    Reading,
    /// Stream/AEAD: one whole video frame — fresh counter IV/nonce, init (stream) or
    /// key-loaded encrypt (AEAD), copy the frame into the output buffer and encrypt it.
    /// Opt-in: runs only when named (it needs a clip, see [`crate::video`]).
    Frame,
    /// AEAD: one protocol message sealed then opened (encrypt + tag, then tag check +
    /// decrypt) with a fresh counter nonce; never batched, so each sample is one message.
    Roundtrip,
}

impl Scenario {
    /// Every scenario run when none is named.
    pub const ALL: [Scenario; 8] = [
        Scenario::Full,
        Scenario::Keystream,
        Scenario::Init,
        Scenario::Keysetup,
        Scenario::Encrypt,
        Scenario::Decrypt,
        Scenario::Reading,
        Scenario::Roundtrip,
    ];
    /// Scenarios that run only when selected by name (never part of "every scenario").
    pub const OPT_IN: [Scenario; 1] = [Scenario::Frame];

    /// The name on the command line and in result files.
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::Full => "full",
            Scenario::Keystream => "keystream",
            Scenario::Init => "init",
            Scenario::Keysetup => "keysetup",
            Scenario::Encrypt => "encrypt",
            Scenario::Decrypt => "decrypt",
            Scenario::Reading => "reading",
            Scenario::Frame => "frame",
            Scenario::Roundtrip => "roundtrip",
        }
    }
    /// The scenario of a name (case-insensitive).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().chain(Self::OPT_IN).find(|x| x.as_str().eq_ignore_ascii_case(s.trim()))
    }
    /// Does this scenario apply to this family?
    pub fn applies_to(self, f: Family) -> bool {
        match self {
            Scenario::Full | Scenario::Keystream | Scenario::Init => f == Family::Stream,
            Scenario::Keysetup | Scenario::Encrypt | Scenario::Decrypt => f != Family::Stream,
            Scenario::Reading => f != Family::Block && f != Family::Mode,
            Scenario::Frame => f == Family::Stream || f == Family::Aead,
            Scenario::Roundtrip => f == Family::Aead,
        }
    }
    /// Does the payload size matter (init/keysetup ignore it)?
    pub fn uses_size(self) -> bool {
        !matches!(self, Scenario::Init | Scenario::Keysetup)
    }
    /// One-line statement of the timed region (also in docs/measurement.md).
    pub fn timed_region(self) -> &'static str {
        match self {
            Scenario::Full => "apply_bits(buf, n): keystream generation + XOR into the payload buffer + store (init excluded)",
            Scenario::Keystream => "keystream_bits(out, n): keystream generation into an output buffer (init excluded)",
            Scenario::Init => "init(key, iv): key and IV loading plus the cipher's initialisation rounds",
            Scenario::Keysetup => "set_key(key): the key schedule",
            Scenario::Encrypt => "block: encrypt_block over ceil(n/block) blocks; AEAD: encrypt(nonce, empty AD, payload) + tag",
            Scenario::Decrypt => "block: decrypt_block over the blocks; AEAD: copy ciphertext into the work buffer + decrypt with tag check",
            Scenario::Reading => "next counter value as IV/nonce, init(key, iv) + apply 32 bits (stream) or encrypt 4 bytes + tag (AEAD)",
            Scenario::Frame => "next counter value as IV/nonce, copy the next video frame into the output buffer, init(key, iv) + apply_bits over the frame (stream) or encrypt + tag (AEAD)",
            Scenario::Roundtrip => "next counter value as nonce, copy the message into the work buffer, encrypt(nonce, empty AD) + tag, then decrypt with tag check; one message per sample (batch 1)",
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Static or random key × static or random IV: `<k,iv>` as in the reference study.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kiv {
    /// A fresh random key per sample (else the static key).
    pub random_key: bool,
    /// A fresh random IV per sample (else the static IV).
    pub random_iv: bool,
}

impl Kiv {
    /// The four variants: ss, sr, rs, rr.
    pub const ALL: [Kiv; 4] = [
        Kiv { random_key: false, random_iv: false },
        Kiv { random_key: false, random_iv: true },
        Kiv { random_key: true, random_iv: false },
        Kiv { random_key: true, random_iv: true },
    ];
    /// "s,s", "s,r", "r,s", "r,r" — the study's labels.
    pub fn label(self) -> &'static str {
        match (self.random_key, self.random_iv) {
            (false, false) => "s,s",
            (false, true) => "s,r",
            (true, false) => "r,s",
            (true, true) => "r,r",
        }
    }
    /// Accepts "ss", "s,s", "s/s" (and upper case).
    pub fn parse(s: &str) -> Option<Self> {
        let letters: Vec<char> = s.chars().filter(|c| !matches!(c, ',' | '/' | ' ' | '<' | '>')).collect();
        match letters.as_slice() {
            [k, i] => {
                let b = |c: char| match c.to_ascii_lowercase() {
                    's' => Some(false),
                    'r' => Some(true),
                    _ => None,
                };
                Some(Kiv { random_key: b(*k)?, random_iv: b(*i)? })
            }
            _ => None,
        }
    }
}

/// What the payload bytes are: random from the seeded RNG, or a named dataset's encoding
/// (cycled or truncated to each size).
#[derive(Clone, Debug, PartialEq)]
pub struct Payload {
    /// "random" or "dataset:<name>".
    pub label: String,
    /// The dataset's bytes; None for random.
    pub bytes: Option<std::sync::Arc<Vec<u8>>>,
}

impl Payload {
    /// Bytes from the seeded RNG.
    pub fn random() -> Self {
        Payload { label: "random".into(), bytes: None }
    }
    /// A dataset's encoded readings.
    pub fn dataset(name: &str, bytes: Vec<u8>) -> Self {
        Payload { label: format!("dataset:{name}"), bytes: Some(std::sync::Arc::new(bytes)) }
    }
    /// The frames of a clip, concatenated (the group's size_bits is one frame).
    pub fn video(clip: &crate::video::Clip) -> Self {
        Payload { label: format!("video:{}", clip.name), bytes: Some(clip.data.clone()) }
    }
    /// Whether the bytes come from the RNG.
    pub fn is_random(&self) -> bool {
        self.bytes.is_none()
    }
}

/// One measured group: implementation × scenario × key/IV variant × size × payload.
#[derive(Clone)]
pub struct Group {
    /// The implementation.
    pub entry: Entry,
    /// What one operation does.
    pub scenario: Scenario,
    /// Key/IV variant.
    pub kiv: Kiv,
    /// Payload size in bits (0 for init/keysetup, where it does not apply).
    pub size_bits: usize,
    /// What the payload bytes are.
    pub payload: Payload,
}

impl fmt::Debug for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl Group {
    /// A short label for progress and errors.
    pub fn label(&self) -> String {
        let p = if self.payload.is_random() { String::new() } else { format!(" {}", self.payload.label) };
        if self.scenario.uses_size() {
            format!("{} {} <{} | {}>{p}", self.entry.id(), self.scenario, self.kiv.label(), self.size_bits)
        } else {
            format!("{} {} <{}>", self.entry.id(), self.scenario, self.kiv.label())
        }
    }
}

/// Selection filters as given on the command line; empty = everything.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Ciphers by name or name/implementation.
    pub ciphers: Vec<String>,
    /// Implementations across the selected ciphers.
    pub implementations: Vec<String>,
    /// Scenarios.
    pub scenarios: Vec<Scenario>,
    /// Key/IV variants.
    pub kivs: Vec<Kiv>,
    /// Payload sizes in bits.
    pub sizes_bits: Vec<usize>,
    /// Payload kinds; empty = random only.
    pub payloads: Vec<Payload>,
    /// Select every stream cipher and AEAD (ignores `ciphers`).
    pub all_stream_and_aead: bool,
    /// Clip for the `frame` scenario; None = the default clip (loaded when `frame` is selected).
    pub video: Option<std::sync::Arc<crate::video::Clip>>,
}

/// Ciphers from outside the catalogue (an external engine's, `--engine`), selectable like its
/// entries. [`crate::external::Offered`] implements it; `()` adds nothing.
pub trait ExtraEntries {
    /// The extra entries.
    fn entries(&self) -> &[Entry];
    /// False only for one of its own entries that does not offer this scenario.
    fn offers_scenario(&self, e: &Entry, sc: Scenario) -> bool;
}

impl ExtraEntries for () {
    fn entries(&self) -> &[Entry] {
        &[]
    }
    fn offers_scenario(&self, _: &Entry, _: Scenario) -> bool {
        true
    }
}

/// Payload sizes in bits without `--sizes`.
pub const DEFAULT_SIZES: [usize; 4] = [1, 8, 128, 1024];

/// Largest payload size: 1 GiB (2^33 bits). A size in bits is a `usize`, so on 32-bit targets
/// (a Pi with a 32-bit OS) the largest is `usize::MAX` bits, 512 MiB less one bit; computed in
/// u64 so that no branch shifts a 32-bit `usize` out of range.
pub const MAX_SIZE_BITS: usize = if usize::MAX as u64 >= 1u64 << 33 { (1u64 << 33) as usize } else { usize::MAX };
/// [`MAX_SIZE_BITS`] in words, for error messages.
pub const MAX_SIZE_TEXT: &str = if usize::BITS >= 64 { "1 GiB" } else { "512 MiB less one bit (32-bit build)" };
/// Largest `--reps` and `--warmup`: a million samples per group.
pub const MAX_REPS: usize = 1_000_000;
/// Largest number of samples in one run, warm-up included (groups × (reps + warmup)); every
/// sample is kept in memory (about 0.3 KiB each as a result row) until the run is written.
pub const MAX_TOTAL_SAMPLES: usize = 10_000_000;
/// Largest `--min-sample-us`: one second per sample.
pub const MAX_MIN_SAMPLE_NS: f64 = 1e9;
/// Buffers a group of size n holds at once (payload, work buffer, ciphertext, check copy):
/// the memory probe before a run asks for this many copies of the largest payload.
const BUFFERS_PER_GROUP: usize = 4;

/// Bounds on a run's size, checked before anything is measured or written: repetitions,
/// warm-up, total samples, the sample duration, and whether the largest group's buffers can
/// be allocated at all (under a memory limit an allocation failure would otherwise abort the
/// process instead of giving an error line).
pub fn check_bounds(reps: usize, warmup: usize, min_sample_ns: f64, groups: &[Group]) -> Result<(), String> {
    if reps > MAX_REPS {
        return Err(format!("--reps: {reps} is more than the limit of {MAX_REPS} per group"));
    }
    if warmup > MAX_REPS {
        return Err(format!("--warmup: {warmup} is more than the limit of {MAX_REPS} per group"));
    }
    if !(min_sample_ns.is_finite() && min_sample_ns > 0.0 && min_sample_ns <= MAX_MIN_SAMPLE_NS) {
        return Err(format!(
            "--min-sample-us: {} is not a duration above 0 and at most {} µs (1 s)",
            min_sample_ns / 1000.0,
            MAX_MIN_SAMPLE_NS / 1000.0
        ));
    }
    let total = groups.len().saturating_mul(reps + warmup);
    if total > MAX_TOTAL_SAMPLES {
        return Err(format!(
            "--reps/--warmup: {} groups × ({reps} + {warmup}) = {total} samples is more than the limit of {MAX_TOTAL_SAMPLES} per run (select fewer groups or repetitions)",
            groups.len()
        ));
    }
    if let Some(g) = groups.iter().max_by_key(|g| g.size_bits) {
        let bytes = g.size_bits.div_ceil(8);
        let need = bytes.saturating_mul(BUFFERS_PER_GROUP);
        let mut probe: Vec<u8> = Vec::new();
        if probe.try_reserve_exact(need).is_err() {
            return Err(format!(
                "--sizes: {} needs about {} MiB of buffers for {bytes}-byte payloads, which cannot be allocated (memory limit?); choose a smaller size",
                g.label(),
                need >> 20
            ));
        }
    }
    Ok(())
}

/// Values in first-seen order without repeats: a value given twice (`--sizes 8,8`, `8,1B`,
/// `--kiv ss,ss`) is one group, measured once.
fn unique<T: PartialEq + Clone>(v: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(v.len());
    for x in v {
        if !out.contains(x) {
            out.push(x.clone());
        }
    }
    out
}

/// Errors in a selection; each names the parameter and the value.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanError(pub String);

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for PlanError {}

/// Entries matching the cipher/implementation filters. A cipher filter matches the name
/// (case-insensitive) or the full id "name/impl". Unknown names are errors.
pub fn select_entries(sel: &Selection, extra: &dyn ExtraEntries) -> Result<Vec<Entry>, PlanError> {
    let mut all = registry();
    all.extend(extra.entries().iter().cloned());
    for c in sel.ciphers.iter().filter(|_| !sel.all_stream_and_aead) {
        if !all.iter().any(|e| e.matches(c)) {
            return Err(PlanError(format!("--cipher: unknown cipher '{c}' (see `lwcbench list`)")));
        }
    }
    for i in &sel.implementations {
        if !all.iter().any(|e| e.info.implementation.eq_ignore_ascii_case(i)) {
            return Err(PlanError(format!("--impl: unknown implementation '{i}' (see `lwcbench list`)")));
        }
    }
    let picked: Vec<Entry> = all
        .into_iter()
        .filter(|e| !sel.all_stream_and_aead || matches!(e.info.family, Family::Stream | Family::Aead))
        .filter(|e| sel.all_stream_and_aead || sel.ciphers.is_empty() || sel.ciphers.iter().any(|c| e.matches(c)))
        .filter(|e| {
            sel.implementations.is_empty()
                || sel.implementations.iter().any(|i| e.info.implementation.eq_ignore_ascii_case(i))
        })
        .collect();
    if picked.is_empty() {
        return Err(PlanError(format!(
            "no implementation matches --cipher {} with --impl {}",
            sel.ciphers.join(","),
            sel.implementations.join(",")
        )));
    }
    Ok(picked)
}

/// Expand a selection into groups, in a stable order.
pub fn expand(sel: &Selection) -> Result<Vec<Group>, PlanError> {
    expand_with(sel, &())
}

/// [`expand`] with the ciphers of external engines besides the catalogue's.
pub fn expand_with(sel: &Selection, extra: &dyn ExtraEntries) -> Result<Vec<Group>, PlanError> {
    if sel.sizes_bits.contains(&0) {
        return Err(PlanError("--sizes: a size of 0 bits measures nothing; sizes must be ≥ 1".into()));
    }
    if let Some(s) = sel.sizes_bits.iter().find(|&&s| s > MAX_SIZE_BITS) {
        return Err(PlanError(format!("--sizes: {s} bits is larger than the {MAX_SIZE_TEXT} limit")));
    }
    let entries = select_entries(sel, extra)?;
    let sizes: Vec<usize> = if sel.sizes_bits.is_empty() { DEFAULT_SIZES.to_vec() } else { unique(&sel.sizes_bits) };
    let kivs: Vec<Kiv> = if sel.kivs.is_empty() { Kiv::ALL.to_vec() } else { unique(&sel.kivs) };
    let payloads: Vec<Payload> = if sel.payloads.is_empty() { vec![Payload::random()] } else { unique(&sel.payloads) };
    let wants_frame = sel.scenarios.contains(&Scenario::Frame);
    let clip = match (&sel.video, wants_frame) {
        (Some(c), true) => Some(c.clone()),
        (None, true) => Some(std::sync::Arc::new(crate::video::default_clip(None).map_err(PlanError)?)),
        (_, false) => None,
    };
    let mut groups = Vec::new();
    for e in &entries {
        for sc in Scenario::ALL
            .into_iter()
            .chain(Scenario::OPT_IN.into_iter().filter(|s| sel.scenarios.contains(s)))
            .filter(|s| s.applies_to(e.info.family))
        {
            if !sel.scenarios.is_empty() && !sel.scenarios.contains(&sc) {
                continue;
            }
            if !extra.offers_scenario(e, sc) {
                continue; // an engine's cipher: only the scenarios its engine lists
            }
            for &kiv in &kivs {
                if sc == Scenario::Frame {
                    // One op = one whole frame; the IV is a counter, so IV variants collapse.
                    if let Some(c) = clip.as_ref().filter(|_| !kiv.random_iv) {
                        groups.push(Group {
                            entry: e.clone(),
                            scenario: sc,
                            kiv,
                            size_bits: c.frame_bytes * 8,
                            payload: Payload::video(c),
                        });
                    }
                } else if sc == Scenario::Reading {
                    // One 32-bit reading; the IV is the device counter, so IV variants collapse.
                    if kiv.random_iv {
                        continue;
                    }
                    for p in &payloads {
                        groups.push(Group { entry: e.clone(), scenario: sc, kiv, size_bits: 32, payload: p.clone() });
                    }
                } else if sc == Scenario::Roundtrip && kiv.random_iv {
                    // The nonce is a per-group counter, so IV variants collapse as for reading.
                    continue;
                } else if sc.uses_size() {
                    for &size in &sizes {
                        // Payload kinds innermost, so dataset and random of one group are
                        // measured back to back and share the machine's state.
                        for p in &payloads {
                            groups.push(Group {
                                entry: e.clone(),
                                scenario: sc,
                                kiv,
                                size_bits: size,
                                payload: p.clone(),
                            });
                        }
                    }
                } else {
                    groups.push(Group {
                        entry: e.clone(),
                        scenario: sc,
                        kiv,
                        size_bits: 0,
                        payload: Payload::random(),
                    });
                }
            }
        }
    }
    if groups.is_empty() {
        return Err(PlanError(format!(
            "--scenario {} does not apply to the selected implementations (stream: full, keystream, init, reading, frame; block and modes: keysetup, encrypt, decrypt; AEAD: keysetup, encrypt, decrypt, reading, frame, roundtrip)",
            sel.scenarios.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(",")
        )));
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 GiB = 2^30 bytes × 8 bits where a `usize` holds it; the whole `usize` range on 32-bit
    /// targets (the armv7 build failed to compile on `1 << 33`; the ARM suite builds it).
    #[test]
    fn size_limit_fits_the_target() {
        if usize::BITS >= 64 {
            assert_eq!(MAX_SIZE_BITS as u64, 8 * 1024 * 1024 * 1024);
        } else {
            assert_eq!(MAX_SIZE_BITS, usize::MAX);
        }
    }

    #[test]
    fn kiv_labels_round_trip() {
        for k in Kiv::ALL {
            assert_eq!(Kiv::parse(k.label()), Some(k));
        }
        assert_eq!(Kiv::parse("rs"), Some(Kiv { random_key: true, random_iv: false }));
        assert_eq!(Kiv::parse("<R,S>"), Some(Kiv { random_key: true, random_iv: false }));
        assert_eq!(Kiv::parse("x,s"), None);
        assert_eq!(Kiv::parse("sss"), None);
    }

    #[test]
    fn repeated_values_are_one_group() {
        let one = Selection {
            ciphers: vec!["ChaCha20/rustcrypto".into()],
            scenarios: vec![Scenario::Keystream, Scenario::Keystream],
            sizes_bits: vec![8, 8, 16, 8],
            kivs: vec![Kiv::ALL[0], Kiv::ALL[0]],
            ..Default::default()
        };
        let g = expand(&one).unwrap();
        // sizes 8 and 16 in first-seen order, one kiv
        assert_eq!(g.iter().map(|g| g.size_bits).collect::<Vec<_>>(), vec![8, 16]);
    }

    #[test]
    fn run_size_bounds() {
        let g = expand(&Selection {
            ciphers: vec!["ChaCha20/rustcrypto".into()],
            scenarios: vec![Scenario::Keystream],
            sizes_bits: vec![8],
            kivs: vec![Kiv::ALL[0]],
            ..Default::default()
        })
        .unwrap();
        assert!(check_bounds(100, 10, 20_000.0, &g).is_ok());
        assert!(check_bounds(MAX_REPS, MAX_REPS, 1e9, &g).is_ok());
        assert!(check_bounds(usize::MAX, 0, 1.0, &g).unwrap_err().starts_with("--reps"));
        assert!(check_bounds(1, usize::MAX, 1.0, &g).unwrap_err().starts_with("--warmup"));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1.000001e9] {
            assert!(check_bounds(1, 0, bad, &g).unwrap_err().starts_with("--min-sample-us"));
        }
        let many: Vec<Group> = std::iter::repeat_n(g[0].clone(), 11).collect();
        assert!(check_bounds(MAX_REPS, 0, 1.0, &many).unwrap_err().contains("11 groups"));
    }

    #[test]
    fn expansion_counts_and_errors() {
        let sel = Selection { ciphers: vec!["ChaCha20".into()], ..Default::default() };
        let g = expand(&sel).unwrap();
        // full + keystream: 4 kiv × 4 sizes each; init: 4 kiv; reading: the 2 static-IV kivs
        // (its IV is the device counter), one 32-bit size
        assert_eq!(g.len(), 4 * 4 * 2 + 4 + 2);
        assert!(g.iter().filter(|g| g.scenario == Scenario::Reading).all(|g| g.size_bits == 32 && !g.kiv.random_iv));
        let two = Selection {
            ciphers: vec!["ChaCha20".into()],
            scenarios: vec![Scenario::Full],
            sizes_bits: vec![64],
            payloads: vec![Payload::dataset("d", vec![1, 2, 3]), Payload::random()],
            ..Default::default()
        };
        let g = expand(&two).unwrap();
        assert_eq!(g.len(), 4 * 2);
        assert_eq!(g[0].payload.label, "dataset:d");
        assert_eq!(g[1].payload.label, "random", "payload kinds are adjacent");
        let bad = Selection { ciphers: vec!["NoSuch".into()], ..Default::default() };
        assert!(expand(&bad).unwrap_err().0.contains("unknown cipher 'NoSuch'"));
        let zero = Selection { sizes_bits: vec![8, 0], ..Default::default() };
        assert!(expand(&zero).unwrap_err().0.contains("--sizes"));
        let wrong =
            Selection { ciphers: vec!["ChaCha20".into()], scenarios: vec![Scenario::Keysetup], ..Default::default() };
        assert!(expand(&wrong).unwrap_err().0.contains("does not apply"));
    }
}
