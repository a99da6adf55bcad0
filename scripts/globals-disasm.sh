#!/usr/bin/env bash
# The machine code of one executor-globals read under each globals
# strategy, as compiled in this very binary: the probe functions
# `minizts_probe_<strategy>` (crates/globals/src/probes.rs) each read EG's
# interrupt flag, the field the VM reads at every backward jump and call,
# through one strategy's accessor, and nothing else.
#
# For each strategy it prints the objdump excerpt, the number of
# instructions the access takes (the probe's instructions less the three
# every probe ends with: test/setne/ret turn the byte into a bool and
# return), and, when valgrind is installed, the instructions one call of
# the probe executes, counted by callgrind (this includes what the access
# calls into, e.g. pthread_getspecific in libc for `fetch`).
#
#   scripts/globals-disasm.sh            # builds target/release/minizts
#   scripts/globals-disasm.sh BINARY     # another build, e.g. a thin-LTO one
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ge 1 ]; then
  bin=$1
else
  cargo build --release --quiet --bin minizts
  bin=target/release/minizts
fi
command -v objdump >/dev/null || { echo "objdump is needed (Debian: binutils)" >&2; exit 1; }

strategies=$("$bin" --globals=help | awk '{print $1}')
# Run every probe once: they must work, not only exist.
"$bin" globals --probe | grep '^probe' >&2

declare -A executed
if command -v valgrind >/dev/null; then
  for s in $strategies; do
    # Collect only inside the probe (and what it calls), one call of it.
    executed[$s]=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      --toggle-collect="minizts_probe_$s" "$bin" globals --probe 2>&1 >/dev/null |
      sed -nE 's/.*Collected : ([0-9]+).*/\1/p')
  done
fi

# TABLE=FILE also writes a markdown summary there.
printf '| strategy | instructions in the access | executed per probe call (callgrind) |\n|---|---:|---:|\n' >"${TABLE:=/dev/null}"
for s in $strategies; do
  # -C demangles; the sed drops addresses' hash suffixes and the raw
  # address column, keeping offsets within the function.
  body=$(objdump -d -C --no-show-raw-insn -M intel --disassemble="minizts_probe_$s" "$bin" |
    sed -n "/<minizts_probe_$s>:/,/^\$/p" | sed '/^$/d' |
    sed -E 's/::h[0-9a-f]{16}//g; s/\.llvm\.[0-9]+//g')
  total=$(($(echo "$body" | wc -l) - 1))
  access=$((total - 3))
  echo "== $s: $access instructions in the access (probe: $total)${executed[$s]:+; one probe call executes ${executed[$s]}}"
  echo "$body" | tail -n +2 | sed -E 's/^ *[0-9a-f]+:\s*/    /'
  echo
  printf '| %s | %s | %s |\n' "$s" "$access" "${executed[$s]:-n/a}" >>"$TABLE"
done
