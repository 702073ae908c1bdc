"""Tests of the MCU cost harness (mcu/): emulated keystream == host implementation, pinned
instruction counts, timing-model unit tests, block/instruction counting agreement, and the
shape of run.py's tables.

Pinned counts (pinned_counts.json) are REGRESSION PINS, not truths: they are the exact
instruction counts of `lwc_init` + `lwc_keystream(128 bits)` for the fixed key/IV of
emulate.default_key/default_iv, with this repository's toolchains (rustc 1.95, Debian 12
gcc 12.2). A change to a cipher, the harness, a compiler or a flag is *meant* to move them:
then look at the new numbers and re-pin deliberately with
    python mcu/tests/update_pins.py
"""
from __future__ import annotations

import csv
import json
import pathlib

import pytest

import build
import emulate
import run

HERE = pathlib.Path(__file__).resolve().parent
PINS = json.loads((HERE / "pinned_counts.json").read_text())
# The targets the Rust images are built for; the emulator also knows the Due's Cortex-M3,
# which only the NIST LWC C tables use (mcu/nistlwc.py).
EMU_TARGETS = [t for t in emulate.TARGETS if t in build.RUST_TARGETS]


def rust_cases(kinds=("stream", "block", "aead")):
    import build
    return [(im.name, t) for t in EMU_TARGETS for im in build.RUST_IMAGES if im.kind in kinds]


def cpp_cases():
    import build
    return [(v, t.name) for t in build.CPP_TARGETS if t.emulable for v in build.CPP_VARIANTS]


def _elf(built, image, target, lang):
    if lang == "Rust":
        return built.rust_elf(target, "Os", image)
    return built.cpp_dir(target) / f"{image}.elf"


def _run(built, image, target, lang, nbits, mode="block"):
    img = emulate.load_image(str(_elf(built, image, target, lang)))
    return img, emulate.Emulator(img, target, mode).run(nbits)


# --- correctness against the host build ---------------------------------------------------

@pytest.mark.parametrize("image,target", rust_cases(("stream",)))
@pytest.mark.parametrize("nbits", [128, 77])
def test_rust_keystream_equals_host(built, hostref, image, target, nbits):
    img, r = _run(built, image, target, "Rust", nbits)
    assert r.rc == (0, 0)
    key, iv = emulate.default_key(img.key_bytes), emulate.default_iv(img.iv_bytes)
    assert len(key) > 0 and len(iv) > 0
    assert r.out == hostref(image, key, iv, nbits)


@pytest.mark.parametrize("image,target", rust_cases(("block", "aead")))
def test_rust_block_and_aead_output_equals_host(built, hostref, image, target):
    """Block ciphers: ECB of 256 zero bits; AEADs: 256-bit message + tag (mcu/README.md)."""
    img, r = _run(built, image, target, "Rust", 256)
    assert r.rc == (0, 0)
    key, iv = emulate.default_key(img.key_bytes), emulate.default_iv(img.iv_bytes)
    assert len(r.out) == 32 + img.tag_bytes
    assert r.out != bytes(len(r.out))
    assert r.out == hostref(image, key, iv, 256)


def test_block_image_rejects_partial_blocks(built):
    _, r = _run(built, "lea128", "thumbv6m-none-eabi", "Rust", 64)
    assert r.rc == (0, 0xFFFF_FFFF)


@pytest.mark.parametrize("image,target", cpp_cases())
def test_cpp_keystream_equals_host_rust(built, hostref, image, target):
    """The C++ DRACO on the MCU must produce the host Rust DRACO's keystream."""
    img, r = _run(built, image, target, "C++", 200)
    assert r.rc == (0, 0)
    assert r.out == hostref("draco_ref", emulate.default_key(16), emulate.default_iv(12), 200)


def test_host_oracle_differs_per_key(hostref):
    """Guards the comparison above against a constant oracle."""
    a = hostref("draco_ref", bytes(16), bytes(12), 64)
    b = hostref("draco_ref", bytes([1] + [0] * 15), bytes(12), 64)
    assert a != b and len(a) == 8


# --- pinned instruction counts (regression pins) --------------------------------------------

