#!/usr/bin/env python3
"""Where do the cycles go? Per-function share of the estimated cycles (instructions where the
target has no cycle model) of init + keystream for one image, from the same emulation as
emulate.py. Function = the ELF function symbol containing each executed block.

    python mcu/profile.py ELF TARGET NBITS [--top 15]
"""
from __future__ import annotations

import argparse
import bisect
import collections
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import emulate  # noqa: E402
from elftools.elf.elffile import ELFFile  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("elf")
    ap.add_argument("target", choices=sorted(emulate.TARGETS))
    ap.add_argument("nbits", type=int)
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args(argv)
    funcs = []
    with open(a.elf, "rb") as f:
        for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols():
            if s["st_info"]["type"] == "STT_FUNC":
                funcs.append((s["st_value"] & ~1, s.name))
    funcs.sort()
    starts = [x for x, _ in funcs]
    em = emulate.Emulator(emulate.load_image(a.elf), a.target)
    use_cycles = emulate.TARGETS[a.target].model is not None
    prof: collections.Counter = collections.Counter()
    inner = em._on_block

    def hook(uc, addr, size, st):
        before = st[1] if use_cycles else st[0]
        inner(uc, addr, size, st)
        i = bisect.bisect_right(starts, addr) - 1
        prof[funcs[i][1] if i >= 0 else "?"] += (st[1] if use_cycles else st[0]) - before

    em._on_block = hook
    r = em.run(a.nbits)
    total = sum(prof.values())
    unit = "est. cycles" if use_cycles else "instructions"
    print(f"{a.elf} on {a.target}: init + keystream({a.nbits}) = {total:,} {unit} "
          f"(init {r.init.insns:,} / keystream {r.keystream.insns:,} instructions)")
    for name, v in prof.most_common(a.top):
        print(f"{100 * v / total:6.1f}%  {v:>12,}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
