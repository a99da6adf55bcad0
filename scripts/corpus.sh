#!/usr/bin/env bash
# The benchmark corpus (bench-scripts/corpus/*.mz) under minizts, `php -n`
# and `php -n` with opcache on and the JIT off, as one markdown table.
#
#   scripts/corpus.sh [FILTER]              # wall time: the median of RUNS
#                                           # alternating runs of each process
#   RUNS=11 scripts/corpus.sh nbody         # programs whose name contains "nbody"
#   scripts/corpus.sh --callgrind [FILTER]  # instructions (valgrind --tool=callgrind)
#
# Time mode runs each program at its timed size (no arguments); the three
# engines take turns, the first of each round rotating, and every run is a
# whole process (start-up and compilation included). The total row sums
# the medians.
#
# Callgrind mode runs each program once per engine at the middle size its
# header names on its `// callgrind: ARGS` line (a tenth or so of the timed
# work, as valgrind runs the engines 30 to 100 times slower: the whole
# corpus takes some minutes). A run of an empty script is subtracted from
# each count, so that start-up (far longer in php than in minizts)
# is not counted; compiling the program is. Counts repeat exactly for the
# same binaries and scripts.
#
# Both modes compare each engine's stdout with plain php's and mark a
# program whose output differs. BIN=path/to/minizts uses another build
# instead of building target/release/minizts; PHP=path/to/php another php.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=time
filter=""
for arg in "$@"; do
  case "$arg" in
    --callgrind) mode=callgrind ;;
    -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "corpus.sh: unknown option $arg" >&2; exit 2 ;;
    *) filter=$arg ;;
  esac
done

php=${PHP:-php}
if ! command -v "$php" >/dev/null 2>&1; then
  echo "php is not installed: nothing to compare with (Debian: apt-get install php8.2-cli)" >&2
  exit 1
fi
if [ "$mode" = callgrind ] && ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind is not installed (Debian: apt-get install valgrind)" >&2
  exit 1
fi
if [ -z "${BIN:-}" ]; then
  cargo build --release -j1 --quiet --bin minizts
  BIN=target/release/minizts
fi

commit=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain)" ] || commit="$commit (with uncommitted changes)"

exec python3 - "$mode" "$filter" "$BIN" "$php" "$commit" "${RUNS:-5}" <<'PY'
import glob, os, re, statistics, subprocess, sys, time

mode, name_filter, mz, php, commit, runs = sys.argv[1:7]
runs = int(runs)
programs = sorted(p for p in glob.glob("bench-scripts/corpus/*.mz")
                  if name_filter in os.path.basename(p)[:-3])
if not programs:
    sys.exit(f"corpus.sh: no program in bench-scripts/corpus/ matches {name_filter!r}")

opcache = ["-d", "zend_extension=opcache", "-d", "opcache.enable_cli=1", "-d", "opcache.jit=off"]
engines = [
    ("php", lambda p, a: [php, "-n", p, *a]),
    ("opcache", lambda p, a: [php, "-n", *opcache, p, *a]),
    ("minizts", lambda p, a: [mz, "run", p, *a]),
]

def run(cmd):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)

def check_ok(name, engine, r):
    if r.returncode != 0:
        err = r.stderr.decode(errors="replace").strip().splitlines()[-3:]
        sys.exit(f"corpus.sh: {name} under {engine} exited {r.returncode}: " + " / ".join(err))

version = run([php, "-n", "-r", "echo PHP_VERSION;"]).stdout.decode()
probe = run([php, "-n", *opcache, "-r",
             "echo function_exists('opcache_get_status') && opcache_get_status() !== false ? 1 : 0;"])
if probe.stdout.decode().strip() != "1":
    print("warning: opcache did not load; the opcache column is plain php", file=sys.stderr)

def ratio(a, b):
    return f"{a / b:.2f}" if b > 0 else "n/a"

