#!/usr/bin/env bash
# Instructions executed (valgrind --tool=callgrind, the total "Collected"
# count) by a whole run of each bench script under each globals strategy,
# start-up and compilation included, as one markdown table: a row per
# script, a column per strategy; each cell other than nts's gives its
# percentage over nts, and the last row sums the scripts.
#
#   scripts/callgrind-scripts.sh [SCRIPT...]   # default: bench-scripts/*.mz but tls_models.mz
#   STRATEGIES="nts tls" scripts/callgrind-scripts.sh bench-scripts/hello.mz
#
# STRATEGIES restricts the columns (default: every strategy
# `minizts --globals=help` lists); nts, the baseline, is always measured
# and comes first. tls_models.mz is skipped by default: it needs its
# extension loaded (scripts/tls-models.sh runs it).
#
# Counts do not depend on the machine's load, but are not exact to the
# instruction: repeated runs of one script agree to about 0.1 % (a few
# hundred instructions of start-up differ too), except arrays.mz, which
# has moved by up to 1 % between runs; smaller differences there mean
# nothing. Slow: about 130 G instructions in all for the default table,
# 15 minutes or more (27 measured on the shared 2-core machine during a
# build); bench.mz alone is ~7.5 G a strategy.
#
# BIN=path/to/minizts uses another build instead of building
# target/release/minizts.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  for f in bench-scripts/*.mz; do
    [ "$(basename "$f")" = tls_models.mz ] || set -- "$@" "$f"
  done
fi
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin minizts
  BIN=target/release/minizts
fi
command -v valgrind >/dev/null || { echo "valgrind is needed (Debian: valgrind)" >&2; exit 1; }

all=$("$BIN" --globals=help | awk '{print $1}')
[ "$(echo "$all" | head -1)" = nts ] || { echo "expected nts first (the baseline)" >&2; exit 1; }
strategies=nts
for s in ${STRATEGIES:-$all}; do
  echo "$all" | grep -qx -- "$s" || { echo "unknown strategy $s (known: $(echo "$all" | paste -sd " "))" >&2; exit 1; }
  [ "$s" = nts ] || strategies="$strategies $s"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() { # strategy script -> instructions executed by one run
  if ! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$BIN" --globals="$1" run "$2" >"$tmp/out" 2>"$tmp/err"; then
    echo "$2 failed under --globals=$1:" >&2
    tail -5 "$tmp/out" >&2
    grep -v '^==' "$tmp/err" >&2 || true
    exit 1
  fi
  grep -E "Collected|refs:" "$tmp/err" | tail -1 | grep -oE '[0-9][0-9,]*$' | tr -d ,
}

echo "\`$BIN --globals=STRATEGY run SCRIPT\`: instructions per whole run (callgrind), percentage over nts"
echo
header="| script |"
rule="|---|"
for s in $strategies; do
  header="$header $s |"
  rule="$rule---:|"
done
echo "$header"
echo "$rule"
declare -A total
for s in $strategies; do total[$s]=0; done
cell() { # count baseline -> "count (+p %)"
  awk -v n="$1" -v b="$2" 'BEGIN { printf "%.0f (%+.2f %%)", n, (n - b) * 100 / b }'
}
for f in "$@"; do
  row="| $(basename "$f") |"
  base=
  for s in $strategies; do
    n=$(count "$s" "$f")
    total[$s]=$((total[$s] + n))
    if [ -z "$base" ]; then
      base=$n
      row="$row $n |"
    else
      row="$row $(cell "$n" "$base") |"
    fi
  done
  echo "$row"
done
row="| **total** |"
for s in $strategies; do
  if [ "$s" = nts ]; then
    row="$row ${total[nts]} |"
  else
    row="$row $(cell "${total[$s]}" "${total[nts]}") |"
  fi
done
echo "$row"
