"""The native bindings against published vectors and an independent implementation
(the `cryptography` package, OpenSSL underneath)."""
import os
import random
import re
import threading
import time

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

import lwcbench

CIPHERS = lwcbench.ciphers()
IDS = {c["id"]: c for c in CIPHERS}
CHACHA = [c["id"] for c in CIPHERS if c["cipher"] == "ChaCha20"]
CHACHA_AEAD = [c["id"] for c in CIPHERS if c["cipher"] == "ChaCha20-Poly1305"]
STREAMS = [c["id"] for c in CIPHERS if c["family"] == "stream"]
AEADS = [c["id"] for c in CIPHERS if c["family"] == "aead"]
BLOCKS = [c["id"] for c in CIPHERS if c["family"] == "block"]

# RFC 8439 §2.4.2 (transcribed): key 00..1f, nonce 00 00 00 00 00 00 00 4a 00 00 00 00,
# initial block counter 1.
RFC_KEY = bytes(range(32))
RFC_NONCE = bytes.fromhex("000000000000004a00000000")
RFC_PLAINTEXT = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip "
                 b"for the future, sunscreen would be it.")
RFC_CIPHERTEXT = bytes.fromhex(
    "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
    "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
    "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
    "5af90bbf74a35be6b40b8eedf2785e42874d"
)


def xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


def openssl_chacha20(key, nonce, n, counter=0):
    """`cryptography`'s ChaCha20 takes a 16-byte nonce: 32-bit little-endian counter, then
    the RFC 8439 96-bit nonce."""
    enc = Cipher(algorithms.ChaCha20(key, counter.to_bytes(4, "little") + nonce), mode=None).encryptor()
    return enc.update(bytes(n))


def test_catalogue_metadata():
    assert CHACHA and CHACHA_AEAD
    keys = {"id", "cipher", "implementation", "family", "key_bits", "iv_bits", "block_bits", "tag_bits",
            "state_bytes", "origin", "language", "bit_granular", "note"}
    for c in CIPHERS:
        assert keys <= set(c), c
        assert c["id"] == f"{c['cipher']}/{c['implementation']}"
        assert c["family"] in ("stream", "block", "aead", "mode")
    assert len(IDS) == len(CIPHERS)
    for i in CHACHA + CHACHA_AEAD:  # RFC 8439: 256-bit key, 96-bit nonce, 128-bit tag
        assert (IDS[i]["key_bits"], IDS[i]["iv_bits"]) == (256, 96)
    for i in CHACHA_AEAD:
        assert IDS[i]["tag_bits"] == 128


@pytest.mark.parametrize("cid", CHACHA + ["ChaCha20", "chacha20"])
def test_chacha20_rfc8439_2_4_2(cid):
    n = len(RFC_PLAINTEXT)
    # counter 1 = skip the first 64-byte block of the counter-0 keystream
    ks = lwcbench.keystream(cid, RFC_KEY, RFC_NONCE, (64 + n) * 8)
    assert len(ks) == 64 + n
    assert xor(ks[64:], RFC_PLAINTEXT) == RFC_CIPHERTEXT
    ct = lwcbench.encrypt(cid, RFC_KEY, RFC_NONCE, bytes(64) + RFC_PLAINTEXT)
    assert ct[64:] == RFC_CIPHERTEXT
    assert lwcbench.decrypt(cid, RFC_KEY, RFC_NONCE, ct)[64:] == RFC_PLAINTEXT


def test_rfc_transcription_agrees_with_cryptography():
    # guards the transcription above with the independent implementation
    assert xor(openssl_chacha20(RFC_KEY, RFC_NONCE, len(RFC_PLAINTEXT), counter=1), RFC_PLAINTEXT) == RFC_CIPHERTEXT


@pytest.mark.parametrize("cid", CHACHA)
@pytest.mark.parametrize("nbytes", [0, 1, 63, 64, 65, 1000, 4099])
def test_chacha20_against_cryptography(cid, nbytes):
    rng = random.Random(f"{cid}/{nbytes}")
    for _ in range(3):
        key, nonce = rng.randbytes(32), rng.randbytes(12)
        assert lwcbench.keystream(cid, key, nonce, nbytes * 8) == openssl_chacha20(key, nonce, nbytes)
        data = rng.randbytes(nbytes)
        assert lwcbench.encrypt(cid, key, nonce, data) == xor(data, openssl_chacha20(key, nonce, nbytes))


