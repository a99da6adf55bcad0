#!/usr/bin/env bash
# Regenerate the expected outputs of the golden tests from the real PHP (the oracle).
#
#   scripts/golden-from-php.sh                 # every tests/golden/**/*.mz
#   scripts/golden-from-php.sh path/a.mz ...   # only these scripts
#   VERBOSE=1 scripts/golden-from-php.sh ...   # also show each script's stderr
#
# For every NAME.mz it writes NAME.out (stdout, always created) and NAME.exit
# (exit code + newline, only when it is not 0; a stale NAME.exit is removed).
# NAME.err files are hand-written and left alone.
set -u
PHP=${PHP:-php}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ "$#" -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(find "$root/tests/golden" -name '*.mz' | sort)
fi

count=0
for f in "${files[@]}"; do
    case "$f" in *.mz) ;; *) echo "skipping $f (not a .mz file)" >&2; continue ;; esac
    [ -f "$f" ] || { echo "missing: $f" >&2; continue; }
    dir=$(cd "$(dirname "$f")" && pwd)
    name=$(basename "$f" .mz)
    errtmp=$(mktemp)
    (cd "$dir" && "$PHP" -n -d display_errors=stderr "$name.mz" > "$name.out" 2> "$errtmp")
    rc=$?
    if [ "$rc" -eq 137 ] && grep -q '^Hard memory limit of ' "$errtmp"; then
        # Newer PHP 8.2 builds (Debian's 8.2.36) end some over-limit
        # requests this way instead of with the fatal error 8.2.31 gave
        # (exit 255); the recorded exit code is kept (see
        # tests/differential.rs, `hard_memory_limit`).
        echo "$f: php stopped at its hard memory limit (exit 137); keeping $name.exit" >&2
        rm -f "$errtmp"
        count=$((count + 1))
        continue
    fi
    if [ "$rc" -ne 0 ]; then
        echo "$rc" > "$dir/$name.exit"
    else
        rm -f "$dir/$name.exit"
    fi
    if [ -n "${VERBOSE:-}" ] && [ -s "$errtmp" ]; then
        echo "== $f (exit $rc) stderr:" >&2
        cat "$errtmp" >&2
    fi
    rm -f "$errtmp"
    count=$((count + 1))
done
echo "generated $count script(s)" >&2
