//! Gateway-side batch opening: many devices' DRACO messages (each its own key, IV and length)
//! opened at once on the bit-sliced [`MultiDraco`], one message per lane. DRACO is a provisional
//! reconstruction (see the crate doc); the integrity layer is this project's
//! [`composition`], not the cipher's own.
//!
//! Per message the result equals the single-stream path ([`composition::otk_and_decrypt`] on
//! [`crate::DracoFast`]): the one-time Poly1305 key (keystream bytes `0..32`) and
//! `pt = ct ^ keystream[64..]`. [`open_batch_verified`] also checks each tag with
//! [`composition::verify_tag`] and releases only verified plaintexts.
//!
//! A single message costs one 256-clock initialisation plus 8·(64 + len) keystream clocks; a
//! bit-sliced group pays the same clocks once for up to 64 / 256 / 512 messages. Planning
//! ([`Mode::Auto`]): messages are sorted by length (longest first) so a group's lanes run to
//! similar lengths; each step takes the option with the lowest estimated cost per message among
//! a group on each available backend and the single-stream path, and sends the longest messages
//! of a window to the single-stream path when that is cheaper than running the whole group to
//! their length. The estimates ([`COST`]) only steer the plan; every plan gives the same bytes.
//! Memory: keystream is produced in chunks of [`CHUNK_BYTES`] per lane (≤ 160 KiB per group)
//! plus the plaintexts themselves.
use alloc::vec;
use alloc::vec::Vec;

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::bitsliced::{Backend, MultiDraco, MultiError};
use crate::composition::{self, TagError, OTK_BYTES, SKIP_BYTES, TAG_BYTES};

/// One message to open (ciphertext only; see [`TaggedItem`] for the verified path).
#[derive(Clone, Copy, Debug)]
pub struct BatchItem<'a> {
    /// The message's 128-bit key.
    pub key: &'a [u8; 16],
    /// The message's 96-bit IV.
    pub iv: &'a [u8; 12],
    /// The ciphertext.
    pub ct: &'a [u8],
}

/// One message with its associated data and tag.
#[derive(Clone, Copy, Debug)]
pub struct TaggedItem<'a> {
    /// The message's 128-bit key.
    pub key: &'a [u8; 16],
    /// The message's 96-bit IV.
    pub iv: &'a [u8; 12],
    /// The associated data the tag covers.
    pub ad: &'a [u8],
    /// The ciphertext.
    pub ct: &'a [u8],
    /// The tag to verify.
    pub tag: &'a [u8; TAG_BYTES],
}

/// The one-time key and the decrypted — **not yet verified** — plaintext of one message.
/// Zeroized on drop.
#[derive(Clone, Default, PartialEq, Eq, Zeroize, ZeroizeOnDrop)]
pub struct Opened {
    /// The one-time (tag) key taken from the start of the keystream.
    pub otk: [u8; OTK_BYTES],
    /// The decrypted, not yet verified, plaintext.
    pub plaintext: Vec<u8>,
}

impl core::fmt::Debug for Opened {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // never print key material
        write!(f, "Opened {{ otk: <redacted>, plaintext: {} bytes }}", self.plaintext.len())
    }
}

/// How a batch is processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Plan groups and backends by the cost estimates (the gateway default).
    Auto,
    /// Every message through one bit-sliced backend, groups of its full lane width (the last
    /// group partial), no single-stream fallback. For cross-checks and measurements.
    Bitsliced(Backend),
    /// Every message through the single-stream path (the baseline).
    SingleStream,
}

/// Keystream bytes per lane per `MultiDraco::keystream` call after the first.
pub const CHUNK_BYTES: usize = 256;

/// Rough cost estimates (ns) that steer [`Mode::Auto`]: initialisation and one keystream clock
/// (for all lanes) per backend, and a single stream's init and per-bit cost. From the best-of-N
/// figures in `docs/draco.md` (AMD EPYC Zen 4, this project's dev VM); only ratios matter.
pub struct Cost {
    /// A single stream's initialisation.
    pub single_init: f64,
    /// A single stream's cost per keystream bit.
    pub single_bit: f64,
    /// (init, per clock) for Portable, Avx2, Avx512.
    pub group: [(f64, f64); 3],
}

/// The estimates [`Mode::Auto`] plans with.
pub const COST: Cost =
    Cost { single_init: 3_850.0, single_bit: 3.3, group: [(27_000.0, 36.6), (66_000.0, 52.7), (120_000.0, 81.0)] };

fn group_cost(b: Backend, len: usize) -> f64 {
    let (init, clock) = COST.group[b as usize];
    init + ((SKIP_BYTES + len) * 8) as f64 * clock
}

fn single_cost(len: usize) -> f64 {
    COST.single_init + ((SKIP_BYTES + len) * 8) as f64 * COST.single_bit
}

/// Open every message: the one-time key and the (unverified) plaintext, in input order, on the
/// widest available backend with [`Mode::Auto`] planning.
pub fn open_batch(items: &[BatchItem]) -> Vec<Opened> {
    open_batch_using(Mode::Auto, items).expect("Auto only uses available backends")
}