@pytest.mark.parametrize("cid", CHACHA)
def test_partial_byte_keystream(cid):
    key, nonce = os.urandom(32), os.urandom(12)
    full = openssl_chacha20(key, nonce, 2)
    ks = lwcbench.keystream(cid, key, nonce, 13)
    assert len(ks) == 2 and ks[0] == full[0]
    # unused bits of the last byte are zero; which bits are used follows bit_order
    mask = 0x1F if IDS[cid]["bit_order"] == "lsb-first" else 0xF8
    assert ks[1] == full[1] & mask


@pytest.mark.parametrize("cid", CHACHA_AEAD + ["ChaCha20-Poly1305"])
def test_chacha20poly1305_against_cryptography(cid):
    rng = random.Random(cid)
    for n in (0, 1, 15, 16, 17, 64, 255, 1000):
        key, nonce = rng.randbytes(32), rng.randbytes(12)
        pt, ad = rng.randbytes(n), rng.randbytes(rng.choice([0, 1, 13, 32]))
        want = ChaCha20Poly1305(key).encrypt(nonce, pt, ad)
        assert lwcbench.encrypt(cid, key, nonce, pt, ad) == want
        assert lwcbench.decrypt(cid, key, nonce, want, ad) == pt


@pytest.mark.parametrize("cid", CHACHA_AEAD)
def test_aead_rejects_tampering(cid):
    key, nonce, pt, ad = os.urandom(32), os.urandom(12), os.urandom(40), b"header"
    ct = ChaCha20Poly1305(key).encrypt(nonce, pt, ad)
    bad_tag = ct[:-1] + bytes([ct[-1] ^ 0x01])
    with pytest.raises(ValueError, match="authentication"):
        lwcbench.decrypt(cid, key, nonce, bad_tag, ad)
    bad_ct = bytes([ct[0] ^ 0x80]) + ct[1:]
    with pytest.raises(ValueError, match="authentication"):
        lwcbench.decrypt(cid, key, nonce, bad_ct, ad)
    with pytest.raises(ValueError, match="authentication"):
        lwcbench.decrypt(cid, key, nonce, ct, b"other header")
    with pytest.raises(ValueError):
        lwcbench.decrypt(cid, key, nonce, ct[:10], ad)  # shorter than the tag


@pytest.mark.parametrize("cid", CHACHA + CHACHA_AEAD)
def test_wrong_lengths_raise_value_error(cid):
    with pytest.raises(ValueError, match=r"key must be 32 bytes.*got 16"):
        lwcbench.encrypt(cid, bytes(16), bytes(12), b"abc")
    with pytest.raises(ValueError, match=r"(IV|nonce).*12 bytes.*got 8"):
        lwcbench.encrypt(cid, bytes(32), bytes(8), b"abc")


def test_bad_calls():
    with pytest.raises(ValueError, match="unknown cipher 'NoSuchCipher'"):
        lwcbench.keystream("NoSuchCipher", b"", b"", 8)
    with pytest.raises(ValueError, match="stream cipher"):
        lwcbench.keystream(CHACHA_AEAD[0], bytes(32), bytes(12), 8)
    with pytest.raises(ValueError, match="associated data"):
        lwcbench.encrypt(CHACHA[0], bytes(32), bytes(12), b"x", ad=b"ad")
    with pytest.raises(ValueError):
        lwcbench.keystream(CHACHA[0], bytes(32), bytes(12), -1)


