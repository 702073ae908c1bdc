//! Peak stack use of a piece of code, by stack painting (docs/metrics.md, "peak_stack_bytes").
//!
//! In a dedicated thread with a known, large stack: read the stack pointer, fill `depth` bytes
//! below it (after a 128-byte gap, the x86-64 red zone) with a pattern word, run the code,
//! then scan the painted region from its far end for the first word that is no longer the
//! pattern. The distance from the stack pointer to that word is the deepest the code reached.
//! The same measurement of an empty closure (the harness's own call overhead, usually inside the gap and then 0) is subtracted.
//!
//! Limits: the result is rounded to whole 8-byte words; a word the code wrote with exactly the
//! pattern value goes unseen (the pattern is an unlikely 64-bit constant); use below the
//! 128-byte gap shows as "at most 128 bytes"; signal handlers running on this thread's stack
//! during the measurement would count (none are installed by lwcbench).
use std::hint::black_box;

const PATTERN: u64 = 0xA5C3_5A3C_96E1_0F69;
const GAP: usize = 128;

#[inline(always)]
fn stack_pointer() -> usize {
    let sp: usize;
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(target_arch = "aarch64")]
    unsafe {
        std::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let local = 0u8;
        sp = black_box(&local) as *const u8 as usize;
    }
    sp
}

/// Paint, run, scan. Must not be inlined: its frame is the reference point, and it must not
/// call anything between painting and `f` (a call would write into the painted region).
#[inline(never)]
fn painted_run(depth: usize, f: &mut dyn FnMut()) -> Option<usize> {
    let sp = stack_pointer();
    let top = (sp - GAP) & !7;
    let words = depth / 8;
    let base = top - words * 8;
    // SAFETY: [base, top) lies inside this thread's stack, below the live frames (the thread
    // was created with a stack larger than `depth` + this frame), and nothing lives there.
    unsafe {
        for k in 0..words {
            std::ptr::write_volatile((base + 8 * k) as *mut u64, PATTERN);
        }
    }
    f();
    let mut lowest_used = None;
    unsafe {
        for k in 0..words {
            if std::ptr::read_volatile((base + 8 * k) as *const u64) != PATTERN {
                lowest_used = Some(base + 8 * k);
                break;
            }
        }
    }
    lowest_used.map(|a| sp - a)
}

/// Peak stack bytes used by `f` (up to `depth`), net of the harness's own call overhead.
/// Runs `f` once in a fresh thread; `Err` if the thread panicked or `f` filled the whole
/// painted region (then the true peak is at least `depth`).
pub fn peak_stack<F: FnMut() + Send>(depth: usize, mut f: F) -> Result<usize, String> {
    std::thread::scope(|s| {
        let h = std::thread::Builder::new()
            .name("lwcbench-stack".into())
            .stack_size(depth + (1 << 20))
            .spawn_scoped(s, move || {
                let base = painted_run(depth, &mut || black_box(()));
                let used = painted_run(depth, &mut f);
                (base, used)
            })
            .map_err(|e| format!("stack measurement: cannot start a thread: {e}"))?;
        let (base, used) = h.join().map_err(|_| "stack measurement: the measured code panicked".to_string())?;
        match used {
            // Nothing below the gap was touched: at most GAP bytes.
            None => Ok(GAP),
            Some(u) if u >= depth => {
                Err(format!("stack measurement: the code used the whole painted region ({depth} bytes)"))
            }
            Some(u) => Ok(u - base.unwrap_or(0).min(u)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn big_local(n: usize) -> u8 {
        let mut a = [0u8; 16 * 1024];
        for (i, x) in a.iter_mut().enumerate() {
            *x = (i * n) as u8;
        }
        black_box(&mut a);
        a[n % a.len()]
    }

    #[inline(never)]
    fn tiny(n: u64) -> u64 {
        black_box(n.wrapping_mul(3))
    }

    #[test]
    fn a_16_kib_local_array_shows() {
        let used = peak_stack(256 * 1024, || {
            black_box(big_local(black_box(7)));
        })
        .unwrap();
        assert!(used >= 16 * 1024, "measured {used} bytes for a 16 KiB array");
        assert!(used < 20 * 1024, "measured {used} bytes: far more than the array and a frame");
    }

    #[test]
    fn a_tiny_function_uses_little() {
        let used = peak_stack(64 * 1024, || {
            black_box(tiny(black_box(5)));
        })
        .unwrap();
        assert!(used <= 512, "measured {used} bytes for a leaf function");
    }

    #[test]
    fn overflowing_the_painted_region_is_an_error() {
        let e = peak_stack(8 * 1024, || {
            black_box(big_local(1));
        })
        .unwrap_err();
        assert!(e.contains("whole painted region"), "{e}");
    }
}
