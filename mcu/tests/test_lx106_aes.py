"""The ESP8266's own C AES-128-CCM, AES-128-GCM and CCM* (mcu/lx106/aes) built for the LX106 and
run in QEMU, against official vectors (the GCM specification's test cases 2 and 3, transcribed
below; Wycheproof's AES-CCM and AES-GCM cases with a 128-bit key, 96-bit nonce and 128-bit tag,
from the shared vector tree; for CCM* with a 13-byte nonce, RFC 3610's packet vectors #1-#3
(M = 8) and the CCMVS DVPT128 records with associated data (M = 4 and 16, Pass and Fail), see
ccm_vectors.py) and against the `cryptography` package (OpenSSL) on random inputs and on the
timed image's own inputs."""
from __future__ import annotations

import json
import os
import pathlib
import random
import shutil

import pytest

import ccm_vectors
import lx106

REQUIRED = os.environ.get("CI") == "true" or os.environ.get("LWCBENCH_REQUIRE_SERVICES") == "1"
AES = lx106.LX / "aes"
# the shared vector tree beside the checkout (as mcu/nistlwc.py finds the NIST LWC tree), else /work/shared
_VEC = [pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "vectors", pathlib.Path("/work/shared/vectors")]
WYCHEPROOF = next((v for v in _VEC if v.is_dir()), _VEC[0]) / "wycheproof"

# McGrew & Viega, "The Galois/Counter Mode of Operation (GCM)", revised 2005, Appendix B,
# test cases 2 and 3 (K, IV, P, C, T; no associated data), as the shared tree's
# cryptopp-testvectors/gcm.txt also holds them.
GCM_SPEC = [
    ("00000000000000000000000000000000", "000000000000000000000000", "00000000000000000000000000000000",
     "0388dace60b6a392f328c2b971b2fe78", "ab6e47d42cec13bdf53a67b21257bddf"),
    ("feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
     "4d5c2af327cd64a62cf35abd2ba6fab4"),
]


def _tools():
    for t in (lx106.CC, lx106.QEMU):
        if shutil.which(t) is None:
            if REQUIRED:
                pytest.fail(f"{t} not found (mcu/setup.sh installs it)")
            pytest.skip(f"{t} not installed")


def _kat_elf(mode: str, tmp: pathlib.Path, mic: int | None = None) -> pathlib.Path:
    """kat.c with ccm.c or gcm.c, the board's flags at -Os; `mic`: ccm.c as CCM* with that MIC."""
    import lx106_images
    bm = lx106.load_board()
    flags = [*lx106_images.FLAGS, *bm.cflags] + ([f"-DLWC_CCM_STAR_MIC={mic}"] if mic else [])
    inc = ["-isystem", str(lx106.LX / "libc" / "include"), "-I", str(lx106.LX), "-I", str(AES)]
    odir = tmp / f"kat_{mode}{mic or ''}"
    odir.mkdir(parents=True, exist_ok=True)
    objs = lx106_images._compile([AES / f"{mode}.c", AES / "aes128.c", AES / "kat.c"], flags, inc, odir)
    return lx106_images._link(objs + lx106.runtime_objs(flags, tmp), odir / "kat.elf", False)


def _run(elf: pathlib.Path, cases: list) -> list:
    """cases: (op, key, nonce, ad, data) with op "enc" or "dec"; returns (rc, output) per case."""
    cells = [(0 if op == "enc" else 1, len(ad), len(data), *key, *nonce, *ad, *data)
             for op, key, nonce, ad, data in cases]
    tr = lx106.trace(elf, cells, max_insns=2_000_000_000, timeout=1200.0)
    assert not tr.error and tr.status == 0, (tr.error, tr.status)
    got = {}
    for line in tr.output.splitlines():
        f = line.split()
        if f and f[0] == "kat":
            got[int(f[1])] = (int(f[2]), bytes.fromhex(f[4]) if len(f) > 4 else b"")
    assert sorted(got) == list(range(len(cases)))
    return [got[i] for i in range(len(cases))]


def _wycheproof(name: str, limit: int = 64) -> list:
    path = WYCHEPROOF / name
    if not path.is_file():
        if REQUIRED:
            pytest.fail(f"{path} missing (the shared vector tree)")
        pytest.skip(f"{path} missing")
    out = []
    for g in json.loads(path.read_text())["testGroups"]:
        if (g["keySize"], g["ivSize"], g["tagSize"]) != (128, 96, 128):
            continue
        for t in g["tests"]:
            if t["result"] == "acceptable" or len(t["msg"]) // 2 > limit or len(t["aad"]) // 2 > limit:
                continue
            out.append(t)
    return out