@pytest.mark.parametrize("image,target,lang", [(i, t, "Rust") for i, t in rust_cases()]
                         + [(i, t, "C++") for i, t in cpp_cases()])
def test_pinned_instruction_count(built, image, target, lang):
    key = f"{lang}/{image}/{target}"
    assert key in PINS, f"no pin for {key}: run python mcu/tests/update_pins.py"
    _, r = _run(built, image, target, lang, 128)
    got = {"init": r.init.insns, "keystream128": r.keystream.insns}
    assert got == PINS[key], (f"{key}: instruction count changed {PINS[key]} -> {got}; "
                              "if intended, re-pin with python mcu/tests/update_pins.py")


def test_counts_are_deterministic(built):
    _, a = _run(built, "trivium", "thumbv6m-none-eabi", "Rust", 1024)
    _, b = _run(built, "trivium", "thumbv6m-none-eabi", "Rust", 1024)
    assert (a.init, a.keystream, a.stack_bytes, a.out) == (b.init, b.keystream, b.stack_bytes, b.out)


@pytest.mark.parametrize("image,target,lang", [
    ("draco_fast", "thumbv6m-none-eabi", "Rust"), ("draco_ref", "riscv32imc-unknown-none-elf", "Rust"),
    ("sosemanuk", "thumbv6m-none-eabi", "Rust"), ("draco_fast", "riscv32imc-unknown-none-elf", "C++")])
def test_block_counting_equals_per_instruction_hook(built, image, target, lang):
    """The fast block-hook counter must agree exactly with a per-instruction code hook
    (instructions and model cycles, incl. taken-branch resolution). Not checked on the M4,
    whose IT blocks the code hook skips when the condition fails (see README)."""
    _, a = _run(built, image, target, lang, 128, "block")
    _, b = _run(built, image, target, lang, 128, "insn")
    assert (a.init, a.keystream) == (b.init, b.keystream)


def test_stack_painting_sees_stack_use(built):
    img, r = _run(built, "hc128", "thumbv6m-none-eabi", "Rust", 128)
    # HC-128's key setup expands a 1280-word array: at least 5 KB of stack
    assert 5120 <= r.stack_bytes < img.stack_top - img.bss_end
    _, b = _run(built, "baseline", "thumbv6m-none-eabi", "Rust", 0)
    assert b.stack_bytes < 64


# --- timing models on hand-encoded instructions ----------------------------------------------

M0 = [  # (little-endian bytes, expected (base, extra-if-taken)) — Cortex-M0+ TRM
    ("4843", (1, 0)),  # muls r0, r1, r0 (single-cycle multiplier)
    ("4018", (1, 0)),  # adds r0, r0, r1
    ("0868", (2, 0)),  # ldr r0, [r1]
    ("0e60", (2, 0)),  # str r6, [r1]
    ("f0b5", (6, 0)),  # push {r4-r7, lr}: 1 + 5
    ("10bd", (5, 0)),  # pop {r4, pc}: 1 + 2 + 2
    ("06c8", (3, 0)),  # ldm r0!, {r1, r2}: 1 + 2
    ("0ec0", (4, 0)),  # stm r0!, {r1-r3}: 1 + 3
    ("00d0", (1, 1)),  # beq: 1, 2 if taken
    ("00e0", (2, 0)),  # b
    ("00f000f8", (3, 0)),  # bl
    ("7047", (2, 0)),  # bx lr
]
M4 = [  # Cortex-M4 TRM (DDI 0439B) Table 3-1, P = 2, loads not pipelined (README)
    ("4018", (1, 0)),  # adds r0, r0, r1
    ("0868", (2, 0)),  # ldr r0, [r1]
    ("f0b5", (6, 0)),  # push {r4-r7, lr}: 1 + 5
    ("bde8f081", (9, 0)),  # pop.w {r4-r8, pc}: 1 + 6 + P
    ("00d0", (1, 2)),  # beq: 1, 1 + P if taken
    ("08b1", (1, 2)),  # cbz: 1, 1 + P if taken
    ("00e0", (3, 0)),  # b: 1 + P
    ("00f000f8", (3, 0)),  # bl: 1 + P
    ("a2fb0301", (1, 0)),  # umull r0, r1, r2, r3
    ("01fb0230", (2, 0)),  # mla r0, r1, r2, r3
    ("b0fbf1f0", (12, 0)),  # udiv r0, r0, r1 (worst case)
    ("d2e90001", (3, 0)),  # ldrd r0, r1, [r2]
]
RV = [  # ESP32-C3 assumptions (README)
    ("03a50500", (2, 0)),  # lw a0, 0(a1)
    ("23a0a500", (1, 0)),  # sw a0, 0(a1)
    ("3305b502", (1, 0)),  # mul a0, a0, a1
    ("3345b502", (33, 0)),  # div a0, a0, a1
    ("6300b500", (1, 2)),  # beq a0, a1, 0
    ("8280", (3, 0)),  # ret (c.jr ra)
    ("3305b500", (1, 0)),  # add a0, a0, a1
]


