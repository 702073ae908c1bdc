"""Official CCM* vectors (13-byte nonce; 4-, 8- or 16-byte MIC) WITH associated data, shared by
test_aes_vectors.py (the Rust images in Unicorn) and test_lx106_aes.py (the ESP8266's own C in
QEMU).

* RFC 3610 ("Counter with CBC-MAC (CCM)", 2003) section 8, Packet Vectors #1 to #3: M = 8,
  L = 2 (a 13-byte nonce), 8 bytes of associated data; transcribed below.
* NIST CAVP CCMVS (CAVS 11.0) VTT128.rsp and DVPT128.rsp, read from the shared vector tree
  (nist/cavp/ccmtestvectors; /work/shared/vectors/README.md): the records with Nlen = 13 and
  associated data (Alen = 32) at Tlen = 4 and 16. A DVPT record with `Result = Fail` must be
  refused on decryption.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib

import pytest

REQUIRED = os.environ.get("CI") == "true" or os.environ.get("LWCBENCH_REQUIRE_SERVICES") == "1"
# the shared vector tree beside the checkout (as mcu/nistlwc.py finds the NIST LWC tree), else /work/shared
_VEC = [pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "vectors", pathlib.Path("/work/shared/vectors")]
VECTORS = next((v for v in _VEC if v.is_dir()), _VEC[0])
CCMVS = VECTORS / "nist" / "cavp" / "ccmtestvectors"


@dataclasses.dataclass(frozen=True)
class Vector:
    source: str
    key: bytes
    nonce: bytes
    ad: bytes
    pt: bytes
    ct: bytes  # ciphertext ‖ MIC
    mic: int  # MIC bytes
    valid: bool = True  # False: a DVPT `Result = Fail` record, to be refused

    @property
    def id(self) -> str:
        return self.source


def _rfc(n: int, nonce: str, pt: str, ct: str, mic: str) -> Vector:
    return Vector(f"RFC 3610 section 8 Packet Vector #{n}", bytes.fromhex("c0c1c2c3c4c5c6c7c8c9cacbcccdcecf"),
                  bytes.fromhex(nonce), bytes.fromhex("0001020304050607"), bytes.fromhex(pt),
                  bytes.fromhex(ct + mic), 8)


# RFC 3610 section 8: key C0..CF, AAD 00..07, plaintext from 08 (23, 24 and 25 bytes)
RFC3610 = [
    _rfc(1, "00000003020100a0a1a2a3a4a5", "08090a0b0c0d0e0f101112131415161718191a1b1c1d1e",
         "588c979a61c663d2f066d0c2c0f989806d5f6b61dac384", "17e8d12cfdf926e0"),
    _rfc(2, "00000004030201a0a1a2a3a4a5", "08090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
         "72c91a36e135f8cf291ca894085c87e3cc15c439c9e43a3b", "a091d56e10400916"),
    _rfc(3, "00000005040302a0a1a2a3a4a5", "08090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20",
         "51b1e5f44a197d1da46b0f8e2d282ae871e838bb64da859657", "4adaa76fbd9fb0c5"),
]


def _records(path: pathlib.Path) -> list[dict]:
    """The records of a CCMVS .rsp file, each with the parameters in force (bracketed section
    headers, file-level `Alen = ...` lines, a section's Key and, in VTT, Nonce)."""
    params: dict = {}
    out: list = []
    rec = None
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            for part in line.strip("[]").split(","):
                k, _, v = part.partition("=")
                params[k.strip()] = v.strip()
            rec = None
            continue
        if line in ("Pass", "Fail"):
            continue
        k, _, v = line.partition("=")
        k, v = k.strip(), v.strip()
        if k == "Count":
            rec = dict(params)
            out.append(rec)
        if rec is None:
            params[k] = v
        else:
            rec[k] = v
    return out


def _vector(path: pathlib.Path, r: dict) -> Vector:
    alen, plen, tlen = int(r["Alen"]), int(r["Plen"]), int(r["Tlen"])
    v = Vector(f"CAVP CCMVS {path.stem}.rsp Alen {alen} Plen {plen} Nlen {r['Nlen']} Tlen {tlen} Count {r['Count']}",
               bytes.fromhex(r["Key"]), bytes.fromhex(r["Nonce"]), bytes.fromhex(r["Adata"])[:alen],
               bytes.fromhex(r["Payload"])[:plen] if "Payload" in r else b"", bytes.fromhex(r["CT"]), tlen,
               r.get("Result", "Pass") == "Pass")
    if len(v.ad) != alen or len(v.ct) != plen + tlen or (v.valid and len(v.pt) != plen):
        raise ValueError(f"{path}: record Count {r['Count']} does not have its section's lengths")
    return v


def ccmvs(name: str, mic: int, per_section: int | None = None, valid_only: bool = True) -> list[Vector]:
    """The CCMVS records of `name` (VTT128 or DVPT128) with a 13-byte nonce, associated data and a
    `mic`-byte tag: the first `per_section` of each section (all when None)."""
    path = CCMVS / f"{name}.rsp"
    if not path.is_file():
        if REQUIRED:
            pytest.fail(f"{path} missing (the shared vector tree)")
        pytest.skip(f"{path} missing")
    taken: dict = {}
    out = []
    for r in _records(path):
        if (int(r["Nlen"]), int(r["Tlen"])) != (13, mic) or int(r["Alen"]) == 0:
            continue
        v = _vector(path, r)
        if valid_only and not v.valid:
            continue
        sec = (r["Alen"], r["Plen"], v.valid)
        if per_section is not None and taken.get(sec, 0) >= per_section:
            continue
        taken[sec] = taken.get(sec, 0) + 1
        out.append(v)
    if not out:
        raise ValueError(f"{path}: no record with Nlen 13, Tlen {mic} and associated data")
    return out