@pytest.mark.parametrize("mode", ["ccm", "gcm"])
def test_own_c_aes_on_the_lx106_passes_official_vectors(mode, tmp_path):
    """Every valid Wycheproof case (128-bit key, 96-bit nonce, 128-bit tag, with and without
    associated data) encrypts to its ciphertext and tag and decrypts back; every invalid one
    (a modified tag or ciphertext) is refused. GCM also gets the specification's cases 2-3."""
    _tools()
    elf = _kat_elf(mode, tmp_path)
    vec = _wycheproof(f"aes_{mode}_test.json")
    assert len(vec) >= 20
    cases, want = [], []
    for t in vec:
        key, iv, ad = (bytes.fromhex(t[k]) for k in ("key", "iv", "aad"))
        msg, ct = bytes.fromhex(t["msg"]), bytes.fromhex(t["ct"]) + bytes.fromhex(t["tag"])
        if t["result"] == "valid":
            cases.append(("enc", key, iv, ad, msg))
            want.append((0, ct, t["tcId"]))
        cases.append(("dec", key, iv, ad, ct))
        want.append((0, msg, t["tcId"]) if t["result"] == "valid" else (0xFF, b"", t["tcId"]))
    if mode == "gcm":
        for k, iv, p, c, tag in GCM_SPEC:
            cases.append(("enc", bytes.fromhex(k), bytes.fromhex(iv), b"", bytes.fromhex(p)))
            want.append((0, bytes.fromhex(c + tag), f"spec {k[:4]}"))
    got = _run(elf, cases)
    for (rc, out), (wrc, wout, tc) in zip(got, want):
        assert (rc, out) == (wrc, wout), tc


@pytest.mark.parametrize("mode", ["ccm", "gcm"])
def test_own_c_aes_on_the_lx106_equals_cryptography_and_refuses_a_wrong_key(mode, tmp_path):
    """Random key, nonce, associated data (0-40 B) and message (0-80 B): the image's output equals
    `cryptography`'s AESCCM/AESGCM; decrypting under another key or a flipped tag bit fails."""
    _tools()
    aead = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead")
    ref = aead.AESCCM if mode == "ccm" else aead.AESGCM
    rng = random.Random(38)
    elf = _kat_elf(mode, tmp_path)
    cases, want = [], []
    for n in (0, 1, 15, 16, 17, 33, 80):
        key, nonce = rng.randbytes(16), rng.randbytes(12)
        ad, msg = rng.randbytes(rng.choice((0, 5, 16, 40))), rng.randbytes(n)
        ct = ref(key, 16).encrypt(nonce, msg, ad) if mode == "ccm" else ref(key).encrypt(nonce, msg, ad)
        wrong = bytes([key[0] ^ 1]) + key[1:]
        bad = ct[:-1] + bytes([ct[-1] ^ 0x80])
        cases += [("enc", key, nonce, ad, msg), ("dec", key, nonce, ad, ct), ("dec", wrong, nonce, ad, ct),
                  ("dec", key, nonce, ad, bad)]
        want += [(0, ct), (0, msg), (0xFF, b""), (0xFF, b"")]
    assert _run(elf, cases) == want


