#!/usr/bin/env bash
# What each TLS model costs an extension loaded with dlopen, measured on
# the tlsdemo extension (crates/ext-tlsdemo): the same per-thread counter
# kept six ways, one function per way (docs/tls-models.md).
#
#   1. builds target/release/minizts and the tlsdemo and bigtls extensions;
#   2. self-check: every tlsdemo function returns 1, 2, 3 under every
#      globals strategy; tls_models.mz refuses to run without the
#      extension; bigtls fails to load without the tunable, with the
#      loader's message, the path and the remedy, and works with it;
#   3. disassembles each variant's increment function (tlsdemo_inc_*) in
#      the built .so, what they call into (__tls_get_addr, the TLS
#      descriptor function, the host's module_globals), and the engine's
#      own local-exec read for comparison, counting instructions;
#   4. callgrind: instructions one call executes, per variant, from
#      bench-scripts/tls_models.mz run for one kernel (less a run of no
#      kernel, less the empty loop), and inside the increment function;
#   5. wall clock: the script's own timing, median of RUNS runs;
#   6. the static TLS surplus a dlopen'ed library can use on this machine
#      (bisection over test libraries with one initial-exec array);
# and prints a markdown table (TABLE=FILE also writes it there).
#
# Settings (environment): STRATEGIES (default "tls ctx": the host's call
# path is the same under all; tls keeps EG in local-exec TLS, ctx passes
# the table along), CG_N (calls per callgrind run, default 100000), NS_N
# (calls per timing run, default 2000000), RUNS (default 5), SKIP_BUILD=1,
# SKIP_SURPLUS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
STRATEGIES=${STRATEGIES:-tls ctx}
CG_N=${CG_N:-100000}
NS_N=${NS_N:-2000000}
RUNS=${RUNS:-5}
target=${CARGO_TARGET_DIR:-$root/target}
bin=$target/release/minizts
so=$target/release/libminizts_ext_tlsdemo.so
script=bench-scripts/tls_models.mz
variants_all="dynamic initial_exec module_globals host_accessor ctx tlsdesc"

if [ "${SKIP_BUILD:-}" != 1 ]; then
  cargo build --release --quiet -p minizts-cli --bin minizts
  cargo build --release --quiet -p minizts-ext-tlsdemo -p minizts-ext-bigtls
