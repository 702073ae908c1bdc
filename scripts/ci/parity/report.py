#!/usr/bin/env python3
"""Tables of scripts/ci/host-parity.sh: OUT/raw/samples.csv -> OUT/parity.csv, OUT/parity.md.

Per library x cipher x <k,iv> x size: the median ns/op of the plain loop and of lwcbench over
all rounds, each with its distribution-free 95 % CI (binomial order statistics, as
crates/stats), the ratio lwcbench / plain of the medians with a bootstrap percentile 95 % CI
(2,000 resamples, fixed seed), and the lowest and highest per-round ratio."""
import csv
import math
import random
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def median_ci(xs):
    """(lo, hi): x(k), x(n+1-k) with the largest k such that P(Bin(n, 1/2) < k) <= 2.5 %."""
    xs = sorted(xs)
    n = len(xs)
    if n < 6:
        return xs[0], xs[-1]
    cdf, k = 0.0, 0
    for j in range(n + 1):
        p = math.comb(n, j) / 2**n
        if cdf + p > 0.025:
            break
        cdf += p
        k = j + 1
    k = max(k, 1)
    return xs[k - 1], xs[n - k]


def ratio_ci(a, b, rng, reps=2000):
    r = sorted(statistics.median(rng.choices(b, k=len(b))) / statistics.median(rng.choices(a, k=len(a)))
               for _ in range(reps))
    return r[int(0.025 * reps)], r[int(0.975 * reps) - 1]


def main(out):
    out = Path(out)
    data = defaultdict(lambda: defaultdict(list))
    rounds = defaultdict(lambda: defaultdict(list))
    with open(out / "raw" / "samples.csv") as f:
        for row in csv.DictReader(f):
            key = (row["lib"], row["cipher"], row["kiv"], int(row["bytes"]))
            v = float(row["ns_per_op"])
            data[key][row["tool"]].append(v)
            rounds[key][(row["round"], row["tool"])].append(v)
    rng = random.Random(1)
    rows = []
    for key in sorted(data):
        d = data[key]
        if not d["plain"] or not d["lwcbench"]:
            sys.exit(f"error: {out}/raw/samples.csv: {key} lacks plain or lwcbench samples")
        mp, ml = statistics.median(d["plain"]), statistics.median(d["lwcbench"])
        per_round = []
        for (r, tool), xs in rounds[key].items():
            if tool == "plain" and (r, "lwcbench") in rounds[key]:
                per_round.append(statistics.median(rounds[key][(r, "lwcbench")]) / statistics.median(xs))
        lo, hi = ratio_ci(d["plain"], d["lwcbench"], rng)
        verdict = "within ±5 %" if lo >= 0.95 and hi <= 1.05 else (
            "lwcbench higher" if lo > 1.05 else "lwcbench lower" if hi < 0.95 else "undecided (CI crosses ±5 %)")
        rows.append(dict(lib=key[0], cipher=key[1], kiv=key[2], bytes=key[3],
                         n_plain=len(d["plain"]), plain_median_ns=mp,
                         plain_ci_lo=median_ci(d["plain"])[0], plain_ci_hi=median_ci(d["plain"])[1],
                         n_lwcbench=len(d["lwcbench"]), lwcbench_median_ns=ml,
                         lwcbench_ci_lo=median_ci(d["lwcbench"])[0], lwcbench_ci_hi=median_ci(d["lwcbench"])[1],
                         ratio=ml / mp, ratio_ci_lo=lo, ratio_ci_hi=hi,
                         round_ratio_min=min(per_round), round_ratio_max=max(per_round), verdict=verdict))
    with open(out / "parity.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.4f}" if isinstance(v, float) else v) for k, v in r.items()})
    lines = ["# Host parity: lwcbench run against a plain loop", "", "```", (out / "machine.txt").read_text().strip(),
             "```", "",
             "| library | cipher | kiv | bytes | plain ns (95 % CI) | lwcbench ns (95 % CI) | ratio (95 % CI) | rounds | verdict |",
             "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(
            f"| {r['lib']} | {r['cipher']} | {r['kiv']} | {r['bytes']} "
            f"| {r['plain_median_ns']:.1f} ({r['plain_ci_lo']:.1f}–{r['plain_ci_hi']:.1f}) "
            f"| {r['lwcbench_median_ns']:.1f} ({r['lwcbench_ci_lo']:.1f}–{r['lwcbench_ci_hi']:.1f}) "
            f"| {r['ratio']:.3f} ({r['ratio_ci_lo']:.3f}–{r['ratio_ci_hi']:.3f}) "
            f"| {r['round_ratio_min']:.3f}–{r['round_ratio_max']:.3f} | {r['verdict']} |")
    (out / "parity.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def append(samples, lib, cipher, rnd, raw):
    """Append the s,s and r,r rows of an lwcbench samples.csv to the script's raw samples."""
    kiv = {"s,s": "ss", "r,r": "rr"}
    with open(samples) as f, open(raw, "a") as out:
        for row in csv.DictReader(f):
            if row["kiv"] in kiv:
                out.write(f"{lib},{cipher},{int(row['size_bits']) // 8},{kiv[row['kiv']]},{rnd},lwcbench,{row['ns_per_op']}\n")


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "--append":
        append(*sys.argv[2:])
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit("usage: report.py OUT | report.py --append SAMPLES_CSV LIB CIPHER ROUND RAW_CSV")