print(f"minizts at {commit} ({mz}), php {version} (`php -n`; opcache: "
      f"`-d zend_extension=opcache -d opcache.enable_cli=1 -d opcache.jit=off`)\n")

if mode == "time":
    print(f"Wall time, median of {runs} alternating runs of each whole process, seconds:\n")
    print("| program | php 8.2 | php 8.2 + opcache | minizts | minizts / php | minizts / opcache |")
    print("|---|---:|---:|---:|---:|---:|")
    totals = [0.0, 0.0, 0.0]
    for path in programs:
        name = os.path.basename(path)[:-3]
        times = [[] for _ in engines]
        outputs = [None] * len(engines)
        for r in range(runs):
            for k in range(len(engines)):
                e = (r + k) % len(engines)
                label, make = engines[e]
                start = time.perf_counter()
                res = run(make(path, []))
                times[e].append(time.perf_counter() - start)
                check_ok(name, label, res)
                if outputs[e] is None:
                    outputs[e] = res.stdout
        med = [statistics.median(t) for t in times]
        for i, m in enumerate(med):
            totals[i] += m
        mark = "" if outputs[1] == outputs[0] == outputs[2] else " (output differs from php's!)"
        print(f"| {name}{mark} | {med[0]:.3f} | {med[1]:.3f} | {med[2]:.3f} | "
              f"{ratio(med[2], med[0])} | {ratio(med[2], med[1])} |", flush=True)
    print(f"| **total** | {totals[0]:.3f} | {totals[1]:.3f} | {totals[2]:.3f} | "
          f"{ratio(totals[2], totals[0])} | {ratio(totals[2], totals[1])} |")
else:
    def callgrind(name, label, cmd):
        r = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd])
        check_ok(name, label, r)
        counts = re.findall(r"(?:Collected :|refs:)\s*([0-9][0-9,]*)", r.stderr.decode(errors="replace"))
        if not counts:
            sys.exit(f"corpus.sh: no instruction count from valgrind for {name} under {label}")
        return int(counts[-1].replace(",", "")), r.stdout

    empty = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"corpus-empty-{os.getpid()}.mz")
    with open(empty, "w") as f:
        f.write("<?php\n")
    base = [callgrind("empty script", label, make(empty, []))[0] for label, make in engines]
    os.unlink(empty)
    print("Instructions (valgrind --tool=callgrind, millions), at each program's "
          "`// callgrind:` size, less a run of an empty script (php "
          f"{base[0] / 1e6:.1f} M, php + opcache {base[1] / 1e6:.1f} M, minizts {base[2] / 1e6:.1f} M):\n")
    print("| program | arguments | php 8.2 | php 8.2 + opcache | minizts | minizts / php | minizts / opcache |")
    print("|---|---|---:|---:|---:|---:|---:|")
    totals = [0, 0, 0]
    for path in programs:
        name = os.path.basename(path)[:-3]
        m = re.search(r"^// callgrind:(.*)$", open(path, encoding="utf-8").read(), re.M)
        if not m:
            sys.exit(f"corpus.sh: {path} has no `// callgrind: ARGS` line")
        args = m.group(1).split()
        counts, outputs = [], []
        for label, make in engines:
            n, out = callgrind(name, label, make(path, args))
            counts.append(n - base[len(counts)])
            outputs.append(out)
        for i, n in enumerate(counts):
            totals[i] += n
        mark = "" if outputs[1] == outputs[0] == outputs[2] else " (output differs from php's!)"
        c = [f"{n / 1e6:.1f}" for n in counts]
        print(f"| {name}{mark} | `{' '.join(args)}` | {c[0]} | {c[1]} | {c[2]} | "
              f"{ratio(counts[2], counts[0])} | {ratio(counts[2], counts[1])} |", flush=True)
    t = [f"{n / 1e6:.1f}" for n in totals]
    print(f"| **total** | | {t[0]} | {t[1]} | {t[2]} | "
          f"{ratio(totals[2], totals[0])} | {ratio(totals[2], totals[1])} |")
PY
