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
/// Bytes the allocator has handed out: unknown off glibc.
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
        // Heap in use is process-wide: other test threads freeing memory in between moved it
        // by tens of MiB, so the measurement runs alone in a child process.
        if !crate::resources::in_own_process("resources::heap::tests::heap_in_use_sees_an_allocation") {
            return;
        }
        // A 64 MiB allocation: above glibc's largest dynamic mmap threshold (32 MiB on 64-bit
        // hosts), so it is an mmap'ed chunk, counted in hblkhd whichever thread's arena serves
        // it. Alone in the process, the growth is the chunk (64 MiB plus its header, rounded up
        // to a page: 64 MiB + 4 KiB, hand computation) plus at most a few small allocations
        // of the test harness's thread (112 B seen): 64 KiB of slack covers those.
        let before = heap_in_use().unwrap();
        let v = std::hint::black_box(vec![1u8; 64 << 20]);
        let after = heap_in_use().unwrap();
        let grew = after as i64 - before as i64;
        assert!((64 << 20..=(64 << 20) + (64 << 10)).contains(&grew), "{before} -> {after}");
        drop(v);
    }
}
