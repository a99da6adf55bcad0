#!/usr/bin/env bash
# Where a script's instructions go: the hottest opcode handlers of the run
# loop and the hottest functions, as markdown tables.
#
#   scripts/profile.sh [--perf] [--top=N] [SCRIPT] [ARGS...]
#   scripts/profile.sh --only=mandel2          # SCRIPT defaults to bench-scripts/bench.mz
#   scripts/profile.sh bench-scripts/calls.mz
#
# It runs `minizts run SCRIPT ARGS` under valgrind --tool=callgrind
# (--dump-instr=yes: instructions executed per machine instruction,
# deterministic), or with --perf under `perf record` (time samples;
# cpu-clock when the machine has no hardware counters, as here). The
# globals strategy is the binary's default: MINIZTS_GLOBALS=nts etc.
# changes it. N (default 15) rows per table.
#
# What is counted where:
# - Total: every instruction of the process (start-up and compilation too).
# - Functions: each function's self count, with everything inlined into
#   it (callgrind_annotate's function list, one row per function rather
#   than per function and source file). `minizts_vm::exec::run` is the run
#   loop with all it inlines; what it calls and was not inlined
#   (drop_in_place, clone_counted, hashing, ops::arith, builtins...) is
#   counted in its own row, not in any handler.
# - Handlers: the instructions of minizts_vm::exec::run (rows marked
#   "hot:" were the instructions of the second, hot loop, which was
#   removed at 8305662; builds from before then still show them), each
#   attributed by
#   the binary's debuginfo (addr2line -i) to the line of `fn run` it was
#   inlined at, and that line to the `Op::Name { .. } =>` arm of
#   `match *op` it belongs to (the last arm starting above it): the arm's
#   own lines, with whatever from other files (Value::clone, array
#   lookups, pointer arithmetic...) was inlined there. Not in any arm:
#   "(dispatch)", the loop head and the `match` (fetch, step, jump through
#   the table); "macro NAME!", code expanded from run's own macros (reg!,
#   raw!, set!, opnd!, jump!...: a local macro's debuginfo points into its
#   definition, not into the arm that used it); "(line 0)", code the
#   compiler merged from several places. Merged code can also carry the
#   line of just one of the arms it serves, so a small count on an arm the
#   script never runs is that. A binary built with
#   RUSTFLAGS="-C collapse-macro-debuginfo=yes" (in another --target-dir,
#   so the normal build stays) puts macro code on the arm that used it;
#   its code is the same (its disassembly differed from the normal build's
#   only in addresses), only the debuginfo differs.
#
# The source used to map lines to arms is the exec.rs the binary's
# debuginfo names; EXEC_RS=path/to/exec.rs gives another (for a binary
# built from a source that has changed since). It is checked against the
# binary: `fn run` must start where the debuginfo says it does (an error
# otherwise), and a warning is printed when over 1 % of the run loop's
# count sits on blank or comment lines.
#
# BIN=path/to/minizts uses another build instead of building
# target/release/minizts (the release profile keeps line tables).
# CALLGRIND_OUT=file keeps callgrind's output (for callgrind_annotate).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=callgrind
top=15
while [ $# -gt 0 ]; do
  case "$1" in
    --perf) mode=perf; shift ;;
    --top=*) top=${1#--top=}; shift ;;
    *) break ;;
  esac
done
case "${1:-}" in
  "" | --*) set -- bench-scripts/bench.mz "$@" ;;
esac
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin minizts
  BIN=target/release/minizts
