"""scripts/bench/link-bench-ab.py: its test statistic and round order, on hand-computed cases."""
import importlib.util
import math
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "link_bench_ab", Path(__file__).resolve().parents[2] / "scripts" / "bench" / "link-bench-ab.py")
ab = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ab)


def test_mann_whitney_on_hand_computed_samples():
    # a below b everywhere: U = 0; mean 4.5, sd = sqrt(3·3·7/12) = 2.29129; z = 1.96396,
    # two-sided p = erfc(z/√2) = 0.04953.
    assert math.isclose(ab.mann_whitney_p([1, 2, 3], [4, 5, 6]), 0.04953, abs_tol=5e-5)
    # [1, 4] vs [2, 3]: ranks 1 + 4 = 5, U = 5 − 3 = 2 = its mean n1·n2/2, p = 1.
    assert math.isclose(ab.mann_whitney_p([1, 4], [2, 3]), 1.0)
    # Ties take mid-ranks: [1, 2] vs [2, 3]: ranks 1, 2.5 | 2.5, 4; U = 3.5 − 3 = 0.5;
    # mean 2, sd = sqrt(2·2·5/12) = 1.29099; z = 1.16190; p = 0.24528.
    assert math.isclose(ab.mann_whitney_p([1, 2], [2, 3]), 0.24528, abs_tol=5e-5)


def test_every_binary_runs_first_in_turn():
    o = ab.orders(["a", "b", "c"], 4)
    assert o == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]


def test_table_pairs_rounds_and_counts_losses(tmp_path):
    head = "cipher,run,max_msgs_per_s,gateway_msgs_per_s_per_core,half_rate,half_msgs_per_s,e2e_p50_us," \
           "e2e_p90_us,e2e_p99_us,e2e_max_us,stored,sent,load1\n"
    for name, r, gw, stored in [("x", 1, 100, 10), ("x", 2, 200, 10), ("y", 1, 150, 9), ("y", 2, 300, 10),
                                ("y", 3, 999, 10)]:
        (tmp_path / f"{name}-{r}.csv").write_text(head + f"C,1,50,{gw},25,25,10,11,12,13,{stored},10,1\n")
    t = ab.table(tmp_path, ["x", "y"])
    gw = next(line for line in t.splitlines() if "gateway" in line)
    # Rounds 1 and 2 only (3 has no x): medians 150 and 225, ratio 1.5, both rounds 1.5.
    assert "| 150 | y: 225 | 1.500 (1.50–1.50) |" in gw and "| 2 | 0 / 1 |" in gw, gw
