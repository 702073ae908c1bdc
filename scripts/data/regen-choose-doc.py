#!/usr/bin/env python3
"""Regenerate the example outputs of docs/choose.md with a given lwcbench binary
(usage: scripts/data/regen-choose-doc.py BIN docs/choose.md): every ```sh
block holding one `lwcbench choose` command followed by a ```text block gets that command's
real output (run in an empty directory); a text block that holds a `...` line keeps the short
form (the ranking table, `...`, the choice line)."""
import pathlib, shlex, subprocess, sys, tempfile
exe, doc = sys.argv[1], pathlib.Path(sys.argv[2])
lines = doc.read_text().split("\n")
out, i = [], 0
while i < len(lines):
    l = lines[i]
    out.append(l)
    if l == "```sh" and i + 3 < len(lines) and lines[i + 1].startswith("lwcbench choose") and lines[i + 2] == "```" and lines[i + 3] == "```text":
        cmd = lines[i + 1]
        j = i + 4
        while lines[j] != "```":
            j += 1
        short = "..." in lines[i + 4:j]
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run([exe] + shlex.split(cmd)[1:], cwd=d, capture_output=True, text=True)
        text = (p.stdout if p.returncode == 0 else p.stderr).rstrip("\n").split("\n")
        if short and p.returncode == 0:
            k = next(n for n, t in enumerate(text) if t.startswith("rank "))
            e = next(n for n, t in enumerate(text) if t == "" and n > k)
            text = text[k:e] + ["..."] + [t for t in text if t.startswith("choice:")]
        out += [cmd, "```", "```text"] + text + ["```"]
        i = j + 1
        continue
    i += 1
doc.write_text("\n".join(out))
