//! Heap in use, for memory per operation of libraries that allocate with C `malloc`
//! (the aes-libs study's `memory.csv`).
/// Heap bytes in use (glibc `mallinfo2`: `uordblks`, the main arena's in-use bytes, plus
/// `hblkhd`, bytes in mmap'ed chunks): C libraries' and Rust's allocations alike. The study
/// runs on the main thread, whose allocations live in the main arena.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn heap_in_use() -> Option<usize> {
    // SAFETY: mallinfo2 only reads the allocator's statistics.
    let m = unsafe { libc::mallinfo2() };
    Some(m.uordblks + m.hblkhd)
}
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn heap_in_use() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn heap_in_use_sees_an_allocation() {
        // A 64 MiB allocation: above glibc's largest dynamic mmap threshold (32 MiB on 64-bit
        // hosts), so it is an mmap'ed chunk, counted in hblkhd whichever thread's arena would
        // serve it. (1 MiB was not enough: once a large chunk is freed, glibc raises the
        // threshold and serves 1 MiB from this test thread's arena, which uordblks does not
        // cover.) Other test threads may free memory meanwhile, hence the 16 MiB slack.
        let before = heap_in_use().unwrap();
        let v = std::hint::black_box(vec![1u8; 64 << 20]);
        let after = heap_in_use().unwrap();
        assert!(after >= before + (48 << 20), "{before} -> {after}");
        drop(v);
    }
}
