#!/usr/bin/env python3
"""lwcbench engine for PyCryptodome: AES in ten modes over the lwcbench engine protocol.

Speaks protocol version 1 (docs/engine-protocol.md) on stdin/stdout: one request per line,
answered by zero or more data lines and exactly one terminal line (`ok ...`, `end ...` or
`err <code> <message>`). Depends only on the standard library and pycryptodome; without
pycryptodome it still starts and answers `hello` with `err unavailable ...`, so the host can
turn its rows off with that message.

Times are taken here, inside Python, with time.perf_counter_ns around a batch of calls, as
the study this reproduces did; they include the interpreter's call overhead.
"""
import sys
import time

ENGINE = "pycryptodome"
ENGINE_VERSION = "1.0"
PROTOCOL = 1
MAX_LINE = 65536  # bytes per line including the newline, both directions
MAX_BATCH = 1 << 26
MAX_BENCH_BYTES = 1 << 30

try:
    import Crypto
    from Crypto.Cipher import AES

    LIBRARY_VERSION = Crypto.__version__
    IMPORT_ERROR = None
except ImportError as e:
    try:  # Debian's python3-pycryptodome installs the same library as `Cryptodome`
        import Cryptodome as Crypto
        from Cryptodome.Cipher import AES

        LIBRARY_VERSION = Crypto.__version__
        IMPORT_ERROR = None
    except ImportError:  # the host reports this and turns the rows off
        AES = None
        LIBRARY_VERSION = "absent"
        IMPORT_ERROR = (f"pycryptodome is not installed for {sys.executable} ({e}); install it with "
                        "`pip install pycryptodome` or `apt-get install python3-pycryptodome`")

# mode -> (family, iv/nonce bytes, tag bytes). Key sizes 128/192/256; SIV takes two keys.
MODES = {
    "ECB": ("block", 0, 0),
    "CBC": ("block", 16, 0),
    "CFB": ("block", 16, 0),  # CFB-128 (full-block segments), as SP 800-38A F.3.13
    "OFB": ("block", 16, 0),
    "CTR": ("block", 16, 0),  # the IV is the full 16-byte initial counter block (SP 800-38A F.5)
    "GCM": ("aead", 12, 16),
    "CCM": ("aead", 12, 16),
    "EAX": ("aead", 16, 16),
    "OCB": ("aead", 12, 16),
    "SIV": ("aead", 0, 16),  # deterministic (RFC 5297 with one AD component, no nonce)
}
SCENARIOS = {"block": ["keysetup", "encrypt", "decrypt"], "aead": ["keysetup", "encrypt", "decrypt", "reading"]}


class ProtocolError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def ciphers():
    out = []
    for bits in (128, 192, 256):
        for mode, (family, iv, tag) in MODES.items():
            key_bits = 2 * bits if mode == "SIV" else bits
            out.append((f"AES-{bits}-{mode}", family, key_bits, iv * 8, 128, tag * 8))
    return out


def lookup(name):
    for c in ciphers():
        if c[0].lower() == name.lower():
            return c
    raise ProtocolError("unknown-cipher", f"unknown cipher '{name}' (see `list`)")


def mode_of(name):
    return name.rsplit("-", 1)[1].upper()


def make(mode, key, iv, tag_len):
    """A fresh cipher object: PyCryptodome objects are single-use (one message per nonce)."""
    m = AES
    if mode == "ECB":
        return m.new(key, m.MODE_ECB)
    if mode == "CBC":
        return m.new(key, m.MODE_CBC, iv=iv)
    if mode == "CFB":
        return m.new(key, m.MODE_CFB, iv=iv, segment_size=128)
    if mode == "OFB":
        return m.new(key, m.MODE_OFB, iv=iv)
    if mode == "CTR":
        return m.new(key, m.MODE_CTR, nonce=b"", initial_value=iv)
    if mode == "SIV":
        return m.new(key, m.MODE_SIV, nonce=iv or None)
    const = {"GCM": m.MODE_GCM, "CCM": m.MODE_CCM, "EAX": m.MODE_EAX, "OCB": m.MODE_OCB}[mode]
    return m.new(key, const, nonce=iv, mac_len=tag_len)


def construct(cname, mode, key, iv, tag_len):
    """A cipher object for one operation; a nonce or tag size the library refuses is
    `unsupported` (part of the support matrix), not a malformed request."""
    try:
        return make(mode, key, iv, tag_len)
    except (ValueError, TypeError) as e:
        raise ProtocolError("unsupported", f"{cname}: {e}")


