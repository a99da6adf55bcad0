#!/usr/bin/env bash
# Data races under valgrind's helgrind, on short multi-threaded runs of
# the runner. The lock kind is `pthread` (glibc's mutex), the one kind
# helgrind can see: std's Mutex and the spin and adaptive locks are built
# on futexes and atomics, which helgrind does not model, so every access
# they guard would be reported.
#
# Each report's racing stack (before "This conflicts with") is classified:
# inside the standard library's own thread start-up bookkeeping (its
# stack-overflow handler's thread table and spin lock, which helgrind
# cannot see either), or anything else — which is what must stay at zero.
# Exit status 1 if any report is of the second kind.
#
#   scripts/threads-helgrind.sh            # builds target/debug/minizts
# BIN=path/to/minizts uses another build.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is needed (Debian: valgrind)" >&2; exit 1; }
if [ -z "${BIN:-}" ]; then
  cargo build --quiet -p minizts-cli --bin minizts && cargo build --quiet -p minizts-ext-counter
  BIN=target/debug/minizts
fi
ext=$(dirname "$BIN")/libminizts_ext_counter.so
runs=(
  "--globals=table run --threads 2 --requests 6 bench-scripts/hello.mz"
  "--globals=ctx run --threads 3 --requests 6 --thread-init=per-request -d extension=$ext -r echo(counter_bump(2));"
  "--globals=tls --dtoa=shared run --threads 2 --requests 4 bench-scripts/json_floats.mz --check"
  "--globals=offset --dtoa=per-thread run --threads 2 --requests 4 --no-cache bench-scripts/json_floats.mz --check"
)
bad=0
echo "| run | helgrind reports | in std's thread start-up | elsewhere |"
echo "|---|---:|---:|---:|"
for r in "${runs[@]}"; do
  # shellcheck disable=SC2086
  log=$(valgrind --tool=helgrind "$BIN" --lock=pthread $r 2>&1 >/dev/null || true)
  counts=$(echo "$log" | awk '
    /Possible data race|Lock order|lock order/ { inrace = 1; total++; std = 0; next }
    inrace && /This conflicts with|^==[0-9]+== *$/ {
      if (std) s++; else o++;
      inrace = 0; next
    }
    inrace && /stack_overflow|thread_info/ { std = 1 }
    END { printf "%d %d %d", total, s, o }')
  read -r total s o <<< "$counts"
  echo "| \`minizts --lock=pthread $r\` | $total | $s | $o |"
  if [ "$o" -ne 0 ]; then
    bad=1
    echo "$log" | grep -A20 'Possible data race' | grep -v stack_overflow | head -60 >&2
  fi
done
exit $bad
