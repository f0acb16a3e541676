#!/usr/bin/env bash
# Times the README's first command on a fresh Debian 12 system, as issue 16
# asks ("on a fresh Debian 12 machine, the README's first command gives its
# first result in under 8 minutes"). It debootstraps bookworm (or copies a
# base made by an earlier run), adds what a Debian 12 cloud image has besides
# that (ca-certificates, git, sudo, a user `debian` with passwordless sudo, the
# bookworm, bookworm-updates and bookworm-security sources), clones the
# repository's committed HEAD into it (no build/, and no ccache cache: the
# user's ~/.cache is empty), and runs the README's first command, read from
# README.md, exactly as written, as that user, in a chroot. Then it checks
# the README's `import hone` line there.
#
# Phases come from xtrace lines of setup.sh, install-deps.sh and the command
# itself (BASH_ENV turns the trace on for those three only), each stamped with
# the time and the script's own and children's CPU ticks, so the build's CPU
# (user+sys) is that of `cmake --build` alone. The host's load average is
# sampled every 5 s: the machine is shared, and (build CPU)/cores is a lower
# bound of the build's wall time on a quiet machine.
#
# Needs root and debootstrap (apt-get install debootstrap) and a reachable
# Debian mirror. The mounts (/proc, /sys, /dev, /dev/pts) are undone, and any
# process left in the chroot ended, on every exit.
#
#   scripts/fresh-machine-check.sh WORKDIR            # WORKDIR/base is kept for reuse
#   scripts/fresh-machine-check.sh --keep WORKDIR     # also keep WORKDIR/root
#   HONE_MIRROR=http://deb.debian.org/debian scripts/fresh-machine-check.sh WORKDIR
#
# Results: WORKDIR/results/{run.log,load.log,summary.txt}.
set -euo pipefail

keep=0
if [ "${1:-}" = --keep ]; then keep=1; shift; fi
if [ $# -ne 1 ]; then
  echo "usage: $0 [--keep] WORKDIR" >&2
  exit 2
fi
work="$(realpath -m "$1")"
repo="$(cd "$(dirname "$0")/.." && pwd)"
mirror="${HONE_MIRROR:-http://deb.debian.org/debian}"
if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-machine-check: needs root (debootstrap, chroot, mount)" >&2
  exit 2
fi
if ! command -v debootstrap >/dev/null; then
  echo "fresh-machine-check: needs debootstrap (apt-get install debootstrap)" >&2
  exit 2
fi
commit="$(git -C "$repo" rev-parse HEAD)"
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  echo "fresh-machine-check: warning: uncommitted changes in $repo are not measured (HEAD $commit is)" >&2
fi

base="$work/base"
root="$work/root"
results="$work/results"
mkdir -p "$work" "$results"

if [ ! -f "$base/etc/debian_version" ] || [ ! -f "$base/.fresh-machine-base" ]; then
  rm -rf "$base"
  echo "fresh-machine-check: debootstrap bookworm into $base (not timed)"
  debootstrap --include=ca-certificates,git,sudo bookworm "$base" "$mirror" >"$results/debootstrap.log" 2>&1 || {
    echo "fresh-machine-check: debootstrap failed; see $results/debootstrap.log" >&2
    exit 1
  }
  # A cloud image's sources, and no apt lists yet (install-deps.sh updates them).
  rm -f "$base/etc/apt/sources.list"
  cat >"$base/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # No services start inside a chroot.
  printf '#!/bin/sh\nexit 101\n' >"$base/usr/sbin/policy-rc.d"
  chmod 755 "$base/usr/sbin/policy-rc.d"
  chroot "$base" useradd -m -s /bin/bash debian
  echo 'debian ALL=(ALL) NOPASSWD:ALL' >"$base/etc/sudoers.d/debian"
  chmod 440 "$base/etc/sudoers.d/debian"
  touch "$base/.fresh-machine-base"
fi

mounted=()
sampler=""
cleanup() {
  set +e
  if [ -n "$sampler" ]; then kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null; fi
  # End what is still running inside the chroot (only after a failure or ^C).
  for p in /proc/[0-9]*; do
    if [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ]; then kill -9 "${p#/proc/}" 2>/dev/null; fi
  done
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}"
  done
  if [ "$keep" = 0 ] && ! grep -q " $root/" /proc/mounts; then rm -rf "$root"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$root"
cp -a "$base" "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
git clone -q --no-hardlinks "$repo" "$root/home/debian/hone"
git -C "$root/home/debian/hone" checkout -q "$commit"
chroot "$root" chown -R debian:debian /home/debian/hone
if [ -e "$root/home/debian/.cache/ccache" ] || [ -e "$root/home/debian/.ccache" ]; then
  echo "fresh-machine-check: the fresh user already has a ccache cache" >&2
  exit 1
fi

for m in proc sys dev dev/pts; do
  case "$m" in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount -t sysfs sys "$root/sys" ;;
    *) mount --bind "/$m" "$root/$m" ;;
  esac
  mounted+=("$root/$m")
