//! Memory footprint as the stream-cipher study defines it: resident-set growth while
//! encrypting, divided by the bytes processed (docs/metrics.md, "rss_growth_*").
//!
//! One measurement: read the resident set size (`VmRSS` in `/proc/self/status`, kB), create a
//! fresh cipher instance, key it, encrypt `n` bytes from a prepared plaintext into a freshly
//! mapped output buffer (out of place, as a wrapper returning a new ciphertext does), read the
//! resident set size again while everything is still alive, then release it. The output buffer
//! is mapped with `mmap` so its pages are new to the process every time: the figure then does
//! not depend on what the allocator happens to have resident from earlier work.
//! The resident set is process-wide: other threads allocating at the same time add noise, so
//! the study takes the median of several measurements.
use std::hint::black_box;

/// Resident set size of this process in bytes, if the kernel reports it.
pub fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A zero-filled anonymous mapping: pages become resident only when written.
pub struct FreshPages {
    ptr: *mut u8,
    len: usize,
}

impl FreshPages {
    /// Map `len` zero bytes (at least one), none of them resident yet.
    pub fn new(len: usize) -> Result<Self, String> {
        let len = len.max(1);
        // SAFETY: an anonymous private mapping with no address hint; checked for MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!("memory footprint: mmap of {len} bytes failed: {}", std::io::Error::last_os_error()));
        }
        Ok(FreshPages { ptr: p as *mut u8, len })
    }
    /// The mapping as bytes.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes, readable and writable, owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for FreshPages {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what `new` mapped.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

/// Growth of the resident set (bytes, ≥ 0) across `f`, which receives a fresh `n`-byte output
/// buffer and may keep what it allocates alive by returning it.
pub fn growth_during<R>(n: usize, f: impl FnOnce(&mut [u8]) -> R) -> Result<u64, String> {
    let before = rss_bytes().ok_or("memory footprint: /proc/self/status has no VmRSS line")?;
    let mut out = FreshPages::new(n)?;
    let kept = f(&mut out.as_mut_slice()[..n]);
    let after = rss_bytes().ok_or("memory footprint: /proc/self/status has no VmRSS line")?;
    black_box(&kept);
    drop(kept);
    drop(out);
    Ok(after.saturating_sub(before))
}

#[cfg(test)]
mod tests {
    use super::*;

    // writing_fresh_pages_grows_the_resident_set_by_their_size lives in tests/rss.rs: its own
    // test binary, so no other test thread allocates while it measures.

    #[test]
    fn untouched_pages_do_not_count() {
        // Resident set is process-wide: measured alone in a child process.
        if !crate::resources::in_own_process("resources::rss::tests::untouched_pages_do_not_count") {
            return;
        }
        let n = 32 << 20;
        let g = growth_during(n, |_| ()).unwrap();
        assert!((g as f64) < 0.25 * n as f64, "growth {g} bytes without writing");
    }
}
