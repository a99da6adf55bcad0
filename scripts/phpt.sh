#!/usr/bin/env bash
# php-src's own .phpt tests against minizts, with php as the oracle.
#
#   scripts/phpt.sh                 # every selected test; fails if a test on
#                                   # tests/phpt/passing.txt stops passing
#   scripts/phpt.sh array/ strings/ # only tests whose path contains one of these
#   scripts/phpt.sh --update        # rewrite tests/phpt/passing.txt (the ratchet)
#   scripts/phpt.sh --list different  # also list the tests of one status, and why
#   scripts/phpt.sh --why Zend/tests/foo.phpt  # does each part select a test? by which rule?
#   scripts/phpt.sh --part oo       # the object-oriented part of the selection instead
#                                   # (classes, exceptions, namespaces: issue 21), with
#                                   # its own ratchet, tests/phpt/passing-oo.txt (which
#                                   # --part oo --update rewrites), and results file,
#                                   # target/phpt/results-oo.json
#
# The tests come from Debian's php8.2 source package, fetched once into
# target/phpt/ with an apt configuration of this script's own (deb-src
# lines for the suites the system's apt already uses; the system's apt is
# not changed). The installed php8.2-cli's version is tried first, then the
# newest the archive still serves. PHPT_SRC=/path/to/php-src uses a tree you
# have instead. The selection rules and its parts are
# tests/phpt/selection.toml; the comparison is described in scripts/phpt.py.
# BIN=path/to/minizts uses another build instead of building
# target/release/minizts.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v php >/dev/null 2>&1; then
  echo "php is not installed: no oracle (Debian: apt-get install php8.2-cli)" >&2
  exit 1
fi

work=target/phpt
mkdir -p "$work"

fetch() {
  local apt=$work/apt
  mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$work/download"
  # deb-src twins of the system's deb sources (one-line and deb822 files).
  python3 - "$apt/sources.list" <<'PY'
import glob, re, sys
out = []
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        m = re.match(r"\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)", line)
        if m and "debian" in m.group(2):
            out.append(f"deb-src {m.group(1) or ''}{m.group(2)} {m.group(3)} {m.group(4)}")
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in open(path).read().split("\n\n"):
        fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M))
        if "deb" not in fields.get("Types", "").split() or "debian" not in fields.get("URIs", ""):
            continue
        signed = f"[signed-by={fields['Signed-By']}] " if fields.get("Signed-By", "").startswith("/") else ""
        for uri in fields["URIs"].split():
            for suite in fields.get("Suites", "").split():
                out.append(f"deb-src {signed}{uri} {suite} {fields.get('Components', 'main')}")
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
  local opts=(-o "Dir::Etc::SourceList=$PWD/$apt/sources.list" -o Dir::Etc::SourceParts=-
    -o "Dir::State::Lists=$PWD/$apt/lists" -o "Dir::Cache=$PWD/$apt" -q)
  apt-get "${opts[@]}" update >/dev/null
  local installed
  installed=$(dpkg-query -W -f='${Version}' php8.2-cli 2>/dev/null || true)
  local versions
  versions=$( (echo "$installed"; apt-cache "${opts[@]}" showsrc php8.2 | sed -n 's/^Version: //p' | sort -rV) | awk 'NF && !seen[$0]++')
  local v
  for v in $versions; do
    if (cd "$work/download" && apt-get "${opts[@]}" source --download-only "php8.2=$v" >/dev/null 2>&1); then
      local upstream=${v%%-*}
      upstream=${upstream#*:}
      local tarball=$work/download/php8.2_$upstream.orig.tar.xz
      rm -rf "$work/php-src-$upstream"
      mkdir -p "$work/php-src-$upstream"
      tar -xJf "$tarball" -C "$work/php-src-$upstream" --strip-components=1 \
        --wildcards '*/Zend/tests/*' '*/tests/lang/*' '*/ext/standard/tests/*' '*/ext/pcre/tests/*'
      echo "$PWD/$work/php-src-$upstream" >"$work/src-dir"
      [ "$v" = "$installed" ] || echo "phpt.sh: php8.2 $installed's source is no longer served; using $v's tests" >&2
      return 0
    fi
  done
  echo "phpt.sh: could not download Debian's php8.2 source package (tried: $versions)" >&2
  exit 1
}

if [ -z "${PHPT_SRC:-}" ] && { [ ! -f "$work/src-dir" ] || [ ! -d "$(cat "$work/src-dir")" ]; }; then
  fetch
fi

if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin minizts
  BIN=target/release/minizts
fi

exec python3 scripts/phpt.py --bin "$(realpath "$BIN")" "$@"
