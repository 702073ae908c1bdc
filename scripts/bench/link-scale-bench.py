#!/usr/bin/env python3
"""Scale-out figures for `lwcbench link --workers K` (docs/link.md, "Scale-out").

Starts Debian's mosquitto and a throw-away PostgreSQL cluster on loopback, runs
`lwcbench link --rate max` for each K (default 1 2 4) a few times, and prints one CSV row per run:
readings/s stored end to end, and CPU time per reading of the gateway workers, the mosquitto
process and all PostgreSQL processes (from /proc), plus `uptime` and the CPU model. Also one
reference row per repetition with the embedded broker and SQLite (K = 1).

    scripts/bench/link-scale-bench.py [--bin target/release/lwcbench] [--workers 1,2,4] [--reps 3]
                                [--devices 64] [--messages 1000]
Needs: mosquitto, postgresql (scripts/setup.sh --test installs both). Root runs PostgreSQL as
the postgres user (it refuses root).
"""
import argparse
import csv
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what):
    t0 = time.time()
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"error: {what} exited with {proc.returncode}")
            if time.time() - t0 > 30:
                sys.exit(f"error: {what} did not listen on {port}")
            time.sleep(0.05)


def cpu_s(pid, children=False):
    """utime+stime (+ reaped children's) of one process, seconds."""
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    t = int(f[11]) + int(f[12])  # utime, stime (fields 14, 15)
    if children:
        t += int(f[13]) + int(f[14])  # cutime, cstime
    return t / TICK


def tree_cpu_s(root):
    """CPU of `root` (with its reaped children) plus its live children."""
    total = cpu_s(root, children=True)
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                ppid = int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            if ppid == root:
                total += cpu_s(int(p))
    return total


def pg_bin(name):
    base = "/usr/lib/postgresql"
    for v in sorted(os.listdir(base), reverse=True) if os.path.isdir(base) else []:
        p = os.path.join(base, v, "bin", name)
        if os.path.isfile(p):
            return p
    sys.exit(f"error: PostgreSQL {name} not found under {base} (scripts/setup.sh --test installs it)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/lwcbench")
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--devices", type=int, default=64)
    ap.add_argument("--messages", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=512)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="lwcbench-scale-")
    root = os.geteuid() == 0
    procs = []
    try:
        mport = free_port()
        conf = os.path.join(tmp, "m.conf")
        with open(conf, "w") as f:
            # No queue limit: mosquitto's default queue of 1000 drops QoS 1 messages silently
            # when a subscriber lags at --rate max. max_inflight_messages 1000 did not bound what
            # mosquitto 2.0.11 has out to the single gateway (~40,000 unacknowledged seen); the
            # gateway does not depend on it (docs/link.md, Scale-out).
            f.write(f"listener {mport} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    "max_inflight_messages 1000\nmax_queued_messages 0\n")
        mosq = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        procs.append(mosq)
        wait_port(mport, mosq, "mosquitto")
        data = os.path.join(tmp, "pg")
        # initdb and postgres refuse to run as root: switch to the postgres account in the child
        # itself (no runuser in between), so the pid held here is the postmaster's and
        # terminate() stops PostgreSQL.
        as_pg = {}
        if root:
            pw = pwd.getpwnam("postgres")
            as_pg = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        if root:
            os.mkdir(data)
            shutil.chown(tmp, "postgres", "postgres")
            shutil.chown(data, "postgres", "postgres")
        subprocess.run([pg_bin("initdb"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "-D", data],
                       check=True, stdout=subprocess.DEVNULL, **as_pg)
        pport = free_port()
        pg = subprocess.Popen([pg_bin("postgres"), "-D", data, "-p", str(pport), "-c",
                               "listen_addresses=127.0.0.1", "-k", tmp],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **as_pg)
        procs.append(pg)
        wait_port(pport, pg, "postgres")
        time.sleep(1)
        pm = pg.pid
        broker = f"mqtt://127.0.0.1:{mport}"
        store = f"postgres://postgres@127.0.0.1:{pport}/postgres"
        model = next((l.split(":", 1)[1].strip() for l in subprocess.run(
            ["lscpu"], capture_output=True, text=True).stdout.splitlines() if l.startswith("Model name")), "?")
        w = csv.writer(sys.stdout)
        w.writerow(["config", "workers", "rep", "sent", "stored", "refused", "readings_per_s",
                    "gateway_cpu_us_per_reading", "mosquitto_cpu_us_per_reading", "postgres_cpu_us_per_reading",
                    "lwcbench_process_cpu_us_per_reading", "per_worker", "load_before", "load_after", "cpu_model"])
        configs = [("embedded+sqlite", 1)] + [("mosquitto+postgres", int(k)) for k in a.workers.split(",")]
        for rep in range(1, a.reps + 1):
            for name, k in configs:
                out = os.path.join(tmp, f"run-{name}-{k}-{rep}")
                args = [a.bin, "link", "-o", out, "--rate", "max", "--devices", str(a.devices),
                        "--messages", str(a.messages), "--batch", str(a.batch), "--workers", str(k),
                        "--drain-timeout", "120"]
                if name.startswith("mosquitto"):
                    args += ["--broker", broker, "--store", store]
                load0 = open("/proc/loadavg").read().split()[0]
                m0, p0 = cpu_s(mosq.pid), tree_cpu_s(pm)
                r = subprocess.run(args, capture_output=True, text=True)
                m1, p1 = cpu_s(mosq.pid), tree_cpu_s(pm)
                load1 = open("/proc/loadavg").read().split()[0]
                if r.returncode != 0:
                    print(f"run failed: {' '.join(args)}\n{r.stderr}", file=sys.stderr)
                    continue
                row = next(csv.DictReader(open(os.path.join(out, "link_summary.csv"))))
                stored = int(row["stored"])
                pw = ""
                for line in r.stderr.splitlines():
                    if "checked per worker:" in line:
                        pw = line.split("per worker:", 1)[1].strip()
                net = name.startswith("mosquitto")
                w.writerow([name, k, rep, row["sent"], stored, sum(int(v) for c, v in row.items() if c.startswith("refused_")),
                            row["msgs_per_s"], row["gateway_cpu_us_per_msg"],
                            f"{(m1 - m0) * 1e6 / stored:.2f}" if net else "",
                            f"{(p1 - p0) * 1e6 / stored:.2f}" if net else "",
                            row["process_cpu_us_per_msg"], pw, load0, load1, model])
                sys.stdout.flush()
                shutil.rmtree(out, ignore_errors=True)
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
