#!/usr/bin/env bash
# Runs the unit tests of minizts-core and minizts-globals under Miri, the
# interpreter that reports undefined behaviour as it happens: reads out of
# bounds or of freed or uninitialised memory, `&mut` aliasing (Stacked
# Borrows by default; MIRIFLAGS=-Zmiri-tree-borrows for Tree Borrows), data
# races and leaks.
#
# Needs a nightly toolchain with Miri:
#   rustup toolchain install nightly --component miri --component rust-src
# (the first run builds Miri's sysroot, which fetches the standard
# library's dependencies from crates.io).
#
# Under cfg(miri) the tests that run `php` as a child process are ignored
# and the long loops run fewer cases (Miri is 100 to 1000 times slower
# than native code); see docs/architecture.md, "Where the `unsafe` is".
#
#   scripts/miri.sh                      # both crates
#   scripts/miri.sh -p minizts-globals   # extra arguments go to cargo
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  echo "miri.sh: no nightly toolchain with Miri; install it with" >&2
  echo "  rustup toolchain install nightly --component miri --component rust-src" >&2
  exit 2
fi
if [ $# -eq 0 ]; then
  set -- -p minizts-core -p minizts-globals
fi
exec cargo +nightly miri test "$@"