def check_key(name, key_bits, key):
    if len(key) * 8 != key_bits:
        raise ProtocolError("bad-argument", f"key: {name} needs {key_bits // 8} bytes, got {len(key)}")


def encrypt(name, key, iv, aad, pt, tag_len):
    cname, family, key_bits, _, _, _ = lookup(name)
    check_key(cname, key_bits, key)
    mode = mode_of(cname)
    c = construct(cname, mode, key, iv, tag_len)
    try:
        if family == "aead":
            c.update(aad)  # always one AD component (SIV: even an empty one, as Wycheproof)
            return c.encrypt_and_digest(pt)
        if aad:
            raise ProtocolError("bad-argument", f"aad: {cname} is not an AEAD")
        return c.encrypt(pt), b""
    except (ValueError, TypeError) as e:
        raise ProtocolError("bad-argument", f"{cname}: {e}")


def decrypt(name, key, iv, aad, ct, tag):
    cname, family, key_bits, _, _, _ = lookup(name)
    check_key(cname, key_bits, key)
    mode = mode_of(cname)
    c = construct(cname, mode, key, iv, len(tag) if family == "aead" else 0)
    if family != "aead":
        if aad or tag:
            raise ProtocolError("bad-argument", f"aad/tag: {cname} is not an AEAD")
        try:
            return c.decrypt(ct)
        except ValueError as e:
            raise ProtocolError("bad-argument", f"{cname}: {e}")
    try:
        c.update(aad)
        return c.decrypt_and_verify(ct, tag)
    except ValueError as e:
        if "MAC check failed" in str(e):
            raise ProtocolError("auth-failed", "tag does not verify")
        raise ProtocolError("bad-argument", f"{cname}: {e}")


class SplitMix64:
    """The protocol's generator for random keys, IVs and payloads (docs/engine-protocol.md)."""

    M = (1 << 64) - 1

    def __init__(self, seed):
        self.s = seed & self.M

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & self.M
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.M
        return z ^ (z >> 31)

    def bytes(self, n):
        out = bytearray()
        while len(out) < n:
            out += self.next().to_bytes(8, "little")
        return bytes(out[:n])


# ---- request parsing -------------------------------------------------------------------

def unescape(v):
    """Values are percent-encoded where they would contain space, '%' or control bytes."""
    if "%" not in v:
        return v
    out = bytearray()
    i = 0
    b = v.encode()
    while i < len(b):
        if b[i] == 0x25:
            try:
                out.append(int(b[i + 1:i + 3].decode(), 16))
            except (ValueError, UnicodeDecodeError):
                raise ProtocolError("bad-argument", f"bad percent escape in '{v[:40]}'")
            if i + 3 > len(b):
                raise ProtocolError("bad-argument", f"bad percent escape in '{v[:40]}'")
            i += 3
        else:
            out.append(b[i])
            i += 1
    return out.decode("utf-8", "replace")


def escape(v):
    return "".join(c if (c.isprintable() and c not in " %=") else "".join(f"%{b:02X}" for b in c.encode()) for c in v)


def parse_args(tokens, allowed, required):
    args = {}
    for t in tokens:
        if "=" not in t:
            raise ProtocolError("bad-argument", f"'{t[:40]}' is not name=value")
        k, v = t.split("=", 1)
        if k not in allowed:
            raise ProtocolError("bad-argument", f"unknown parameter '{k[:40]}' (allowed: {', '.join(sorted(allowed))})")
        if k in args:
            raise ProtocolError("bad-argument", f"parameter '{k}' given twice")
        args[k] = unescape(v)
    for k in required:
        if k not in args:
            raise ProtocolError("bad-argument", f"missing parameter '{k}'")
    return args


def hexarg(args, k):
    v = args.get(k, "")
    try:
        return bytes.fromhex(v)
    except ValueError:
        raise ProtocolError("bad-argument", f"{k}: not hex ('{v[:40]}')")


def intarg(args, k, lo, hi, default=None):
    v = args.get(k)
    if v is None:
        if default is None:
            raise ProtocolError("bad-argument", f"missing parameter '{k}'")
        return default
    try:
        n = int(v, 10)
    except ValueError:
        raise ProtocolError("bad-argument", f"{k}: '{v[:40]}' is not an integer")
    if not lo <= n <= hi:
        raise ProtocolError("bad-argument", f"{k}: {n} is outside {lo}..{hi}")
    return n


# ---- bench -----------------------------------------------------------------------------

