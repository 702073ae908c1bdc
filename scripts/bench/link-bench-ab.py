#!/usr/bin/env python3
"""Two or more lwcbench binaries through scripts/bench/link-bench.sh, interleaved on one machine.

Each round runs every binary once (one repetition: `--rate max`, then half that rate), the
order rotated from round to round, so the drift of a shared machine falls on all of them
alike. Then, for every binary against the first, per cipher: the medians over the rounds of
gateway messages/s per core, readings/s stored at `--rate max` and the end-to-end p50/p99 at
half rate, their ratio, the spread of the per-round ratios, and a two-sided Mann-Whitney p
(normal approximation). One round says nothing on a 2-vCPU VM (per-round ratios of one binary
against itself spread 0.8-1.3); use 20 or more.

usage: scripts/bench/link-bench-ab.py [--rounds R] [--ciphers C,...] [--out DIR] NAME=BINARY NAME=BINARY ...
       scripts/bench/link-bench-ab.py --analyse DIR NAME NAME ...   (the table of an earlier run)
"""
import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
METRICS = [("gateway_msgs_per_s_per_core", "gateway msgs/s/core"), ("max_msgs_per_s", "stored/s at max"),
           ("e2e_p50_us", "e2e p50 µs, half rate"), ("e2e_p99_us", "e2e p99 µs, half rate")]


def mann_whitney_p(a, b):
    """Two-sided p of the Mann-Whitney U test, normal approximation, mid-ranks for ties."""
    n1, n2 = len(a), len(b)
    pooled = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    ranks = [0.0] * len(pooled)
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    r1 = sum(r for r, (_, g) in zip(ranks, pooled) if g == 0)
    u = r1 - n1 * (n1 + 1) / 2
    mu, sd = n1 * n2 / 2, math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
    return math.erfc(abs(u - mu) / sd / math.sqrt(2)) if sd > 0 else 1.0


def orders(names, rounds):
    """The run order of each round: the list rotated by one place per round."""
    return [names[r % len(names):] + names[:r % len(names)] for r in range(rounds)]


def load(d, names):
    """{(cipher, name): {round: row}} from DIR/NAME-ROUND.csv."""
    rows = {}
    for f in sorted(Path(d).glob("*.csv")):
        name, _, rnd = f.stem.rpartition("-")
        if name in names and rnd.isdigit():
            for row in csv.DictReader(open(f)):
                rows.setdefault((row["cipher"], name), {})[int(rnd)] = row
    return rows


def table(d, names):
    rows = load(d, names)
    base = names[0]
    lines = [f"| cipher | metric | {base} | other | other/{base} (per-round range) | p | rounds | lost |",
             "|---|---|---:|---:|---|---:|---:|---|"]
    for cipher in sorted({c for c, _ in rows}):
        for other in names[1:]:
            a, b = rows.get((cipher, base), {}), rows.get((cipher, other), {})
            common = sorted(set(a) & set(b))
            if not common:
                continue
            lost = [sum(int(x[k]["sent"]) - int(x[k]["stored"]) for k in common) for x in (a, b)]
            for key, label in METRICS:
                av = [float(a[k][key]) for k in common]
                bv = [float(b[k][key]) for k in common]
                ratios = sorted(y / x for x, y in zip(av, bv) if x > 0)
                ma, mb = statistics.median(av), statistics.median(bv)
                lines.append(f"| {cipher} | {label} | {ma:.0f} | {other}: {mb:.0f} | {mb / ma:.3f} "
                             f"({ratios[0]:.2f}–{ratios[-1]:.2f}) | {mann_whitney_p(bv, av):.2f} | {len(common)} "
                             f"| {lost[0]} / {lost[1]} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--ciphers", default="Ascon-AEAD128,AES-128-CCM/rustcrypto")
    p.add_argument("--out", default=None)
    p.add_argument("--analyse", metavar="DIR", default=None)
    p.add_argument("binaries", nargs="+")
    a = p.parse_args()
    if a.analyse:
        print(table(a.analyse, a.binaries))
        return
    if a.rounds < 1:
        sys.exit("error: --rounds must be at least 1")
    bins = {}
    for spec in a.binaries:
        name, eq, path = spec.partition("=")
        if not eq or not name or "-" in name or not os.access(path, os.X_OK):
            sys.exit(f"error: {spec!r} is not NAME=EXECUTABLE (NAME without '-')")
        bins[name] = path
    if len(bins) < 2:
        sys.exit("error: give at least two NAME=BINARY")
    out = Path(a.out or ROOT / "target" / f"link-bench-ab-{time.strftime('%Y%m%dT%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)
    names = list(bins)
    for r, order in enumerate(orders(names, a.rounds), 1):
        for name in order:
            env = dict(os.environ, LWCBENCH=bins[name])
            with open(out / f"{name}-{r}.log", "w") as log:
                subprocess.run([str(ROOT / "scripts/bench/link-bench.sh"), str(out / f"{name}-{r}.csv"), a.ciphers, "1"],
                               env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
            load1 = open("/proc/loadavg").read().split()[0]
            print(f"round {r}/{a.rounds} {name} done, load {load1}", file=sys.stderr, flush=True)
    print(table(out, names))
    print(f"(raw rows in {out})")


if __name__ == "__main__":
    main()
