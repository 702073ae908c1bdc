//! Temporary: the rows of the old readers (engine, link) equal the rows of these loaders, on
//! the real files; and the board-power rows generated from data/boards.toml equal the
//! hand-written data/board-power.csv.
use lwcbench_data as new;

fn same<A: std::fmt::Debug, B: std::fmt::Debug>(a: A, b: B, what: &str) {
    let (a, b) = (format!("{a:#?}"), format!("{b:#?}"));
    assert!(a.len() > 100, "{what}: too few rows to compare");
    assert_eq!(a, b, "{what}");
}

#[test]
fn every_table_gives_the_same_rows() {
    same(lwcbench_engine::board::boards(), new::board::boards(), "board-power");
    same(lwcbench_engine::board::cycles_table(), new::board::cycles_table(), "emulated-cycles");
    same(lwcbench_engine::power::builtin(), new::power::builtin(), "power-profiles");
    let o = lwcbench_engine::dataset::Dataset::builtin();
    let n = new::dataset::Dataset::builtin();
    same(&o, &n, "office-occupancy");
    let d = lwcbench_link::choose::Data::builtin();
    same(&d.status, new::mcu::status(), "cipher-status");
    same(&d.sizes, new::mcu::sizes(), "mcu-sizes");
    same(&d.errors, new::mcu::errors(), "emulator-error");
    same(lwcbench_link::results::energy::builtin(), new::radio::builtin(), "radio-profiles");
    same(lwcbench_link::results::energy::chemistries(), new::battery::chemistries(), "battery-chemistries");
    let generated = new::boards::board_power_csv(&new::boards::builtin());
    same(
        new::board::parse_boards(&generated, "generated").unwrap(),
        lwcbench_engine::board::boards(),
        "board-power.csv from boards.toml",
    );
}