# Generic contract checks for whatever else the catalogue holds (independent references
# where `cryptography` has the algorithm).
def _material(c, rng):
    return rng.randbytes(c["key_bits"] // 8), rng.randbytes(c["iv_bits"] // 8)


@pytest.mark.parametrize("cid", STREAMS)
def test_every_stream_cipher_round_trips(cid):
    c, rng = IDS[cid], random.Random(cid)
    key, iv = _material(c, rng)
    data = rng.randbytes(77)
    ct = lwcbench.encrypt(cid, key, iv, data)
    assert ct != data
    assert ct == xor(data, lwcbench.keystream(cid, key, iv, len(data) * 8))
    assert lwcbench.decrypt(cid, key, iv, ct) == data


@pytest.mark.parametrize("cid", AEADS)
def test_every_aead_round_trips_and_rejects(cid):
    c, rng = IDS[cid], random.Random(cid)
    key, nonce = _material(c, rng)
    pt = rng.randbytes(50)
    ct = lwcbench.encrypt(cid, key, nonce, pt, b"ad")
    assert len(ct) == len(pt) + c["tag_bits"] // 8
    assert lwcbench.decrypt(cid, key, nonce, ct, b"ad") == pt
    with pytest.raises(ValueError):
        lwcbench.decrypt(cid, key, nonce, ct[:-1] + bytes([ct[-1] ^ 1]), b"ad")
    if re.fullmatch(r"AES-(128|192|256)-GCM", c["cipher"]) and c["iv_bits"] == 96:
        assert ct == AESGCM(key).encrypt(nonce, pt, b"ad")


@pytest.mark.parametrize("cid", BLOCKS)
def test_every_block_cipher_ecb(cid):
    c, rng = IDS[cid], random.Random(cid)
    key = rng.randbytes(c["key_bits"] // 8)
    bs = c["block_bits"] // 8
    data = rng.randbytes(3 * bs)
    ct = lwcbench.encrypt(cid, key, b"", data)
    assert len(ct) == len(data) and ct != data
    assert lwcbench.decrypt(cid, key, b"", ct) == data
    with pytest.raises(ValueError):
        lwcbench.encrypt(cid, key, b"", data[:-1])
    if re.fullmatch(r"AES-(128|192|256)", c["cipher"]):
        assert ct == Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(data)


def test_verify_all_ok():
    checks = lwcbench.verify()
    assert checks
    bad = [c for c in checks if not c["ok"]]
    assert not bad, bad
    for c in checks:
        assert set(c) >= {"id", "what", "passed", "failures", "skipped", "ok"}
        assert c["failures"] == []
        assert c["passed"] > 0 or c["skipped"]
    assert {c["id"] for c in checks} == set(IDS), "every implementation has checks"
    assert {c["id"] for c in lwcbench.verify(cipher="ChaCha20")} == set(CHACHA)


# ------------------------------------------------------------------------------------------
# run()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(preset="nosuch"), "unknown preset 'nosuch'.*quick"),
        (dict(preset="quick", reps=0), "repetition"),
        (dict(cipher="ChaCha20", sizes=[0]), "sizes"),
        (dict(cipher="ChaCha20", kiv="xx"), "kiv"),
        (dict(cipher="ChaCha20", scenario="warp"), "scenario"),
        (dict(cipher="NoSuch"), "unknown cipher 'NoSuch'"),
        (dict(cipher="ChaCha20", sizes="12X"), "sizes"),
        (dict(cipher="ChaCha20", key=bytes(5)), "key"),
    ],
)
def test_run_rejects_bad_input_before_measuring(tmp_path, kwargs, match):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=match):
        lwcbench.run(out=out, **{"reps": 2, "warmup": 0, **kwargs})
    assert not (out / "run.json").exists()


def test_run_selection_and_refusal(tmp_path):
    out = tmp_path / "sel"
    d = lwcbench.run(cipher="ChaCha20", scenario="keystream", sizes=["16B", 64], kiv="ss,rr", reps=2, warmup=0,
                     seed=1, out=out)
    r = lwcbench.load(d)
    assert set(r.samples["scenario"].astype(str)) == {"keystream"}
    assert sorted(r.samples["size_bits"].unique()) == [64, 128]
    assert set(r.samples["kiv"].astype(str)) == {"s,s", "r,r"}
    assert len(r.samples) == 2 * 2 * 2 * len(CHACHA)
    with pytest.raises(ValueError, match="--force|force|exists|finished"):
        lwcbench.run(cipher="ChaCha20", reps=2, warmup=0, out=out)
    lwcbench.run(cipher="ChaCha20", scenario="init", reps=2, warmup=0, out=out, force=True)
    assert set(lwcbench.load(out).samples["scenario"].astype(str)) == {"init"}


def test_run_releases_the_gil(tmp_path):
    """While run() measures in a worker thread, this thread keeps executing Python code."""
    span = {}

    def work():
        t0 = time.perf_counter()
        span["dir"] = lwcbench.run(preset="quick", reps=20, warmup=2, seed=3, out=tmp_path / "gil")
        span["t"] = (t0, time.perf_counter())

    t = threading.Thread(target=work)
    stamps, n = [], 0
    t.start()
    while t.is_alive():
        n += 1
        if n % 1000 == 0:
            stamps.append(time.perf_counter())
    t.join()
    t0, t1 = span["t"]
    lo, hi = t0 + 0.2 * (t1 - t0), t1 - 0.2 * (t1 - t0)
    # Holding the GIL for the whole call would leave no iterations inside the run.
    inside = sum(1 for s in stamps if lo < s < hi)
    assert inside >= 10, (inside, t1 - t0)


