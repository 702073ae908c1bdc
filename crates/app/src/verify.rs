//! `verify`: an implementation's checks as `lwcbench verify` runs them (vectors, cross-checks
//! and the misuse torture), so the Python package reports the same checks.
use lwcbench_catalog::torture::{self, Subject};
use lwcbench_catalog::{Check, Entry, VerifyCtx};

/// The checks of `e`: its vectors and cross-checks, then, unless `torture_loops` is 0, its
/// misuse torture with that many random loops; with the torture, also its per-primitive
/// checksum (compared across implementations by the caller).
pub fn checks(e: &Entry, ctx: &VerifyCtx, torture_loops: usize) -> (Vec<Check>, Option<torture::Sum>) {
    let mut checks = e.checks(ctx);
    let mut sum = None;
    if let Some(mut s) = Some(e).filter(|_| torture_loops > 0).and_then(torture::Local::new) {
        checks.push(torture::torture(&mut s, torture_loops, 1));
        sum = Some(torture::Sum { primitive: s.primitive(), id: s.id(), result: torture::checksum(&mut s) });
    }
    (checks, sum)
}
