#!/usr/bin/env python3
"""Re-pin mcu/tests/pinned_counts.json: exact instruction counts of lwc_init +
lwc_keystream(128 bits) for the fixed key/IV, per image and emulated target (profile Os).
Run deliberately, after checking that a change in the counts is intended; prints the diff.

`update_pins.py --only draco_fast,draco_ref` re-pins only those images (every target and
language) and keeps the other pins as they are."""
from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import build  # noqa: E402
import emulate  # noqa: E402


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated image names to re-pin (default: all)")
    only = {n for n in ap.parse_args(argv).only.split(",") if n}
    build.build_rust(("Os",))
    build.build_cpp()
    pins = {}
    cases = [("Rust", im.name, t, build.rust_elf(t, "Os", im.name)) for t in build.RUST_TARGETS for im in build.RUST_IMAGES]
    cases += [("C++", v, t.name, build.cpp_dir(t.name) / f"{v}.elf")
              for t in build.CPP_TARGETS if t.emulable for v in build.CPP_VARIANTS]
    path = HERE / "pinned_counts.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    if only:
        unknown = only - {c[1] for c in cases}
        if unknown:
            raise SystemExit(f"error: --only: unknown image(s) {', '.join(sorted(unknown))}")
        cases = [c for c in cases if c[1] in only]
        pins = {k: v for k, v in old.items() if k.split("/")[1] not in only}
    for lang, image, target, elf in cases:
        r = emulate.Emulator(emulate.load_image(str(elf)), target).run(128)
        pins[f"{lang}/{image}/{target}"] = {"init": r.init.insns, "keystream128": r.keystream.insns}
    for k, v in pins.items():
        if old.get(k) != v:
            print(f"{k}: {old.get(k)} -> {v}")
    path.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path} ({len(pins)} pins)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
