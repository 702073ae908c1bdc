#!/usr/bin/env python3
"""OSCORE over CoAP beside the link frame over MQTT, on this machine.

Runs the real tool: `lwcbench link --protocol oscore` for each OSCORE AEAD and `lwcbench link`
(MQTT QoS 1, embedded broker, one SQLite store) for the link-frame ciphers, with the same
devices, readings and store kind, and prints

* bytes on the wire per reading: the CoAP request (header, token, options with the OSCORE
  option, ciphertext and tag) against the link frame (header, ciphertext, tag); UDP/IP and
  MQTT/TCP/IP headers are not counted on either side;
* gateway readings/s stored (the gateway's stored rows over first send → last confirmation
  for OSCORE, over first seal → last commit for MQTT) and their ratio;
* the machine (CPU model, cores, kernel).

Each pair runs ROUNDS times (default 3) interleaved, the median is reported. Not a unit test: the
numbers depend on the machine and its load.

Usage: scripts/bench/oscore-vs-link.py [--bin target/release/lwcbench] [--devices 8]
       [--messages 500] [--rounds 3]
"""
import argparse
import csv
import json
import os
import pathlib
import platform
import statistics
import subprocess
import tempfile

PAIRS = [  # (OSCORE AEAD, link-frame cipher with the same primitive)
    ("AES-CCM-16-64-128", "AES-128-CCM/rustcrypto"),
    ("AES-CCM-16-128-128", "AES-128-CCM/rustcrypto"),
    ("ChaCha20/Poly1305", "ChaCha20-Poly1305/rustcrypto"),
    ("A128GCM", "AES-128-GCM/rustcrypto"),
]


def machine():
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}"


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"error: {' '.join(cmd)}: {p.stderr.strip()}")


def oscore(bin_, alg, devices, messages, tmp, i):
    out = tmp / f"o-{i}"
    run([bin_, "link", "--protocol", "oscore", "--cipher", alg, "--devices", str(devices),
         "--messages", str(messages), "--interval", "0", "--key-file", str(tmp / "o.key"),
         "--store", str(tmp / "o.db"), "--out", str(out)])
    r = json.load(open(out / "oscore_summary.json"))[0]
    return r["readings_per_s"], r["request_bytes"], r["reading_bytes"]


def link(bin_, cipher, devices, messages, tmp, i):
    out = tmp / f"l-{i}"
    run([bin_, "link", "--cipher", cipher, "--devices", str(devices), "--messages", str(messages),
         "--rate", "max", "--key-file", str(tmp / "l.key"), "--store", str(tmp / "l.db"), "--out", str(out)])
    r = next(csv.DictReader(open(out / "link_summary.csv")))
    return float(r["msgs_per_s"]), float(r["wire_bytes"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/lwcbench")
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--messages", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    print(f"machine: {machine()}")
    print(f"{a.devices} devices x {a.messages} readings, {a.rounds} rounds, medians; SQLite store on {tempfile.gettempdir()}")
    print(f"{'OSCORE AEAD':<20} {'req B':>6} {'reading B':>9} | {'link cipher':<30} {'frame B':>7} | "
          f"{'OSCORE r/s':>10} {'MQTT r/s':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as t:
        tmp = pathlib.Path(t)
        for n, (alg, cipher) in enumerate(PAIRS):
            o, m = [], []
            for r in range(a.rounds):
                o.append(oscore(a.bin, alg, a.devices, a.messages, tmp, f"{n}-{r}"))
                m.append(link(a.bin, cipher, a.devices, a.messages, tmp, f"{n}-{r}"))
            ors, ob, rb = statistics.median(x[0] for x in o), o[0][1], o[0][2]
            mrs, fb = statistics.median(x[0] for x in m), m[0][1]
            print(f"{alg:<20} {ob:>6.1f} {rb:>9.1f} | {cipher:<30} {fb:>7.1f} | {ors:>10.0f} {mrs:>9.0f} "
                  f"{ors / mrs:>6.2f}")


if __name__ == "__main__":
    main()
