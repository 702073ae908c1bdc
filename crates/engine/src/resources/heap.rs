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
        // A 1 MiB allocation (above glibc's mmap threshold, so counted in hblkhd whichever
        // thread's arena serves it): in-use bytes grow by at least 1 MiB.
        let before = heap_in_use().unwrap();
        let v = std::hint::black_box(vec![1u8; 1 << 20]);
        let after = heap_in_use().unwrap();
        assert!(after >= before + (1 << 20), "{before} -> {after}");
        drop(v);
    }
}