fi
command -v objdump >/dev/null || { echo "objdump is needed (Debian: binutils)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mz() { "$bin" "$@"; }
variants=$(mz run -d extension=minizts_ext_tlsdemo -r 'echo str_replace(",", " ", tlsdemo_variants());')
fail() { echo "SELF-CHECK FAILED: $*" >&2; exit 1; }

# ------------------------------------------------------------ self-check
echo "## Self-check"
expected=""
for v in $variants; do expected+="$v: 1 2 3 (get: 3)"$'\n'; done
for s in $("$bin" --globals=help | awk '{print $1}'); do
  got=$(mz --globals="$s" run -d extension=minizts_ext_tlsdemo "$script" --check) || fail "--check exited $? under $s"
  [ "$got"$'\n' = "$expected" ] || fail "under --globals=$s tls_models.mz --check printed:"$'\n'"$got"
done
echo "every variant returns 1 2 3 under every strategy ($variants)"
if out=$(mz run "$script" 2>&1); then fail "tls_models.mz ran without the extension"; else rc=$?; fi
[ "$rc" = 1 ] && [[ $out == *"needs the tlsdemo extension"* ]] || fail "without the extension: exit $rc, $out"
echo "without the extension: exit 1, \"${out%%$'\n'*}\""
echo '<?php echo bigtls_size(), " ", bigtls_touch(3), " ", bigtls_touch(3), " ", bigtls_touch(515), "\n";' >"$tmp/big.mz"
bigso=$target/release/libminizts_ext_bigtls.so
if out=$(mz run -d extension=minizts_ext_bigtls "$tmp/big.mz" 2>&1); then fail "bigtls loaded without the tunable"; else rc=$?; fi
for want in "cannot allocate memory in static TLS block" "$bigso" "GLIBC_TUNABLES=glibc.rtld.optional_static_tls="; do
  [[ $out == *"$want"* ]] || fail "bigtls error lacks '$want': $out"
done
echo "bigtls without the tunable: exit $rc:"
echo "    $out"
got=$(GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536 mz run -d extension=minizts_ext_bigtls "$tmp/big.mz") ||
  fail "bigtls with the tunable exited $?"
[ "$got" = "4096 3 6 521" ] || fail "bigtls with the tunable printed '$got'"
echo "bigtls with GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536: prints '$got'"
echo

# ---------------------------------------------------------- disassembly
# Prints symbol $2 of object $1 (offsets within the function), and sets
# `count` to the instructions up to the first ret (the hot path; what
# follows the first ret is the cold path).
disasm() {
  local body
  body=$(objdump -d --no-show-raw-insn -M intel --disassemble="$2" "$1" |
    sed -nE "/<$2(@@[^>]*)?>:/,/^\$/p" | sed '/^$/d' | tail -n +2 |
    sed -E 's/^ *[0-9a-f]+:\s*/    /; s/_ZN[0-9A-Za-z_]*17h[0-9a-f]{16}E/<mangled>/g')
  echo "$body"
  count=$(echo "$body" | awk '{n++} /^ *ret/ && !done {print n; done = 1}')
}

declare -A static_count
echo "## The increment functions in $(basename "$so")"
for v in $variants; do
  echo "### tlsdemo_inc_$v"
  disasm "$so" "tlsdemo_inc_$v"
  static_count[$v]=$count
  echo "    ($count instructions to the first ret)"
done
echo
echo "### what they call"
ld=$(readlink -f /lib64/ld-linux-x86-64.so.2)
echo "__tls_get_addr ($ld):"
disasm "$ld" __tls_get_addr
tls_get_addr_count=$count
echo "    ($count instructions on the fast path)"
# _dl_tlsdesc_return is a local symbol: found in glibc's detached debug
# symbols (libc6-dbg) when installed.
buildid=$(readelf -n "$ld" | awk '/Build ID/{print $3}')
dbg=/usr/lib/debug/.build-id/${buildid:0:2}/${buildid:2}.debug
for f in _dl_tlsdesc_return _dl_tlsdesc_dynamic; do
  read -r addr size < <([ -f "$dbg" ] && nm -S "$dbg" | awk -v f="$f" '$4 == f && !n++ {print $1, $2}' || true) || true
  if [ -n "${addr:-}" ]; then
    stop=$(printf '0x%x' $((0x$addr + 0x$size)))
    echo "$f ($ld, from glibc's debug symbols):"
    objdump -d --no-show-raw-insn -M intel --start-address=0x"$addr" --stop-address="$stop" "$ld" |
      sed -n '/>:$/,$p' | tail -n +2 | sed -E 's/^ *[0-9a-f]+:\s*/    /'
  fi
  addr=""
done
host_sym=$(nm "$bin" | awk '/extensions4host14module_globals/ && !n++ {print $3}')
echo "the host's module_globals ($bin):"
disasm "$bin" "$host_sym"
echo "    ($count instructions on the path that finds the block)"
echo "for comparison, the engine's own EG read under --globals=tls (local-exec), minizts_probe_tls:"
disasm "$bin" minizts_probe_tls
echo

# ------------------------------------------------------------ callgrind
declare -A per_call access_ir desc_kind
if command -v valgrind >/dev/null; then
  echo "## Callgrind ($CG_N calls per run)"
  for s in $STRATEGIES; do
    cg() { # kernel -> total instructions; leaves the profile in $tmp/cg.$1
      valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" \
        "$bin" --globals="$s" run -d extension=minizts_ext_tlsdemo "$script" "$CG_N" --only="$1" 2>&1 >/dev/null |
        sed -nE 's/.*Collected : ([0-9]+).*/\1/p'
    }
    none=$(cg none)
    loop=$(cg empty_loop)
    for k in builtin_abs $variants; do
      total=$(cg "$k")
      # Instructions per call: the iteration less the empty loop's.
      per_call[$s.$k]=$(awk -v t="$total" -v l="$loop" -v z="$none" -v n="$CG_N" 'BEGIN{printf "%.1f", (t - l) / n}')
      if [ "$k" != builtin_abs ]; then
        # Inside the increment function, what it calls included.
        inc=$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$tmp/cg.$k" 2>/dev/null |
          awk -v f=":tlsdemo_inc_$k " 'index($0, f) && !n++ {gsub(",", "", $1); print $1}')
        access_ir[$s.$k]=$(awk -v i="${inc:-0}" -v n="$CG_N" 'BEGIN{printf "%.1f", i / n}')
        if [ "$k" = tlsdesc ]; then
          desc_kind[$s]=$(callgrind_annotate --auto=no --threshold=100 "$tmp/cg.$k" 2>/dev/null |
            grep -oE '_dl_tlsdesc_(return|dynamic|undefweak)' | sort -u | tr '\n' ' ' | sed 's/ $//' || true)
        fi
      fi
    done
    echo "--globals=$s: empty loop $(awk -v l="$loop" -v z="$none" -v n="$CG_N" 'BEGIN{printf "%.1f", (l - z) / n}') instructions per iteration; builtin abs() call ${per_call[$s.builtin_abs]}; TLS descriptor function: ${desc_kind[$s]:-n/a}"
  done
  echo
