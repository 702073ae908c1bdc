//! Before an engine's cipher is timed, its output is checked against a built-in
//! implementation of the same cipher (a wrong engine must not produce rows).
use lwcbench_catalog::Make;
use lwcbench_core::Family;

use super::{Engine, Failure, Offer, MAX_QUOTE};

impl Engine {
    /// Before a cipher is timed, check what the engine computes (a wrong answer is no measurement): one
    /// encryption of a fixed input must equal lwcbench's own implementation of the same cipher
    /// (when the catalogue has one of that name and family), must not be the plaintext, and
    /// must decrypt back to the plaintext. `Ok(Some(why))`: the engine's output is wrong; the
    /// answer is kept, so every group of the cipher fails with the same line.
    pub(super) fn check_output(&mut self, o: &Offer) -> Result<Option<String>, Failure> {
        if let Some(r) = self.checked.get(&o.name) {
            return Ok(r.clone());
        }
        let key: Vec<u8> = (0..o.key_bits / 8).map(|i| (i as u8).wrapping_mul(29).wrapping_add(7)).collect();
        let iv: Vec<u8> = (0..o.iv_bits / 8).map(|i| (i as u8).wrapping_mul(13).wrapping_add(101)).collect();
        let aad: Vec<u8> = if o.family == Family::Aead { b"lwcbench check".to_vec() } else { Vec::new() };
        let bb = (o.block_bits / 8).max(1) as usize;
        let len = if 32 % bb == 0 { 32 } else { 2 * bb };
        let pt: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(53).wrapping_add(1)).collect();
        let q = |b: &[u8]| crate::text::one_line(&hex::encode(b), 80);
        let why = match self.encrypt(&o.name, &key, &iv, &aad, &pt, None) {
            Err(Failure::Refused { code, message }) => Some(format!(
                "{}: the output check's encryption was refused ({}): {}",
                o.name,
                crate::text::one_line(&code, 60),
                crate::text::one_line(&message, MAX_QUOTE)
            )),
            Err(f) => return Err(f),
            Ok((ct, tag)) => {
                if let Some((id, (mut want_ct, want_tag))) = reference_encrypt(o, &key, &iv, &aad, &pt) {
                    // The catalogue's CBC/ECB pad with PKCS#7; an engine may encrypt the whole
                    // blocks it is given without padding. The input is whole blocks, so the
                    // padding is one extra block at the end: compare what both computed.
                    if o.family != Family::Aead && ct.len() + bb == want_ct.len() {
                        want_ct.truncate(ct.len());
                    }
                    if (&ct, &tag) != (&want_ct, &want_tag) {
                        Some(format!(
                            "{}: wrong output: the engine's encryption of a fixed input (ct {} tag {}) differs from {id} (ct {} tag {})",
                            o.name,
                            q(&ct),
                            q(&tag),
                            q(&want_ct),
                            q(&want_tag)
                        ))
                    } else {
                        None
                    }
                } else if ct == pt {
                    Some(format!("{}: wrong output: the engine's ciphertext equals the plaintext", o.name))
                } else {
                    None
                }
                .or_else(|| match self.decrypt(&o.name, &key, &iv, &aad, &ct, &tag) {
                    Ok(back) if back == pt => None,
                    Ok(back) => Some(format!(
                        "{}: wrong output: decrypting the engine's own ciphertext gives {} instead of {}",
                        o.name,
                        q(&back),
                        q(&pt)
                    )),
                    Err(f) => Some(format!("{}: decrypting the engine's own ciphertext failed: {f}", o.name)),
                })
            }
        };
        if let Some(b) = &self.broken {
            return Err(Failure::Broken(b.clone()));
        }
        self.checked.insert(o.name.clone(), why.clone());
        Ok(why)
    }
}

/// An implementation id with the ciphertext and tag it produced.
type Reference = (String, (Vec<u8>, Vec<u8>));

/// `(implementation id, (ct, tag))` from the first catalogue implementation with this
/// cipher name whose family matches and that accepts the input; `None` if there is none.
pub(super) fn reference_encrypt(o: &Offer, key: &[u8], iv: &[u8], aad: &[u8], pt: &[u8]) -> Option<Reference> {
    let family_fits = |f: Family| f == o.family || (o.family == Family::Block && f == Family::Mode);
    lwcbench_catalog::registry()
        .into_iter()
        .filter(|e| e.info.name.eq_ignore_ascii_case(&o.name) && family_fits(e.info.family))
        .filter(|e| e.info.key_bits == o.key_bits && e.info.iv_bits == o.iv_bits)
        .find_map(|e| {
            let out = match e.make? {
                Make::Aead(m) => {
                    let mut c = m();
                    c.set_key(key).ok()?;
                    let mut buf = pt.to_vec();
                    let mut tag = vec![0u8; (o.tag_bits / 8) as usize];
                    c.encrypt(iv, aad, &mut buf, &mut tag).ok()?;
                    (buf, tag)
                }
                Make::Mode(m) => {
                    let mut c = m();
                    c.set_key(key).ok()?;
                    let mut buf = pt.to_vec();
                    buf.resize(c.ciphertext_len(pt.len()).max(pt.len()), 0);
                    let n = c.encrypt(iv, &mut buf, pt.len()).ok()?;
                    buf.truncate(n);
                    (buf, Vec::new())
                }
                Make::Block(m) => {
                    let mut c = m();
                    c.set_key(key).ok()?;
                    let bb = c.info().block_bytes();
                    if bb == 0 || !pt.len().is_multiple_of(bb) {
                        return None;
                    }
                    let mut buf = pt.to_vec();
                    buf.chunks_mut(bb).for_each(|b| c.encrypt_block(b));
                    (buf, Vec::new())
                }
                Make::Stream(m) => {
                    let mut c = m();
                    c.init(key, iv).ok()?;
                    let mut buf = pt.to_vec();
                    c.apply(&mut buf).ok()?;
                    (buf, Vec::new())
                }
            };
            Some((e.id(), out))
        })
}
