#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind) of each bench.mz kernel,
# minizts against `php -n` when php is installed, as a markdown table.
# Each kernel runs alone (`--only=NAME`); a run of no kernel
# (`--only=none`) is subtracted, so start-up and compilation are not
# counted. Counts are repeatable: the same binary and script give the same
# totals whatever else the machine is doing.
#
#   scripts/callgrind-kernels.sh                          # the default strategy, tls
#   MINIZTS_GLOBALS=nts scripts/callgrind-kernels.sh      # another one
#
# BIN=path/to/minizts uses another build instead of building
# target/release/minizts (BIN=target/nonpie/release/minizts after
# `cargo build-nonpie`).
set -euo pipefail
cd "$(dirname "$0")/.."
script=bench-scripts/bench.mz
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin minizts
  BIN=target/release/minizts
fi
bin=$BIN

count() { # command... -> instructions executed
  local out
  out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | grep -E "Collected|refs:" | tail -1)
  echo "$out" | grep -oE '[0-9][0-9,]*$' | tr -d ,
}

kernels=$(grep -oE 'if \(want\("[^"]+"\)\)' "$script" | sed -E 's/.*"([^"]+)".*/\1/')
have_php=0
command -v php >/dev/null 2>&1 && have_php=1

base_mz=$(count "$bin" run "$script" --only=none)
[ $have_php = 1 ] && base_php=$(count php -n "$script" --only=none)

if [ $have_php = 1 ]; then
  echo "| kernel | php 8.2 | minizts | minizts / php |"
  echo "|---|---:|---:|---:|"
else
  echo "php is not installed: minizts counts only" >&2
  echo "| kernel | minizts |"
  echo "|---|---:|"
fi
tot_mz=0; tot_php=0
for k in $kernels; do
  mz=$(( $(count "$bin" run "$script" --only="$k") - base_mz ))
  tot_mz=$((tot_mz + mz))
  if [ $have_php = 1 ]; then
    php_n=$(( $(count php -n "$script" --only="$k") - base_php ))
    tot_php=$((tot_php + php_n))
    ratio=$(awk -v a="$mz" -v b="$php_n" 'BEGIN { printf "%.2f", a / b }')
    printf "| %s | %d | %d | %s |\n" "$k" "$php_n" "$mz" "$ratio"
  else
    printf "| %s | %d |\n" "$k" "$mz"
  fi
done
if [ $have_php = 1 ]; then
  ratio=$(awk -v a="$tot_mz" -v b="$tot_php" 'BEGIN { printf "%.2f", a / b }')
  printf "| **total** | %d | %d | %s |\n" "$tot_php" "$tot_mz" "$ratio"
else
  printf "| **total** | %d |\n" "$tot_mz"
fi