def bench(args, emit):
    cname, family, key_bits, iv_bits, _, tag_bits = lookup(args["cipher"])
    mode = mode_of(cname)
    scenario = args["scenario"]
    if scenario not in SCENARIOS[family]:
        raise ProtocolError("unsupported", f"scenario '{scenario}' does not apply to {cname} ({', '.join(SCENARIOS[family])})")
    kiv = args["kiv"]
    if kiv not in ("ss", "sr", "rs", "rr"):
        raise ProtocolError("bad-argument", f"kiv: '{kiv}' is not one of ss, sr, rs, rr")
    random_key, random_iv = kiv[0] == "r", kiv[1] == "r"
    key = hexarg(args, "key")
    iv = hexarg(args, "iv")
    check_key(cname, key_bits, key)
    if len(iv) * 8 != iv_bits:
        raise ProtocolError("bad-argument", f"iv: {cname} needs {iv_bits // 8} bytes, got {len(iv)}")
    size_bits = intarg(args, "size-bits", 0, MAX_BENCH_BYTES * 8)
    reps = intarg(args, "reps", 1, 10**7)
    warmup = intarg(args, "warmup", 0, 10**7)
    min_ns = intarg(args, "min-sample-ns", 1, 10**12, 20000)
    seed = intarg(args, "seed", 0, (1 << 64) - 1)
    fixed_batch = None if args.get("batch", "auto") == "auto" else intarg(args, "batch", 1, MAX_BATCH)
    pattern = hexarg(args, "pattern") if "pattern" in args else b""
    rng = SplitMix64(seed)
    tag_len = tag_bits // 8

    nbytes = 4 * 1024 if scenario == "reading" else (size_bits + 7) // 8
    if mode in ("ECB", "CBC"):
        nbytes = -(-nbytes // 16) * 16  # whole blocks, no padding: the payload is rounded up
    payload = (pattern * (nbytes // len(pattern) + 1))[:nbytes] if pattern else rng.bytes(nbytes)

    state = {"key": key, "iv": iv}
    new = AES.new
    # Bind everything the timed call needs outside it; each closure is one operation.
    def prepare():
        k, v = state["key"], state["iv"]
        if scenario == "keysetup":
            if mode == "ECB":
                const = AES.MODE_ECB
                return lambda: new(k, const)
            return lambda: make(mode, k, v, tag_len)
        if scenario == "encrypt":
            buf = payload
            if family == "aead":
                return lambda: make(mode, k, v, tag_len).encrypt_and_digest(buf)
            return lambda: make(mode, k, v, tag_len).encrypt(buf)
        if scenario == "decrypt":
            if family == "aead":
                ct, tag = make(mode, k, v, tag_len).encrypt_and_digest(payload)
                return lambda: make(mode, k, v, tag_len).decrypt_and_verify(ct, tag)
            ct = make(mode, k, v, tag_len).encrypt(payload)
            return lambda: make(mode, k, v, tag_len).decrypt(ct)
        # reading: next device-counter value as nonce (big-endian in the last <= 8 bytes),
        # one 4-byte reading from the pool, encrypt + tag. The counter never repeats.
        n = len(v)
        w = min(n, 8)
        head = bytes(n - w)
        pool = payload
        ctr = state.setdefault("ctr", [0, 0])

        def one():
            ctr[0] += 1
            nonce = head + (ctr[0] & ((1 << (8 * w)) - 1)).to_bytes(w, "big") if n else b""
            p = ctr[1]
            ctr[1] = (p + 4) % len(pool)
            return make(mode, k, nonce, tag_len).encrypt_and_digest(pool[p:p + 4])
        return one

    clock = time.perf_counter_ns

    def time_batch(fn, batch):
        t0 = clock()
        for _ in range(batch):
            fn()
        return (clock() - t0) / batch

    try:
        fn = prepare()
        if fixed_batch is None:
            batch = 1
            while True:
                per = time_batch(fn, batch)
                if per * batch >= min_ns or batch >= MAX_BATCH:
                    batch = max(1, min(MAX_BATCH, -(-min_ns // max(per, 0.1)).__int__()))
                    break
                batch *= 2
                fn = prepare()
        else:
            batch = fixed_batch
        for i in range(warmup + reps):
            if random_key:
                state["key"] = rng.bytes(len(key))
            if random_iv:
                state["iv"] = rng.bytes(len(iv))
            fn = prepare()
            ns = time_batch(fn, batch)
            emit(f"sample rep={i} warmup={1 if i < warmup else 0} batch={batch} ns={ns:.3f}")
    except (ValueError, TypeError) as e:
        raise ProtocolError("cipher-error", f"{cname}: {e}")
    emit(f"end count={warmup + reps} batch={batch}")


# ---- main loop -------------------------------------------------------------------------

HELP = "hello, list, encrypt, decrypt, bench, quit"


def handle(line, emit):
    """Answer one request line; returns False after `quit`."""
    tokens = line.split(" ")
    if any(t == "" for t in tokens):
        raise ProtocolError("bad-request", "tokens are separated by single spaces")
    cmd, rest = tokens[0], tokens[1:]
    if cmd == "hello":
        a = parse_args(rest, {"protocol", "host"}, ["protocol"])
        if a["protocol"] != str(PROTOCOL):
            raise ProtocolError("version", f"this engine speaks protocol {PROTOCOL}, not {a['protocol'][:20]}")
        if IMPORT_ERROR:
            raise ProtocolError("unavailable", IMPORT_ERROR)
        res = time.get_clock_info("perf_counter").resolution * 1e9
        note = "times taken inside Python around a batch of calls (interpreter overhead included); each encrypt/decrypt creates a fresh cipher object (AES.new), so the key schedule is included"
        emit(
            f"ok protocol={PROTOCOL} engine={ENGINE} engine-version={ENGINE_VERSION} implementation=pycryptodome "
            f"library=pycryptodome library-version={escape(LIBRARY_VERSION)} language=Python "
            f"runtime={escape('Python ' + sys.version.split()[0])} timer=time.perf_counter_ns resolution-ns={res:g} "
            f"note={escape(note)}"
        )
    elif cmd == "list":
        parse_args(rest, set(), [])
        cs = ciphers()
        for name, family, key_bits, iv_bits, block_bits, tag_bits in cs:
            emit(
                f"cipher name={name} family={family} key-bits={key_bits} iv-bits={iv_bits} block-bits={block_bits} "
                f"tag-bits={tag_bits} scenarios={','.join(SCENARIOS[family])}"
            )
        emit(f"end count={len(cs)}")
    elif cmd == "encrypt":
        a = parse_args(rest, {"cipher", "key", "iv", "aad", "pt", "tag-bits"}, ["cipher", "key", "pt"])
        default_tag = lookup(a["cipher"])[5]
        tag_bits = intarg(a, "tag-bits", 0, 1024, default_tag or 0)
        if tag_bits % 8:
            raise ProtocolError("bad-argument", f"tag-bits: {tag_bits} is not a whole number of bytes")
        ct, tag = encrypt(a["cipher"], hexarg(a, "key"), hexarg(a, "iv"), hexarg(a, "aad"), hexarg(a, "pt"), tag_bits // 8)
        emit(f"ok ct={ct.hex()} tag={tag.hex()}")
    elif cmd == "decrypt":
        a = parse_args(rest, {"cipher", "key", "iv", "aad", "ct", "tag"}, ["cipher", "key", "ct"])
        pt = decrypt(a["cipher"], hexarg(a, "key"), hexarg(a, "iv"), hexarg(a, "aad"), hexarg(a, "ct"), hexarg(a, "tag"))
        emit(f"ok pt={pt.hex()}")
    elif cmd == "bench":
        allowed = {"cipher", "scenario", "kiv", "size-bits", "key", "iv", "seed", "reps", "warmup", "batch", "min-sample-ns", "pattern"}
        a = parse_args(rest, allowed, ["cipher", "scenario", "kiv", "size-bits", "key", "iv", "seed", "reps", "warmup"])
        bench(a, emit)
    elif cmd == "quit":
        parse_args(rest, set(), [])
        emit("ok bye")
        return False
    else:
        raise ProtocolError("unknown-command", f"unknown command '{cmd[:40]}' (known: {HELP})")
    return True


def serve(inp, out):
    def emit(s):
        data = (s + "\n").encode()
        if len(data) > MAX_LINE:
            raise ProtocolError("too-long", f"the answer would be {len(data)} bytes, over the {MAX_LINE}-byte line limit")
        out.write(data)
        out.flush()

    while True:
        raw = inp.readline(MAX_LINE + 1)
        if not raw:
            return 0
        if len(raw) > MAX_LINE:
            while raw and not raw.endswith(b"\n"):  # drop the rest of the long line
                raw = inp.readline(MAX_LINE)
            emit(f"err line-too-long requests are limited to {MAX_LINE} bytes")
            continue
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            emit("err bad-request line is not UTF-8")
            continue
        if not line.strip() or line.startswith("#"):
            continue  # blank lines and comments are ignored (handy for hand-typed sessions)
        try:
            if not handle(line, emit):
                return 0
        except ProtocolError as e:
            emit(f"err {e.code} {e.message}")
        except Exception as e:  # never die on one request: report and keep serving
            emit(f"err internal {type(e).__name__}: {str(e)[:200]}")


if __name__ == "__main__":
    sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer))
