#!/usr/bin/env python3
"""Expected values for tests/independent.rs: OSCORE key derivation and request/response
protection for the AEADs RFC 8613 gives no vector for (COSE 30, 24, 1), computed with the
`cryptography` package's HKDF and AEADs (OpenSSL), not with the Rust crate under test.

The OSCORE framing here is written from RFC 8613 independently of the Rust code; it is
checked first against the RFC's own vectors C.4 and C.7 (alg 10), so a framing error here
fails loudly instead of producing wrong expected values.

Run: /work/main/.venv/bin/python crates/oscore/tests/independent_vectors.py
"""
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESCCM, AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

# alg: (key length, nonce length, AEAD constructor)
ALGS = {
    10: (16, 13, lambda k: AESCCM(k, tag_length=8)),
    30: (16, 13, lambda k: AESCCM(k, tag_length=16)),
    24: (32, 12, ChaCha20Poly1305),
    1: (16, 12, AESGCM),
}


def cbor_head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    if n < 256:
        return bytes([major << 5 | 24, n])
    return bytes([major << 5 | 25]) + n.to_bytes(2, "big")


def bstr(b):
    return cbor_head(2, len(b)) + b


def derive(alg, secret, salt, sid, rid, idc=None):
    klen, nlen, _ = ALGS[alg]

    def hk(ident, kind, length):
        info = (bytes([0x85]) + bstr(ident) + (bstr(idc) if idc is not None else b"\xf6")
                + cbor_head(0, alg) + cbor_head(3, len(kind)) + kind.encode() + cbor_head(0, length))
        return HKDF(hashes.SHA256(), length, salt, info).derive(secret)

    return hk(sid, "Key", klen), hk(rid, "Key", klen), hk(b"", "IV", nlen)


def nonce(iv, ident, piv):
    n = len(iv)
    raw = bytes([len(ident)]) + ident.rjust(n - 6, b"\0") + piv.rjust(5, b"\0")
    return bytes(a ^ b for a, b in zip(raw, iv))


def aad(alg, kid, piv):
    ext = bytes([0x85, 0x01, 0x81]) + cbor_head(0, alg) + bstr(kid) + bstr(piv) + b"\x40"
    return bytes([0x83]) + cbor_head(3, 8) + b"Encrypt0" + b"\x40" + bstr(ext)


def seal(alg, key, n, a, plain):
    return ALGS[alg][2](key).encrypt(n, plain, a)


SECRET = bytes(range(1, 17))
SALT = bytes.fromhex("9e7ca92223786340")
# The request of RFC 8613 C.4: GET coap://localhost/tv1, MID 0x5d1f, token 0x3974; the
# response of C.7: 2.05 "Hello World!". Class E part only (Uri-Host stays outer).
REQ_HEAD = bytes.fromhex("44025d1f00003974") + bytes([0x39]) + b"localhost"
REQ_PLAIN = bytes.fromhex("01b3747631")
RESP_HEAD = bytes.fromhex("64445d1f00003974")
RESP_PLAIN = bytes.fromhex("45ff48656c6c6f20576f726c6421")
SEQ = 20


def vector(alg):
    ck, sk, iv = derive(alg, SECRET, SALT, b"", b"\x01")
    piv = bytes([SEQ])
    req_ct = seal(alg, ck, nonce(iv, b"", piv), aad(alg, b"", piv), REQ_PLAIN)
    # Outer options after Uri-Host (3): OSCORE (9, delta 6) value 0x09 0x14 (n=1, k=1, kid empty).
    req = REQ_HEAD + bytes([0x62, 0x09, 0x14, 0xff]) + req_ct
    resp_ct = seal(alg, sk, nonce(iv, b"", piv), aad(alg, b"", piv), RESP_PLAIN)
    resp = RESP_HEAD + bytes([0x90, 0xff]) + resp_ct  # empty OSCORE option
    return ck, sk, iv, req, resp


def main():
    ck, sk, iv, req, resp = vector(10)
    assert ck.hex() == "f0910ed7295e6ad4b54fc793154302ff", "C.1 sender key"
    assert iv.hex() == "4622d4dd6d944168eefb54987c", "C.1 common IV"
    assert req.hex() == "44025d1f00003974396c6f63616c686f7374620914ff612f1092f1776f1c1668b3825e", "C.4"
    assert resp.hex() == "64445d1f0000397490ffdbaad1e9a7e7b2a813d3c31524378303cdafae119106", "C.7"
    for alg in (30, 24, 1):
        ck, sk, iv, req, resp = vector(alg)
        print(f"alg {alg}")
        print(f"  client sender key {ck.hex()}")
        print(f"  server sender key {sk.hex()}")
        print(f"  common iv         {iv.hex()}")
        print(f"  request           {req.hex()}")
        print(f"  response          {resp.hex()}")


if __name__ == "__main__":
    main()