else
  echo "valgrind not installed: no instruction counts" >&2
fi

# ----------------------------------------------------------- wall clock
declare -A ns_call ns_access
echo "## Wall clock: median of $RUNS runs of $script $NS_N"
for s in $STRATEGIES; do
  for r in $(seq "$RUNS"); do
    mz --globals="$s" run -d extension=minizts_ext_tlsdemo "$script" "$NS_N" >"$tmp/ns.$s.$r" || fail "timing run failed"
  done
  for k in builtin_abs $variants; do
    ns_call[$s.$k]=$(cat "$tmp"/ns."$s".* | awk -v k="$k" '$1 == k {print $4}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    [ "$k" = builtin_abs ] && continue
    ns_access[$s.$k]=$(cat "$tmp"/ns."$s".* | awk -v k="repeat_$k" '$1 == k {print $3}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  done
  echo "--globals=$s: one run's output:"
  sed 's/^/    /' "$tmp/ns.$s.1"
done
echo

# -------------------------------------------------------- static surplus
if [ "${SKIP_SURPLUS:-}" != 1 ] && command -v gcc >/dev/null; then
  echo "## Static TLS surplus left for dlopen'ed libraries"
  "$ld" --list-tunables 2>/dev/null | grep -E 'glibc\.rtld\.(nns|optional_static_tls)' | sed 's/^/    /' || true
  cat >"$tmp/ie.c" <<'EOF'
static __thread char block[SIZE] __attribute__((tls_model("initial-exec")));
char ie_touch(int i) { return ++block[i % SIZE]; }
EOF
  # Loads with minizts itself: a library that dlopen accepts then fails
  # the entry check ("no symbol minizts_get_module").
  fits() {
    gcc -O2 -shared -fPIC -DSIZE="$1" "$tmp/ie.c" -o "$tmp/ie.so"
    local out
    out=$("$bin" run --extension "$tmp/ie.so" "$tmp/big.mz" 2>&1 || true)
    case "$out" in
      *"static TLS block"*) return 1 ;;
      *"no symbol"*) return 0 ;;
      *) fail "unexpected: $out" ;;
    esac
  }
  largest() { # the largest initial-exec block that loads, given GLIBC_TUNABLES=$1
    local lo=1 hi=1048576 mid
    while [ $((hi - lo)) -gt 1 ]; do
      mid=$(((lo + hi) / 2))
      if GLIBC_TUNABLES=$1 fits "$mid"; then lo=$mid; else hi=$mid; fi
    done
    echo "$lo"
  }
  for t in "" glibc.rtld.optional_static_tls=0 glibc.rtld.optional_static_tls=1024 glibc.rtld.optional_static_tls=4096; do
    echo "    largest initial-exec block a dlopen'ed library may have${t:+ with GLIBC_TUNABLES=$t}: $(largest "$t") bytes"
  done
  # TLSDESC in a library with no initial-exec access: glibc places its
  # block in static TLS only from the optional part of the surplus.
  if command -v valgrind >/dev/null; then
    printf '%s\n' 'static __thread long counter;' 'long desc_inc(void) { return ++counter; }' >"$tmp/desc.c"
    cat >"$tmp/main.c" <<'EOF'
