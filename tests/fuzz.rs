//! Robustness: thousands of generated and mutated scripts go through the
//! lexer, parser, compiler and VM, and none may panic, abort or hang.
//!
//! Seeds are the golden and bench scripts. Each case is a mutation of a
//! seed (bytes flipped, ranges deleted or duplicated, tokens inserted,
//! two scripts spliced) or a randomly generated program. Every case runs
//! with a 64 MiB memory limit and a 200 ms time limit, output and
//! messages discarded. The generator is deterministic;
//! `MINIZTS_FUZZ_CASES=N` changes how many cases run (the long mode:
//! `MINIZTS_FUZZ_CASES=1000000`, docs/architecture.md has the last such
//! run) and `MINIZTS_FUZZ_SEED=S` the seed. A failing input is written to
//! the system temp directory for reproduction with `minizts run`, and the
//! case being run is always in `minizts-fuzz-current.mz` there (what a
//! hard timeout, which ends the process, was running). The
//! shapes that used to take the process down are among the tokens and
//! seeds: self- and mutually referencing arrays, huge sizes handed to
//! builtins, long builtins, changes to an array inside `foreach`, deep
//! nesting. A case that panics fails the test; one that aborts or
//! overflows the stack ends the test process, and one that never stops
//! ends it through the hard timeout (exit 124), which fails it too; the
//! process's peak RSS must stay under 1 GiB.

#[path = "support.rs"]
mod support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use minizts_globals::{eg, memory::CountingAlloc, ErrorSink, Sink, Tls};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    "$x",
    "$a[]",
    "$a[0]",
    "=",
    "=&",
    ".",
    "+",
    "-",
    "*",
    "/",
    "%",
    "**",
    "<=>",
    "??",
    "?",
    ":",
    "!",
    "&&",
    "||",
    "and",
    "\"",
    "'",
    "\"$x[\"",
    "{$",
    "?>",
    "<?php ",
    "function f(",
    "fn() =>",
    "foreach ($a as $k => &$v)",
    "for (;;)",
    "while (1)",
    "break 2;",
    "continue;",
    "return",
    "global $g;",
    "static $s = [];",
    "unset($a[1]);",
    "isset($x[1][2])",
    "9223372036854775807",
    "1e308",
    "0x",
    "\\",
    "/*",
    "*/",
    "//",
    "#",
    "\n",
    "echo ",
    "print ",
    "array(",
    "list(",
    "[...",
    "@",
    "(int)",
    "(string)",
    "(array)",
    "switch ($x) { case 1: ",
    "default:",
    "do {",
    "} while (0);",
    "str_repeat('x', 99999999)",
    "range(0, 100000)",
    "usort($a, 'strcmp');",
    "exit;",
    "die(",
    "$f = function() use (&$x) { return $x; };",
    "$f()",
    "strlen(",
    "sprintf('%'",
    "1/0",
    "intdiv(1, 0)",
    "[[[[[",
    "]]]]]",
    "$a[$a[$a]]",
    "\"${x}\"",
    "\"\\u{",
    "elseif",
    "else if",
    "&$",
    "...$a",
    // Self-referencing and mutually referencing arrays, and what walks
    // them: comparisons, searches, sorts, printing, copies, the collector.
    "$a[] = &$a;",
    "$b = [1]; $a[] = &$b; $b[] = &$a;",
    "$a == $a",
    "$a <=> $b",
    "$a === $b",
    "in_array($a, $a)",
    "array_search($a, [$b])",
    "sort($a);",
    "max($a, $b)",
    "var_export($a, true)",
    "print_r($a, true)",
    "json_encode($a)",
    "count($a, COUNT_RECURSIVE)",
    "gc_collect_cycles()",
    "$a = [$a, $a];",
    "array_merge_recursive($a, $a)",
    // Huge sizes handed to builtins and string offsets.
    "str_repeat('ab', 2000000000)",
    "str_pad('', 3000000000)",
    "array_fill(0, 1000000000, 1)",
    "range(1, 10000000000)",
    "range(0, 1, 0.0000000001)",
    "sprintf('%2000000000d', 1)",
    "$s = 'x'; $s[10000000000] = 'y';",
    "str_split(str_repeat('x', 10000000))",
    "explode(',', str_repeat(',', 10000000))",
    "implode(',', array_fill(0, 5000000, 'abc'))",
    "array_pad([], 1000000000, 0)",
    "wordwrap(str_repeat('a ', 1000000), 1, str_repeat('-', 1000), true)",
    "str_replace('a', str_repeat('b', 100000), str_repeat('a', 100000))",
    // Long builtins (the time limit must stop them).
    "similar_text(str_repeat('ab', 30000), str_repeat('ba', 30000))",
    "levenshtein(str_repeat('a', 100000), str_repeat('b', 100000))",
    "usort($a, fn($x, $y) => $x <=> $y);",
    // Changing an array while iterating over it.
    "foreach ($a as &$v) { array_unshift($a, 0); }",
    "foreach ($a as $k => $v) { unset($a[$k]); $a[] = $v; }",
    "foreach ($a as &$v) { $a = [1, 2]; }",
    "foreach ($a as &$v) { array_pop($a); }",
];

