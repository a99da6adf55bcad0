#!/usr/bin/env bash
# Side-by-side timing of bench.mz under minizts and under `php -n` (same
# kernels, same machine, alternating runs), as a markdown table of
# per-kernel medians and ratios. Skips, saying so, when php is missing.
#
#   scripts/bench-vs-php.sh [RUNS] [SCRIPT]     # default: 11 runs of bench.mz
#
# BIN=path/to/minizts uses another build instead of building
# target/release/minizts (BIN=target/nonpie/release/minizts after
# `cargo build-nonpie`).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-11}
script=${2:-bench-scripts/bench.mz}
if ! command -v php >/dev/null 2>&1; then
  echo "php is not installed: skipping the side-by-side comparison (Debian: apt-get install php8.2-cli)"
  exit 0
fi
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin minizts
  BIN=target/release/minizts
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$runs"); do
  "$BIN" run "$script" > "$tmp/mz.$i"
  php -n "$script" > "$tmp/php.$i"
done
python3 - "$tmp" "$runs" "$script" <<'PY'
import sys, statistics, re
tmp, runs, script = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def table(path):
    out = {}
    for line in open(path):
        m = re.match(r'^(\S.*?)\s+([0-9.]+)$', line.rstrip())
        if m and not line.startswith('-'):
            out[m.group(1)] = float(m.group(2))
    return out
mz = [table(f"{tmp}/mz.{i}") for i in range(1, runs + 1)]
php = [table(f"{tmp}/php.{i}") for i in range(1, runs + 1)]
names = [k for k in php[0] if k != "Total"] + ["Total"]
print(f"`{script}`, {runs} alternating runs each, median seconds per kernel:\n")
print("| kernel | php 8.2 | minizts | minizts / php |")
print("|---|---:|---:|---:|")
for k in names:
    a = statistics.median(r[k] for r in php)
    b = statistics.median(r[k] for r in mz)
    ratio = f"{b / a:.2f}" if a > 0 else "n/a"
    name = f"**{k}**" if k == "Total" else k
    print(f"| {name} | {a:.3f} | {b:.3f} | {ratio} |")
PY