#include <dlfcn.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) return 2;
  long (*f)(void) = (long (*)(void))dlsym(h, "desc_inc");
  long v = 0;
  for (int i = 0; i < 1000; i++) v = f();
  return v != 1000;
}
EOF
    gcc -O2 -shared -fPIC -mtls-dialect=gnu2 "$tmp/desc.c" -o "$tmp/libdesc.so"
    gcc -O2 "$tmp/main.c" -o "$tmp/descmain" -ldl
    for t in "" glibc.rtld.optional_static_tls=0; do
      GLIBC_TUNABLES=$t valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.desc" "$tmp/descmain" "$tmp/libdesc.so" >/dev/null 2>&1 ||
        fail "TLSDESC probe failed"
      res=$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$tmp/cg.desc" 2>/dev/null |
        awk '/:desc_inc / && !a++ {gsub(",", "", $1); inc = $1}
             /_dl_tlsdesc_(return|dynamic)/ && !b++ {n = $0; sub(/.*:/, "", n); sub(/ .*/, "", n)}
             END {printf "descriptor %s, %.1f instructions per access", n, inc / 1000}')
      echo "    a TLSDESC-only library (gcc -mtls-dialect=gnu2, dlopen'ed by a C program)${t:+ with GLIBC_TUNABLES=$t}: $res"
    done
  fi
  echo "    bigtls's TLS segment: $(printf '%d' "$(readelf -lW "$bigso" | awk '$1 == "TLS" {print $6}')") bytes (memory size)"
  echo "    tlsdemo's TLS segment: $(printf '%d' "$(readelf -lW "$so" | awk '$1 == "TLS" {print $6}')") bytes (memory size)"
  echo "    minizts's own TLS segment (EG and CG under --globals=tls, and std's): $(printf '%d' "$(readelf -lW "$bin" | awk '$1 == "TLS" {print $6}')") bytes (memory size)"
  echo
fi

# ---------------------------------------------------------------- table
model() {
  case $1 in
    dynamic) echo "local-dynamic: \`__tls_get_addr\` (Rust \`thread_local!\` in a cdylib)" ;;
    initial_exec) echo "initial-exec: GOT offset + \`%fs\`" ;;
    module_globals) echo "cached table (a local-dynamic thread-local) + id" ;;
    host_accessor) echo "host call; host reads its local-exec table pointer" ;;
    ctx) echo "no TLS: passed table + id" ;;
    tlsdesc) echo "TLSDESC, descriptor \`${desc_kind[${STRATEGIES%% *}]:-?}\`" ;;
  esac
}
first=${STRATEGIES%% *}
joined() { # key -> "a / b" over the strategies
  local arr=$1 k=$2 out="" s v
  for s in $STRATEGIES; do
    eval "v=\${$arr[\$s.\$k]:-n/a}"
    out+="${out:+ / }$v"
  done
  echo "$out"
}
{
  sl=${STRATEGIES// / \/ }
  echo "| variant | TLS model | instructions in the access | executed in the access (callgrind) | instructions per call (callgrind, $sl) | ns per call ($sl) | ns per access in a loop ($sl) |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  echo "| builtin \`abs()\` | (the engine's own call) | | | $(joined per_call builtin_abs) | $(joined ns_call builtin_abs) | |"
  for v in $variants; do
    echo "| \`tlsdemo_$v()\` | $(model "$v") | ${static_count[$v]} | ${access_ir[$first.$v]:-n/a} | $(joined per_call "$v") | $(joined ns_call "$v") | $(joined ns_access "$v") |"
  done
} | tee "${TABLE:-/dev/null}"
for v in $variants_all; do
  [[ " $variants " == *" $v "* ]] || echo "note: variant $v was not built (see the build script's warning)"
done
echo "(__tls_get_addr's fast path: $tls_get_addr_count instructions; static count = instructions of tlsdemo_inc_* up to its first ret)"