fi
command -v addr2line >/dev/null || { echo "addr2line is needed (Debian: binutils)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $mode = perf ]; then
  command -v perf >/dev/null || { echo "perf is not installed (Debian: linux-perf)" >&2; exit 1; }
  event=cycles
  if ! perf stat -x, -e cycles true 2>&1 >/dev/null | grep -q '^[0-9]'; then
    echo "perf: no hardware counters here (cycles not supported): sampling cpu-clock, a timer, instead" >&2
    event=cpu-clock
  fi
  if ! perf record -q -F 20000 -e "$event" -o "$tmp/perf.data" -- "$BIN" run "$@" >/dev/null 2>"$tmp/err"; then
    echo "perf record failed (perf_event_paranoid is $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo ?)):" >&2
    cat "$tmp/err" >&2
    exit 1
  fi
  perf script -i "$tmp/perf.data" -F ip,sym,symoff,dso --no-demangle >"$tmp/samples" 2>/dev/null
  unit="samples ($event)"
else
  command -v valgrind >/dev/null || { echo "valgrind is needed (Debian: valgrind)" >&2; exit 1; }
  if ! valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$tmp/cg.out" \
    "$BIN" run "$@" >/dev/null 2>"$tmp/err"; then
    echo "the run failed:" >&2
    grep -v '^==' "$tmp/err" >&2 || true
    exit 1
  fi
  [ -z "${CALLGRIND_OUT:-}" ] || cp "$tmp/cg.out" "$CALLGRIND_OUT"
  unit=instructions
fi
nm -p "$BIN" >"$tmp/nm"
nm -p -C "$BIN" >"$tmp/nm-demangled"

python3 - "$mode" "$tmp" "$BIN" "$top" "$unit" "${EXEC_RS:-}" "$*" <<'PY'
import collections, os, re, subprocess, sys

mode, tmp, binary, top, unit, exec_rs, cmdline = sys.argv[1:]
top = int(top)
RUN = "minizts_vm::exec::run"
HOT = "minizts_vm::exec::hot::run"

# Symbols: mangled name -> (address, demangled name); `nm -p` and
# `nm -p -C` list them in the same order (the symbol table's).
syms = {}
with open(f"{tmp}/nm") as a, open(f"{tmp}/nm-demangled") as b:
    for la, lb in zip(a, b):
        pa, pb = la.split(maxsplit=2), lb.split(maxsplit=2)
        if len(pa) == 3 and len(pb) == 3 and pa[0] == pb[0]:
            syms[pa[2].strip()] = (int(pa[0], 16), pb[2].strip())
run_entries = sorted(addr for addr, name in syms.values() if name == RUN)

fn_count = collections.Counter()  # function -> self count
run_at = collections.Counter()    # address in run -> count
hot_at = collections.Counter()    # address in the hot loop -> count
total = 0

if mode == "callgrind":
    # The callgrind format: "fn=(id) name" (later just "(id)"), cost lines
    # "INSTR LINE COUNT" whose positions may be relative ("+n", "-n") or
    # the same as the last ("*"); the cost line after a "calls=" line is
    # the callee's inclusive cost, not this function's.
    names = {}
    def name(s):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?$", s)
        if not m:
            return s
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "?")
    def pos(tok, last):
        if tok == "*":
            return last
        if tok[0] in "+-":
            return last + int(tok)
        return int(tok, 0)
    fn = None
    last_a = last_l = 0
    call_cost = False
    for line in open(f"{tmp}/cg.out"):
        if line[0] in "0123456789+-*":
            f = line.split()
            last_a, last_l = pos(f[0], last_a), pos(f[1], last_l)
            if call_cost:
                call_cost = False
                continue
            n = int(f[2]) if len(f) > 2 else 0
            total += n
            fn_count[fn] += n
            if fn == RUN:
                run_at[last_a] += n
            elif fn == HOT:
                hot_at[last_a] += n
            continue
        key, _, value = line.rstrip("\n").partition("=")
        if key in ("fn", "cfn"):
            v = name(value)  # cfn= may define a name fn= uses later
            if key == "fn":
                fn = v
        elif key == "calls":
            call_cost = True
