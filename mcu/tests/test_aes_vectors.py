"""AES-128-GCM, AES-128-CCM and CCM* (IEEE 802.15.4: 13-byte nonce, 4/8/16-byte MIC) images
against official vectors, in emulation on every Rust target.

Vectors without associated data run on the measured images themselves (`lwc_keystream`, empty
AD: mcu/README.md); vectors with associated data run on the same images built with the
`ad-entry` feature (mcu/build.py `build_rust_ad_entry`), whose `lwc_encrypt_ad` the emulator
calls with the AD in a board buffer (emulate.py `Emulator.encrypt_ad`); a test checks that the
two builds encrypt alike. The emulator writes each vector's key, nonce, AD and plaintext into
the board's buffers (the images' counts use zero messages). Sources:

* GCM: McGrew and Viega, "The Galois/Counter Mode of Operation (GCM)" (2005), test cases 1-3
  (the 96-bit-IV cases without AD; test case 3 is also worked in NIST's
  toolkit-examples/AES_GCM.txt), and NIST CAVP GCMVS gcmEncryptExtIV128.rsp [IVlen = 96]
  [PTlen = 128] [AADlen = 0] [Taglen = 128] Count 0 (transcribed below).
* CCM, 12-byte nonce, 16-byte tag: Wycheproof aes_ccm_test.json (C2SP, the snapshot of
  shared/vectors) tcId 2 and 3 (transcribed).
* CCM*, 13-byte nonce, no AD: NIST CAVP CCMVS DVPT128.rsp (CAVS 11.0) [Alen = 0, Plen = 0 / 24,
  Nlen = 13, Tlen = 4 / 16] Count 30, 90 and 105 (Result = Pass), Wycheproof tcId 267
  (16-byte MIC), transcribed.
* CCM*, 13-byte nonce, with AD (ccm_vectors.py): RFC 3610 section 8 Packet Vectors #1-#3
  (M = 8, 8-byte AD) on the 8-byte-MIC image; CCMVS VTT128.rsp and DVPT128.rsp records with
  Alen = 32, Nlen = 13 at Tlen = 4 and 16 (read from the shared vector tree) on the 4- and
  16-byte-MIC images.
"""
from __future__ import annotations

import pytest

import build
import ccm_vectors
import emulate

EMU_TARGETS = [t for t in emulate.TARGETS if t in build.RUST_TARGETS]

# (image, source, key, nonce, plaintext, ciphertext ‖ tag), hex
VECTORS = [
    ("rc_aes128_gcm", "GCM spec test case 1", "00" * 16, "00" * 12, "", "58e2fccefa7e3061367f1d57a4e7455a"),
    ("rc_aes128_gcm", "GCM spec test case 2", "00" * 16, "00" * 12, "00" * 16,
     "0388dace60b6a392f328c2b971b2fe78" "ab6e47d42cec13bdf53a67b21257bddf"),
    ("rc_aes128_gcm", "GCM spec test case 3", "feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985"
     "4d5c2af327cd64a62cf35abd2ba6fab4"),
    ("rc_aes128_gcm", "CAVP gcmEncryptExtIV128 PTlen 128 AADlen 0 Count 0", "7fddb57453c241d03efbed3ac44e371c",
     "ee283a3fc75575e33efd4887", "d5de42b461646c255c87bd2962d3b9a2",
     "2ccda4a5415cb91e135c2a0f78c9b2fd" "b36d1df9b9d5e596f83e8b7f52971cb3"),
    ("rc_aes128_ccm", "Wycheproof aes_ccm tcId 2", "384ea416ac3c2f51a76e7d8226346d4e", "b30c084727ad1c592ac21d12",
     "35", "d7" "6be3fd13b7065afc19e3b8a3b96b39fb"),
    ("rc_aes128_ccm", "Wycheproof aes_ccm tcId 3", "cae31cd9f55526eb038241fc44cac1e5", "b5e006ded553110e6dc56529",
     "d10989f2c52e94ad", "e64d0b64ebb381ec" "25409c795d491d804e583917227b73c7"),
    ("rc_aes128_ccm_star4", "CAVP DVPT128 Alen 0 Plen 0 Nlen 13 Tlen 4 Count 30", "4bb3c4a4f893ad8c9bdc833c325d62b3",
     "5a8aa485c316e9403aff859fbb", "", "90156f3f"),
    ("rc_aes128_ccm_star4", "CAVP DVPT128 Alen 0 Plen 24 Nlen 13 Tlen 4 Count 90",
     "197afb02ffbd8f699dacae87094d5243", "5a8aa485c316e9403aff859fbb",
     "a16a2e741f1cd9717285b6d882c1fc53655e9773761ad697",
     "4a550134f94455979ec4bf89ad2bd80d25a77ae94e456134" "a3e138b9"),
    ("rc_aes128_ccm_star", "CAVP DVPT128 Alen 0 Plen 24 Nlen 13 Tlen 16 Count 105",
     "90929a4b0ac65b350ad1591611fe4829", "5a8aa485c316e9403aff859fbb",
     "a16a2e741f1cd9717285b6d882c1fc53655e9773761ad697",
     "4bfe4e35784f0a65b545477e5e2f4bae0e1e6fa717eaf2cb" "6a9a970b9beb2ac1bd4fd62168f8378a"),
    ("rc_aes128_ccm_star", "Wycheproof aes_ccm tcId 267", "7c5aa1cd2fc171d5bb91ee74f31e1a63",
     "70a2a5303734517827faa7ee78", "4bd1d3427e0735a08f475bc73ec3648c",
     "9ab61214ea6611510706315f0fc9bd65" "a2b3fc3c1349cbfd9ded7cc32effb389"),
]


