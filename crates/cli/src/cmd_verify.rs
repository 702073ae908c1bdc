use std::path::PathBuf;

use clap::Args;
use lwcbench_catalog::{registry, torture, torture::Subject, VerifyCtx};

#[derive(Args)]
pub struct VerifyArgs {
    /// Only these ciphers (name or name/implementation; comma-separated or repeated).
    #[arg(short, long, value_delimiter = ',')]
    cipher: Vec<String>,
    /// Folder with the official vectors (default: $LWCBENCH_VECTORS or ../shared/vectors).
    #[arg(long)]
    vectors: Option<PathBuf>,
    /// Print every check, not only failures and a per-implementation line.
    #[arg(short, long)]
    verbose: bool,
    /// Also run the vectors through an external engine (built-in name such as pycryptodome,
    /// or a command line; docs/engine-protocol.md). Alone, only the engine is verified; an
    /// engine that cannot start is a failure.
    #[arg(long)]
    engine: Vec<String>,
    /// Random loops of the misuse torture per AEAD, mode and stream-cipher implementation
    /// (canaries, unchanged inputs, determinism, round trip, forgeries; docs/ciphers.md).
    /// 0 skips the torture and the per-primitive checksums.
    #[arg(long, default_value_t = lwcbench_catalog::torture::LOOPS)]
    torture_loops: usize,
}

/// Running totals of a verify run, summed over implementations and checksums.
#[derive(Default)]
struct Totals {
    pass: usize,
    fail: usize,
    skipped: usize,
    failed_ids: Vec<String>,
    /// Implementations tortured, and the torture checks that passed and failed.
    tortured: usize,
    torture_pass: usize,
    torture_fail: usize,
}

pub fn run(a: &VerifyArgs) -> Result<(), String> {
    let mut ctx = VerifyCtx::discover();
    if let Some(v) = &a.vectors {
        if !v.join("README.md").is_file() {
            return Err(format!("--vectors: {} is not a vector folder (no README.md)", v.display()));
        }
        ctx.vectors = Some(v.clone());
    }
    match &ctx.vectors {
        Some(p) => println!("official vectors: {}", p.display()),
        None => println!("official vectors: folder not found — running the transcribed in-repo vectors only"),
    }
    for m in lwcbench_catalog::aes::missing_libraries() {
        println!("{m}");
    }
    let entries: Vec<_> = registry()
        .into_iter()
        .filter(|_| a.engine.is_empty() || !a.cipher.is_empty())
        .filter(|e| a.cipher.is_empty() || a.cipher.iter().any(|c| e.matches(c)))
        .collect();
    if entries.is_empty() && a.engine.is_empty() {
        return Err(format!("--cipher: no implementation matches {:?} (see `lwcbench list`)", a.cipher));
    }
    let mut sums: Vec<torture::Sum> = Vec::new();
    let items = engine_items(a, &ctx, &mut sums);
    let verified = entries.len() + items.len();
    if verified == 0 {
        return Err(format!("--cipher: no implementation matches {:?} (see `lwcbench list`)", a.cipher));
    }
    let registry_items = entries.iter().map(|e| (e.id(), e));
    let mut all: Vec<(String, Option<&lwcbench_catalog::Entry>, Vec<lwcbench_catalog::Check>)> =
        registry_items.map(|(id, e)| (id, Some(e), Vec::new())).collect();
    all.extend(items.into_iter().map(|(id, c)| (id, None, c)));
    let mut t = Totals::default();
    for (id, e, engine_checks) in all {
        // Registry entries verify when their turn comes, so output streams as before.
        let checks = match e {
            Some(e) => {
                // the application layer's checks, which the Python package reports too
                let (checks, sum) = lwcbench_app::verify::checks(e, &ctx, a.torture_loops);
                sums.extend(sum);
                checks
            }
            None => engine_checks,
        };
        report_item(a, id, &checks, &mut t);
    }
    if !sums.is_empty() {
        report_checksums(a, sums, &mut t);
    }
    println!(
        "\nverify: {} implementations, {} vectors and checks passed, {} failed{}",
        verified,
        t.pass,
        t.fail,
        if t.skipped > 0 { format!(", {} checks skipped", t.skipped) } else { String::new() }
    );
    if t.failed_ids.is_empty() {
        println!("{} passed, 0 failed", t.pass);
        Ok(())
    } else {
        Err(format!("verification failed for {}", t.failed_ids.join(", ")))
    }
}

