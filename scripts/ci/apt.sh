# The one way this project's scripts run apt-get; sourced (`. scripts/ci/apt.sh`), never run.
#   apt_update              apt-get update. A partly failed index (one architecture's mirror
#                           mid-sync: "File has unexpected size … Mirror sync in progress?", exit
#                           100) is a warning: what was read is used, and a package it leaves
#                           missing fails apt_install by name.
#   apt_install [OPT…] PKG…  apt-get install -y --no-install-recommends, non-interactive; OPTs
#                           (words starting with -) go to apt-get. A failed install is retried
#                           once after a fresh apt_update (a mirror that moved on, a held lock);
#                           a second failure names the packages apt could not find and fails.
# Messages start with "$APT_TAG: " (default "apt"). Root runs apt-get itself, anyone else sudo.

APT_TAG=${APT_TAG:-apt}

_apt() {
  if [ "$(id -u)" -eq 0 ]; then
    env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get "$@"
  else
    # sudo's default env_reset would drop the variables if they were set before it
    sudo env DEBIAN_FRONTEND=noninteractive LC_ALL=C apt-get "$@"
  fi
}

apt_update() {
  local rc=0
  _apt update -qq || rc=$?
  if ((rc)); then
    echo "$APT_TAG: warning: apt-get update failed (exit $rc) for part of the index (see above);" \
      "going on with what it read" >&2
  fi
  return 0
}

# The packages apt-get's output (C locale) in file $1 says it cannot find, one a line.
_apt_not_found() {
  sed -n -e "s/^E: Unable to locate package \(.*\)$/\1/p" \
    -e "s/^E: Package '\([^']*\)' has no installation candidate$/\1/p" \
    -e "s/^E: Version '\([^']*\)' for '\([^']*\)' was not found$/\2=\1/p" \
    -e "s/^E: Couldn't find any package by \(glob\|regex\) '\([^']*\)'$/\2/p" "$1" | sort -u
}

apt_install() {
  local opts=() pkgs=() a log rc attempt missing
  for a in "$@"; do
    case $a in -*) opts+=("$a") ;; *) pkgs+=("$a") ;; esac
  done
  ((${#pkgs[@]})) || return 0
  log=$(mktemp)
  for attempt in 1 2; do
    rc=0
    _apt install -y -qq --no-install-recommends "${opts[@]}" "${pkgs[@]}" >"$log" 2>&1 || rc=$?
    ((rc)) || { rm -f "$log"; return 0; }
    grep -v '^\s*$' "$log" | tail -n 20 >&2 || true
    if ((attempt == 1)); then
      echo "$APT_TAG: warning: apt-get install failed (exit $rc); updating the index and trying once more" >&2
      apt_update
    fi
  done
  missing=$(_apt_not_found "$log" | tr '\n' ' ')
  rm -f "$log"
  if [ -n "$missing" ]; then
    echo "$APT_TAG: error: apt-get install failed: no such package (or version) in the index: ${missing% }" >&2
  else
    echo "$APT_TAG: error: apt-get install failed twice (exit $rc) for: ${pkgs[*]} (see above)" >&2
  fi
  return "$rc"
}