fn mutate(rng: &mut Rng, seed: &[u8], other: &[u8]) -> Vec<u8> {
    let mut s = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = s.len();
        match rng.below(6) {
            0 if len > 0 => {
                let i = rng.below(len);
                s[i] = rng.next() as u8;
            }
            1 if len > 0 => {
                let i = rng.below(len);
                let n = rng.below(20.min(len - i) + 1);
                s.drain(i..i + n);
            }
            2 if len > 0 => {
                let i = rng.below(len);
                let n = rng.below(40.min(len - i) + 1);
                let chunk = s[i..i + n].to_vec();
                let at = rng.below(s.len() + 1);
                s.splice(at..at, chunk);
            }
            3 => {
                let at = rng.below(len + 1);
                let t = rng.pick(TOKENS).as_bytes();
                s.splice(at..at, t.iter().copied());
            }
            4 if !other.is_empty() => {
                let cut = rng.below(len + 1);
                let from = rng.below(other.len());
                s.truncate(cut);
                s.extend_from_slice(&other[from..]);
            }
            _ => {
                let at = rng.below(len + 1);
                s.insert(at, b"(){}[];$'\"\\"[rng.below(11)]);
            }
        }
    }
    s
}

fn gen_expr(rng: &mut Rng, depth: u32) -> String {
    if depth == 0 {
        return match rng.below(8) {
            0 => rng.below(100).to_string(),
            1 => format!("{}.{}", rng.below(10), rng.below(100)),
            2 => "'s'".into(),
            3 => "\"a$x b\"".into(),
            4 => "null".into(),
            5 => "[1, 'k' => 2]".into(),
            6 => "$a[1]".into(),
            _ => format!("${}", ["x", "y", "a", "u"][rng.below(4)]),
        };
    }
    let a = gen_expr(rng, depth - 1);
    let b = gen_expr(rng, depth - 1);
    match rng.below(12) {
        0 => format!(
            "({a} {} {b})",
            rng.pick(&["+", "-", "*", "/", "%", ".", "**", "<<", "&", "^", "|"])
        ),
        1 => format!(
            "({a} {} {b})",
            rng.pick(&["==", "===", "<", ">=", "<=>", "!=", "&&", "||", "??", "xor"])
        ),
        2 => format!("({a} ? {b} : {})", gen_expr(rng, depth - 1)),
        3 => format!("f({a}, {b})"),
        4 => format!("[{a}, {b}]"),
        5 => format!("${} = {a}", ["x", "y", "a"][rng.below(3)]),
        6 => format!("$a[{a}] = {b}"),
        7 => format!(
            "{}({a})",
            rng.pick(&["strlen", "count", "intval", "strtoupper", "abs", "is_int", "gettype"])
        ),
        8 => format!("-{a}"),
        9 => format!("!{a}"),
        10 => format!("(string){a}"),
        _ => format!("$a[] = {a}"),
    }
}

fn generate(rng: &mut Rng) -> Vec<u8> {
    let mut s = String::from("<?php\nfunction f($p, $q = 1) { static $n = 0; $n++; return $p; }\n$a = [];\n");
    for _ in 0..1 + rng.below(8) {
        let depth = 1 + rng.below(4) as u32;
        let e = gen_expr(rng, depth);
        s.push_str(&match rng.below(6) {
            0 => format!("echo {e}, \"\\n\";\n"),
            1 => format!("if ({e}) {{ $y = {e}; }} else {{ $x = 1; }}\n"),
            2 => format!("foreach ([{e}, 2] as $k => $v) {{ $a[$k] = $v; }}\n"),
            3 => format!("for ($i = 0; $i < 3; $i++) {{ $x = {e}; }}\n"),
            4 => format!("var_dump({e});\n"),
            _ => format!("{e};\n"),
        });
    }
    s.into_bytes()
}