def test_run_progress_callback(tmp_path):
    calls = []
    d = lwcbench.run(cipher="ChaCha20", scenario="init", reps=4, warmup=2, out=tmp_path / "p",
                     progress=lambda done, total, label: calls.append((done, total, label)))
    run = lwcbench.load(d).run
    total = (4 + 2) * run["groups"]
    assert calls and calls[-1][:2] == (total, total)
    assert all(c[1] == total for c in calls)
    assert all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))
    assert "ChaCha20" in calls[-1][2]

    class Stop(Exception):
        pass

    def boom(done, total, label):
        raise Stop("from the callback")

    with pytest.raises(Stop):
        lwcbench.run(cipher="ChaCha20", scenario="init", reps=2, warmup=0, out=tmp_path / "q", progress=boom)


def test_run_sensor_payloads_and_report(tmp_path):
    d = lwcbench.run(cipher="ChaCha20", scenario="full", payload="both", kiv="ss", reps=3, warmup=0, seed=5,
                     out=tmp_path / "sensor")
    r = lwcbench.load(d)
    # docs: the built-in data give 702 readings of 32 bits = 22,464 bits
    assert set(r.samples["size_bits"].unique()) == {702 * 32}
    kinds = set(r.samples["payload"].astype(str))
    assert "random" in kinds and any(k.startswith("dataset:") for k in kinds) and len(kinds) == 2
    assert {"table1_dataset_vs_random", "table2_dataset_vs_random"} <= set(r.tables)
    html = (r.path / "report.html").read_text(encoding="utf-8")
    assert "<svg" in html
    (r.path / "report.html").unlink()
    assert lwcbench.report(d).endswith("report.html") and (r.path / "report.html").is_file()
    with pytest.raises(ValueError, match="payload"):
        lwcbench.run(cipher="ChaCha20", payload="sometimes", out=tmp_path / "bad")


def test_run_all_stream_and_aead(tmp_path):
    d = lwcbench.run(all=True, scenario=["init", "keysetup"], kiv="ss", reps=2, warmup=0, out=tmp_path / "all",
                     report=False)
    r = lwcbench.load(d)
    got = {f"{c}/{i}" for c, i in r.samples[["cipher", "implementation"]].astype(str).drop_duplicates().itertuples(index=False)}
    assert got == set(STREAMS + AEADS)
    assert not (r.path / "report.html").exists()


def test_ciphers_as_frame():
    df = lwcbench.ciphers(frame=True)
    assert list(df["id"]) == list(IDS)
    assert (df["key_bits"] > 0).all()


def test_concurrent_runs_do_not_overlap(tmp_path):
    """Two threads calling run() measure one after the other: the progress callbacks (first
    at 0 samples, last at the total) of the two runs span disjoint time intervals."""
    spans = {}

    def work(i):
        def tick(done, total, label):
            spans.setdefault(i, []).append(time.perf_counter())
        lwcbench.run(cipher="ChaCha20", scenario="init", reps=500, warmup=0, seed=i, out=tmp_path / f"c{i}",
                     report=False, progress=tick)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (a0, a1), (b0, b1) = sorted((min(v), max(v)) for v in spans.values())
    assert a1 <= b0, ((a0, a1), (b0, b1))


def test_run_accepts_every_cli_run_option():
    # RUN_OPTIONS is the list the CLI's own test checks against `lwcbench run`'s clap
    # arguments (crates/cli/src/cmd_run.rs); the CLI's --impl is `impl` here.
    import inspect

    params = set(inspect.signature(lwcbench.run).parameters)
    native = set(inspect.signature(lwcbench._native.run).parameters)
    opts = lwcbench._native.run_options()
    assert "sizes" in opts and "engine" in opts and "budget" in opts
    missing = [o for o in opts if ("impl" if o == "implementation" else o) not in params]
    assert missing == []
    assert [o for o in opts if o not in native] == []


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(preset="quick", weights="battery"), "--weights: applies only to --preset lightweight-study"),
        (dict(preset="quick", budget="trip=3"), "--budget: applies only"),
        (dict(preset="quick", watts=1.0), "--watts: applies only"),
        (dict(cipher="ChaCha20", engine="pycryptodom"), "--engine: unknown engine 'pycryptodom'"),
        (dict(cipher="ChaCha20", scenario="keystream", frames=2), "--video/--frames"),
        (dict(cipher="ChaCha20", dataset_encoding="ebcdic", dataset="x.csv"), "encoding|x.csv"),
        (dict(cipher="ChaCha20", repeat=0), "--repeat"),
        (dict(cipher="ChaCha20", counter="instructions"), "--counter"),
    ],
)
def test_run_resolves_cli_options(tmp_path, kwargs, match):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match=match):
        lwcbench.run(out=out, **{"reps": 2, "warmup": 0, **kwargs})
    assert not (out / "run.json").exists()