/// [`open_batch`] with an explicit [`Mode`]; errors only if a forced backend is unavailable.
pub fn open_batch_using(mode: Mode, items: &[BatchItem]) -> Result<Vec<Opened>, MultiError> {
    let mut out: Vec<Opened> = Vec::with_capacity(items.len());
    out.resize_with(items.len(), Opened::default);
    // longest first, so each group's lanes run to similar lengths (lengths are public)
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| core::cmp::Reverse(items[i].ct.len()));
    match mode {
        Mode::SingleStream => {
            for &i in &order {
                out[i] = open_single(&items[i]);
            }
        }
        Mode::Bitsliced(b) => {
            if !b.available() {
                return Err(MultiError::BackendUnavailable(b));
            }
            for g in order.chunks(b.lanes()) {
                open_group(b, items, g, &mut out)?;
            }
        }
        Mode::Auto => {
            let backends: Vec<Backend> = Backend::ALL.into_iter().filter(|b| b.available()).collect();
            let mut p = 0;
            while p < order.len() {
                let len_at = |k: usize| items[order[k]].ct.len();
                let r = order.len() - p;
                // cheapest option per message for the window starting at p (its longest message
                // sets the group's length)
                let mut best: Option<Backend> = None;
                let mut best_per_msg = single_cost(len_at(p));
                for &b in &backends {
                    let w = r.min(b.lanes());
                    let per = group_cost(b, len_at(p)) / w as f64;
                    if per < best_per_msg {
                        best_per_msg = per;
                        best = Some(b);
                    }
                }
                let Some(b) = best else {
                    out[order[p]] = open_single(&items[order[p]]);
                    p += 1;
                    continue;
                };
                let w = r.min(b.lanes());
                // send the k longest to the single-stream path if that beats running the whole
                // group to their length
                let (mut best_k, mut best_total, mut singles) = (0, group_cost(b, len_at(p)), 0.0);
                for k in 1..w {
                    singles += single_cost(len_at(p + k - 1));
                    let total = singles + group_cost(b, len_at(p + k));
                    if total < best_total {
                        (best_k, best_total) = (k, total);
                    }
                }
                if best_k > 0 {
                    for &i in &order[p..p + best_k] {
                        out[i] = open_single(&items[i]);
                    }
                    p += best_k;
                } else {
                    open_group(b, items, &order[p..p + w], &mut out)?;
                    p += w;
                }
            }
        }
    }
    Ok(out)
}

/// Open and verify every message: `Ok(plaintext)` only when its tag verifies under
/// [`composition::verify_tag`]; a refused message's plaintext is zeroized, never returned.
pub fn open_batch_verified(items: &[TaggedItem]) -> Vec<Result<Vec<u8>, TagError>> {
    open_batch_verified_using(Mode::Auto, items).expect("Auto only uses available backends")
}

/// [`open_batch_verified`] with an explicit [`Mode`].
pub fn open_batch_verified_using(
    mode: Mode,
    items: &[TaggedItem],
) -> Result<Vec<Result<Vec<u8>, TagError>>, MultiError> {
    let plain: Vec<BatchItem> = items.iter().map(|t| BatchItem { key: t.key, iv: t.iv, ct: t.ct }).collect();
    let opened = open_batch_using(mode, &plain)?;
    Ok(opened
        .into_iter()
        .zip(items)
        .map(|(mut o, t)| {
            if composition::verify_tag(&o.otk, t.ad, t.ct, t.tag) {
                Ok(core::mem::take(&mut o.plaintext))
            } else {
                Err(TagError) // `o` (otk and plaintext) is zeroized on drop
            }
        })
        .collect())
}

fn open_single(it: &BatchItem) -> Opened {
    let mut plaintext = it.ct.to_vec();
    let otk = composition::otk_and_decrypt(it.key, it.iv, &mut plaintext);
    Opened { otk, plaintext }
}

/// One bit-sliced group: `group` are indices into `items` (longest first), results go to
/// `out` at the same indices.
fn open_group(b: Backend, items: &[BatchItem], group: &[usize], out: &mut [Opened]) -> Result<(), MultiError> {
    let n = group.len();
    let mut keys: Vec<[u8; 16]> = group.iter().map(|&i| *items[i].key).collect();
    let ivs: Vec<[u8; 12]> = group.iter().map(|&i| *items[i].iv).collect();
    let m = MultiDraco::with_backend(b, &keys, &ivs);
    keys.zeroize();
    let mut m = m?;
    let maxlen = group.iter().map(|&i| items[i].ct.len()).max().unwrap_or(0);
    let first = maxlen.min(CHUNK_BYTES);
    let mut buf = vec![0u8; n * (SKIP_BYTES + first).max(CHUNK_BYTES)];
    // first call: the one-time key, the discarded bytes and the first chunk of every message
    let stride = SKIP_BYTES + first;
    m.keystream(&mut buf[..n * stride], stride)?;
    for (lane, &i) in group.iter().enumerate() {
        let ks = &buf[lane * stride..(lane + 1) * stride];
        let ct = items[i].ct;
        let o = &mut out[i];
        o.otk.copy_from_slice(&ks[..OTK_BYTES]);
        o.plaintext = Vec::with_capacity(ct.len());
        let k = ct.len().min(first);
        o.plaintext.extend(ct[..k].iter().zip(&ks[SKIP_BYTES..SKIP_BYTES + k]).map(|(c, z)| c ^ z));
    }
    // later chunks: lanes whose message is shorter keep clocking, their bytes are ignored
    let mut off = first;
    while off < maxlen {
        let c = (maxlen - off).min(CHUNK_BYTES);
        m.keystream(&mut buf[..n * c], c)?;
        for (lane, &i) in group.iter().enumerate() {
            let ct = items[i].ct;
            if ct.len() <= off {
                break; // longest first: every later lane is done too
            }
            let k = (ct.len() - off).min(c);
            let ks = &buf[lane * c..lane * c + k];
            out[i].plaintext.extend(ct[off..off + k].iter().zip(ks).map(|(c, z)| c ^ z));
        }
        off += c;
    }
    buf.zeroize();
    Ok(())
}
