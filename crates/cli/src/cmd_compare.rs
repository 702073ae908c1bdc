use std::path::PathBuf;

use clap::Args;
use lwcbench_report::{compare, Run};

#[derive(Args)]
pub struct CompareArgs {
    /// Baseline result directory (A).
    a: PathBuf,
    /// Result directory compared against it (B).
    b: PathBuf,
    /// Also write the comparison as a self-contained HTML page here.
    #[arg(long, default_value = "lwcbench-compare.html")]
    html: PathBuf,
}

pub fn run(a: &CompareArgs) -> Result<(), String> {
    let ra = Run::load(&a.a)?;
    let rb = Run::load(&a.b)?;
    let rows = compare::compare_runs(&ra, &rb);
    print!("{}", compare::text_table(&rows));
    let page = compare::html(&ra, &rb, &a.a.display().to_string(), &a.b.display().to_string(), &rows);
    lwcbench_engine::results::write_atomic_to(&a.html, page.as_bytes(), "--html")?;
    println!("wrote {}", a.html.display());
    Ok(())
}
