"""scripts/ci/apt.sh (every script's apt-get) and mcu/setup.sh run against a fake `apt-get` on
PATH: an index whose foreign architecture fails to download is a warning, a failed install is
retried once, a package apt cannot find fails naming it. Nothing here runs the real apt."""
import os
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]

# apt-get's messages (C locale) as Debian 12's apt 2.6 prints them: a mirror mid-sync for armhf,
# a package the index does not hold, and a download that failed once.
FAKE_APT_GET = r"""#!/bin/sh
echo "$DEBIAN_FRONTEND $*" >> "$FAKE/calls"
case "$1" in
update)
  echo "E: Failed to fetch http://deb.debian.org/debian/dists/bookworm/main/binary-armhf/Packages.xz  File has unexpected size (41736 != 41652). Mirror sync in progress? [IP: 151.101.2.132 80]" >&2
  echo "E: Some index files failed to download. They have been ignored, or old ones used instead." >&2
  exit 100 ;;
install)
  for a in "$@"; do
    case "$a" in no-such-*) echo "E: Unable to locate package $a" >&2; exit 100 ;; esac
  done
  if [ -e "$FAKE/fail-install-once" ]; then
    rm "$FAKE/fail-install-once"
    echo "E: Failed to fetch http://deb.debian.org/debian/pool/main/g/gcc/cpp_12.2.0-14_amd64.deb  404  Not Found" >&2
    exit 100
  fi
  exit 0 ;;
esac
exit 1
"""


def fake_bin(tmp, extra=None):
    """A bin directory with the fake apt-get (and `sudo` running its arguments, for a non-root run)."""
    b = tmp / "bin"
    b.mkdir()
    tools = {"apt-get": FAKE_APT_GET, "sudo": '#!/bin/sh\nexec "$@"\n'}
    tools.update(extra or {})
    for name, text in tools.items():
        (b / name).write_text(text)
        (b / name).chmod(0o755)
    return b


def run_bash(tmp, script, fail_once=False, extra=None, env=None):
    b = fake_bin(tmp, extra)
    if fail_once:
        (tmp / "fail-install-once").touch()
    e = dict(os.environ, PATH=f"{b}:{os.environ['PATH']}", FAKE=str(tmp), **(env or {}))
    p = subprocess.run(["bash", "-c", script], cwd=ROOT, env=e, capture_output=True, text=True, timeout=60)
    calls_file = tmp / "calls"
    calls = calls_file.read_text().splitlines() if calls_file.exists() else []
    return p, calls


PRELUDE = "set -euo pipefail; . scripts/ci/apt.sh; "


def test_a_partly_failed_update_is_a_warning_and_the_script_goes_on(tmp_path):
    p, calls = run_bash(tmp_path, PRELUDE + "apt_update; echo after-update")
    assert p.returncode == 0, p.stderr
    assert "Mirror sync in progress?" in p.stderr, "apt's own lines stay visible"
    assert "apt: warning: apt-get update failed (exit 100)" in p.stderr
    assert p.stdout.strip() == "after-update"
    assert calls == ["noninteractive update -qq"]


def test_a_failed_install_is_retried_once_after_an_update(tmp_path):
    p, calls = run_bash(tmp_path, PRELUDE + "apt_install gcc-arm-none-eabi picolibc-riscv64-unknown-elf; echo done",
                        fail_once=True)
    assert p.returncode == 0, p.stderr
    assert "apt: warning: apt-get install failed (exit 100); updating the index and trying once more" in p.stderr
    assert p.stdout.strip() == "done"
    install = "noninteractive install -y -qq --no-install-recommends gcc-arm-none-eabi picolibc-riscv64-unknown-elf"
    assert calls == [install, "noninteractive update -qq", install]


def test_a_missing_package_fails_by_name_after_one_retry(tmp_path):
    p, calls = run_bash(tmp_path, PRELUDE + "apt_install --allow-downgrades gcc no-such-pkg:armhf; echo not-reached")
    assert p.returncode == 100, p.stderr
    assert "not-reached" not in p.stdout
    last = p.stderr.strip().splitlines()[-1]
    assert last == "apt: error: apt-get install failed: no such package (or version) in the index: no-such-pkg:armhf"
    assert [c.split()[1] for c in calls] == ["install", "update", "install"], "one retry, no more"
    assert calls[0] == "noninteractive install -y -qq --no-install-recommends --allow-downgrades gcc no-such-pkg:armhf"


def test_mcu_setup_passes_when_a_foreign_architecture_index_fails(tmp_path):
    # mcu/setup.sh with its packages missing, the Rust targets and the venv present: the
    # update fails for armhf (exit 100), the install goes through.
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\nexit 0\n")
    (venv / "bin" / "python").chmod(0o755)
    extra = {
        "rustup": "#!/bin/sh\nprintf 'thumbv6m-none-eabi\\nthumbv7em-none-eabihf\\nriscv32imc-unknown-none-elf\\n'\n",
        "dpkg-query": "#!/bin/sh\nexit 1\n",
    }
    p, calls = run_bash(tmp_path, "bash mcu/setup.sh", extra=extra, env={"MCU_VENV": str(venv)})
    assert p.returncode == 0, p.stderr
    assert "mcu setup: warning: apt-get update failed (exit 100)" in p.stderr
    assert p.stdout.strip().endswith(f"mcu setup ok (venv {venv})")
    assert [c.split()[1] for c in calls] == ["update", "install"]
    assert "gcc-arm-none-eabi" in calls[1] and "gcc-xtensa-lx106" in calls[1]


def test_every_script_runs_apt_get_through_the_helper():
    # A direct apt-get call would bring back `set -e` stopping at a partly failed index.
    direct = []
    for f in ROOT.rglob("*.sh"):
        rel = f.relative_to(ROOT)
        if rel.parts[0] in ("target", ".git", ".venv") or rel == pathlib.Path("scripts/ci/apt.sh"):
            continue
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(r"\bapt(-get)?\s+(update|install|upgrade)\b", code):
                direct.append(f"{rel}:{n}: {line.strip()}")
    assert direct == []
