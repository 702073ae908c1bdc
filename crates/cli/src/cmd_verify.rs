use std::path::PathBuf;

use clap::Args;
use lwcbench_catalog::{registry, VerifyCtx};

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
    let (mut total_pass, mut total_fail, mut skipped) = (0usize, 0usize, 0usize);
    let mut failed_ids = Vec::new();
    let mut verified = entries.len();
    let mut items: Vec<(String, Vec<lwcbench_catalog::Check>)> = Vec::new();
    for s in &a.engine {
        match lwcbench_engine::external::Engine::start(s) {
            Ok(mut e) => {
                println!("{}", e.hello.describe());
                let want = |name: &str, id: &str| {
                    a.cipher.is_empty()
                        || a.cipher.iter().any(|c| c.eq_ignore_ascii_case(name) || c.eq_ignore_ascii_case(id))
                };
                items.extend(lwcbench_engine::external::vectors::verify(&mut e, &ctx, &want));
            }
            Err(m) => {
                let mut c = lwcbench_catalog::Check::new(format!("engine {s}"), "engine start");
                c.fail(m);
                items.push((format!("engine {s}"), vec![c]));
            }
        }
    }
    verified += items.len();
    if verified == 0 {
        return Err(format!("--cipher: no implementation matches {:?} (see `lwcbench list`)", a.cipher));
    }
    let registry_items = entries.iter().map(|e| (e.id(), e));
    let mut all: Vec<(String, Option<&lwcbench_catalog::Entry>, Vec<lwcbench_catalog::Check>)> =
        registry_items.map(|(id, e)| (id, Some(e), Vec::new())).collect();
    all.extend(items.into_iter().map(|(id, c)| (id, None, c)));
    for (id, e, engine_checks) in all {
        // Registry entries verify when their turn comes, so output streams as before.
        let checks = match e {
            Some(e) => e.checks(&ctx),
            None => engine_checks,
        };
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
        for c in &checks {
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
        total_pass += pass;
        total_fail += fail;
        skipped += sk;
        if bad {
            failed_ids.push(id);
        }
    }
    println!(
        "\nverify: {} implementations, {total_pass} vectors and checks passed, {total_fail} failed{}",
        verified,
        if skipped > 0 { format!(", {skipped} checks skipped") } else { String::new() }
    );
    if failed_ids.is_empty() {
        println!("{total_pass} passed, 0 failed");
        Ok(())
    } else {
        Err(format!("verification failed for {}", failed_ids.join(", ")))
    }
}