/// Compiles and runs one input; returns whether it compiled and whether
/// it ran to the end without an error.
fn run_case(g: Tls, src: &[u8]) -> (bool, bool) {
    let script = match minizts_compiler::compile(g, src, "fuzz.mz") {
        Ok(s) => s,
        Err(_) => return (false, false),
    };
    eg!(g, |eg| {
        eg.settings.memory_limit = Some(64 * 1024 * 1024);
        eg.settings.max_execution_time = Duration::from_millis(200);
        eg.errors = ErrorSink::Discard;
    });
    let outcome = minizts_vm::run_request(g, script, &[], Sink::Discard);
    (true, outcome.error.is_none())
}

#[test]
fn no_input_crashes_the_engine() {
    let cases: usize = std::env::var("MINIZTS_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2500);
    let seed: u64 = std::env::var("MINIZTS_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234);
    let root = support::root();
    let mut seeds: Vec<Vec<u8>> = support::scripts(&root.join("tests/golden"))
        .into_iter()
        .chain(support::scripts(&root.join("bench-scripts")))
        .filter_map(|p| std::fs::read(p).ok())
        .collect();
    assert!(!seeds.is_empty());
    // Deeply nested input must be refused cleanly, not overflow a stack.
    seeds.push(format!("<?php echo {}1{};", "(".repeat(20000), ")".repeat(20000)).into_bytes());
    seeds.push(format!("<?php $x = {}1;", "!".repeat(100000)).into_bytes());
    seeds.push(format!("<?php $x = 1{};", " + 1".repeat(100000)).into_bytes());
    seeds.push(b"<?php function r($n) { return r($n + 1); } r(0);".to_vec());
    seeds.push(b"<?php $s = 'x'; while (true) { $s .= $s; }".to_vec());
    seeds.push(b"<?php $a = []; for ($i = 0; ; $i++) { $a[] = [$i]; }".to_vec());
    seeds.push(b"<?php $a = [1]; $a[0] = &$a; var_dump($a); $a[0][0][0] = 5;".to_vec());
    seeds.push(b"<?php function f() { return array_map('f', [1]); } f();".to_vec());
    seeds.push(b"<?php $a = [1]; $a[] = &$a; $b = [1]; $b[] = &$b; var_dump($a == $a); var_dump($a == $b);".to_vec());
    seeds.push(
        b"<?php $a = []; for ($i = 0; $i < 100000; $i++) { $a = [$a]; } $b = $a; var_dump($a == $b); unset($a, $b);"
            .to_vec(),
    );
    seeds.push(b"<?php function c() { $x = [str_repeat('x', 1000)]; $x[] = &$x; } for (;;) c();".to_vec());
    seeds.push(b"<?php $x = 'x'; $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x .= $x;".to_vec());
    seeds.push(b"<?php $a = [1, 2]; foreach ($a as &$v) { echo $v; if ($v == 2) array_unshift($a, 0); }".to_vec());
    // foreach by reference over an array that grows under it forever (PHP
    // loops too), and one rebuilt from both ends by nested loops.
    seeds.push(b"<?php $a = [1, 2, 3]; foreach ($a as &$v) { array_splice($a, 1, 0, [$v]); }".to_vec());
    seeds.push(b"<?php $a = [1, 'k' => 2]; foreach ($a as $k => &$v) { foreach ($a as &$w) { array_unshift($a, $k); array_shift($a); unset($a[$k]); $a[] = $w; sort($a); } }".to_vec());

    // The engine runs on a big stack, as in the minizts binary.
    let failures = std::thread::Builder::new()
        .stack_size(512 * 1024 * 1024)
        .spawn(move || {
            let mut rng = Rng(seed | 1);
            let current = std::env::temp_dir().join("minizts-fuzz-current.mz");
            let mut failures = Vec::new();
            let (mut compiled, mut clean) = (0usize, 0usize);
            for i in 0..cases + seeds.len() {
                let input = if i < seeds.len() {
                    seeds[i].clone()
                } else if rng.below(4) == 0 {
                    generate(&mut rng)
                } else {
                    let a = rng.below(seeds.len());
                    let b = rng.below(seeds.len());
                    mutate(&mut rng, &seeds[a], &seeds[b])
                };
                // A case the hard timeout ends takes the process with it:
                // the input it was running is left here.
                let _ = std::fs::write(&current, &input);
                let g: Tls = minizts_vm::thread_startup().expect("engine thread startup");
                let r = catch_unwind(AssertUnwindSafe(|| run_case(g, &input)));
                // SAFETY: `g` is not used after this.
                unsafe { minizts_vm::thread_shutdown(g) };
                if let Ok((c, ok)) = r {
                    compiled += c as usize;
                    clean += ok as usize;
                }
                if let Err(panic) = r {
                    let msg = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    let path = std::env::temp_dir().join(format!("minizts-fuzz-{i}.mz"));
                    let _ = std::fs::write(&path, &input);
                    failures.push(format!(
                        "case {i} panicked: {msg}\n    input saved to {}",
                        path.display()
                    ));
                }
            }
            let _ = std::fs::remove_file(&current);
            let total = cases + seeds.len();
            eprintln!("fuzz: {total} cases, {compiled} compiled, {clean} ran without an error");
            // Every case ran under a 64 MiB limit, so the process never
            // needs much more than that at once.
            let peak = peak_rss_bytes();
            eprintln!("fuzz: peak RSS {} MiB", peak >> 20);
            assert!(peak < 1 << 30, "the fuzz process reached {} MiB", peak >> 20);
            // The mutations must still reach the compiler and the VM often
            // enough for the test to mean something.
            assert!(compiled * 5 >= total, "only {compiled} of {total} cases compiled");
            assert!(clean * 10 >= total, "only {clean} of {total} cases ran cleanly");
            failures
        })
        .expect("spawn the fuzz thread")
        .join()
        .expect("the fuzz thread itself must not die");
    assert!(
        failures.is_empty(),
        "{} of the cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// This process's peak resident memory.
fn peak_rss_bytes() -> u64 {
    // SAFETY: `getrusage` fills the struct it is given.
    let usage = unsafe {
        let mut u = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    usage.ru_maxrss as u64 * 1024
}

/// Endless loops the VM runs in its hot loop (loops made only of
/// instructions with call-free fast paths: `crates/vm/src/exec/hot.rs`)
/// still stop at the time limit: the hot loop checks the interrupt flag
/// on its backward jumps, a jump to itself included, and on its calls, so
/// endless recursion that never runs out of stack stops too.
#[test]
fn endless_hot_loops_stop_at_the_time_limit() {
    let cases = [
        "<?php function f() { while (true) {} } f();",
        "<?php function f() { for (;;) {} } f();",
        "<?php function f() { $i = 0; while (1) { $i = ($i + 1) % 7; } } f();",
        "<?php function f() { for ($i = 0; $i < PHP_INT_MAX; $i++) { $x = $i * 2; } } f();",
        "<?php function f() { $i = 0; do { $i = $i ^ 1; } while ($i >= 0); } f();",
        "<?php function f() { $a = [0]; while ($a[0] == 0) { $a[0] += 0; } } f();",
        "<?php while (true) {}",
        "<?php function g($x) { return $x; } function f() { while (true) { g(1); } } f();",
        "<?php function f($n) { return $n == 0 ? 0 : f($n - 1) + f($n - 1); } f(200);",
        "<?php function a($n) { return $n < 1 ? 0 : b($n - 1) + b($n - 1); } function b($n) { return a($n); } a(300);",
    ];
    // A loop that does not stop must fail the test, not hang it.
    let (done, finished) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        for src in cases {
            let g: Tls = minizts_vm::thread_startup().expect("engine thread startup");
            let script = minizts_compiler::compile(g, src.as_bytes(), "loop.mz").expect("it compiles");
            eg!(g, |eg| {
                eg.settings.max_execution_time = Duration::from_millis(100);
                eg.errors = ErrorSink::Discard;
            });
            let outcome = minizts_vm::run_request(g, script, &[], Sink::Discard);
            // SAFETY: `g` is not used after this.
            unsafe { minizts_vm::thread_shutdown(g) };
            match outcome.error {
                Some(minizts_vm::error::VmError::Fatal { message, .. }) => {
                    assert!(message.starts_with("Maximum execution time"), "{src}: {message}")
                }
                other => panic!("{src}: ended with {other:?}"),
            }
        }
        let _ = done.send(());
    });
    let stopped = finished.recv_timeout(Duration::from_secs(60));
    if stopped.is_err() && worker.is_finished() {
        // The worker panicked: report its message.
        worker.join().expect("every loop stopped with the time limit's error");
    }
    assert!(
        stopped.is_ok(),
        "a loop did not stop within 60 s of a 100 ms time limit"
    );
}
