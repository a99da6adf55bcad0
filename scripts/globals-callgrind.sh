#!/usr/bin/env bash
# What each globals strategy costs on a whole script: the instructions a
# run executes (valgrind --tool=callgrind: deterministic, the same on a
# busy machine as on an idle one), the extra over `nts`, the number of EG
# and CG accesses the run makes (`minizts run --stats`, the same under
# every strategy), and so the extra instructions per access. Prints a
# markdown table.
#
#   scripts/globals-callgrind.sh [SCRIPT [ARGS...]]   # default: bench-scripts/bench.mz
#
# BIN=path/to/minizts uses another build instead of building
# target/release/minizts.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  set -- bench-scripts/bench.mz
fi
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin minizts
  BIN=target/release/minizts
fi
command -v valgrind >/dev/null || { echo "valgrind is needed (Debian: valgrind)" >&2; exit 1; }

strategies=$("$BIN" --globals=help | awk '{print $1}')
[ "$(echo "$strategies" | head -1)" = nts ] || { echo "expected nts first (the baseline)" >&2; exit 1; }

# Accesses: counted by a separate, counting copy of the engine.
stats=$("$BIN" --globals=tls run --stats "$@" 2>&1 >/dev/null | grep 'EG accesses')
eg=$(echo "$stats" | sed -E 's/.* ([0-9]+) EG accesses.*/\1/')
cg=$(echo "$stats" | sed -E 's/.* ([0-9]+) CG accesses.*/\1/')
accesses=$((eg + cg))

echo "script: $*; $eg EG + $cg CG = $accesses accesses per run"
echo
echo "| strategy | instructions | over nts | accesses | extra instructions per access |"
echo "|---|---:|---:|---:|---:|"
base=
for s in $strategies; do
  n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN" --globals="$s" run "$@" 2>&1 >/dev/null |
    sed -nE 's/.*Collected : ([0-9]+).*/\1/p')
  [ -n "$base" ] || base=$n
  awk -v s="$s" -v n="$n" -v b="$base" -v a="$accesses" 'BEGIN {
    printf "| %s | %.0f | %+.2f %% | %.0f | %.2f |\n", s, n, (n - b) * 100 / b, a, (n - b) / a
  }'
done