def emulate_vector(elf, target: str, key: bytes, nonce: bytes, pt: bytes) -> tuple[tuple, bytes]:
    """lwc_init(key, nonce) then lwc_keystream(plaintext) on a fresh board: (return codes, ciphertext ‖ tag)."""
    img = emulate.load_image(str(elf))
    assert (img.key_bytes, img.iv_bytes) == (len(key), len(nonce)), "the vector's shape is not the image's"
    em = emulate.Emulator(img, target)
    uc = em.new_machine()
    uc.mem_write(emulate.KEY_AT, key)
    uc.mem_write(emulate.IV_AT, nonce)
    uc.mem_write(emulate.OUT_AT, pt)
    phases = (em.call(uc, "lwc_init", emulate.KEY_AT, emulate.IV_AT),
          em.call(uc, "lwc_keystream", emulate.OUT_AT, 8 * len(pt)))
    codes = tuple(em._rc)
    assert all(p.insns > 0 for p in phases)
    return codes, bytes(uc.mem_read(emulate.OUT_AT, len(pt) + img.tag_bytes))


@pytest.mark.parametrize("target", EMU_TARGETS)
@pytest.mark.parametrize("image,source,key,nonce,pt,want", VECTORS, ids=[f"{v[0]}:{v[1]}" for v in VECTORS])
def test_official_vector_in_emulation(built, target, image, source, key, nonce, pt, want):
    codes, out = emulate_vector(built.rust_elf(target, "Os", image), target, bytes.fromhex(key),
                                bytes.fromhex(nonce), bytes.fromhex(pt))
    assert codes == (0, 0)
    assert out.hex() == want, source


AES_AEAD = ["rc_aes128_gcm", "rc_aes128_ccm", "rc_aes128_ccm_star", "rc_aes128_ccm_star8", "rc_aes128_ccm_star4"]
STAR = {4: "rc_aes128_ccm_star4", 8: "rc_aes128_ccm_star8", 16: "rc_aes128_ccm_star"}


def ad_vectors() -> list:
    """(image, vector) for the CCM* vectors with associated data (ccm_vectors.py)."""
    vs = list(ccm_vectors.RFC3610)
    for mic in (4, 16):
        vs += ccm_vectors.ccmvs("VTT128", mic, per_section=2) + ccm_vectors.ccmvs("DVPT128", mic, per_section=1)
    return [(STAR[v.mic], v) for v in vs]


@pytest.fixture(scope="module")
def built_ad(built):
    """The AES AEAD images with `lwc_encrypt_ad` (their own target directory)."""
    build.build_rust_ad_entry(AES_AEAD)
    return build