@pytest.mark.parametrize("image", ["c_aes128ccm", "c_aes128gcm"])
def test_timed_aes_images_equal_cryptography(image, tmp_path):
    """The images whose cycles and sizes are data/'s esp8266 rows encrypt harness.c's inputs
    (byte i = i & 0xff in key, nonce and message; no associated data) as `cryptography` does."""
    _tools()
    aead = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead")
    import lx106_images
    bm = lx106.load_board()
    img = {i.image: i for i in lx106_images.IMAGES}[image]
    m = lx106_images.measure(lx106_images.build(img, bm, tmp_path), bm, (128, 1024))
    ref = aead.AESCCM(bytes(range(16)), 16) if image.endswith("ccm") else aead.AESGCM(bytes(range(16)))
    for n in (128, 1024):
        assert m.output[n] == ref.encrypt(bytes(range(12)), bytes(i & 0xFF for i in range(n // 8)), b""), n
    assert m.message[1024] > m.message[128] > 0 and m.flash > 0


# --- CCM* (IEEE 802.15.4: 13-byte nonce, 4/8/16-byte MIC): the same ccm.c, -DLWC_CCM_STAR_MIC ---

def _star_vectors(mic: int) -> list:
    if mic == 8:
        return list(ccm_vectors.RFC3610)
    return ccm_vectors.ccmvs("DVPT128", mic, valid_only=False)


@pytest.mark.parametrize("mic", [4, 8, 16])
def test_ccm_star_on_the_lx106_passes_official_vectors_with_associated_data(mic, tmp_path):
    """CCM* with an M-byte MIC: RFC 3610 #1-#3 (M = 8) or every CCMVS DVPT128 record with a
    13-byte nonce and 32 bytes of AD (M = 4, 16) encrypts to its ciphertext and MIC and decrypts
    back; each DVPT `Result = Fail` record is refused with no plaintext."""
    _tools()
    elf = _kat_elf("ccm", tmp_path, mic)
    vs = _star_vectors(mic)
    assert len(vs) >= 3 and all(len(v.nonce) == 13 and v.ad and v.mic == mic for v in vs)
    cases, want = [], []
    for v in vs:
        if v.valid:
            cases.append(("enc", v.key, v.nonce, v.ad, v.pt))
            want.append((0, v.ct, v.source))
        cases.append(("dec", v.key, v.nonce, v.ad, v.ct))
        want.append((0, v.pt, v.source) if v.valid else (0xFF, b"", v.source))
    if mic != 8:
        assert sum(not v.valid for v in vs) >= 10 and sum(v.valid for v in vs) >= 10
    got = _run(elf, cases)
    for (rc, out), (wrc, wout, src) in zip(got, want):
        assert (rc, out) == (wrc, wout), src


@pytest.mark.parametrize("mic", [4, 8, 16])
def test_ccm_star_on_the_lx106_equals_cryptography_and_refuses_a_wrong_key(mic, tmp_path):
    """Random key, 13-byte nonce, AD (0-40 B) and message (0-80 B): the image's output equals
    `cryptography`'s AESCCM(tag_length=M); another key, a flipped MIC bit or a changed AD byte
    fails decryption."""
    _tools()
    aead = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead")
    rng = random.Random(802154 + mic)
    elf = _kat_elf("ccm", tmp_path, mic)
    cases, want = [], []
    for n in (0, 1, 15, 16, 17, 33, 80):
        key, nonce = rng.randbytes(16), rng.randbytes(13)
        ad, msg = rng.randbytes(rng.choice((0, 5, 16, 40))), rng.randbytes(n)
        ct = aead.AESCCM(key, mic).encrypt(nonce, msg, ad)
        wrong = bytes([key[0] ^ 1]) + key[1:]
        bad = ct[:-1] + bytes([ct[-1] ^ 0x80])
        cases += [("enc", key, nonce, ad, msg), ("dec", key, nonce, ad, ct), ("dec", wrong, nonce, ad, ct),
                  ("dec", key, nonce, ad, bad), ("dec", key, nonce, ad + b"\x00", ct)]
        want += [(0, ct), (0, msg), (0xFF, b""), (0xFF, b""), (0xFF, b"")]
    assert _run(elf, cases) == want


@pytest.mark.parametrize("image,mic", [("c_aes128ccmstar", 16), ("c_aes128ccmstar8", 8), ("c_aes128ccmstar4", 4)])
def test_timed_ccm_star_images_equal_cryptography(image, mic, tmp_path):
    """The CCM* images whose cycles and sizes are data/'s esp8266 rows encrypt harness.c's
    inputs (byte i = i & 0xff; 13-byte nonce, no AD) as `cryptography`'s AESCCM does."""
    _tools()
    aead = pytest.importorskip("cryptography.hazmat.primitives.ciphers.aead")
    import lx106_images
    bm = lx106.load_board()
    img = {i.image: i for i in lx106_images.IMAGES}[image]
    assert (img.cipher, img.kind) == ({16: "AES-128-CCM*", 8: "AES-128-CCM*-8", 4: "AES-128-CCM*-4"}[mic], "aead")
    m = lx106_images.measure(lx106_images.build(img, bm, tmp_path), bm, (128, 1024))
    ref = aead.AESCCM(bytes(range(16)), mic)
    for n in (128, 1024):
        assert m.output[n] == ref.encrypt(bytes(range(13)), bytes(i & 0xFF for i in range(n // 8)), b""), n
    assert m.message[1024] > m.message[128] > 0 and m.flash > 0
