#!/usr/bin/env python3
"""End-to-end probes of `lwcbench link` as an attacker and a careless operator would try it.

Each probe starts what it needs (mosquitto on 127.0.0.1, gateway and device processes of the
binary under test, a second MQTT client: Debian's mosquitto_pub / mosquitto_sub) and checks the
outcome from outside: frames seen on the broker, rows in the store, exit codes, stderr lines.
Nothing here trusts the code under test to report on itself.

    scripts/ci/link-probe.py [--bin target/release/lwcbench] [--ci] [--only NAME,...] [--list]

--ci bounds the sizes (fewer readings per device process) so the whole set runs in under a
minute (scripts/test.sh runs it so); every probe has its own time limit. Exit 0 when every probe passes, 1 otherwise; one line
per probe (`PASS name: …` / `FAIL name: …`) and a closing `N passed, N failed`.
Needs mosquitto and mosquitto-clients (scripts/setup.sh --test installs them), and for the
key-hierarchy probes the Python package cryptography (run it with .venv/bin/python).
"""
import argparse
import csv
import hashlib
import hmac
import json
import os
import shutil
import select
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MOSQUITTO = next((p for p in ("/usr/sbin/mosquitto", "/usr/bin/mosquitto") if os.path.exists(p)), None)
KEY_MAGIC = "lwcbench-link-master-key v1"  # docs/link.md, key file format
HEADER = 16  # docs/link.md: version 3, type, cipher, flags, device (4..8, BE), counter (8..16, BE)
VERSION = 3
TYPE_SENSOR, TYPE_VIDEO, TYPE_GOOSE = 1, 2, 5  # docs/link.md: the frame's type byte
TYPE_MODBUS_TO_SLAVE = 3  # docs/link.md "The hop protocol": master → slave
MAX_FRAME = 256 * 1024  # docs/link.md: a frame larger than 256 KiB is refused
STATE_MAGIC = "lwcbench-link-counters v2"  # docs/link.md, counter state file format


def fingerprint(master: bytes) -> str:
    """docs/link.md: HKDF-SHA256(salt "lwcbench-link v1", IKM = master key, info "lwcbench-link
    key id", L = 16), computed here with the standard library (RFC 5869), not by lwcbench."""
    prk = hmac.new(b"lwcbench-link v1", master, hashlib.sha256).digest()
    return hmac.new(prk, b"lwcbench-link key id" + b"\x01", hashlib.sha256).digest()[:16].hex()


