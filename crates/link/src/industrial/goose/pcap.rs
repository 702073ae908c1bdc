//! A minimal pcap writer (the classic libpcap format, little-endian, microsecond timestamps), so
//! a third-party dissector (tshark) can read the frames this tool generates.
//!
//! ```text
//! global header (24 B): magic 0xA1B2C3D4, version 2.4, thiszone 0, sigfigs 0,
//!                       snaplen 65535, network 1 (LINKTYPE_ETHERNET)   — each field u32/u16 LE
//! per record (16 B + data): ts_sec, ts_usec, incl_len, orig_len (u32 LE), then the frame
//! ```

/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Largest packet a capture record holds (the pcap header's snaplen).
pub const SNAPLEN: u32 = 65_535;

/// The whole pcap file for `frames`, timestamped `start_us` + 1 µs per frame.
pub fn pcap(frames: &[Vec<u8>], start_us: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(24 + frames.iter().map(|f| 16 + f.len()).sum::<usize>());
    out.extend_from_slice(&0xA1B2_C3D4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&SNAPLEN.to_le_bytes());
    out.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
    for (i, f) in frames.iter().enumerate() {
        let ts = start_us + i as u64;
        let len = f.len().min(SNAPLEN as usize) as u32;
        out.extend_from_slice(&((ts / 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&((ts % 1_000_000) as u32).to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(&f[..len as usize]);
    }
    out
}

#[cfg(test)]
mod tests {
    /// Header and one record written out by hand from the format above.
    #[test]
    fn pcap_bytes_by_hand() {
        let p = super::pcap(&[vec![0xAA, 0xBB]], 1_500_000);
        #[rustfmt::skip]
        let want = [
            0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 1, 0, 0, 0,
            1, 0, 0, 0, 0x20, 0xA1, 0x07, 0x00, 2, 0, 0, 0, 2, 0, 0, 0, 0xAA, 0xBB,
        ];
        assert_eq!(p, want);
    }
}