done

# Trace setup.sh, install-deps.sh and the command itself: time, then the
# script's utime stime cutime cstime (clock ticks) from /proc/$$/stat.
cat >"$root/tmp/fresh-trace.sh" <<'EOF'
case "${0##*/}" in
  setup.sh | install-deps.sh | readme-command)
    PS4='+ [${0##*/} $(date +%s.%N) $(cut -d" " -f14-17 /proc/$$/stat)] '
    set -x
    ;;
esac
EOF
cat >"$root/tmp/fresh-run.sh" <<'EOF'
set -u
cd ~/hone
# The first line of the README's first sh block.
cmd="$(awk '/^```sh/{getline; print; exit}' README.md)"
echo "fresh-run: command: $cmd"
echo "fresh-run: start $(date +%s.%N)"
export BASH_ENV=/tmp/fresh-trace.sh
time bash -c "$cmd" readme-command
rc=$?
unset BASH_ENV
echo "fresh-run: end $(date +%s.%N) rc $rc"
echo "fresh-run: ccache after the run:"; ccache -s 2>&1 | sed 's/^/  /'
py='PYTHONPATH=build/python /usr/bin/python3 -c "import hone; print(hone.backends())"'
echo "fresh-run: python check: $py"
bash -c "$py" && echo "fresh-run: python ok" || echo "fresh-run: python FAILED"
exit $rc
EOF

read -r _ u0 n0 s0 i0 w0 q0 sq0 st0 _ </proc/stat
(while :; do echo "$(date +%s) $(cat /proc/loadavg)"; sleep 5; done) >"$results/load.log" &
sampler=$!
set +e
chroot "$root" /usr/sbin/runuser -u debian -- env -i HOME=/home/debian USER=debian LOGNAME=debian \
  SHELL=/bin/bash LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
  bash /tmp/fresh-run.sh >"$results/run.log" 2>&1
rc=$?
set -e
read -r _ u1 n1 s1 i1 w1 q1 sq1 st1 _ </proc/stat
kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
sampler=""

busy=$(((u1 + n1 + s1 + q1 + sq1 + st1) - (u0 + n0 + s0 + q0 + sq0 + st0)))
total=$((busy + (i1 + w1) - (i0 + w0)))
hz="$(getconf CLK_TCK)"
{
  echo "commit $commit"
  echo "host $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  awk -v hz="$hz" -v cores="$(nproc)" -v busy="$busy" -v total="$total" -v rc="$rc" '
    function at(line) { match(line, /\[[^ ]+ [0-9.]+ /); s = substr(line, RSTART, RLENGTH); split(s, f, " "); return f[2] }
    function kids(line) { match(line, /[0-9.]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+\]/); s = substr(line, RSTART, RLENGTH); split(s, f, " "); return (f[4] + f[5]) / hz }
    /^fresh-run: start / { t0 = $3 }
    /^fresh-run: end / { t9 = $3 }
    /^\+ \[install-deps.sh / && !deps { deps = at($0) }
    /^\+ \[install-deps.sh .*apt-get install/ { apt = at($0) }
    /^\+ \[setup.sh .* cmake -S / { conf = at($0); conf_cpu = kids($0) }
    /^\+ \[setup.sh .* cmake --build / { build = at($0); build_cpu = kids($0) }
    /^\+ \[setup.sh .* echo .setup: built/ { built = at($0); built_cpu = kids($0) }
    /^\+ \[readme-command .* \.\/build\/hone tune / { tune = at($0) }
    /^\+ \[readme-command .* \.\/build\/hone infer / { infer = at($0) }
    /^real/ { real = $2 }
    END {
      printf "exit status %d\n", rc
      printf "install-deps (apt-get update + install): %6.1f s (apt-get install alone %.1f s)\n", conf - deps, conf - apt
      printf "cmake configure:                          %6.1f s\n", build - conf
      printf "build (hone_cli hone_python):             %6.1f s wall, %.1f s CPU (user+sys), %.1f s CPU / %d cores\n", built - build, built_cpu - build_cpu, (built_cpu - build_cpu) / cores, cores
      printf "hone tune:                                %6.1f s\n", infer - tune
      printf "hone infer:                               %6.1f s\n", t9 - infer
      printf "total (README command, wall):             %6.1f s = %.2f min (bash time: %s)\n", t9 - t0, (t9 - t0) / 60, real
      printf "host CPU busy during the run:             %6.2f of %d cores on average\n", busy / total * cores, cores
    }' "$results/run.log"
  awk '{ n++; s += $2; if ($2 > m) m = $2; if (n == 1 || $2 < lo) lo = $2 }
       END { if (n) printf "host 1-min load average: mean %.2f, min %.2f, max %.2f (%d samples, every 5 s)\n", s / n, lo, m, n }' "$results/load.log"
  grep -E '^fresh-run: python|^  (Hits|Misses|Cacheable|Local storage)' "$results/run.log" || true
} | tee "$results/summary.txt"
exit "$rc"