else:
    for line in open(f"{tmp}/samples"):
        m = re.match(r"\s*([0-9a-f]+)\s+(.*?)(?:\+0x([0-9a-f]+))?\s+\((.*)\)\s*$", line)
        if not m:
            continue
        total += 1
        sym, off, dso = m.group(2), m.group(3), m.group(4)
        if sym in syms and os.path.exists(dso) and os.path.samefile(dso, binary):
            addr, fname = syms[sym]
            fn_count[fname] += 1
            if fname == RUN:
                run_at[addr + int(off or "0", 16)] += 1
            elif fname == HOT:
                hot_at[addr + int(off or "0", 16)] += 1
        else:
            fn_count[f"{sym} ({os.path.basename(dso)})"] += 1

if total == 0:
    sys.exit("nothing was counted")

# Inline chains of run's addresses (innermost first): the last entry is
# the line of `fn run` the code was inlined at.
addrs = sorted(run_at)
def addr2line(addrs):
    out = subprocess.run(["addr2line", "-e", binary, "-a", "-i", "-f"],
                         input="".join(f"{a:#x}\n" for a in addrs),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    chains, cur, i = {}, None, 0
    while i < len(out):
        if re.fullmatch(r"0x[0-9a-f]+", out[i]):
            cur = int(out[i], 16)
            chains[cur] = []
            i += 1
            continue
        file, _, line = out[i + 1].rpartition(":")
        line = line.split()[0] if line.split() else "0"
        chains[cur].append((file, int(line) if line.isdigit() else 0))
        i += 2
    return chains
hot_addrs = sorted(hot_at)
chains = addr2line(addrs + run_entries + hot_addrs)

# The source, and the label of each of its lines.
outer_files = collections.Counter(chains[a][-1][0] for a in addrs if chains[a][-1][0].endswith("exec.rs"))
debug_path = outer_files.most_common(1)[0][0] if outer_files else chains[run_entries[0]][-1][0]
src_path = exec_rs or debug_path
if not os.path.exists(src_path):
    sys.exit(f"{src_path} (the binary's exec.rs) is not here: give it as EXEC_RS=path")
src = open(src_path).read().splitlines()
def labels(src, prefix=""):
    """The label of each line: the `Op::Name` arm of `fn run`'s match it
    is in, or the loop head, a macro of run's, another function."""
    label = [None] * (len(src) + 1)
    fn_name = macro = arm = None
    in_run = False
    for i, text in enumerate(src, 1):
        m = re.match(r"(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?fn\s+(\w+)", text)
        if m:
            fn_name, in_run, macro, arm = m.group(1), m.group(1) == "run", None, None
        if in_run:
            if m := re.match(r"\s*macro_rules!\s*(\w+)", text):
                macro = m.group(1)
            if arm is None and re.match(r"\s*loop \{", text):
                arm = "(dispatch)"
            if m := re.match(r" {12}(?:\| )?Op::(\w+)\b", text):
                arm = m.group(1)
            elif arm and arm != "(dispatch)" and re.match(r" {0,8}\}", text):
                arm = "(dispatch)"  # the end of the match and of the loop
            label[i] = prefix + (arm or (f"macro {macro}!" if macro else "(run: entry)"))
        else:
            label[i] = prefix + (f"fn {fn_name}" if fn_name else "(top of file)")
    return label
label = labels(src)

# Checks that the source is the one the binary was built from.
run_lines = {chains[a][-1][1] for a in run_entries if chains[a][-1][0] == debug_path}
bad = [l for l in run_lines if not (0 < l <= len(src) and label[l] == "(run: entry)")]
if bad:
    sys.exit(f"{src_path} does not match the binary: its debuginfo puts the start of `fn run` at "
             f"line {bad[0]}; give the exec.rs it was built from as EXEC_RS=path")
on_blank = sum(run_at[a] for a in addrs
               if chains[a][-1][0] == debug_path and 0 < chains[a][-1][1] <= len(src)
               and (not src[chains[a][-1][1] - 1].strip() or src[chains[a][-1][1] - 1].strip().startswith("//")))
run_total = sum(run_at.values()) + sum(hot_at.values())
if run_total and on_blank > 0.01 * run_total:
    print(f"WARNING: {on_blank * 100 / run_total:.1f} % of run's count sits on blank or comment lines of "
          f"{src_path}: it is probably not the source the binary was built from (EXEC_RS=path)\n")
if not exec_rs and os.path.getmtime(src_path) > os.path.getmtime(binary):
    print(f"note: {src_path} changed after {binary} was built; the arms below assume it did not move lines\n")

# Each instruction of run goes to the label of the line it was inlined at.
by_label = collections.Counter()
for a in addrs:
    file, line = chains[a][-1]
    if file == debug_path and 0 < line <= len(src):
        by_label[label[line]] += run_at[a]
    else:
        by_label["(line 0: code merged from several places)"] += run_at[a]

# The hot loop (crates/vm/src/exec/hot.rs, the loops made only of
# instructions with call-free fast paths) the same way, its rows marked
# "hot:". Its source is the hot.rs next to the exec.rs used above.
if hot_addrs:
    hot_debug = collections.Counter(chains[a][-1][0] for a in hot_addrs
                                    if chains[a][-1][0].endswith("hot.rs")).most_common(1)
    hot_path = os.path.join(os.path.dirname(src_path), "exec", "hot.rs") if exec_rs else (
        hot_debug[0][0] if hot_debug else "")
    if not os.path.exists(hot_path):
        sys.exit(f"{hot_path} (the binary's exec/hot.rs) is not here")
    hot_src = open(hot_path).read().splitlines()
    hot_label = labels(hot_src, "hot: ")
    for a in hot_addrs:
        file, line = chains[a][-1]
        if hot_debug and file == hot_debug[0][0] and 0 < line <= len(hot_src):
            by_label[hot_label[line]] += hot_at[a]
        else:
            by_label["hot: (line 0: code merged from several places)"] += hot_at[a]

def pct(n, d):
    return f"{n * 100 / d:.1f} %" if d else "-"
def fmt(n):
    return f"{n:,}"

print(f"`{binary} run {cmdline}`, {mode}: {fmt(total)} {unit} in all; "
      f"{fmt(run_total)} ({pct(run_total, total)}) in {RUN} and {HOT}, the run loop and the hot "
      "loop with what they inline")
print(f"\nHandlers (top {top}): the two loops' {unit} by the arm of {os.path.relpath(src_path)} "
      "or (rows marked hot:) exec/hot.rs they were inlined at\n")
print(f"| handler | {unit} | % of total | % of the loops |")
print("|---|---:|---:|---:|")
for k, n in by_label.most_common(top):
    print(f"| {k} | {fmt(n)} | {pct(n, total)} | {pct(n, run_total)} |")
rest = sum(n for _, n in by_label.most_common()[top:])
if rest:
    print(f"| ({len(by_label) - top} more) | {fmt(rest)} | {pct(rest, total)} | {pct(rest, run_total)} |")
macros = sum(n for k, n in by_label.items() if k.startswith("macro "))
if macros > 0.01 * run_total:
    print(f"\n{pct(macros, run_total)} of run is in macro rows, code of run's own macros that many arms "
          "use; to put it on the arms, profile a build with collapsed macro debuginfo (the same code):\n"
          "RUSTFLAGS='-C collapse-macro-debuginfo=yes' cargo build --release --bin minizts "
          "--target-dir target/collapsed; BIN=target/collapsed/release/minizts scripts/profile.sh ...")

print(f"\nFunctions (top {top}), self {unit} with what is inlined into each\n")
print(f"| function | {unit} | % of total |")
print("|---|---:|---:|")
for k, n in fn_count.most_common(top):
    k = str(k).replace("|", "\\|")
    print(f"| {k} | {fmt(n)} | {pct(n, total)} |")
PY