class ProbeFailed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise ProbeFailed(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what, limit=10.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if proc.poll() is not None:
            raise ProbeFailed(f"{what} exited with {proc.returncode} before listening")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise ProbeFailed(f"{what} did not listen on {port} within {limit} s")


class Env:
    """One probe's temporary directory, its processes, and the binary under test."""

    def __init__(self, binary, ci):
        self.bin = binary
        self.ci = ci
        self.dir = Path(tempfile.mkdtemp(prefix="lwcbench-probe-"))
        self.procs = []
        self.port = None
        self.device_keys = {}
        # Sessions without --key-file keep their master key in LWCBENCH_KEY_DIR: this probe's own.
        os.environ["LWCBENCH_KEY_DIR"] = str(self.dir / "keys")

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def spawn(self, args, **kw):
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, **kw)
        self.procs.append(p)
        return p

    def run(self, args, timeout=60, **kw):
        """Run to completion with a time limit; a hang is a failure, not a wait."""
        try:
            return subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, **kw)
        except subprocess.TimeoutExpired:
            raise ProbeFailed(f"`{' '.join(map(str, args[:4]))} …` still running after {timeout} s (hang)")

    def mosquitto(self, extra=""):
        check(MOSQUITTO is not None, "mosquitto not installed (scripts/setup.sh --test installs it)")
        self.port = free_port()
        conf = self.dir / "mosquitto.conf"
        # No queue limit, so a backlog of any size waits for a persistent session.
        conf.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
            f"max_inflight_messages 1000\nmax_queued_messages 0\n{extra}"
        )
        p = self.spawn([MOSQUITTO, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, p, "mosquitto")
        return p

    @property
    def broker(self):
        return f"mqtt://127.0.0.1:{self.port}"

    def key(self, name="master.key"):
        """A new master key that has never sealed, with its empty counter state beside it
        (KEY.counters: the documented way to provision a key by hand)."""
        path = self.dir / name
        master = os.urandom(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"{KEY_MAGIC}\n{master.hex()}\n")
        fd = os.open(f"{path}.counters", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"{STATE_MAGIC}\nkey {fingerprint(master)}\n")
        return path

    def gateway(self, session, key, store, devices="1-2", stats=None, extra=()):
        args = [self.bin, "link", "gateway", "--broker", self.broker, "--session", session, "--key-file", str(key),
                "--devices", devices, "--store", str(store), *extra]
        if stats:
            args += ["--stats", str(stats), "--stats-every", "100ms"]
        p = self.spawn(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        t0 = time.monotonic()
        line = p.stdout.readline()  # blocks until `ready` or exit
        check(line.strip() == "ready",
              f"gateway not ready after {time.monotonic() - t0:.1f} s: stdout {line.strip()!r}, "
              f"exit {p.poll()}, stderr {last_line(p)!r}")
        return p

    def device_key(self, master, dev, protocol="sensor"):
        """The device key of (`master`, `protocol`, `dev`), provisioned on first use with
        `link provision` (a device holds only its own key, never the master)."""
        ident = (str(master), protocol, dev)
        if ident not in self.device_keys:
            out = self.dir / f"{Path(master).name}.{protocol}-{dev}.key"
            r = self.run([self.bin, "link", "provision", "--key-file", str(master), "--protocol", protocol,
                          "--device", str(dev), "--out", str(out)], timeout=30)
            check(r.returncode == 0, f"provisioning {protocol} device {dev} failed: {r.stderr.strip()[-300:]!r}")
            self.device_keys[ident] = out
        return self.device_keys[ident]

    def device(self, dev, session, key, state, messages, extra=(), timeout=120):
        """`link device` as `dev` with its device key: `key` is that device key, or the master
        it is provisioned from on first use; state None: the device key's own counter state
        (DEV.key.counters, written by provisioning)."""
        st = ["--counter-state", str(state)] if state is not None else []
        own = Path(key).read_text().startswith("lwcbench-link-device-key")
        dk = key if own else self.device_key(key, dev)
        return self.run([self.bin, "link", "device", "--id", str(dev), "--session", session, "--broker", self.broker,
                         "--key-file", str(dk), *st, "--messages", str(messages),
                         "--interval", "0", *extra], timeout=timeout)

    def sniffer(self, topic, out):
        """A second, foreign MQTT client recording every payload (hex) published on `topic`."""
        f = open(out, "w")
        # Line-buffered: the sniffer is stopped with SIGTERM, which would drop a stdio buffer.
        p = self.spawn(["stdbuf", "-oL", "mosquitto_sub", "-p", str(self.port), "-h", "127.0.0.1", "-q", "1", "-t", topic,
                        "-F", "%t %x"], stdout=f, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        return p


def last_line(p):
    if p.poll() is None:
        return ""
    err = p.stderr.read() if p.stderr else ""
    err = err.decode(errors="replace") if isinstance(err, bytes) else (err or "")
    lines = [line for line in err.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def rows(store, device=None):
    if not Path(store).exists():
        return 0
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
    try:
        if device is None:
            return con.execute("SELECT count(*) FROM readings").fetchone()[0]
        return con.execute("SELECT count(*) FROM readings WHERE device = ?", (device,)).fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def wait_rows(store, want, limit, proc=None):
    t0 = time.monotonic()
    n = 0
    while time.monotonic() - t0 < limit:
        n = rows(store)
        if n >= want:
            return n
        if proc is not None and proc.poll() is not None:
            return n
        time.sleep(0.2)
    return n


def read_frames(path):
    """Frames as hex, one per line (a capture file, or `mosquitto_sub -F '%t %x'` lines, whose
    topic then names the group); returns [(group, frame)]."""
    out = []
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        group = parts[0].split("/")[2] if len(parts) == 2 and parts[0].count("/") >= 3 else str(path)
        try:
            frame = bytes.fromhex(parts[-1])
        except ValueError:
            continue
        if len(frame) >= HEADER:
            out.append((group, frame))
    return out


def nonce_reuse(frames):
    """(type, cipher, device, counter) sealed by two different sealers (groups: processes or
    sessions), or twice with different bytes by one: a reused (key, nonce) under one key (the
    key hierarchy gives every (type, device, cipher) its own key). Two runs that re-seal the same
    plaintext produce identical frames, so bytes alone do not tell."""
    first, reused = {}, set()
    for group, frame in frames:
        ident = (frame[1], frame[2], int.from_bytes(frame[4:8], "big"), int.from_bytes(frame[8:16], "big"))
        if ident in first and (first[ident][0] != group or first[ident][1] != frame):
            reused.add(ident)
        first.setdefault(ident, (group, frame))
    return first, reused


def one_error_line(res, *names):
    """A refused input: non-zero exit, no panic, one `error:` line naming each of `names`."""
    err = res.stderr.strip()
    check(res.returncode != 0, f"exit 0 (stderr {err[-200:]!r})")
    check("panicked" not in err and "RUST_BACKTRACE" not in err, f"panic: {err[-300:]!r}")
    lines = [line for line in err.splitlines() if line.strip()]
    check(len(lines) == 1 and lines[0].startswith("error:"), f"not one error line: {err[-300:]!r}")
    for n in names:
        check(n in lines[0], f"the error does not name {n!r}: {lines[0]!r}")
    return lines[0]


# ---- High ---------------------------------------------------------------------------------------

def probe_oversized(env, retained):
    """One oversized message (no key needed) must be counted and acknowledged, never stop the
    gateway; a retained one must not block a brand-new session either."""
    env.mosquitto()
    key = env.key()
    session = "big"
    big = env.dir / "big.bin"
    hdr = bytes([VERSION, TYPE_SENSOR, 1, 0]) + (1).to_bytes(4, "big") + (0).to_bytes(8, "big")
    big.write_bytes(hdr + os.urandom(300 * 1024))
    topic = f"lwcbench/link/{session}/1"
    pub = ["mosquitto_pub", "-p", str(env.port), "-h", "127.0.0.1", "-q", "1", "-t", topic, "-f", str(big)]
    if retained:
        check(env.run(pub + ["-r"], timeout=20).returncode == 0, "mosquitto_pub failed")
    store = env.dir / "g.db"
    gw = env.gateway(session, key, store, stats=env.dir / "stats.jsonl")
    if not retained:
        check(env.run(pub, timeout=20).returncode == 0, "mosquitto_pub failed")
    n = 20
    dev = env.device(1, session, key, None, n)
    check(dev.returncode == 0, f"device failed: {dev.stderr.strip()[-200:]}")
    got = wait_rows(store, n, 20, gw)
    check(gw.poll() is None, f"gateway exited ({gw.returncode}): {last_line(gw)!r}")
    check(got == n, f"{got} of {n} valid readings stored after the oversized message")
    gw.send_signal(signal.SIGTERM)
    gw.wait(timeout=20)
    final = [json.loads(x) for x in (env.dir / "stats.jsonl").read_text().splitlines() if x.strip()][-1]
    check(final.get("refused", 0) >= 1, f"the oversized message was not counted as refused: {final}")
    # The restart must come up: nothing oversized is left to redeliver.
    gw2 = env.gateway(session, key, store)
    gw2.send_signal(signal.SIGTERM)
    gw2.wait(timeout=20)
    return f"{n}/{n} stored after a 300 KiB {'retained ' if retained else ''}publish, refused {final.get('refused')}"


def probe_backlog_restart(env):
    """A gateway SIGKILLed with a large backlog in flight must come up again and store every
    reading exactly once."""
    env.mosquitto()
    key = env.key()
    session = "backlog"
    store = env.dir / "g.db"
    n = 100_000
    # A first start creates the persistent session the backlog queues for.
    gw = env.gateway(session, key, store, devices="1")
    gw.send_signal(signal.SIGTERM)
    gw.wait(timeout=20)
    dev = env.device(1, session, key, None, n, timeout=300)
    check(dev.returncode == 0, f"device failed: {dev.stderr.strip()[-200:]}")
    # Three kills 0.5 s after start, each with tens of thousands of frames delivered but not yet
    # acknowledged: every restart must come up (the broker re-sends them all at CONNACK).
    for _ in range(3):
        gw = env.gateway(session, key, store, devices="1")  # fails here when the event loop blocks
        time.sleep(0.5)
        gw.kill()
        gw.wait()
    before = rows(store)
    gw = env.gateway(session, key, store, devices="1")
    got = wait_rows(store, n, 120, gw)
    check(gw.poll() is None, f"restarted gateway exited ({gw.returncode}): {last_line(gw)!r}")
    check(got == n, f"{got} of {n} stored after the restart ({before} before it)")
    gw.send_signal(signal.SIGTERM)
    gw.wait(timeout=30)
    return f"3 SIGKILLs with a backlog of {n}: {before} stored before the last restart, {got}/{n} after"


def probe_shared_counter_state(env):
    """One counter authority per (key, device): two device processes with their own keys at once
    (ids 1 and 2), then two with one device key at once (1 and 1: the second is refused, the
    device being in use), then device 1 alone (a restart), and device 2's key given device 1's
    state (refused: a key takes only its own state). No two frames under one (key, nonce):
    each process captures what it sealed; the broker's copy is checked too. (Before the key
    hierarchy this shared one state file of the master between processes; device keys now
    each have their own state, so the rule tested is the lease and the own-state rule.)"""
    env.mosquitto()
    key = env.key()
    session = "shared"
    sniff = env.dir / "sniffed.txt"
    sub = env.sniffer(f"lwcbench/link/{session}/#", sniff)
    n = 300 if env.ci else 2000
    refused, captures = [], []

    def device_args(dev):
        cap = env.dir / f"capture-{len(captures)}.hex"
        captures.append(cap)
        return [env.bin, "link", "device", "--id", str(dev), "--session", session, "--broker", env.broker,
                "--key-file", str(env.device_key(key, dev)), "--messages", str(n), "--interval", "0",
                "--counter-block", "16", "--capture", str(cap)]

    for ids in ((1, 2), (1, 1), (1,)):
        procs = [env.spawn(device_args(i), text=True) for i in ids]
        codes = []
        for p in procs:
            try:
                _, err = p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                raise ProbeFailed("a device process hung")
            codes.append(p.returncode)
            if p.returncode != 0:
                refused.append(err.strip().splitlines()[-1] if err.strip() else f"exit {p.returncode}")
        if ids == (1, 1):
            # The second may start after the first finished; then both run, one after the other.
            check(0 in codes, f"neither twin ran: {refused[-2:]}")
        else:
            check(all(c == 0 for c in codes), f"devices {ids} failed: {refused[-2:]}")
    for r in refused:
        check(r.startswith("error:") and "device 1 is in use" in r, f"a refused device said {r!r}")
    wrong = env.run([env.bin, "link", "device", "--session", session, "--broker", env.broker, "--key-file",
                     str(env.device_key(key, 2)), "--counter-state", f"{env.device_key(key, 1)}.counters",
                     "--messages", "1"])
    one_error_line(wrong, "counter state")
    time.sleep(1.0)
    sub.terminate()
    sub.wait(timeout=5)
    frames = [f for cap in captures if cap.exists() for f in read_frames(cap)]
    seen, reused = nonce_reuse(frames)
    check(not reused, f"{len(reused)} (key, nonce) pairs sealed by two processes, e.g. {sorted(reused)[:3]}")
    _, reused_wire = nonce_reuse([("broker", f) for _, f in read_frames(sniff)])
    check(not reused_wire, f"{len(reused_wire)} (key, nonce) pairs seen twice with different bytes on the broker")
    check(len(seen) >= 3 * n, f"only {len(seen)} frames sealed")
    return (f"{len(seen)} frames from {len(captures)} processes, 0 reused nonces; twin refused: {len(refused)}; "
            "another device's state refused")


def probe_key_reuse_across_runs(env):
    """Two runs with one key file and different output directories must not reuse a counter."""
    env.mosquitto()
    key = env.key()
    sniff = env.dir / "frames.hex"
    sub = env.sniffer("lwcbench/link/#", sniff)
    for out in ("o1", "o2"):
        res = env.run([env.bin, "link", "--broker", env.broker, "--key-file", str(key), "--devices", "4",
                       "--messages", "10", "--interval", "1ms", "-o", str(env.dir / out)], timeout=120)
        check(res.returncode == 0, f"run {out} failed: {res.stderr.strip()[-300:]}")
    time.sleep(1.0)
    sub.terminate()
    sub.wait(timeout=5)
    seen, reused = nonce_reuse(read_frames(sniff))
    check(len(seen) >= 40, f"only {len(seen)} frames seen for 2 runs × 4 devices × 10 readings")
    check(not reused, f"{len(reused)} (key, nonce) pairs sealed twice across the two runs")
    return f"{len(seen)} frames over two runs with one key, 0 reused nonces"


# ---- Medium and Low -----------------------------------------------------------------------------

def probe_store_locked(env):
    """A store that fails under the gateway (another process holds the SQLite write lock for
    longer than its busy timeout) stops the gateway with a non-zero exit and a line saying so."""
    env.mosquitto()
    key = env.key()
    store = env.dir / "g.db"
    gw = env.gateway("lock", key, store)
    holder = sqlite3.connect(store, timeout=1, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        env.device(1, "lock", key, None, 5)
        try:
            gw.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise ProbeFailed("the gateway is still running 30 s after its store failed")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = last_line(gw)
    check(gw.returncode != 0, f"gateway exited 0 after a store failure ({err!r})")
    check("store" in err.lower(), f"the gateway's last line does not name the store: {err!r}")
    return f"exit {gw.returncode}: {err[:120]}"


def probe_schema(env):
    """An existing `readings` table without the unique key (key_ref, device, counter) is refused,
    not written into: one without a run column, an older lwcbench's keyed by run (the message
    says what to do), and one with every column but no unique key."""
    key = env.key()
    lines = []
    for i, cols in enumerate(("device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB",
                              "run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB, "
                              "UNIQUE (run, device, counter)",
                              "key_ref INTEGER, run TEXT, device INTEGER, counter INTEGER, cipher INTEGER, payload BLOB")):
        store = env.dir / f"foreign{i}.db"
        con = sqlite3.connect(store)
        con.execute(f"CREATE TABLE readings ({cols})")
        con.commit()
        con.close()
        res = env.run([env.bin, "link", "--key-file", str(key), "--store", str(store), "--devices", "2",
                       "--messages", "3", "-o", str(env.dir / f"out{i}")], timeout=60)
        lines.append(one_error_line(res, str(store)))
        check(rows(store) == 0, f"{rows(store)} rows written into the refused store")
    check("key_ref" in lines[1] and "new store file" in lines[1], f"the older table's fix is not named: {lines[1]!r}")
    check("UNIQUE" in lines[2] or "unique" in lines[2], f"the missing unique key is not named: {lines[2]!r}")
    return "refused: " + lines[1][:120]


def probe_rate_bounds(env):
    out = []
    for opt in (["--rate", "1e-300"], ["--rate", "1e-12"], ["--rate", "nan"], ["--rate=-5"]):
        res = env.run([env.bin, "link", *opt, "-o", str(env.dir / "r")], timeout=30)
        out.append(one_error_line(res, "--rate"))
    res = env.run([env.bin, "link", "overload", "--rates", "1e-300", "-o", str(env.dir / "ov")], timeout=30)
    one_error_line(res, "--rates")
    check(not (env.dir / "ov").exists(), "overload left a half-created --out")
    return f"{len(out) + 1} bad rates refused"


def probe_window_memory(env):
    res = env.run([env.bin, "link", "--devices", "100000", "--window", "1048576", "--messages", "1",
                   "-o", str(env.dir / "w")], timeout=30)
    one_error_line(res, "--window")
    return "refused: " + res.stderr.strip()[:120]


def probe_key_file_types(env):
    fifo = env.dir / "fifo"
    os.mkfifo(fifo, 0o600)
    d = env.dir / "dir"
    d.mkdir(mode=0o700)
    for path in (fifo, d):
        res = env.run([env.bin, "link", "--key-file", str(path), "--messages", "1", "-o", str(env.dir / "k")], timeout=15)
        line = one_error_line(res, "--key-file")
        check("permission" not in line.lower(), f"{path.name}: reported as a permissions problem: {line!r}")
    return "FIFO and directory refused at once"


def probe_session_names(env):
    env.mosquitto()
    key = env.key()
    for bad in ("", "a/b", "../../etc", "#", "+"):
        res = env.device(1, bad, key, None, 1, timeout=15)
        one_error_line(res, "--session")
    return "5 bad session names refused by the device"


def probe_counter_state_lines(env):
    """A counter-state file with two lines for one device, or a value beyond the counter's
    range, is refused with a line naming the file (a valid file is made first by a device)."""
    env.mosquitto()
    key = env.key()
    state = Path(f"{env.device_key(key, 1)}.counters")
    res = env.device(1, "s", key, None, 3)
    check(res.returncode == 0 and state.exists(), f"device failed: {res.stderr.strip()[-200:]}")
    good = state.read_text()
    lines = good.splitlines()
    dev_lines = [i for i, line in enumerate(lines) if line.split()[:1] == ["1"]]
    check(len(dev_lines) == 1, f"expected one line for device 1 in {lines}")
    i = dev_lines[0]
    variants = {
        "dup": lines + ["1 0"],
        "huge": lines[:i] + [f"1 {2**63 + 5}"] + lines[i + 1:],
    }
    for name, text in variants.items():
        state.write_text("\n".join(text) + "\n")
        res = env.device(1, "s", key, None, 1, timeout=15)
        one_error_line(res, str(state), "line")
    state.write_text(good)
    return "duplicate and out-of-range counter lines refused"


def probe_store_secrets(env):
    key = env.key()
    port = free_port()  # nothing listens: the connection fails, and the error must not leak
    for url in (f"postgres://u@127.0.0.1:{port}/db?user=u&password=hunter2",
                f"postgres://u:hunter2@ss@127.0.0.1:{port}/db"):
        res = env.run([env.bin, "link", "--key-file", str(key), "--store", url, "--messages", "1",
                       "-o", str(env.dir / "p")], timeout=30)
        check(res.returncode != 0, "exit 0 with an unreachable store")
        check("hunter2" not in res.stderr and "ss@" not in res.stderr.replace("@127", ""),
              f"the password leaks: {res.stderr.strip()[-200:]!r}")
    res = env.run([env.bin, "link", "--key-file", str(key), "--store", "x\n# Injected\n<b>x</b>", "--messages", "1",
                   "-o", str(env.dir / "inj")], timeout=30)
    one_error_line(res, "--store")
    return "no password in errors; a --store with a newline refused"


def probe_broker_urls(env):
    for url in ("mqtt://[::1]garbage", "mqtt://127.0.0.1:+18883", "mqtt://127.0.0.1:99999"):
        res = env.run([env.bin, "link", "--broker", url, "--messages", "1", "-o", str(env.dir / "b")], timeout=15)
        line = one_error_line(res, "--broker")
        check("reach" not in line and "no answer" not in line, f"{url}: parsed and tried instead of refused: {line!r}")
    return "3 malformed broker URLs refused"


def probe_failpoint_force(env):
    """A disk-full during `link --force` leaves the previous complete run (docs/security.md)."""
    out = env.dir / "run"
    base = [env.bin, "link", "--devices", "2", "--messages", "3", "-o", str(out)]
    res = env.run(base, timeout=120)
    check(res.returncode == 0, f"first run failed: {res.stderr.strip()[-200:]}")
    before = sorted(p.name for p in out.iterdir())
    run_json = (out / "run.json").read_bytes()
    res = env.run(base + ["--force"], timeout=120, env={**os.environ, "LWCBENCH_FAILPOINT": "1:enospc"})
    check(res.returncode != 0, "the failpoint did not fail the run")
    check(sorted(p.name for p in out.iterdir()) == before and (out / "run.json").read_bytes() == run_json,
          "the previous run was changed by a failed --force")
    res = env.run(base + ["--force"], timeout=120)
    check(res.returncode == 0, f"the next --force failed: {res.stderr.strip()[-200:]}")
    return "failed --force left the previous run whole; the next --force succeeded"


def probe_two_sessions_one_store(env):
    key1, key2 = env.key("k1"), env.key("k2")
    store = env.dir / "shared.db"
    for i, k in ((1, key1), (2, key2)):
        res = env.run([env.bin, "link", "--key-file", str(k), "--store", str(store), "--devices", "4", "--messages",
                       "10", "-o", str(env.dir / f"s{i}")], timeout=120)
        check(res.returncode == 0 or "error:" in res.stderr, f"session {i}: exit {res.returncode} without an error line")
        if res.returncode == 0:
            check(rows(store) == 40 * i, f"session {i} exit 0 but the store holds {rows(store)} rows, not {40 * i}")
    return f"the store holds {rows(store)} rows after two sessions"


def probe_shared_gateways(env):
    """Two `link gateway --shared g` members on one SQLite file: every reading stored exactly
    once, each member storing a share (an ordinary second subscriber would see every frame)."""
    env.mosquitto()
    key = env.key()
    session, store = "shared", env.dir / "s.db"
    stats = [env.dir / "a.jsonl", env.dir / "b.jsonl"]
    # Default window: however far one member lags, the store's unique key decides
    # (docs/link.md "Members race").
    gws = [env.gateway(session, key, store, devices="1", stats=st, extra=("--shared", "g", "--member", m))
           for m, st in zip("ab", stats)]
    n = 2000 if env.ci else 20000
    dev = env.device(1, session, key, None, n, timeout=120)
    check(dev.returncode == 0, f"device failed: {dev.stderr.strip()[-200:]}")
    got = wait_rows(store, n, 60)
    for gw in gws:
        gw.send_signal(signal.SIGTERM)
        gw.wait(timeout=30)
    final = [json.loads(st.read_text().splitlines()[-1]) for st in stats]
    check(got == n, f"{got} of {n} readings stored; members' final counts {final}")
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    distinct = con.execute("SELECT count(*) FROM (SELECT DISTINCT device, counter FROM readings)").fetchone()[0]
    con.close()
    check(distinct == n, f"{n} rows but {distinct} distinct (device, counter)")
    stored = [f.get("stored", 0) for f in final]
    check(all(f.get("final") for f in final), f"a member did not write its final line: {final}")
    check(sum(stored) == n and min(stored) > 0, f"members stored {stored} of {n}")
    return f"{n} readings stored once, members stored {stored[0]} + {stored[1]}"


def probe_capture_non_utf8(env):
    """One non-UTF-8 byte in a durable device's capture file: the restart either re-sends the
    intact frames or stops with a line naming the file; it never re-sends nothing silently."""
    env.mosquitto()
    key = env.key()
    cap, state, stats = env.dir / "cap.hex", None, env.dir / "stats.json"
    durable = ["--capture", str(cap), "--durable", "--stats", str(stats)]
    res = env.device(1, "dur", key, state, 10, extra=durable, timeout=60)
    check(res.returncode == 0, f"durable device failed: {res.stderr.strip()[-200:]}")
    lines = cap.read_bytes().split(b"\n")
    check(len([x for x in lines if x]) == 10, f"expected 10 captured frames, found {len(lines)}")
    lines[4] = lines[4][:6] + b"\xff" + lines[4][7:]  # one byte of frame 5 becomes invalid UTF-8
    cap.write_bytes(b"\n".join(lines))
    stats.unlink(missing_ok=True)
    res = env.device(1, "dur", key, state, 1, extra=durable, timeout=60)
    if res.returncode != 0:
        line = one_error_line(res, str(cap))
        return f"refused: {line[:120]}"
    st = json.loads(stats.read_text())
    check(st.get("resent_on_start", 0) >= 9, f"the restart re-sent {st.get('resent_on_start')} of 9 intact frames")
    return f"restart re-sent {st['resent_on_start']} intact frames"


def probe_frame_too_large(env):
    """A reading whose frame would exceed 256 KiB is refused before anything is sent, as such."""
    wide = env.dir / "wide.csv"
    cols = 70_000  # float32 each: 280,000 bytes of plaintext
    wide.write_text(",".join(f"c{i}" for i in range(cols)) + "\n" + ",".join("1" for _ in range(cols)) + "\n")
    res = env.run([env.bin, "link", "--dataset", str(wide), "--devices", "1", "--messages", "1",
                   "-o", str(env.dir / "w")], timeout=60)
    line = one_error_line(res)
    check("stall" not in line, f"reported as a stall: {line!r}")
    check("256" in line or "too large" in line.lower(), f"the error does not say the frame is too large: {line!r}")
    return f"refused: {line[:120]}"


def probe_stats_unwritable(env):
    """An unwritable --stats fails the gateway before it says `ready`."""
    env.mosquitto()
    key = env.key()
    res = env.run([env.bin, "link", "gateway", "--broker", env.broker, "--session", "s", "--key-file", str(key),
                   "--devices", "1", "--store", str(env.dir / "g.db"), "--stats", str(env.dir / "no/such/dir/s.jsonl")],
                  timeout=20)
    check("ready" not in res.stdout, "the gateway said ready with an unwritable --stats")
    one_error_line(res, "--stats")
    return "refused before ready"


def probe_store_read_only(env):
    """A store on a read-only file system: the error names the path and says why."""
    ro = env.dir / "ro"
    ro.mkdir()
    mounted = False
    if os.geteuid() == 0:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)]).returncode == 0
    if not mounted:
        ro.chmod(0o555)
    try:
        store = ro / "g.db"
        res = env.run([env.bin, "link", "--store", str(store), "--devices", "1", "--messages", "1",
                       "-o", str(env.dir / "o")], timeout=30)
        line = one_error_line(res, str(store))
        check(any(w in line.lower() for w in ("read-only", "not writable", "permission")),
              f"the error does not say why: {line!r}")
    finally:
        if mounted:
            subprocess.run(["umount", str(ro)])
    return f"refused: {line[:140]}"


def postgres(env):
    """A throw-away PostgreSQL on 127.0.0.1 (as the postgres account when root); returns the URL."""
    bins = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
    check(bins, "PostgreSQL not installed (scripts/setup.sh --test installs it)")
    pgdir = env.dir / "pg"
    pgdir.mkdir()
    kw = {}
    if os.geteuid() == 0:
        env.dir.chmod(0o711)  # the postgres account must reach its directory
        shutil.chown(pgdir, "postgres", "postgres")
        kw = {"user": "postgres", "group": "postgres"}
    data = pgdir / "data"
    r = subprocess.run([bins[-1] / "initdb", "-U", "postgres", "--auth=trust", "-E", "UTF8", "-D", str(data)],
                       capture_output=True, text=True, **kw)
    check(r.returncode == 0, f"initdb failed: {r.stderr.strip()[-200:]}")
    port = free_port()
    p = env.spawn([bins[-1] / "postgres", "-D", str(data), "-p", str(port), "-c", "listen_addresses=127.0.0.1",
                   "-k", str(pgdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    wait_port(port, p, "postgres", limit=30)
    time.sleep(1.0)  # the port answers a moment before sessions are accepted
    return port


def probe_postgres_errors(env):
    """With a reachable server: a missing database is named in the error, and a password in the
    URL reaches no output file."""
    port = postgres(env)
    key = env.key()
    res = env.run([env.bin, "link", "--key-file", str(key), "--store", f"postgres://postgres@127.0.0.1:{port}/nosuchdb",
                   "--devices", "1", "--messages", "1", "-o", str(env.dir / "nodb")], timeout=60)
    line = one_error_line(res, "--store")
    check("nosuchdb" in line and "db error" != line.split(":")[-1].strip(), f"the error does not say what is missing: {line!r}")
    out = env.dir / "ok"
    url = f"postgres://postgres:hunter2@127.0.0.1:{port}/postgres?password=hunter2"
    res = env.run([env.bin, "link", "--key-file", str(key), "--store", url, "--devices", "2", "--messages", "3",
                   "-o", str(out)], timeout=120)
    check(res.returncode == 0, f"run with a reachable PostgreSQL failed: {res.stderr.strip()[-200:]}")
    check("hunter2" not in res.stdout + res.stderr, "the password is printed")
    leaked = [f.name for f in out.rglob("*") if f.is_file() and b"hunter2" in f.read_bytes()]
    check(not leaked, f"the password is written into {leaked}")
    return "missing database named; no password in output"


# ---- One counter authority per key (issue 36, items 1 and 3) -----------------------------------
MODBUS_DEVICE = 0x4D420000  # docs/link.md: proxy pair 0, master → slave; slave → master is one more


def state_lines(path):
    """DEVICE -> NEXT of a counter state file (docs/link.md, "Counter persistence rule")."""
    lines = Path(path).read_text().splitlines()
    check(lines[:1] == [STATE_MAGIC], f"{path}: not a counter state file")
    return {int(d): int(n) for d, n in (line.split() for line in lines[2:] if line.strip())}


class HopTap:
    """A TCP relay between the two proxies that records every hop record (2-byte length +
    frame, docs/link.md "Modbus/TCP bump-in-the-wire") in both directions: the wire itself."""

    def __init__(self, upstream):
        self.upstream = upstream
        self.frames = []
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                a, _ = self.sock.accept()
            except OSError:
                return
            b = socket.create_connection(("127.0.0.1", self.upstream))
            for src, dst in ((a, b), (b, a)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src, dst):
        buf = b""
        try:
            while True:
                chunk = src.recv(65536)
                if not chunk:
                    break
                dst.sendall(chunk)
                buf += chunk
                while len(buf) >= 2 and len(buf) >= 2 + int.from_bytes(buf[:2], "big"):
                    n = int.from_bytes(buf[:2], "big")
                    with self.lock:
                        self.frames.append(("modbus-hop", buf[2:2 + n]))
                    buf = buf[2 + n:]
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.sock.close()


def modbus_polls(port, n):
    """`n` FC 3 reads through the master-side proxy; returns how many were answered."""
    ok = 0
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        for tid in range(n):
            s.sendall(tid.to_bytes(2, "big") + b"\x00\x00\x00\x06\x01\x03\x00\x00\x00\x02")
            h = recv_or_none(s, 7)
            if h is None or recv_or_none(s, int.from_bytes(h[4:6], "big") - 1) is None:
                break
            ok += int.from_bytes(h[:2], "big") == tid
    return ok


def start_proxy(env, args):
    p = env.spawn([env.bin, "link", "modbus-proxy", "--listen", "127.0.0.1:0", *args], text=True)
    line = p.stdout.readline()
    check("listening on" in line, f"modbus-proxy did not start: {line.strip()!r} {last_line(p)!r}")
    return p, int(line.split("listening on ")[1].split(",")[0].rsplit(":", 1)[1])


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        raise ProbeFailed("a process did not stop on SIGTERM")


def probe_every_sealer_one_key(env):
    """Every sealer under one master key — `link modbus`, a session, video, GOOSE where root can
    run it (the master's holders, on the master's counter state) and `link device`, the Modbus
    proxy pair (each on its provisioned device key and that key's state) — first one after
    another, then two at once: no (type, cipher, device, counter) twice on the wire (the broker
    and the Modbus hop, sniffed by foreign clients); a provisioned key's counters continue above
    everything the master's holder sealed as that device (read off the state file); the
    master's holder refuses to seal as a provisioned device; a second sealer of a device in use
    and a fresh state for a device key are refused. (Before the key hierarchy every sealer held
    the master; the rule is now one counter authority per (key, device).)"""
    env.mosquitto()
    sniff = env.dir / "sniffed.txt"
    sub = env.sniffer("lwcbench/link/#", sniff)
    m = 20 if env.ci else 200
    # 1. `link modbus` makes the key (--key-file, outside its results) and seals as the proxy
    # pair's devices.
    run = env.dir / "modbus-run"
    key = env.dir / "master.key"
    r = env.run([env.bin, "link", "modbus", "--cipher", "Ascon-AEAD128", "--polls", str(m), "--interval", "1ms",
                 "-o", str(run), "--key-file", str(key)], timeout=120)
    check(r.returncode == 0, f"link modbus failed: {r.stderr.strip()[-300:]!r}")
    state = Path(f"{key}.counters")
    after_modbus = state_lines(state)
    check(after_modbus.get(MODBUS_DEVICE, 0) > 0, f"link modbus recorded no counters: {after_modbus}")
    # 2. The proxy pair's own key: its state continues the master's counters of the pair.
    pair = env.device_key(key, 0, "modbus")
    pair_start = state_lines(f"{pair}.counters")
    check(pair_start.get(MODBUS_DEVICE, 0) > after_modbus[MODBUS_DEVICE],
          f"the pair's key starts at {pair_start} at or below {after_modbus[MODBUS_DEVICE]} that `link modbus` used")
    fresh = env.dir / "fresh.counters"
    bad = env.run([env.bin, "link", "modbus-proxy", "--side", "master", "--listen", "127.0.0.1:0", "--peer",
                   "127.0.0.1:1", "--key-file", str(pair), "--counter-state", str(fresh)])
    one_error_line(bad, "counter state")
    check(not fresh.exists(), "a fresh counter state was created for a device key")
    slave = CountingSlave(4)
    sp, sport = start_proxy(env, ["--side", "slave", "--peer", f"127.0.0.1:{slave.port}", "--key-file", str(pair)])
    tap = HopTap(sport)
    mp, mport = start_proxy(env, ["--side", "master", "--peer", f"127.0.0.1:{tap.port}", "--key-file", str(pair)])
    check(modbus_polls(mport, m) == m, "polls through the proxy pair were not all answered")
    stop(mp)
    stop(sp)
    # 2b. `link modbus` on the master now seals as a provisioned pair: refused.
    # (`link modbus` prints its progress line first: the refusal is its last line)
    again = env.run([env.bin, "link", "modbus", "--polls", "5", "-o", str(run), "--force", "--key-file", str(key)],
                    timeout=120)
    line = (again.stderr.strip().splitlines() or [""])[-1]
    check(again.returncode != 0 and line.startswith("error:") and "modbus device 0 is provisioned" in line,
          f"link modbus as the provisioned pair: exit {again.returncode}, {line!r}")
    # 3. A session (devices 0..3), then `link device` as device 1 on its own key (continues).
    r = env.run([env.bin, "link", "--key-file", str(key), "--broker", env.broker, "--devices", "4", "--messages",
                 str(m), "--interval", "1ms", "--out", str(env.dir / "s1")], timeout=180)
    check(r.returncode == 0, f"session failed: {r.stderr.strip()[-300:]!r}")
    used = state_lines(state)
    dev1 = env.device_key(key, 1)
    check(state_lines(f"{dev1}.counters").get(1, 0) > used.get(1, 0),
          f"device 1's key starts at or below the session's counters ({used.get(1)})")
    r = env.run([env.bin, "link", "device", "--session", "dev", "--broker", env.broker, "--key-file", str(dev1),
                 "--messages", str(m), "--interval", "0"])
    check(r.returncode == 0, f"link device failed: {r.stderr.strip()[-300:]!r}")
    r = env.run([env.bin, "link", "device", "--session", "dev", "--broker", env.broker, "--key-file", str(dev1),
                 "--counter-state", str(fresh), "--messages", "1"])
    one_error_line(r, "counter state")
    # 4. Video on the master.
    r = env.run([env.bin, "link", "--video", "--key-file", str(key), "--broker", env.broker, "--frames", "3",
                 "--out", str(env.dir / "v1")], timeout=180)
    check(r.returncode == 0, f"video session failed: {r.stderr.strip()[-300:]!r}")
    # 5. GOOSE (root and network namespaces) on the master.
    goose = "skipped (needs root)"
    if os.geteuid() == 0 and shutil.which("ip"):
        before = state_lines(state)
        r = env.run([env.bin, "link", "goose", "--key-file", str(key), "--cipher", "Ascon-AEAD128", "--size", "160",
                     "--frames", "20", "--out", str(env.dir / "g1")], timeout=180)
        check(r.returncode == 0, f"link goose failed: {r.stderr.strip()[-300:]!r}")
        after = state_lines(state)
        check(all(after.get(d, 0) >= n for d, n in before.items()), f"goose moved a counter back: {before} → {after}")
        goose = "ran"
    # 6. A session as devices 0..3 is refused now that device 1 has its own key. Two at once:
    #    `link device` as device 40 (slow), its twin (refused) and a session as device 0 (runs).
    r = env.run([env.bin, "link", "--key-file", str(key), "--broker", env.broker, "--devices", "4", "--messages",
                 "1", "--out", str(env.dir / "s-refused")], timeout=60)
    line = one_error_line(r)
    check("device 1 is provisioned" in line, f"a session as provisioned device 1: {line!r}")
    dev40 = env.device_key(key, 40)
    slow = env.spawn([env.bin, "link", "device", "--session", "dev2", "--broker", env.broker, "--key-file",
                      str(dev40), "--messages", str(m), "--interval", "100ms"], text=True)
    time.sleep(1.0)
    same = env.run([env.bin, "link", "device", "--session", "dev2", "--broker", env.broker, "--key-file", str(dev40),
                    "--messages", str(m), "--interval", "0"])
    other = env.run([env.bin, "link", "--key-file", str(key), "--broker", env.broker, "--devices", "1", "--messages",
                     str(m), "--interval", "1ms", "--out", str(env.dir / "s2")], timeout=180)
    try:
        _, err = slow.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        raise ProbeFailed("the slow device hung")
    check(slow.returncode == 0, f"the slow device failed: {err.strip()[-300:]!r}")
    check(same.returncode != 0 and "device 40 is in use" in same.stderr,
          f"a second sealer of device 40 ran: exit {same.returncode}, {same.stderr.strip()[-200:]!r}")
    check(other.returncode == 0, f"a session as device 0 beside it failed: {other.stderr.strip()[-200:]!r}")
    time.sleep(1.0)
    sub.terminate()
    sub.wait(timeout=5)
    wire = read_frames(sniff) + tap.frames
    tap.close()
    slave.close()
    seen, reused = nonce_reuse(wire)
    check(not reused, f"{len(reused)} (type, cipher, device, counter) sealed twice on the wire, e.g. {sorted(reused)[:3]}")
    hop = [int.from_bytes(f[8:16], "big") for _, f in tap.frames if int.from_bytes(f[4:8], "big") == MODBUS_DEVICE]
    check(hop and min(hop) >= pair_start[MODBUS_DEVICE],
          f"the proxy sealed counter {min(hop) if hop else None} of device {MODBUS_DEVICE:#x}, below "
          f"{pair_start[MODBUS_DEVICE]} where its key's state starts")
    check(len(seen) >= 4 * m, f"only {len(seen)} frames seen on the wire")
    return f"{len(seen)} sealed frames from 6 sealers under one master, 0 reused; GOOSE {goose}"


def probe_state_two_names(env):
    """One counter state under two names — a symlink, a hard link — given to two `link device`
    processes sealing as one device at once: never the same (key, nonce) twice on the broker; the
    second is refused (symlink: the lock follows the file) or both are (hard link); the symlink
    is still a symlink afterwards (never replaced by a rename)."""
    env.mosquitto()
    key = env.device_key(env.key(), 1)  # the device's own key, with its state beside it
    state = Path(f"{key}.counters")
    sniff = env.dir / "sniffed.txt"
    sub = env.sniffer("lwcbench/link/#", sniff)
    n = 300 if env.ci else 3000
    alias = env.dir / "alias.counters"
    alias.symlink_to(state)

    def device(st, session):
        return env.spawn([env.bin, "link", "device", "--id", "1", "--session", session, "--broker", env.broker,
                          "--key-file", str(key), "--counter-state", str(st), "--messages", str(n), "--interval",
                          "0", "--counter-block", "16"], text=True)

    procs = [device(state, "direct"), device(alias, "alias")]
    codes, errs = [], []
    for p in procs:
        try:
            _, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            raise ProbeFailed("a device process hung")
        codes.append(p.returncode)
        errs.append(err.strip().splitlines()[-1] if err.strip() else "")
    check(alias.is_symlink(), "the symlink was replaced by a regular file")
    check(0 in codes, f"neither device ran: {errs}")
    refused = [e for c, e in zip(codes, errs) if c != 0]
    for e in refused:
        check(e.startswith("error:") and "in use" in e, f"a refused device said {e!r}")
    hard = env.dir / "hard.counters"
    os.link(state, hard)
    for st in (state, hard):
        r = env.run([env.bin, "link", "device", "--id", "1", "--session", "hard", "--broker", env.broker,
                     "--key-file", str(key), "--counter-state", str(st), "--messages", "1"])
        one_error_line(r, "hard links")
    os.unlink(hard)
    time.sleep(1.0)
    sub.terminate()
    sub.wait(timeout=5)
    seen, reused = nonce_reuse(read_frames(sniff))
    check(not reused, f"{len(reused)} (key, nonce) pairs sealed twice on the broker, e.g. {sorted(reused)[:3]}")
    check(len(seen) >= n, f"only {len(seen)} frames on the broker")
    return f"{len(seen)} frames, 0 reused; symlinked twin {'refused' if refused else 'ran after'}; hard link refused"
def probe_store_keyvalue(env):
    """A libpq key=value --store is PostgreSQL (here unreachable) or refused, never a file whose
    name holds the password."""
    key = env.key()
    port = free_port()  # nothing listens
    before = set(os.listdir(env.dir))
    for store in (f"host=127.0.0.1 port={port} user=u password=hunter2 dbname=d", "a=b.db"):
        # (run in env.dir: a relative store path is a file there)
        res = env.run([os.path.abspath(env.bin), "link", "--key-file", str(key), "--store", store, "--messages", "1",
                       "-o", str(env.dir / "kv")], timeout=30, cwd=env.dir)
        line = one_error_line(res, "--store")
        check("hunter2" not in res.stderr, f"the password leaks: {line!r}")
    # (the key's counter lock beside it is the key's, not the store's)
    left = {n for n in set(os.listdir(env.dir)) - before if "=" in n or n == "kv"}
    check(not left, f"files left: {sorted(left)!r}")
    return "key=value is PostgreSQL or one error line; no file"
# ---- Video over the link (docs/link.md "Video frames") ------------------------------------------

VIDEO_HEADER = 28  # docs/link.md: the common 16-byte header (counter at 8), frame at 16, …, frame bytes at 24


def video_clip(env, frames=2, width=160, height=120):
    """A 4:2:0 .y4m clip of random frames (160×120: 28,800 B a frame, one MQTT part each)."""
    path = env.dir / "clip.y4m"
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{width} H{height} F25:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(frames):
            f.write(b"FRAME\n" + os.urandom(width * height * 3 // 2))
    return path


def video_args(env, clip, key, out, frames, fps):
    return [env.bin, "link", "--video", str(clip), "--broker", env.broker, "--key-file", str(key), "--cipher",
            "Ascon-AEAD128", "--frames", str(frames), "--fps", str(fps), "-o", str(env.dir / out)]


def sniffed_parts(path):
    """[(topic, part)] from a `mosquitto_sub -F '%t %x'` file (video parts only)."""
    out = []
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if len(f) == 2 and f[1][:4] == f"{VERSION:02x}{TYPE_VIDEO:02x}":
            try:
                out.append((f[0], bytes.fromhex(f[1])))
            except ValueError:
                pass
    return out


def wait_video_topic(path, skip, proc, limit=30.0):
    """The first video topic in the sniffer's file that is not in `skip`, and its first part."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        for topic, part in sniffed_parts(path):
            if topic not in skip:
                return topic, part
        check(proc.poll() is None, f"the video run ended before its parts were seen: {last_line(proc)!r}")
        time.sleep(0.05)
    raise ProbeFailed(f"no video part on the broker within {limit} s")


def publish_parts(env, topic, parts):
    for i, part in enumerate(parts):
        f = env.dir / f"inject-{i}.bin"
        f.write_bytes(part)
        res = env.run(["mosquitto_pub", "-p", str(env.port), "-h", "127.0.0.1", "-q", "1", "-t", topic, "-f", str(f)],
                      timeout=20)
        check(res.returncode == 0, f"mosquitto_pub failed: {res.stderr.strip()[-200:]}")


def video_result(env, proc, out, timeout=180):
    """Exit code, the tally line printed for the cipher, and link_video.csv's row."""
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ProbeFailed(f"the video run still running after {timeout} s (hang)")
    check(proc.returncode == 0, f"the video run failed ({proc.returncode}): {err.strip()[-300:]}")
    tally = next((line for line in err.splitlines() if line.startswith("Ascon-AEAD128") and " mqtt: " in line), "")
    path = env.dir / out / "link_video.csv"
    check(path.exists(), f"no {path.name} written")
    with open(path, newline="") as f:
        row = next(csv.DictReader(f))
    for k in ("refused_replay", "refused_bad_tag", "kernel_drops", "uncounted_drops"):
        check(k in row, f"{path.name} has no {k} column: refusals and drops are not reported apart")
    return tally, row


def probe_video_forged_parts(env):
    """100 forged video parts (a genuine part's cipher and device, counters far above the
    camera's, random ciphertext and tags) on the video topic while a camera sends: every frame
    still arrives, nothing is lost, and the 100 are refused as bad tags, never received parts."""
    env.mosquitto()
    key = env.key()
    clip = video_clip(env)
    sniff = env.dir / "video.hex"
    sub = env.sniffer("lwcbench/link/#", sniff)
    frames = 60
    run = env.spawn(video_args(env, clip, key, "out", frames, 10), text=True)
    topic, genuine = wait_video_topic(sniff, set(), run)
    forged = []
    for i in range(100):
        hdr = (genuine[:8] + ((1 << 40) + i).to_bytes(8, "big") + (i % frames).to_bytes(4, "big")
               + (0).to_bytes(2, "big") + (1).to_bytes(2, "big") + (10).to_bytes(4, "big"))
        forged.append(hdr + os.urandom(10 + 16))
    publish_parts(env, topic, forged)
    check(run.poll() is None, "the run ended before the 100 forged parts were published: the probe proves nothing")
    tally, row = video_result(env, run, "out")
    sub.terminate()
    sub.wait(timeout=5)

    def n(k):
        return int(row[k])

    check((n("frames_sent"), n("delivered"), n("lost")) == (frames, frames, 0),
          f"frames sent/delivered/lost {n('frames_sent')}/{n('delivered')}/{n('lost')}, want {frames}/{frames}/0")
    check((n("parts_sent"), n("parts_received"), n("parts_dropped")) == (frames, frames, 0),
          f"parts sent/received/dropped {n('parts_sent')}/{n('parts_received')}/{n('parts_dropped')}")
    check((n("refused"), n("refused_bad_tag")) == (100, 100),
          f"refused {n('refused')} (bad_tag {n('refused_bad_tag')}), want the 100 forged parts as bad_tag")
    check(f"received {frames} dropped 0" in tally and "refused 100: bad_tag 100" in tally,
          f"the printed tally does not say so: {tally!r}")
    return f"{frames}/{frames} frames delivered with 100 forged parts refused as bad_tag"


def probe_video_replay_across_sessions(env):
    """Parts recorded from one session (a foreign subscriber) and published into a later
    session's topic under the same key are refused as replays: the later session delivers its
    own frames and nothing else."""
    env.mosquitto()
    key = env.key()
    clip = video_clip(env)
    sniff = env.dir / "video.hex"
    sub = env.sniffer("lwcbench/link/#", sniff)
    first = env.run(video_args(env, clip, key, "o1", 5, 25), timeout=120)
    check(first.returncode == 0, f"the first session failed: {first.stderr.strip()[-300:]}")
    time.sleep(0.5)
    recorded = sniffed_parts(sniff)
    check(len(recorded) == 5, f"{len(recorded)} parts recorded from the first session, want 5")
    topic1 = recorded[0][0]
    top = max(int.from_bytes(p[8:16], "big") for _, p in recorded)
    state = Path(f"{key}.video-replay")
    first_state = state.read_text() if state.exists() else ""
    frames = 40
    run = env.spawn(video_args(env, clip, key, "o2", frames, 10), text=True)
    topic2, _ = wait_video_topic(sniff, {topic1}, run)
    publish_parts(env, topic2, [p for _, p in recorded])
    check(run.poll() is None, "the second session ended before the replayed parts were published")
    tally, row = video_result(env, run, "o2")
    sub.terminate()
    sub.wait(timeout=5)

    def n(k):
        return int(row[k])

    check((n("delivered"), n("lost"), n("parts_received"), n("ignored_parts")) == (frames, 0, frames, 0),
          f"delivered {n('delivered')} lost {n('lost')} parts received {n('parts_received')} ignored "
          f"{n('ignored_parts')}: want {frames}, 0, {frames} (its own parts only), 0")
    check((n("refused"), n("refused_replay")) == (5, 5),
          f"refused {n('refused')} (replay {n('refused_replay')}), want the 5 recorded parts as replay")
    check("replay 5" in tally, f"the printed tally does not say so: {tally!r}")
    check(f"device 0 accepted {top}\n" in first_state,
          f"{state.name} did not record the first session's highest counter {top}: {first_state!r}")
    return f"5 parts of an earlier session refused as replay; {frames}/{frames} own frames delivered"


# ---- Modbus/TCP proxy ---------------------------------------------------------------------------

ASCON_ID = 1  # docs/link.md: frame cipher id of Ascon-AEAD128


def recv_or_none(c, n):
    b = b""
    while len(b) < n:
        chunk = c.recv(n - len(b))
        if not chunk:
            return None
        b += chunk
    return b


class CountingSlave:
    """A Modbus/TCP slave written here from the specification, serving at most `serves`
    connections at once like a small PLC (more are closed at once) and counting every connection
    made to it. Function 3 answers register i = 3i + 1; anything else gets exception 1."""

    def __init__(self, serves):
        self.serves = serves
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = self.turned_away = self.active = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def counts(self):
        with self.lock:
            return self.accepted, self.turned_away, self.active

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.accepted += 1
                full = self.active >= self.serves
                self.turned_away += full
                self.active += not full
            if full:
                c.close()
            else:
                threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            while True:
                head = recv_or_none(c, 7)
                if head is None or not 2 <= struct.unpack(">H", head[4:6])[0] <= 254:
                    break
                tid, _, length, unit = struct.unpack(">HHHB", head)
                pdu = recv_or_none(c, length - 1)
                if pdu is None:
                    break
                start, n = struct.unpack(">HH", pdu[1:5]) if len(pdu) == 5 else (0, 0)
                if pdu[0] == 3 and 1 <= n <= 125:
                    regs = (struct.pack(">H", (3 * i + 1) & 0xFFFF) for i in range(start, start + n))
                    body = bytes([3, 2 * n]) + b"".join(regs)
                else:
                    body = bytes([pdu[0] | 0x80, 1])
                c.sendall(struct.pack(">HHHB", tid, 0, len(body) + 1, unit) + body)
        except OSError:
            pass
        finally:
            with self.lock:
                self.active -= 1
            c.close()

    def close(self):
        self.sock.close()


def closed_at(socks, limit):
    """For each socket, the monotonic time its peer closed it (EOF or reset), or None if still
    open after `limit` seconds."""
    out = [None] * len(socks)
    end = time.monotonic() + limit
    while any(t is None for t in out) and time.monotonic() < end:
        live = [s for s, t in zip(socks, out) if t is None]
        ready, _, _ = select.select(live, [], [], max(0.0, min(0.05, end - time.monotonic())))
        for s in ready:
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:
                out[socks.index(s)] = time.monotonic()
    return out


def modbus_proxy(env, args, what, limit=10.0):
    """A `link modbus-proxy` on a free port; returns (process, port) once it says where it
    listens."""
    p = env.spawn([env.bin, "link", "modbus-proxy", "--listen", "127.0.0.1:0", *args], text=True)
    ready, _, _ = select.select([p.stdout], [], [], limit)
    line = p.stdout.readline() if ready else ""
    if not line:
        try:
            p.wait(timeout=5)  # stdout closed: the exit and its error line follow
        except subprocess.TimeoutExpired:
            pass
    check(" listening on 127.0.0.1:" in line,
          f"{what} did not start: stdout {line.strip()!r}, exit {p.poll()}, stderr {last_line(p)!r}")
    return p, int(line.split(" listening on 127.0.0.1:")[1].split(",")[0])


def tally(out, name):
    """The number after `name` in a proxy's closing tally line."""
    lines = [line for line in out.splitlines() if " stopped: " in line]
    check(lines, f"no tally line in {out[-300:]!r}")
    for part in lines[-1].split(" stopped: ")[1].split(", "):
        if part.rsplit(" ", 1)[0] == name:
            return int(part.rsplit(" ", 1)[1])
    raise ProbeFailed(f"the tally has no {name!r}: {lines[-1]!r}")


def probe_modbus_idle_sockets(env):
    """Issue 36 item 2: keyless idle sockets to the slave-side proxy's hop port must not use up
    a slave that serves four connections; they are closed at the deadline, refusals counted."""
    serves, handshake, idle = 4, 2.0, 3.0
    slave = CountingSlave(serves)
    try:
        # Each proxy keeps its counters and replay state where it does by default for this key
        # (provisioning pair 0 wrote both replay states beside it).
        key = modbus_key(env, "modbus.key")
        common = ["--key-file", str(key), "--cipher", "Ascon-AEAD128", "--idle-timeout", f"{int(idle * 1000)}ms",
                  "--handshake-timeout", f"{int(handshake * 1000)}ms"]
        sp, sport = modbus_proxy(env, ["--side", "slave", "--peer", f"127.0.0.1:{slave.port}", *common,
                                       "--max-conns-per-peer", str(serves + 1), "--max-conns", "8"],
                                 "slave-side proxy")
        mp, mport = modbus_proxy(env, ["--side", "master", "--peer", f"127.0.0.1:{sport}", *common],
                                 "master-side proxy")
        # As many sockets without the key as the slave serves: silent, half a record, a forged frame.
        keyless = [socket.create_connection(("127.0.0.1", sport), timeout=5) for _ in range(serves)]
        opened = time.monotonic()
        keyless[1].sendall(b"\x00")
        # A forged hello (version 3, type 3 = master → slave, flags bit 1 = handshake, counter 0,
        # extension 0; docs/link.md "The hop protocol"): a bad tag.
        forged = (bytes([VERSION, TYPE_MODBUS_TO_SLAVE, ASCON_ID, 2]) + MODBUS_DEVICE.to_bytes(4, "big")
                  + (0).to_bytes(16, "big") + os.urandom(40))
        keyless[2].sendall(len(forged).to_bytes(2, "big") + forged)
        time.sleep(0.2)
        # A real poll through the pair: read 3 holding registers from 10 (unit 1, transaction 7).
        m = socket.create_connection(("127.0.0.1", mport), timeout=5)
        m.sendall(struct.pack(">HHHBBHH", 7, 0, 6, 1, 3, 10, 3))
        want = struct.pack(">HHHBBB", 7, 0, 9, 1, 3, 6) + b"".join(struct.pack(">H", 3 * i + 1) for i in (10, 11, 12))
        try:
            got = recv_or_none(m, len(want))
        except OSError as e:
            got = f"{e}"
        polled = time.monotonic()
        check(got == want, f"the real poll failed with {serves} keyless sockets open: got {got!r}, want {want.hex()} "
                           f"(slave: accepted, turned away, active = {slave.counts()})")
        accepted, turned_away, _ = slave.counts()
        check((accepted, turned_away) == (1, 0),
              f"the slave saw {accepted} connections ({turned_away} turned away): keyless sockets reached it")
        # One more from the same address is over --max-conns-per-peer: closed at once.
        extra = socket.create_connection(("127.0.0.1", sport), timeout=5)
        t_extra = time.monotonic()
        (closed_extra,) = closed_at([extra], 1.0)
        check(closed_extra is not None, "a connection over --max-conns-per-peer was not closed at once")
        check(closed_extra - t_extra < 1.0 and closed_extra < opened + handshake,
              f"the connection over the cap closed after {closed_extra - t_extra:.2f} s")
        closed = closed_at(keyless, handshake + 4.0)
        check(all(t is not None for t in closed), f"keyless sockets still open {handshake + 4:.0f} s after the "
                                                  f"{handshake:.0f} s handshake timeout: {closed}")
        early = [round(t - opened, 2) for t in closed if t - opened < handshake - 0.1]
        check(not early, f"keyless sockets closed before the {handshake} s handshake timeout: {early} s")
        (m_closed,) = closed_at([m], idle + 4.0)
        check(m_closed is not None, f"the idle master connection is still open {idle + 4:.0f} s after its poll")
        check(m_closed - polled >= idle - 0.1,
              f"the master connection closed {m_closed - polled:.2f} s after its poll, before the {idle} s idle timeout")
        time.sleep(0.2)
        accepted, _, active = slave.counts()
        check((accepted, active) == (1, 0), f"the slave's connection count is {accepted}, {active} still open "
                                            "after the idle timeout (want 1, 0)")
        for s in keyless + [extra, m]:
            s.close()
        outs = {}
        for name, p in (("slave", sp), ("master", mp)):
            p.send_signal(signal.SIGTERM)
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                raise ProbeFailed(f"the {name}-side proxy did not stop within 10 s of SIGTERM")
            check(p.returncode == 0, f"the {name}-side proxy exited {p.returncode}: {err.strip()[-300:]!r}")
            check("panicked" not in err, f"{name}-side proxy panic: {err[-300:]!r}")
            outs[name] = (out, err)
        out, err = outs["slave"]
        seen = {n: tally(out, n) for n in ("connections", "connections opened to the peer",
                                           "connections refused over the per-peer cap",
                                           "connections closed without an authenticated frame in time", "bad_tag")}
        want_tally = {"connections": serves + 2, "connections opened to the peer": 1,
                      "connections refused over the per-peer cap": 1,
                      "connections closed without an authenticated frame in time": serves, "bad_tag": 1}
        check(seen == want_tally, f"slave-side tally {seen}, want {want_tally}")
        idle_closed = tally(out, "connections closed idle") + tally(outs["master"][0], "connections closed idle")
        check(idle_closed >= 1, "no proxy counted the idle master connection")
        check("refused a connection from 127.0.0.1" in err, f"no log line for the refused connection: {err[-300:]!r}")
        return (f"{serves} keyless sockets: the slave saw only the real poll's connection; keyless closed "
                f"{min(closed) - opened:.1f}–{max(closed) - opened:.1f} s after opening ({handshake} s deadline), "
                f"the master idle {m_closed - polled:.1f} s after its poll ({idle} s); 1 refused over the per-peer cap")
    finally:
        slave.close()


# ---- Issue 37: the key hierarchy (docs/security.md "Key hierarchy") -----------------------------
AES_GCM_ID = 4  # docs/link.md "Cipher ids": AES-128-GCM/rustcrypto, 16-byte key, 12-byte nonce


def hkdf_sha256(salt, ikm, info, length):
    """RFC 5869 with the standard library (not lwcbench's code)."""
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    okm, t, i = b"", b"", 1
    while len(okm) < length:
        t = hmac.new(prk, t + info + bytes([i]), hashlib.sha256).digest()
        okm += t
        i += 1
    return okm[:length]


def link_cipher_key(master, family, usage, device, cipher, length):
    """crates/link/src/wire/keys.rs: master → device key of (family, device) → cipher key of
    (usage, cipher), both HKDF-SHA256 under salt "lwcbench-link v3" with labelled info."""
    salt = b"lwcbench-link v3"
    dk = hkdf_sha256(salt, master, b"lwcbench-link device key\0" + family.encode() + b"\0" + device.to_bytes(4, "big"), 32)
    return hkdf_sha256(salt, dk, b"lwcbench-link cipher key\0" + usage.encode() + b"\0" + bytes([cipher]), length)


def seal_aes_gcm(master, typ, family, device, counter, plaintext):
    """A version 3 frame of type `typ` sealed here with AES-128-GCM (docs/link.md: the 16-byte
    header is the associated data; nonce = counter (8, BE) ‖ device (4, BE))."""
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise ProbeFailed("the Python package cryptography is missing (run with .venv/bin/python)")
    key = link_cipher_key(master, family, family, device, AES_GCM_ID, 16)
    header = bytes([VERSION, typ, AES_GCM_ID, 0]) + device.to_bytes(4, "big") + counter.to_bytes(8, "big")
    nonce = counter.to_bytes(8, "big") + device.to_bytes(4, "big")
    return header + AESGCM(key).encrypt(nonce, plaintext, header)


def master_bytes(key):
    """The 32 bytes of a master key file written by `Env.key`."""
    return bytes.fromhex(Path(key).read_text().splitlines()[1].strip())


def publish(env, topic, frame, name):
    f = env.dir / name
    f.write_bytes(frame)
    res = env.run(["mosquitto_pub", "-p", str(env.port), "-h", "127.0.0.1", "-q", "1", "-t", topic, "-f", str(f)],
                  timeout=20)
    check(res.returncode == 0, f"mosquitto_pub failed: {res.stderr.strip()[-200:]}")


def final_stats(gw, stats):
    """Stop the gateway; its last --stats line."""
    gw.send_signal(signal.SIGTERM)
    try:
        gw.wait(timeout=20)
    except subprocess.TimeoutExpired:
        raise ProbeFailed("the gateway did not stop within 20 s of SIGTERM")
    check(gw.returncode == 0, f"the gateway exited {gw.returncode}: {last_line(gw)!r}")
    return json.loads(Path(stats).read_text().splitlines()[-1])


def probe_device_holds_own_key(env):
    """Issue 37, "every device process holds the master key": `link device` refuses the master;
    a device key cannot seal as another device (with --id, or by a fresh state); a device
    cannot be provisioned twice (nothing written); the master's holder no longer seals as a
    provisioned device; the device key file does not contain the master key."""
    env.mosquitto()
    key = env.key()
    res = env.run([env.bin, "link", "device", "--session", "s", "--broker", env.broker, "--key-file", str(key),
                   "--messages", "1"])
    line = one_error_line(res, "--key-file")
    check("master" in line, f"the refusal does not say it is a master key: {line!r}")
    dev3 = env.device_key(key, 3)
    check(master_bytes(key).hex() not in dev3.read_text().lower(), "the device key file holds the master key")
    res = env.run([env.bin, "link", "device", "--id", "4", "--session", "s", "--broker", env.broker, "--key-file",
                   str(dev3), "--messages", "1"])
    one_error_line(res, "--id")
    twice = env.dir / "again.key"
    res = env.run([env.bin, "link", "provision", "--key-file", str(key), "--device", "3", "--out", str(twice)])
    line = one_error_line(res, "already provisioned")
    check(not twice.exists() and not Path(f"{twice}.counters").exists(), "a refused provisioning left files")
    res = env.run([env.bin, "link", "--key-file", str(key), "--broker", env.broker, "--devices", "4", "--messages", "1",
                   "--out", str(env.dir / "as3")], timeout=60)
    line3 = one_error_line(res, "device 3 is provisioned")
    # The key still works for its own device: one reading through a gateway.
    store = env.dir / "g.db"
    gw = env.gateway("s", key, store, devices="3")
    res = env.device(3, "s", key, None, 5)
    check(res.returncode == 0, f"device 3 with its own key failed: {res.stderr.strip()[-200:]}")
    got = wait_rows(store, 5, 20, gw)
    gw.send_signal(signal.SIGTERM)
    gw.wait(timeout=20)
    check(got == 5, f"{got} of 5 readings of device 3 stored")
    return f"master refused by link device; --id 4 refused; second provisioning refused; session: {line3[:80]}"


def probe_goose_to_sensor_gateway(env):
    """Issue 37, "a sealed GOOSE frame was stored by the sensor gateway as a reading": a GOOSE
    frame (type 5) sealed here under the master's GOOSE key of APPID 1 — and a copy with its
    type byte rewritten to sensor — published on the topic of sensor device 1: both refused,
    nothing stored. The control, a sensor frame sealed by the same code, is stored: the
    refusals are not the sealer's mistake."""
    env.mosquitto()
    key = env.key()
    m = master_bytes(key)
    store, stats = env.dir / "g.db", env.dir / "stats.jsonl"
    gw = env.gateway("gs", key, store, devices="1-2", stats=stats, extra=("--cipher", "AES-128-GCM/rustcrypto"))
    topic = "lwcbench/link/gs/1"
    reading = struct.pack("<ff", 21.5, 40.25)
    goose = seal_aes_gcm(m, TYPE_GOOSE, "goose", 1, 7, reading)
    retyped = goose[:1] + bytes([TYPE_SENSOR]) + goose[2:]
    publish(env, topic, goose, "goose.bin")
    publish(env, topic, retyped, "retyped.bin")
    time.sleep(1.0)
    check(rows(store) == 0, f"{rows(store)} rows stored from GOOSE frames")
    publish(env, topic, seal_aes_gcm(m, TYPE_SENSOR, "sensor", 1, 8, reading), "sensor.bin")
    got = wait_rows(store, 1, 10, gw)
    final = final_stats(gw, stats)
    check(got == 1, f"the control sensor frame was not stored ({got} rows): the probe's sealer is wrong")
    by = final.get("refused_by_reason", {})
    check(final.get("refused") == 2, f"refused {final.get('refused')} (want the 2 GOOSE frames): {final}")
    check(by.get("wrong_cipher") == 1 and by.get("bad_tag") == 1,
          f"want the GOOSE frame as wrong_cipher (type) and the retyped one as bad_tag: {by}")
    return "a GOOSE frame refused (wrong type), a retyped copy refused (bad tag), 0 stored; control stored"


def probe_frame_version_1(env):
    """Issue 37, "the old frame version is refused": frames with the version 1 layout (a
    15-byte header: version, cipher, flags, device, counter) and a version 2 one published to
    the gateway are refused as malformed and not stored; the gateway goes on (a version 3
    frame after them is stored)."""
    env.mosquitto()
    key = env.key()
    m = master_bytes(key)
    store, stats = env.dir / "g.db", env.dir / "stats.jsonl"
    gw = env.gateway("v1", key, store, devices="1", stats=stats, extra=("--cipher", "AES-128-GCM/rustcrypto"))
    topic = "lwcbench/link/v1/1"
    reading = struct.pack("<ff", 1.0, 2.0)
    v3 = seal_aes_gcm(m, TYPE_SENSOR, "sensor", 1, 9, reading)
    # The same reading in the old layout: no type byte, 15 header bytes.
    v1 = bytes([1, AES_GCM_ID, 0]) + (1).to_bytes(4, "big") + (5).to_bytes(8, "big") + v3[16:]
    v2 = bytes([2]) + v1[1:]
    publish(env, topic, v1, "v1.bin")
    publish(env, topic, v2, "v2.bin")
    time.sleep(1.0)
    check(rows(store) == 0, f"{rows(store)} rows stored from version 1 and 2 frames")
    publish(env, topic, v3, "v3.bin")
    got = wait_rows(store, 1, 10, gw)
    final = final_stats(gw, stats)
    check(got == 1, f"the version 3 frame after them was not stored ({got} rows)")
    by = final.get("refused_by_reason", {})
    check(by.get("malformed") == 2 and final.get("refused") == 2, f"want 2 refused as malformed: {final}")
    return "version 1 and 2 frames refused as malformed, 0 stored; a version 3 frame after them stored"


# ---- Issue 37 item 5: the Modbus hop bound to its connection ------------------------------------

def modbus_key(env, name):
    """Proxy pair 0's key from `link provision --protocol modbus` under a new master: with its
    counter state and both proxies' replay states beside it (pairing)."""
    master = env.dir / f"{name}.master"
    r = env.run([env.bin, "link", "keygen", "--key-file", str(master)])
    check(r.returncode == 0, f"link keygen failed: {r.stderr.strip()[-300:]!r}")
    key = env.dir / name
    r = env.run([env.bin, "link", "provision", "--key-file", str(master), "--protocol", "modbus", "--device", "0",
                 "--out", str(key)])
    check(r.returncode == 0, f"link provision failed: {r.stderr.strip()[-300:]!r}")
    for side in ("master", "slave"):
        check(Path(f"{key}.modbus-0-{side}.replay").is_file(), f"provisioning wrote no {side}-side replay state")
    return key


class RegisterSlave:
    """A Modbus/TCP slave written here from the specification: function 3 reads and function 6
    writes (Modbus Application Protocol v1.1b3 §6.3, §6.6) on registers that start at 0; every
    write is logged in order."""

    def __init__(self):
        self.regs = {}
        self.writes = []
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            while True:
                head = recv_or_none(c, 7)
                if head is None:
                    break
                tid, _, length, unit = struct.unpack(">HHHB", head)
                pdu = recv_or_none(c, length - 1) if 2 <= length <= 254 else None
                if pdu is None or len(pdu) != 5:
                    break
                a, v = struct.unpack(">HH", pdu[1:5])
                with self.lock:
                    if pdu[0] == 6:
                        self.regs[a] = v
                        self.writes.append(v)
                        body = pdu
                    elif pdu[0] == 3 and 1 <= v <= 125:
                        body = bytes([3, 2 * v]) + b"".join(struct.pack(">H", self.regs.get(i, 0)) for i in range(a, a + v))
                    else:
                        body = bytes([pdu[0] | 0x80, 1])
                c.sendall(struct.pack(">HHHB", tid, 0, len(body) + 1, unit) + body)
        except OSError:
            pass
        finally:
            c.close()

    def close(self):
        self.sock.close()


class HoldingTap(HopTap):
    """The hop tap with an attacker's hold: the next master → slave record is kept back, and can
    be released later on the same hop connection or sent on a new one."""

    def __init__(self, upstream):
        self.hold = False
        self.held = None
        self.to_slave = None
        super().__init__(upstream)

    def _accept(self):
        while True:
            try:
                a, _ = self.sock.accept()
            except OSError:
                return
            b = socket.create_connection(("127.0.0.1", self.upstream))
            self.to_slave = b
            threading.Thread(target=self._up, args=(a, b), daemon=True).start()
            threading.Thread(target=self._pump, args=(b, a), daemon=True).start()

    def _up(self, src, dst):
        try:
            while True:
                head = recv_or_none(src, 2)
                body = recv_or_none(src, int.from_bytes(head, "big")) if head else None
                if body is None:
                    break
                with self.lock:
                    self.frames.append(("modbus-hop", body))
                    keep, self.hold = self.hold, False
                    if keep:
                        self.held = head + body
                if not keep:
                    dst.sendall(head + body)
        except OSError:
            pass

    def release_on_same(self):
        self.to_slave.sendall(self.held)


def write_single(s, tid, addr, value):
    s.sendall(struct.pack(">HHHBBHH", tid, 0, 6, 1, 6, addr, value))


def probe_modbus_held_back_write(env):
    """Issue 37: an attacker on the hop holds back a recorded "write 111" while a newer "write
    222" passes, then releases it late on the same connection and sends it on a new one. The
    slave must have executed 222 only; the slave-side proxy counts both refusals."""
    slave = RegisterSlave()
    try:
        key = modbus_key(env, "hold.key")
        common = ["--key-file", str(key), "--cipher", "Ascon-AEAD128"]
        sp, sport = modbus_proxy(env, ["--side", "slave", "--peer", f"127.0.0.1:{slave.port}", *common],
                                 "slave-side proxy")
        tap = HoldingTap(sport)
        mp, mport = modbus_proxy(env, ["--side", "master", "--peer", f"127.0.0.1:{tap.port}", *common],
                                 "master-side proxy")
        m = socket.create_connection(("127.0.0.1", mport), timeout=5)
        m.sendall(struct.pack(">HHHBBHH", 1, 0, 6, 1, 3, 100, 1))
        check(recv_or_none(m, 11) is not None, "the first read through the pair was not answered")
        with tap.lock:
            tap.hold = True
        write_single(m, 2, 100, 111)
        write_single(m, 3, 100, 222)
        got = recv_or_none(m, 12)
        check(got == struct.pack(">HHHBBHH", 3, 0, 6, 1, 6, 100, 222), f"write 222 was not answered: {got!r}")
        check(tap.held is not None, "the tap held nothing back")
        tap.release_on_same()
        other = socket.create_connection(("127.0.0.1", sport), timeout=5)
        other.sendall(tap.held)
        time.sleep(0.6)
        with slave.lock:
            writes, value = list(slave.writes), slave.regs.get(100)
        check(writes == [222] and value == 222,
              f"the slave executed writes {writes} (register 100 = {value}): the held-back write 111 got through")
        for s in (m, other):
            s.close()
        tallies = {}
        for name, p in (("master", mp), ("slave", sp)):
            p.send_signal(signal.SIGTERM)
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                raise ProbeFailed(f"the {name}-side proxy did not stop within 10 s of SIGTERM")
            check(p.returncode == 0 and "panicked" not in err, f"the {name}-side proxy: exit {p.returncode}, "
                                                               f"{err.strip()[-300:]!r}")
            tallies[name] = out
        replay = tally(tallies["slave"], "replay")
        order = tally(tallies["slave"], "frames refused outside the handshake order")
        check((replay, order) == (1, 1), f"slave-side tally: replay {replay}, outside the handshake order {order} "
                                         "(want 1 and 1)")
        return "write 111 held back: refused late on its connection (replay) and on a new one (no handshake)"
    finally:
        slave.close()


def probe_modbus_lost_replay_state(env):
    """Issue 37: a lost replay state used to mean "nothing accepted yet": after it was lost,
    both recorded writes were replayed to the restarted slave-side proxy and executed. A proxy
    must refuse to start without it (one error line that says how it is made and that it cannot
    be recreated) and must not recreate it."""
    key = modbus_key(env, "lost.key")
    replay = Path(f"{key}.modbus-0-slave.replay")
    slave = RegisterSlave()
    try:
        common = ["--key-file", str(key), "--cipher", "Ascon-AEAD128"]
        sp, sport = modbus_proxy(env, ["--side", "slave", "--peer", f"127.0.0.1:{slave.port}", *common],
                                 "slave-side proxy")
        tap = HopTap(sport)
        mp, mport = modbus_proxy(env, ["--side", "master", "--peer", f"127.0.0.1:{tap.port}", *common],
                                 "master-side proxy")
        with socket.create_connection(("127.0.0.1", mport), timeout=5) as m:
            for tid, v in ((1, 111), (2, 222)):
                write_single(m, tid, 100, v)
                check(recv_or_none(m, 12) is not None, f"write {v} through the pair was not answered")
        for p in (mp, sp):
            stop(p)
        recorded = [f for _, f in tap.frames]
        tap.close()
        check(replay.is_file(), f"no replay state {replay} after the pair ran")
        replay.unlink()
        with slave.lock:
            slave.writes.clear()
        p = env.spawn([env.bin, "link", "modbus-proxy", "--listen", "127.0.0.1:0", "--side", "slave", "--peer",
                       f"127.0.0.1:{slave.port}", *common], text=True)
        ready, _, _ = select.select([p.stdout], [], [], 10)
        line = p.stdout.readline() if ready else ""
        if " listening on 127.0.0.1:" in line:
            # It started: the attacker replays what the tap recorded.
            port = int(line.split(" listening on 127.0.0.1:")[1].split(",")[0])
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                for f in recorded:
                    c.sendall(len(f).to_bytes(2, "big") + f)
                time.sleep(0.6)
            stop(p)
            with slave.lock:
                writes = list(slave.writes)
            check(not writes, f"the slave-side proxy started without its replay state and the recorded writes "
                              f"{writes} were replayed and executed")
            raise ProbeFailed("the slave-side proxy started without its replay state")
        _, err = p.communicate(timeout=10)
        r = subprocess.CompletedProcess(p.args, p.returncode, "", err)
        first = one_error_line(r, str(replay), "does not exist", "provision")
        check(not replay.exists(), "the refused start recreated the replay state")
        # Given explicitly, a missing file is refused the same way, and not created.
        other = env.dir / "nowhere.replay"
        r = env.run([env.bin, "link", "modbus-proxy", "--side", "master", "--listen", "127.0.0.1:0", "--peer",
                     "127.0.0.1:1", "--key-file", str(key), "--replay-state", str(other)], timeout=20)
        one_error_line(r, str(other), "does not exist")
        check(not other.exists(), "the refused start created --replay-state")
        return f"refused: {first[:100]}"
    finally:
        slave.close()


def accepted_marks(key):
    """The lines of KEY.accepted (docs/link.md "Accepted marks"), or [] without one."""
    p = Path(f"{key}.accepted")
    return p.read_text().splitlines() if p.exists() else []


def final_line(gw, what):
    """SIGTERM a `link gateway` and return its final JSON line (stdout's last)."""
    gw.send_signal(signal.SIGTERM)
    try:
        out, err = gw.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        raise ProbeFailed(f"{what}: the gateway still running 30 s after SIGTERM (hang)")
    check(gw.returncode == 0, f"{what}: gateway exit {gw.returncode}: {(err or '').strip()[-200:]!r}")
    lines = [line for line in (out or "").splitlines() if line.startswith("{")]
    check(lines, f"{what}: no final line on stdout")
    return json.loads(lines[-1]), err or ""


def provision(env, key, device):
    """`link provision`: device `device`'s own key (and its counter state) from the master `key`."""
    out = env.dir / f"dev{device}.key"
    r = env.run([env.bin, "link", "provision", "--key-file", str(key), "--device", str(device), "--out", str(out)])
    check(r.returncode == 0, f"link provision failed: {r.stderr.strip()[-200:]!r}")
    return out


def probe_fresh_store_refuses_earlier_frames(env):
    """Issue 37: 9 of 10 frames of an earlier run were stored by a fresh store under the same key.
    A run stores device 1's 10 readings (its capture keeps the frames); the 10 frames published
    again to a gateway with a fresh store are all refused as replays (KEY.accepted), none stored."""
    env.mosquitto()
    key = env.key()
    a, b, cap = env.dir / "a.db", env.dir / "b.db", env.dir / "cap.hex"
    dev = provision(env, key, 1)
    gw = env.gateway("run1", key, a, devices="1")
    res = env.device(1, "run1", dev, None, 10, extra=("--capture", str(cap)))
    check(res.returncode == 0, f"device failed: {res.stderr.strip()[-200:]}")
    got = wait_rows(a, 10, 30, gw)
    final_line(gw, "run 1")
    check(got == 10, f"run 1 stored {got} of 10")
    frames = [f for _, f in read_frames(cap)]
    check(len(frames) == 10, f"captured {len(frames)} frames, not 10")
    gw = env.gateway("run2", key, b, devices="1", stats=env.dir / "b.jsonl")
    publish_parts(env, "lwcbench/link/run2/1", frames)
    time.sleep(1.0)
    last, _ = final_line(gw, "fresh store")
    stored = rows(b)
    check(stored == 0, f"the fresh store holds {stored} of the earlier run's 10 frames: {last}")
    replay = last.get("refused_by_reason", {}).get("replay")
    check(replay == 10, f"refused as replay: {replay} of 10 ({last})")
    marks = accepted_marks(key)
    # provisioning reserved counter 0 in the master's state: the device sealed 1..=10
    check("sensor 1 10" in marks, f"{key.name}.accepted does not say device 1 accepted up to 10: {marks}")
    return "10 frames of the earlier run refused by a fresh store (replay), 0 stored"


def probe_reuse_alarm_rolled_back_device(env):
    """A device whose counter state is put back to an older copy: with --gateway-accepted (the
    gateway's KEY.accepted) it is refused before it seals; without it, it seals other readings
    under counters the gateway accepted, and the gateway raises a reuse alarm per frame (final
    line, stderr) and stores none of them."""
    env.mosquitto()
    key = env.key()
    store, cap = env.dir / "s.db", env.dir / "cap.hex"
    dev = provision(env, key, 1)
    state = Path(f"{dev}.counters")
    before = state.read_bytes()
    gw = env.gateway("reuse", key, store, devices="1")
    durable = ("--capture", str(cap), "--durable")
    res = env.device(1, "reuse", dev, None, 5, extra=durable)
    check(res.returncode == 0, f"device failed: {res.stderr.strip()[-200:]}")
    t0 = time.monotonic()
    while "sensor 1 5" not in accepted_marks(key) and time.monotonic() - t0 < 20:
        time.sleep(0.1)
    state.write_bytes(before)  # the rollback
    res = env.device(1, "reuse", dev, None, 5, extra=(*durable, "--gateway-accepted", f"{key}.accepted"))
    one_error_line(res, "--gateway-accepted", state.name, "accepted up to 5")
    res = env.device(1, "reuse", dev, None, 5, extra=durable)
    check(res.returncode == 0, f"rolled-back device failed: {res.stderr.strip()[-200:]}")
    wait_rows(store, 5, 30, gw)
    time.sleep(1.0)
    last, err = final_line(gw, "reuse")
    check(last.get("reuse_alarms") == 5, f"reuse alarms {last.get('reuse_alarms')} of 5 reused counters: {last}")
    check(rows(store) == 5, f"the store holds {rows(store)} rows, not the first 5 readings only")
    check("arrived again with other bytes and a valid tag" in err, f"no alarm line on stderr: {err.strip()[-200:]!r}")
    return f"refused with --gateway-accepted; without: 5 reused counters, {last['reuse_alarms']} reuse alarms, 5 rows"


def probe_goose_restarted_subscriber(env):
    """A restarted GOOSE subscriber takes an earlier capture: `link goose` run 1, then its
    counter state put back to the copy from before, so run 2 sends run 1's frames again (same key,
    counters and APDUs): the subscriber, with the key's accepted mark, refuses every one."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        return "skipped (needs root)"
    key = env.key()
    state = Path(f"{key}.counters")
    before = state.read_bytes()
    args = [env.bin, "link", "goose", "--key-file", str(key), "--cipher", "Ascon-AEAD128", "--size", "160",
            "--frames", "20"]
    r = env.run([*args, "--out", str(env.dir / "g1")], timeout=180)
    check(r.returncode == 0, f"run 1 failed: {r.stderr.strip()[-300:]!r}")
    state.write_bytes(before)
    r = env.run([*args, "--out", str(env.dir / "g2")], timeout=180)
    check(r.returncode != 0 and "not delivered exactly once" in r.stderr,
          f"the restarted subscriber took the earlier frames: exit {r.returncode}, {r.stderr.strip()[-300:]!r}")
    # run 1's 20 + 20 warm-up frames: counters 0..=39 of a new key; run 2 accepted none
    marks = accepted_marks(key)
    check("goose 257 39" in marks, f"{key.name}.accepted does not say APPID 257 accepted up to 39: {marks}")
    return "run 2 (run 1's frames again) refused by the restarted subscriber"


# ---- Misuse-resistant suites (issue #37) ---------------------------------------------------------
def probe_misuse_resistant_suites(env):
    """misuse-resistant suites on the link: a session with XChaCha20-Poly1305 (id 21, random
    24-byte nonce after the 16-byte header) and AES-128/256-GCM-SIV (ids 19, 20, counter nonce)
    stores every reading; on the broker every XChaCha frame is 16 + 24 + 16 + 16 = 72 B with
    its own nonce, every GCM-SIV frame 16 + 16 + 16 = 48 B, and every (id, device, counter)
    appears once."""
    env.mosquitto()
    key = env.key()
    sniff = env.dir / "frames.hex"
    sub = env.sniffer("lwcbench/link/#", sniff)
    out = env.dir / "out"
    res = env.run([env.bin, "link", "--broker", env.broker, "--key-file", str(key), "--devices", "4",
                   "--messages", "20", "--interval", "1ms", "--cipher",
                   "XChaCha20-Poly1305,AES-128-GCM-SIV,AES-256-GCM-SIV", "-o", str(out)], timeout=180)
    check(res.returncode == 0, f"the session failed: {res.stderr.strip()[-300:]}")
    with open(out / "link_summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    got = [(r["cipher"], r["sent"], r["stored"], r["missing"], r["mismatched"]) for r in rows]
    want = [(c, "80", "80", "0", "0") for c in ("XChaCha20-Poly1305/rustcrypto", "AES-128-GCM-SIV/rustcrypto",
                                                "AES-256-GCM-SIV/rustcrypto")]
    check(got == want, f"link_summary.csv {got}, want {want}")
    time.sleep(1.0)
    sub.terminate()
    sub.wait(timeout=5)
    frames = [f for _, f in read_frames(sniff) if len(f) >= 16 and f[0] == 3]
    by_id = {i: [f for f in frames if f[2] == i] for i in (19, 20, 21)}
    for i, length in ((19, 48), (20, 48), (21, 72)):
        check(len(by_id[i]) >= 80, f"cipher id {i}: {len(by_id[i])} frames on the broker, want 80")
        bad = sorted({len(f) for f in by_id[i]} - {length})
        check(not bad, f"cipher id {i}: frames of {bad} B, want {length} B")
        idents = {(f[4:8], f[8:16]) for f in by_id[i]}
        check(len(idents) == len(by_id[i]), f"cipher id {i}: a (device, counter) sealed twice")
    nonces = {f[16:40] for f in by_id[21]}
    check(len(nonces) == len(by_id[21]), f"XChaCha: {len(by_id[21]) - len(nonces)} random nonces repeated")
    check(all(any(n) for n in nonces), "XChaCha: an all-zero nonce field (not drawn at random)")
    return (f"240 readings stored; {len(by_id[21])} XChaCha frames of 72 B with distinct nonces, "
            f"{len(by_id[19]) + len(by_id[20])} GCM-SIV frames of 48 B")


def probe_state_file_bounds(env):
    """Issue 40: the line-oriented state files share one bounded reader. A counter state whose
    device line is 2,000 zeros and a 5 (a valid number: device 7, next counter 5) and a
    provisioning registry with a 2 KB fingerprint are refused by `link provision`, one error
    line naming the file and the line; before, both were read (the counter state rewritten)."""
    key = env.key()
    state = Path(f"{key}.counters")
    good = state.read_text()
    state.write_text(good + "7 " + "0" * 2000 + "5\n")
    r = env.run([env.bin, "link", "provision", "--key-file", str(key), "--device", "0",
                 "--out", str(env.dir / "d0.key")], timeout=30)
    one_error_line(r, str(state), "line 3: longer than 1024 bytes")
    check(not (env.dir / "d0.key").exists(), "a device key was written")
    state.write_text(good)
    registry = Path(f"{key}.provisioned")
    lines = state.read_text().splitlines()
    registry.write_text(f"lwcbench-link-provisioned v1\n{lines[1]}\nsensor 9 {'a' * 2048}\n")
    r = env.run([env.bin, "link", "provision", "--key-file", str(key), "--device", "1",
                 "--out", str(env.dir / "d1.key")], timeout=30)
    one_error_line(r, str(registry), "line 3: longer than 1024 bytes")
    return "a 2 KB line in a counter state or a registry refused, naming file and line"


PROBES = {
    # High: nonce reuse and a gateway stopped for good
    "oversized-message": lambda e: probe_oversized(e, retained=False),
    "oversized-retained": lambda e: probe_oversized(e, retained=True),
    "backlog-restart": probe_backlog_restart,
    "shared-counter-state": probe_shared_counter_state,
    "key-reuse-across-runs": probe_key_reuse_across_runs,
    # Medium and Low
    "store-failure-is-loud": probe_store_locked,
    "store-schema": probe_schema,
    "two-sessions-one-store": probe_two_sessions_one_store,
    "shared-gateways": probe_shared_gateways,
    "failpoint-force": probe_failpoint_force,
    "rate-bounds": probe_rate_bounds,
    "window-memory": probe_window_memory,
    "store-secrets": probe_store_secrets,
    "key-file-types": probe_key_file_types,
    "session-names": probe_session_names,
    "counter-state-lines": probe_counter_state_lines,
    "broker-urls": probe_broker_urls,
    "capture-non-utf8": probe_capture_non_utf8,
    "frame-too-large": probe_frame_too_large,
    "stats-unwritable": probe_stats_unwritable,
    "store-read-only": probe_store_read_only,
    "postgres-errors": probe_postgres_errors,
    # Issue 36: one counter authority per key, a lock that follows the file
    "every-sealer-one-key": probe_every_sealer_one_key,
    "state-two-names": probe_state_two_names,
    "store-keyvalue": probe_store_keyvalue,
    "video-forged-parts": probe_video_forged_parts,
    "video-replay-across-sessions": probe_video_replay_across_sessions,
    "modbus-idle-sockets": probe_modbus_idle_sockets,
    # Issue 37: the key hierarchy and protocol separation, replayed end to end
    "device-holds-own-key": probe_device_holds_own_key,
    "goose-to-sensor-gateway": probe_goose_to_sensor_gateway,
    "frame-version-1": probe_frame_version_1,
    # Issue 37 item 5: the Modbus hop bound to its connection
    "modbus-held-back-write": probe_modbus_held_back_write,
    "modbus-lost-replay-state": probe_modbus_lost_replay_state,
    # Issue 37 item 4: replay protection per key
    "fresh-store-refuses-earlier-frames": probe_fresh_store_refuses_earlier_frames,
    "reuse-alarm-rolled-back-device": probe_reuse_alarm_rolled_back_device,
    "goose-restarted-subscriber": probe_goose_restarted_subscriber,
    # Issue 37 item 2: misuse-resistant suites on the link
    "misuse-resistant-suites": probe_misuse_resistant_suites,
    # Issue 40: one bounded reader of the state files
    "state-file-bounds": probe_state_file_bounds,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "target/release/lwcbench"))
    ap.add_argument("--ci", action="store_true", help="bounded sizes for CI")
    ap.add_argument("--only", help="comma-separated probe names")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        print("\n".join(PROBES))
        return 0
    names = a.only.split(",") if a.only else list(PROBES)
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        print(f"error: --only: unknown probe {unknown[0]!r} (see --list)", file=sys.stderr)
        return 2
    if not os.access(a.bin, os.X_OK):
        print(f"error: --bin: {a.bin} is not an executable (build with scripts/setup.sh)", file=sys.stderr)
        return 2
    passed = failed = 0
    for name in names:
        env = Env(a.bin, a.ci)
        t0 = time.monotonic()
        try:
            detail = PROBES[name](env)
            passed += 1
            print(f"PASS {name} ({time.monotonic() - t0:.1f} s): {detail}", flush=True)
        except ProbeFailed as e:
            failed += 1
            print(f"FAIL {name} ({time.monotonic() - t0:.1f} s): {e}", flush=True)
        finally:
            env.close()
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