/// The checks of every `--engine`: its vectors and, unless `--torture-loops 0`, its torture
/// (whose checksums go to `sums`). An engine that cannot start is one failed check.
fn engine_items(
    a: &VerifyArgs,
    ctx: &VerifyCtx,
    sums: &mut Vec<torture::Sum>,
) -> Vec<(String, Vec<lwcbench_catalog::Check>)> {
    let mut items: Vec<(String, Vec<lwcbench_catalog::Check>)> = Vec::new();
    for s in &a.engine {
        match lwcbench_engine::external::Engine::start(s) {
            Ok(mut e) => {
                println!("{}", e.hello.describe());
                let want = |name: &str, id: &str| {
                    a.cipher.is_empty()
                        || a.cipher.iter().any(|c| c.eq_ignore_ascii_case(name) || c.eq_ignore_ascii_case(id))
                };
                let mut got = lwcbench_engine::external::vectors::verify(&mut e, ctx, &want);
                if a.torture_loops > 0 {
                    let (checks, s) = lwcbench_engine::external::vectors::torture(&mut e, &want, a.torture_loops);
                    for (id, c) in checks {
                        match got.iter_mut().find(|(i, _)| *i == id) {
                            Some((_, v)) => v.push(c),
                            None => got.push((id, vec![c])),
                        }
                    }
                    sums.extend(s);
                }
                items.extend(got);
            }
            Err(m) => {
                let mut c = lwcbench_catalog::Check::new(format!("engine {s}"), "engine start");
                c.fail(m);
                items.push((format!("engine {s}"), vec![c]));
            }
        }
    }
    items
}

/// Print one implementation's line and its failed (or, with `--verbose`, every) check, and
/// add it to the totals.
fn report_item(a: &VerifyArgs, id: String, checks: &[lwcbench_catalog::Check], t: &mut Totals) {
    for c in checks.iter().filter(|c| c.what.starts_with("torture:")) {
        t.tortured += 1;
        t.torture_pass += c.passed;
        t.torture_fail += c.failures.len();
    }
    let pass: usize = checks.iter().map(|c| c.passed).sum();
    let fail: usize = checks.iter().map(|c| c.failures.len()).sum();
    let sk = checks.iter().filter(|c| c.skipped).count();
    let bad = checks.iter().any(|c| !c.ok());
    println!(
        "{} {:<34} {:>6} passed {:>4} failed {:>3} checks{}",
        if bad { "FAIL" } else { " ok " },
        id,
        pass,
        fail,
        checks.len(),
        if sk > 0 { format!(" ({sk} skipped: shared folder absent)") } else { String::new() }
    );
    for c in checks {
        if a.verbose || !c.ok() || c.what.contains("finding") {
            let state = if c.skipped {
                "skip"
            } else if c.ok() {
                "ok"
            } else {
                "FAIL"
            };
            println!("    {state:<4} {} — {} passed", c.what, c.passed);
        }
        if !c.ok() && c.failures.is_empty() {
            println!("        no vector was checked");
        }
        for f in c.failures.iter().take(5) {
            println!("        {f}");
        }
        if c.failures.len() > 5 {
            println!("        … {} more", c.failures.len() - 5);
        }
    }
    t.pass += pass;
    t.fail += fail;
    t.skipped += sk;
    if bad {
        t.failed_ids.push(id);
    }
}

/// Compare the per-primitive checksums and print them with the torture summary.
fn report_checksums(a: &VerifyArgs, mut sums: Vec<torture::Sum>, t: &mut Totals) {
    // Every implementation of a primitive that was checked takes part in its checksum,
    // including those a --cipher filter or an engine-only run left out above.
    let prims: Vec<String> = sums.iter().map(|s| s.primitive.clone()).collect();
    for e in registry().iter().filter(|e| prims.contains(&e.info.name.to_string())) {
        if sums.iter().any(|s| s.id == e.id()) {
            continue;
        }
        if let Some(mut s) = torture::Local::new(e) {
            sums.push(torture::Sum { primitive: s.primitive(), id: s.id(), result: torture::checksum(&mut s) });
        }
    }
    let checks = torture::compare(&sums);
    let (multi, agree) = (
        checks.iter().filter(|c| c.passed + c.failures.len() > 1).count(),
        checks.iter().filter(|c| c.ok() && c.passed > 1).count(),
    );
    println!("\nper-primitive checksums (SUPERCOP-style; every implementation must give the same):");
    for c in &checks {
        let state = if c.ok() { " ok " } else { "FAIL" };
        if a.verbose || !c.ok() || c.passed > 1 {
            println!("{state} {:<30} {}", c.id.trim_start_matches("checksum "), c.what);
        }
        for f in &c.failures {
            println!("        {f}");
        }
        t.pass += c.passed;
        t.fail += c.failures.len();
        if !c.ok() {
            t.failed_ids.push(c.id.clone());
        }
    }
    println!(
        "torture: {} implementations, {} checks passed, {} failed; checksums: {} primitives, {agree} of the {multi} with several implementations agree",
        t.tortured,
        t.torture_pass,
        t.torture_fail,
        checks.len()
    );
}
