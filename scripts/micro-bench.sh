#!/usr/bin/env bash
# php-src's Zend/micro_bench.php, case by case, under minizts and `php -n`:
# the instructions each case executes (valgrind --tool=callgrind), as one
# markdown table with the ratio minizts/php.
#
#   scripts/micro-bench.sh              # every case, N iterations each
#   N=200000 scripts/micro-bench.sh     # fewer iterations (default 1000000)
#   scripts/micro-bench.sh new 'this->f'  # only cases whose label contains one of these
#
# The script is read from the php8.2 source tarball that scripts/phpt.sh
# fetches into target/phpt/download/ (run that first; nothing of php-src is
# committed). Each case becomes a script of its own: the benchmark's
# function and class declarations, `const N` set to the iteration count,
# and the one call that the benchmark times for the case (with `$x = new
# Foo` before the method cases, as the benchmark has it). A script with
# the declarations alone is subtracted from each count, so that start-up
# and compilation are not counted; what is left is the loop of N
# iterations, the loop's own cost included (the `empty_loop` row shows it).
# Counts repeat exactly for the same binaries.
#
# BIN=path/to/minizts uses another build instead of building
# target/release/minizts; PHP=path/to/php another php.
set -euo pipefail
cd "$(dirname "$0")/.."

php=${PHP:-php}
n=${N:-1000000}
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin minizts
  BIN=target/release/minizts
fi
command -v valgrind >/dev/null || { echo "valgrind is needed (Debian: valgrind)" >&2; exit 1; }
tarball=$(ls target/phpt/download/php8.2_*.orig.tar.xz 2>/dev/null | head -1)
[ -n "$tarball" ] || { echo "no php8.2 source tarball: run scripts/phpt.sh first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xJf "$tarball" -C "$work" --wildcards '*/Zend/micro_bench.php'
src=$(find "$work" -name micro_bench.php | head -1)

# One script per case: `name<TAB>label` lines in $work/cases.
python3 - "$src" "$work" "$n" "$@" <<'PY'
import re, sys
src, work, n, filters = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
text = open(src).read()
head, tail = text.split("const N = 5000000;", 1)
calls = re.findall(r"^(\$?[\w>-]+\(N\));\n\$t = end_test\(\$t, '((?:[^'\\]|\\.)*)'", tail, re.M)
if not calls:
    sys.exit("micro-bench.sh: no cases found in micro_bench.php")
open(f"{work}/base.php", "w").write(head + f"const N = {n};\n")
with open(f"{work}/cases", "w") as out:
    for i, (call, label) in enumerate(calls):
        label = label.replace("\\'", "'")
        if filters and not any(f in label for f in filters):
            continue
        setup = "$x = new Foo();\n" if call.startswith("$x->") else ""
        open(f"{work}/c{i:02d}.php", "w").write(head + f"const N = {n};\n" + setup + call + ";\n")
        out.write(f"c{i:02d}\t{label}\n")
PY

count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    awk '/Collected/ {print $4}'
}
php_base=$(count "$php" -n "$work/base.php")
mz_base=$(count "$BIN" run "$work/base.php")

echo "Zend/micro_bench.php, $n iterations per case, millions of instructions"
echo "($("$php" -r 'echo PHP_VERSION;') -n against minizts $(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo
echo "| case | php | minizts | minizts/php |"
echo "|---|---:|---:|---:|"
total_php=0
total_mz=0
while IFS=$'\t' read -r name label; do
  p=$(( $(count "$php" -n "$work/$name.php") - php_base ))
  m=$(( $(count "$BIN" run "$work/$name.php") - mz_base ))
  total_php=$(( total_php + p ))
  total_mz=$(( total_mz + m ))
  awk -v l="$label" -v p="$p" -v m="$m" \
    'BEGIN { printf "| `%s` | %.1f | %.1f | %.2f |\n", l, p / 1e6, m / 1e6, (p > 0 ? m / p : 0) }'
done < "$work/cases"
awk -v p="$total_php" -v m="$total_mz" \
  'BEGIN { printf "| total | %.1f | %.1f | %.2f |\n", p / 1e6, m / 1e6, (p > 0 ? m / p : 0) }'