@pytest.mark.parametrize("target,case", [("thumbv6m-none-eabi", c) for c in M0]
                         + [("riscv32imc-unknown-none-elf", c) for c in RV]
                         + [("thumbv7em-none-eabihf", c) for c in M4])
def test_timing_model(target, case):
    code, want = case
    m = emulate.CostModel(target)
    ins = m.insns(bytes.fromhex(code), 0x1000_0000)
    assert len(ins) == 1 and ins[0].size == len(code) // 2
    assert m.cost(ins[0]) == want, (ins[0].mnemonic, ins[0].op_str)


# --- run.py tables -------------------------------------------------------------------------

def test_run_writes_a_row_per_cipher_and_target(built, tmp_path):
    assert run.main(["--out", str(tmp_path), "--no-build", "--profiles", "Os", "--nbits", "8"]) == 0
    sizes = list(csv.DictReader(open(tmp_path / "mcu_sizes.csv")))
    counts = list(csv.DictReader(open(tmp_path / "mcu_counts.csv")))
    assert (tmp_path / "mcu.md").read_text().startswith("# Microcontroller cost")
    assert not list(tmp_path.glob(".*.tmp"))
    # every emulated figure names the board profile its core stands for
    assert all(r["board"] == emulate.DEFAULT_BOARD[r["target"]] for r in counts)
    assert {t: b["id"] for t, b in json.loads((tmp_path / "boards.json").read_text()).items()} == emulate.DEFAULT_BOARD
    flash = {(r["cipher"], r["implementation"], r["target"]): int(r["flash_bytes"])
             for r in sizes if r["method"] == "image-minus-baseline"}
    for im in built.RUST_IMAGES:
        for t in built.RUST_TARGETS:
            assert flash[(im.cipher, im.implementation, t)] > 0, (im.name, t)
    for t in built.CPP_TARGETS:
        for cipher, impl, _, _ in built.CPP_VARIANTS.values():
            assert flash[(cipher, impl, t.name)] > 0
    # the fast DRACO needs more flash than the bit-serial one everywhere
    for t in built.RUST_TARGETS:
        assert flash[("DRACO", "rust-fast", t)] > flash[("DRACO", "rust-ref", t)]
    # every emulated row has an instruction count; cycle estimates only where a model exists
    have = {(r["image"], r["language"], r["target"], r["metric"]) for r in counts if r["phase"] in ("keystream", "encrypt")}
    # `full` is init + keystream of the same request, as one count
    val = {(r["image"], r["language"], r["target"], r["phase"], r["metric"]): r["value"] for r in counts}
    for im in built.RUST_IMAGES:
        for t in EMU_TARGETS:
            k = (im.name, "Rust", t)
            main = "keystream" if im.kind == "stream" else "encrypt"
            # (block/AEAD images run at their fixed sizes, the last one wins in `val`)
            if im.kind == "stream":
                assert int(val[k + ("full", "instructions")]) == \
                    int(val[k + ("init", "instructions")]) + int(val[k + (main, "instructions")])
            assert (k + (main, "instructions")) in val
    for im in built.RUST_IMAGES:
        for t in EMU_TARGETS:
            assert (im.name, "Rust", t, "instructions") in have
            assert ((im.name, "Rust", t, "cycles_est") in have) == (emulate.TARGETS[t].model is not None)
