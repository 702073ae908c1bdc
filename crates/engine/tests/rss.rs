//! Resident-set growth measured alone in its own test binary: in the library's unit tests,
//! other test threads allocate and free at the same time and move the figure by 20-40 %.
use lwcbench_engine::resources::rss::growth_during;

#[test]
fn writing_fresh_pages_grows_the_resident_set_by_their_size() {
    // 32 MiB written once (one byte per 4 KiB page): the resident set grows by 32 MiB (hand
    // computation). Best of five within 5 %, all within a factor of two.
    let n = 32 << 20;
    let per_byte: Vec<f64> = (0..5)
        .map(|_| {
            let g = growth_during(n, |out| {
                for b in out.iter_mut().step_by(4096) {
                    *b = 1;
                }
            })
            .unwrap();
            g as f64 / n as f64
        })
        .collect();
    assert!(per_byte.iter().any(|x| (0.95..1.05).contains(x)), "{per_byte:?}");
    assert!(per_byte.iter().all(|x| (0.5..2.0).contains(x)), "{per_byte:?}");
}
