//! `lwcbench link --measured-energy FILE` through the CLI: a collected run's energy.csv
//! (docs/power.md) gives the crypto share beside the modelled one, and bad input is one
//! `error:` line naming file, line and column, with nothing written.
use std::path::Path;
use std::process::{Command, Output};

fn lwcbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lwcbench")).args(args).current_dir(cwd).output().expect("binary runs")
}

const HEADER: &str = "cipher,implementation,language,scenario,kiv,size_bits,payload,batches,operations,samples_min,energy_per_op_j_measured,energy_per_op_u_j,energy_per_byte_j_measured,energy_per_byte_u_j,energy_per_op_j_total,mean_power_w,baseline_power_w,energy_source";

#[test]
fn measured_energy_fills_the_link_energy_table() {
    let d = tempfile::tempdir().unwrap();
    // The built-in dataset's readings are 16 bytes = 128 bits; two rows of one cell pool by
    // operation count: (1000 × 4e-6 + 3000 × 6e-6) / 4000 = 5.5e-6 J = 5.5 µJ; the
    // uncertainty is the operation-weighted mean: (1000 × 2e-7 + 3000 × 4e-7) / 4000 = 0.35 µJ.
    let csv = format!(
        "{HEADER}\n\
         Ascon-AEAD128,rustcrypto,rust,encrypt,\"s,s\",128,random,2,1000,20,4e-6,2e-7,2.5e-7,1.25e-8,9e-6,0.45,0.2,measured:ina219 (shunt 0.1 Ω ±1 %)\n\
         Ascon-AEAD128,rustcrypto,rust,encrypt,\"r,r\",128,random,2,3000,20,6e-6,4e-7,3.75e-7,2.5e-8,9e-6,0.45,0.2,measured:ina219 (shunt 0.1 Ω ±1 %)\n"
    );
    std::fs::write(d.path().join("energy.csv"), csv).unwrap();
    let o = lwcbench(
        &[
            "link",
            "-o",
            "out",
            "--devices",
            "2",
            "--messages",
            "5",
            "--interval",
            "1ms",
            "--measured-energy",
            "energy.csv",
        ],
        d.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(d.path().join("out/link_energy.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let rows: Vec<std::collections::HashMap<String, String>> = r
        .records()
        .map(|x| h.iter().zip(x.unwrap().iter()).map(|(a, b)| (a.to_string(), b.to_string())).collect())
        .collect();
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(row["crypto_uj_measured"].parse::<f64>().unwrap(), 5.5, "{row:?}");
        assert_eq!(row["crypto_u_uj_measured"].parse::<f64>().unwrap(), 0.35, "{row:?}");
        assert!(row["measured_source"].contains("energy.csv") && row["measured_source"].contains("line 2"), "{row:?}");
        assert!(row["battery_days_measured"].parse::<f64>().unwrap() > 0.0, "{row:?}");
    }
    let md = std::fs::read_to_string(d.path().join("out/summary.md")).unwrap();
    assert!(md.contains("measured"), "{md}");
}

#[test]
fn a_bad_measured_energy_file_is_one_error_line_and_nothing_written() {
    let d = tempfile::tempdir().unwrap();
    let bad = format!(
        "{HEADER}\nAscon-AEAD128,rustcrypto,rust,encrypt,\"s,s\",128,random,2,1000,20,not-a-number,2e-7,2.5e-7,1.25e-8,9e-6,0.45,0.2,measured:ina219\n"
    );
    std::fs::write(d.path().join("energy.csv"), bad).unwrap();
    let o = lwcbench(&["link", "-o", "out", "--messages", "2", "--measured-energy", "energy.csv"], d.path());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error:") && err.contains("energy.csv") && err.contains("line 2"), "{err}");
    assert!(err.contains("energy_per_op_j_measured"), "names the column: {err}");
    assert!(!d.path().join("out").exists(), "nothing written");
}
