use clap::Args;
use lwcbench_catalog::registry;

#[derive(Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_parser = ["table", "csv", "json"], default_value = "table")]
    format: String,
    /// Show what an external engine offers instead (built-in name such as pycryptodome, or a
    /// command line; see docs/engine-protocol.md).
    #[arg(long)]
    engine: Vec<String>,
    /// Print the AES support matrix (library × mode × key size) instead of the list; with
    /// --format csv as CSV (the same table the aes-libs preset writes as support_matrix.csv).
    #[arg(long)]
    matrix: bool,
}

pub fn run(a: &ListArgs) -> Result<(), String> {
    if a.matrix {
        match a.format.as_str() {
            "csv" => print!("{}", lwcbench_catalog::aes::check::matrix_csv()),
            _ => print!("{}", lwcbench_catalog::aes::check::matrix_markdown()),
        }
        return Ok(());
    }
    let reg = if a.engine.is_empty() { registry() } else { engine_entries(&a.engine, a.format == "table")? };
    match a.format.as_str() {
        "json" => {
            let v: Vec<_> = reg
                .iter()
                .map(|e| {
                    let i = &e.info;
                    let sz = lwcbench_catalog::sizes::supported(i);
                    serde_json::json!({
                        "key_bits_accepted": sz.key_bits, "iv_bits_accepted": sz.iv_bits,
                        "id": e.id(), "cipher": i.name, "implementation": i.implementation,
                        "family": i.family.as_str(), "key_bits": i.key_bits, "iv_bits": i.iv_bits,
                        "block_bits": i.block_bits, "tag_bits": i.tag_bits, "state_bytes": i.state_bytes,
                        "origin": i.origin.to_string(), "language": i.language.as_str(),
                        "bit_granular": i.bit_granular, "note": i.note,
                        "bit_order": match i.bit_order {
                            lwcbench_core::BitOrder::LsbFirst => "lsb-first",
                            lwcbench_core::BitOrder::MsbFirst => "msb-first",
                        },
                    })
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&v).expect("json"));
        }
        "csv" => {
            println!("cipher,implementation,family,key_bits,iv_bits,block_bits,tag_bits,state_bytes,origin,language,bit_granular,note,key_bits_accepted,iv_bits_accepted");
            for e in &reg {
                let i = &e.info;
                let sz = lwcbench_catalog::sizes::supported(i);
                println!(
                    "{},{},{},{},{},{},{},{},{},{},{},\"{}\",{},{}",
                    i.name,
                    i.implementation,
                    i.family.as_str(),
                    i.key_bits,
                    i.iv_bits,
                    i.block_bits,
                    i.tag_bits,
                    i.state_bytes,
                    i.origin,
                    i.language.as_str(),
                    i.bit_granular,
                    i.note,
                    lwcbench_catalog::sizes::describe(&sz.key_bits).replace(',', ";"),
                    lwcbench_catalog::sizes::describe(&sz.iv_bits).replace(',', ";")
                );
            }
        }
        _ => {
            println!(
                "{:<20} {:<16} {:<6} {:>5} {:>5} {:>5} {:>4} {:>6}  {:<5} {:<28} note",
                "cipher", "implementation", "family", "key", "iv", "block", "tag", "state", "lang", "origin"
            );
            let mut other_sizes = Vec::new();
            for e in &reg {
                let i = &e.info;
                let sz = lwcbench_catalog::sizes::supported(i);
                if sz.key_bits.len() > 1 || sz.iv_bits.len() > 1 {
                    other_sizes.push(format!(
                        "  {}: key {} bits, IV {} bits",
                        e.id(),
                        lwcbench_catalog::sizes::describe(&sz.key_bits),
                        lwcbench_catalog::sizes::describe(&sz.iv_bits)
                    ));
                }
                println!(
                    "{:<20} {:<16} {:<6} {:>5} {:>5} {:>5} {:>4} {:>5}B  {:<5} {:<28} {}",
                    i.name,
                    i.implementation,
                    i.family.as_str(),
                    i.key_bits,
                    i.iv_bits,
                    i.block_bits,
                    i.tag_bits,
                    i.state_bytes,
                    i.language.as_str(),
                    i.origin.to_string(),
                    i.note
                );
            }
            for m in lwcbench_catalog::aes::missing_libraries() {
                println!("{m}");
            }
            if !other_sizes.is_empty() {
                println!("\nAlso accepted (key/IV sizes in bits; a-b/8 = every whole byte from a to b; the table shows the nominal sizes benchmarks use):");
                for l in &other_sizes {
                    println!("{l}");
                }
            }
            println!("\n{} implementations. Sizes in bits; state in bytes. Use an id as `--cipher NAME` or `--cipher NAME/IMPL`.", reg.len());
        }
    }
    Ok(())
}

/// Start each engine and return its entries; one engine that cannot start is an error here,
/// since listing it was the whole request.
fn engine_entries(specs: &[String], tell: bool) -> Result<Vec<lwcbench_catalog::Entry>, String> {
    let mut out = Vec::new();
    for s in specs {
        let e = lwcbench_engine::external::Engine::start(s)?;
        if tell {
            println!(
                "{} — protocol {}, {} ciphers\n",
                e.hello.describe(),
                lwcbench_engine::external::PROTOCOL,
                e.offers.len()
            );
        }
        out.extend(e.entries());
    }
    Ok(out)
}
