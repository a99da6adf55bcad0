#!/usr/bin/env bash
# Thread scaling of the multi-threaded runner (`minizts run --threads N
# --requests M`): requests per second and p99 latency for each thread
# count, across globals strategies, --thread-init, --lock and --dtoa.
# Prints markdown tables (docs/threads.md quotes them).
#
#   scripts/threads-scaling.sh [CASE...]
#
# CASEs (default: all of them):
#   strategies   hello.mz and a CPU-bound kernel under every strategy
#   thread-init  hello.mz, per-thread vs per-request engine start, each lock
#                (the FrankenPHP case, seed 002)
#   dtoa         json_floats.mz under --dtoa=shared|per-thread|stateless,
#                each lock (php-src #13974, seed 000)
#
# THREADS="1 2 4 8" sets the thread counts; SCALE=2 doubles every request
# count (longer, steadier runs); BIN=path/to/minizts uses another build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin minizts
  BIN=target/release/minizts
fi
THREADS=${THREADS:-"1 2 4 8"}
SCALE=${SCALE:-1}
cases=${*:-strategies thread-init dtoa}

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || echo unknown)
echo "machine: $(nproc) CPU(s) ($cpu); threads beyond $(nproc) are oversubscribed"
echo "binary: $BIN; commands: \`$BIN [GLOBAL OPTIONS] run --threads N --requests M --json SCRIPT\`"
echo

# One cell: "REQ/S (p99 MS)" for `minizts GLOBAL... run --threads N --requests M SCRIPT...`.
cell() {
  local n=$1 m=$2
  shift 2
  local global=() rest=()
  while [ $# -gt 0 ] && [ "$1" != run ]; do global+=("$1"); shift; done
  shift
  rest=("$@")
  local out
  out=$("$BIN" "${global[@]}" run --threads "$n" --requests "$m" --json "${rest[@]}" 2>/dev/null | tail -1) || true
  if ! echo "$out" | grep -q '"failed":0'; then
    printf 'failed'
    return
  fi
  echo "$out" | sed -E 's/.*"requests_per_s":([0-9.]+).*"p99_us":([0-9.]+).*/\1 \2/' |
    awk '{ if ($1 < 100) printf "%.1f (%.0f)", $1, $2; else printf "%.0f (%.0f)", $1, $2 }'
}

header() {
  printf '| %s |' "$1"
  for n in $THREADS; do printf ' %s thread(s) |' "$n"; done
  echo
  printf '|---|'
  for _ in $THREADS; do printf -- '---:|'; done
  echo
}

row() {
  local label=$1 m=$2
  shift 2
  printf '| %s |' "$label"
  for n in $THREADS; do
    printf ' %s |' "$(cell "$n" "$m" "$@")"
  done
  echo
}

hello=$((1000000 * SCALE))
start=$((20000 * SCALE))
cpu=$((40 * SCALE))
json=$((2000 * SCALE))
shared=$((400 * SCALE))

for c in $cases; do
  case $c in
    strategies)
      echo "### Strategies: hello.mz, $hello requests (requests/s, p99 latency in µs in brackets)"
      echo
      header "--globals"
      for s in ctx fetch table offset tls; do
        row "$s" "$hello" --globals="$s" run bench-scripts/hello.mz
      done
      echo
      echo "### Strategies: bench.mz --only=mandel (CPU-bound), $cpu requests"
      echo
      header "--globals"
      for s in ctx fetch table offset tls; do
        row "$s" "$cpu" --globals="$s" run bench-scripts/bench.mz --only=mandel
      done
      echo
      ;;
    thread-init)
      echo "### Engine start per thread or per request: hello.mz, $hello requests per thread, $start per request"
      echo
      header "--globals --thread-init --lock"
      for s in table tls; do
        for init in per-thread per-request; do
          for lock in std spin adaptive; do
            [ "$init" = per-thread ] && [ "$lock" != std ] && continue
            m=$hello
            [ "$init" = per-request ] && m=$start
            row "$s $init $lock" "$m" --globals="$s" --lock="$lock" run --thread-init="$init" bench-scripts/hello.mz
          done
        done
      done
      echo
      ;;
    dtoa)
      echo "### Float formatting: json_floats.mz (2,000 floats per request), $json requests ($shared with the shared freelist), --globals=tls"
      echo
      header "--dtoa --lock"
      for d in shared per-thread stateless; do
        for lock in std spin adaptive; do
          [ "$d" != shared ] && [ "$lock" != std ] && continue
          m=$json
          [ "$d" = shared ] && m=$shared
          row "$d $lock" "$m" --globals=tls --dtoa="$d" --lock="$lock" run bench-scripts/json_floats.mz
        done
      done
      echo
      ;;
    *)
      echo "unknown case: $c (strategies, thread-init, dtoa)" >&2
      exit 2
      ;;
  esac
done
