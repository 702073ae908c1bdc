//! Small helpers for bit-granular keystreams.

use crate::{BitOrder, CipherError};

/// Bytes needed to hold `nbits` bits.
pub const fn bytes_for(nbits: usize) -> usize {
    nbits.div_ceil(8)
}

/// Mask selecting the first `nbits % 8` bits of a partial last byte (all ones if whole).
pub const fn tail_mask(nbits: usize, order: BitOrder) -> u8 {
    let r = nbits % 8;
    if r == 0 {
        return 0xff;
    }
    match order {
        BitOrder::MsbFirst => 0xffu8 << (8 - r),
        BitOrder::LsbFirst => 0xffu8 >> (8 - r),
    }
}

/// Error unless `buf` can hold `nbits` bits.
pub fn check_room(buf: &[u8], nbits: usize) -> Result<(), CipherError> {
    let needed = bytes_for(nbits);
    if buf.len() < needed {
        Err(CipherError::BufferTooSmall { needed, got: buf.len() })
    } else {
        Ok(())
    }
}

/// Generic `apply_bits` for ciphers that can produce whole-byte keystream into a scratch
/// buffer: XOR `nbits` of keystream into `data`, leaving bits past `nbits` untouched.
/// `ks` must produce the next keystream bytes; it is called on chunks of at most 64 bytes.
pub fn xor_with_keystream(
    data: &mut [u8],
    nbits: usize,
    order: BitOrder,
    mut ks: impl FnMut(&mut [u8], usize) -> Result<(), CipherError>,
) -> Result<(), CipherError> {
    check_room(data, nbits)?;
    let mut scratch = [0u8; 64];
    let mut done = 0usize; // bits
    while done < nbits {
        let chunk_bits = core::cmp::min(nbits - done, 64 * 8);
        let nb = bytes_for(chunk_bits);
        ks(&mut scratch[..nb], chunk_bits)?;
        let start = done / 8;
        for (d, k) in data[start..start + nb].iter_mut().zip(&scratch[..nb]) {
            *d ^= *k;
        }
        done += chunk_bits;
    }
    let _ = order; // keystream_bits already zeroed the unused tail bits, so XOR leaves them.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_masks_by_hand() {
        assert_eq!(tail_mask(8, BitOrder::MsbFirst), 0xff);
        assert_eq!(tail_mask(1, BitOrder::MsbFirst), 0b1000_0000);
        assert_eq!(tail_mask(3, BitOrder::MsbFirst), 0b1110_0000);
        assert_eq!(tail_mask(1, BitOrder::LsbFirst), 0b0000_0001);
        assert_eq!(tail_mask(13, BitOrder::LsbFirst), 0b0001_1111);
        assert_eq!(bytes_for(0), 0);
        assert_eq!(bytes_for(1), 1);
        assert_eq!(bytes_for(1024), 128);
        assert_eq!(bytes_for(1025), 129);
    }

    #[test]
    fn xor_leaves_tail_bits() {
        // keystream of all ones, masked like a conforming keystream_bits would
        let mut data = [0u8; 3];
        xor_with_keystream(&mut data, 11, BitOrder::MsbFirst, |out, n| {
            out.fill(0xff);
            let last = out.len() - 1;
            out[last] &= tail_mask(n, BitOrder::MsbFirst);
            Ok(())
        })
        .unwrap();
        assert_eq!(data, [0xff, 0b1110_0000, 0]);
        let mut small = [0u8; 1];
        assert_eq!(
            xor_with_keystream(&mut small, 9, BitOrder::MsbFirst, |_, _| Ok(())),
            Err(CipherError::BufferTooSmall { needed: 2, got: 1 })
        );
    }
}
