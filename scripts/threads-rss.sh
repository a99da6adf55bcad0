#!/usr/bin/env bash
# Does the runner's resident memory stay flat over many requests? Runs a
# script that allocates (arrays, strings, floats, closures, output
# buffers) as REQUESTS requests (default 100,000) on THREADS threads
# (default 2), samples VmRSS from /proc every INTERVAL seconds, and
# prints the curve as a markdown table plus first/last/peak.
# CYCLES=1 makes every request also leave reference cycles behind
# (self-referencing arrays and closures that capture themselves, never
# unset), which only the cycle collector or request shutdown can free.
#
#   scripts/threads-rss.sh [EXTRA MINIZTS OPTIONS...]   e.g. --globals=table --thread-init=per-request
#
# BIN=path/to/minizts uses another build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin minizts
  BIN=target/release/minizts
fi
REQUESTS=${REQUESTS:-100000}
THREADS=${THREADS:-2}
INTERVAL=${INTERVAL:-0.5}
script=$(mktemp --suffix=.mz)
trap 'rm -f "$script"' EXIT
cat > "$script" <<'PHP'
<?php
$a = [];
for ($i = 0; $i < 200; $i++) {
    $a["key$i"] = str_repeat(chr(65 + $i % 26), $i) . ($i / 7);
}
$b = array_map(fn($s) => strtoupper($s) . strlen($s), $a);
ob_start();
echo json_encode(array_slice(array_values($b), 0, 50)), count($b);
$out = ob_get_clean();
$f = function ($x) use ($out) { return strlen($out) + $x; };
echo $f(1) > 0 ? "" : "?";
PHP
if [ "${CYCLES:-0}" = 1 ]; then
  cat >> "$script" <<'PHP'
function leave_cycles() {
    $a = [str_repeat("x", 1000)];
    $a[] = &$a;
    $g = function () use (&$g) { return $g; };
}
for ($i = 0; $i < 20; $i++) {
    leave_cycles();
}
$kept = ["self" => null];
$kept["self"] = &$kept;
PHP
fi
"$BIN" run --threads "$THREADS" --requests "$REQUESTS" "$@" "$script" > /tmp/minizts-rss-report.$$ &
pid=$!
echo "| seconds | VmRSS (KiB) |"
echo "|---:|---:|"
start=$(date +%s.%N)
first= last= peak=0
while kill -0 "$pid" 2>/dev/null; do
  rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
  if [ -n "$rss" ]; then
    now=$(date +%s.%N)
    printf '| %.1f | %s |\n' "$(echo "$now - $start" | bc)" "$rss"
    [ -n "$first" ] || first=$rss
    last=$rss
    [ "$rss" -gt "$peak" ] && peak=$rss
  fi
  sleep "$INTERVAL"
done
wait "$pid" || true
echo
cat /tmp/minizts-rss-report.$$
rm -f /tmp/minizts-rss-report.$$
echo "VmRSS: first sample $first KiB, last $last KiB, peak $peak KiB ($REQUESTS requests, $THREADS threads, cycles: ${CYCLES:-0}, options: ${*:-none})"