def test_ad_vectors_cover_every_mic_length():
    """RFC 3610 #1-#3 for the 8-byte MIC and CCMVS records with AD for 4 and 16 bytes (4 each)."""
    got = ad_vectors()
    assert sorted(v.source for im, v in got if im == "rc_aes128_ccm_star8") == [
        f"RFC 3610 section 8 Packet Vector #{n}" for n in (1, 2, 3)]
    for mic in (4, 16):
        vs = [v for im, v in got if im == STAR[mic]]
        assert len(vs) == 4 and all(len(v.ad) == 32 and len(v.nonce) == 13 for v in vs)
        assert {v.source.split(".rsp")[0] for v in vs} == {"CAVP CCMVS VTT128", "CAVP CCMVS DVPT128"}


@pytest.mark.parametrize("target", EMU_TARGETS)
def test_ccm_star_vectors_with_associated_data_in_emulation(built_ad, target):
    """Every CCM* image encrypts its official vectors WITH associated data (RFC 3610 for M = 8,
    CCMVS for M = 4 and 16) to their ciphertext and MIC."""
    bad = []
    for image, v in ad_vectors():
        em = emulate.Emulator(emulate.load_image(str(built_ad.rust_ad_elf(target, image))), target)
        assert (em.img.iv_bytes, em.img.tag_bytes) == (13, v.mic)
        codes, out = em.encrypt_ad(v.key, v.nonce, v.pt, v.ad)
        if codes != (0, 0) or out != v.ct:
            bad.append(f"{image}: {v.source}: rc {codes}, got {out.hex()}, want {v.ct.hex()}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("target", EMU_TARGETS)
@pytest.mark.parametrize("image", AES_AEAD)
def test_ad_entry_build_encrypts_as_the_measured_image(built_ad, target, image):
    """With empty AD, `lwc_encrypt_ad` of the ad-entry build gives the measured image's
    `lwc_keystream` output (same code, one entry point more), on a 40-byte message."""
    img = emulate.load_image(str(built_ad.rust_elf(target, "Os", image)))
    key, nonce = emulate.default_key(img.key_bytes), emulate.default_iv(img.iv_bytes)
    msg = bytes(range(40))
    _, want = emulate_vector(built_ad.rust_elf(target, "Os", image), target, key, nonce, msg)
    em = emulate.Emulator(emulate.load_image(str(built_ad.rust_ad_elf(target, image))), target)
    assert em.encrypt_ad(key, nonce, msg, b"") == ((0, 0), want)
    # and associated data changes the tag only
    codes, out = em.encrypt_ad(key, nonce, msg, b"\x01")
    assert codes == (0, 0) and out[:40] == want[:40] and out[40:] != want[40:]


def test_measured_images_have_no_ad_entry(built):
    """The counted images are built without the feature: their code is what data/ measures."""
    for t in EMU_TARGETS:
        for image in AES_AEAD:
            assert "lwc_encrypt_ad" not in emulate.load_image(str(built.rust_elf(t, "Os", image))).symbols


def test_every_new_image_has_an_official_vector():
    """Each AES AEAD image of the catalogue is covered above: without AD in VECTORS, with AD
    (the 8-byte-MIC CCM*, which no AD-free vector has) in ad_vectors()."""
    aes = {im.name for im in build.RUST_IMAGES if im.name.startswith("rc_aes128_") and im.kind == "aead"}
    assert aes == set(AES_AEAD)
    assert aes - {v[0] for v in VECTORS} == {"rc_aes128_ccm_star8"}
    assert {im for im, _ in ad_vectors()} == set(STAR.values())


def test_a_wrong_ad_fails(built_ad):
    """The AD check can fail: RFC 3610 #1 with one AD bit flipped gives another MIC."""
    target, v = EMU_TARGETS[0], ccm_vectors.RFC3610[0]
    em = emulate.Emulator(emulate.load_image(str(built_ad.rust_ad_elf(target, "rc_aes128_ccm_star8"))), target)
    _, out = em.encrypt_ad(v.key, v.nonce, v.pt, bytes([v.ad[0] ^ 1]) + v.ad[1:])
    assert out[:len(v.pt)] == v.ct[:len(v.pt)] and out != v.ct


def test_a_wrong_vector_fails(built):
    """The check can fail: one flipped key bit changes ciphertext and tag."""
    target = EMU_TARGETS[0]
    image, _, key, nonce, pt, want = VECTORS[2]
    bad = bytes.fromhex(key)
    bad = bytes([bad[0] ^ 1]) + bad[1:]
    _, out = emulate_vector(built.rust_elf(target, "Os", image), target, bad, bytes.fromhex(nonce), bytes.fromhex(pt))
    assert out.hex() != want
