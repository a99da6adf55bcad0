//! The multi-threaded runner (`minizts run --threads N --requests M`):
//! every combination of its switches gives every request the right
//! output, `nts` refuses more than one thread, and a request that fails
//! (time limit, memory limit, extension panic) fails alone; threads the
//! process cannot start end the run with one line, never a panic.

mod support;

use std::time::Duration;

use support::{extension, minizts, run, strategies};

const LIMIT: Duration = Duration::from_secs(120);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A script whose output depends on the engine working: functions,
/// arrays, strings, floats, static variables, output buffering.
const SCRIPT: &str = r#"function f($n) { static $calls = 0; $calls++; return $n <= 1 ? 1 : $n * f($n - 1); }
$a = []; for ($i = 0; $i < 50; $i++) { $a["k$i"] = $i * 1.5; }
ob_start(); echo array_sum($a), " ", f(10), " ", strtoupper("ok"); $s = ob_get_clean();
echo $s, " ", json_encode([0.1, 1/3]), "\n";"#;

const OUT: &str = "1837.5 3628800 OK [0.1,0.3333333333333333]\n";

#[test]
fn every_switch_combination_runs_every_request_correctly() {
    let mut failures = Vec::new();
    let mut runs = 0;
    for s in strategies().into_iter().filter(|s| *s != "nts") {
        for init in ["per-thread", "per-request"] {
            for lock in ["std", "spin", "adaptive"] {
                for cache in [true, false] {
                    let mut cmd = minizts(s);
                    cmd.args(["--lock", lock, "run", "--threads", "3", "--requests", "12"])
                        .args(["--thread-init", init, "--output", "all", "--json"]);
                    if !cache {
                        cmd.arg("--no-cache");
                    }
                    cmd.args(["-r", SCRIPT]);
                    let out = run(cmd, LIMIT);
                    runs += 1;
                    let o = text(&out.stdout);
                    let want_report = format!(
                        "{{\"strategy\":\"{s}\",\"threads\":3,\"requests\":12,\"failed\":0,\"thread_init\":\"{init}\",\"lock\":\"{lock}\","
                    );
                    let ok = out.code == Some(0)
                        && o.matches(OUT).count() == 12
                        && o.contains(&want_report)
                        && o.contains(&format!("\"cache\":{cache},"))
                        && out.stderr.is_empty();
                    if !ok {
                        failures.push(format!(
                            "--globals={s} --thread-init={init} --lock={lock} cache={cache}: exit {:?}\n stdout: {}\n stderr: {}",
                            out.code,
                            o.lines().last().unwrap_or(""),
                            text(&out.stderr)
                        ));
                    }
                }
            }
        }
    }
    eprintln!("runner combinations: {runs} run, {} failed", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn nts_refuses_more_than_one_thread_and_runs_one() {
    let mut cmd = minizts("nts");
    cmd.args(["run", "--threads", "2", "--requests", "4", "-r", "echo 1;"]);
    let out = run(cmd, LIMIT);
    assert_eq!(out.code, Some(2));
    assert!(text(&out.stderr).contains("the 'nts' globals strategy allows only one engine thread"));
    assert!(out.stdout.is_empty());

    for init in ["per-thread", "per-request"] {
        let mut cmd = minizts("nts");
        cmd.args([
            "run",
            "--threads",
            "1",
            "--requests",
            "5",
            "--output",
            "all",
            "--thread-init",
            init,
        ]);
        cmd.args(["-r", SCRIPT]);
        let out = run(cmd, LIMIT);
        assert_eq!(out.code, Some(0), "{init}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout).matches(OUT).count(), 5, "{init}");
    }
}

/// Exactly every request whose process-wide number is 1, 2 or 3 mod 4
/// fails — by the time limit, the memory limit and an extension panic —
/// and the others, on the same threads, still print "ok".
#[test]
fn a_failing_request_fails_alone() {
    let faulty = extension("minizts-ext-faulty");
    let script = r#"$n = faulty_sequence();
if ($n % 4 == 1) { while (true) {} }
if ($n % 4 == 2) { $x = str_repeat("x", 200000000); }
if ($n % 4 == 3) { faulty_index(9); }
echo "ok $n\n";"#;
    let mut failures = Vec::new();
    for s in strategies().into_iter().filter(|s| *s != "nts") {
        for init in ["per-thread", "per-request"] {
            let mut cmd = minizts(s);
            cmd.env_remove("MINIZTS_FAULTY")
                .args([
                    "run",
                    "--threads",
                    "2",
                    "--requests",
                    "8",
                    "--output",
                    "all",
                    "--thread-init",
                    init,
                ])
                .args(["-d", "max_execution_time=1", "-d", "memory_limit=64M", "-d"])
                .arg(format!("extension={}", faulty.display()))
                .args(["-r", script]);
            let out = run(cmd, LIMIT);
            let (o, e) = (text(&out.stdout), text(&out.stderr));
            let ok_lines: Vec<&str> = o.lines().filter(|l| l.starts_with("ok ")).collect();
            let good = out.code == Some(1)
                && ok_lines.len() == 2
                && ok_lines.iter().all(|l| l == &"ok 0" || l == &"ok 4")
                && o.contains("requests: 8 (6 failed) on 2 thread(s)")
                && e.matches("Fatal error: Maximum execution time of 1 second exceeded")
                    .count()
                    == 2
                && e.matches("Fatal error: Allowed memory size of 67108864 bytes exhausted")
                    .count()
                    == 2
                && e.matches("Fatal error: Extension 'faulty' panicked in faulty_index()")
                    .count()
                    == 2
                && e.lines().count() == 6;
            if !good {
                failures.push(format!(
                    "--globals={s} --thread-init={init}: exit {:?}\n stdout: {o}\n stderr: {e}",
                    out.code
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The three float-to-string designs print the same digits, on many
/// threads at once (the shared freelist under each lock kind).
#[test]
fn dtoa_designs_print_the_same_on_many_threads() {
    let root = support::root();
    let want = std::fs::read_to_string(root.join("tests/bench/json_floats.check.out")).unwrap();
    let mut failures = Vec::new();
    for dtoa in ["shared", "per-thread", "stateless"] {
        for lock in ["std", "spin", "adaptive"] {
            let mut cmd = minizts("table");
            cmd.current_dir(&root)
                .args([
                    "--dtoa",
                    dtoa,
                    "--lock",
                    lock,
                    "run",
                    "--threads",
                    "4",
                    "--requests",
                    "16",
                ])
                .args(["--output", "all", "bench-scripts/json_floats.mz", "--check"]);
            let out = run(cmd, LIMIT);
            let o = text(&out.stdout);
            if out.code != Some(0) || o.matches(want.as_str()).count() != 16 || !o.contains(&format!("--dtoa={dtoa}")) {
                failures.push(format!(
                    "--dtoa={dtoa} --lock={lock}: exit {:?}\n{}",
                    out.code,
                    text(&out.stderr)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every golden script prints PHP's output with the big-integer digit
/// generator too, with the freelist shared or in EG (floats in echo,
/// var_dump, var_export, json_encode…).
#[test]
fn golden_scripts_print_php_output_under_every_dtoa_design() {
    let root = support::root();
    let scripts = support::scripts(&root.join("tests/golden"));
    let jobs: Vec<(std::path::PathBuf, &str)> = scripts
        .iter()
        .flat_map(|s| ["shared", "per-thread"].map(|d| (s.clone(), d)))
        .collect();
    support::run_all("golden scripts per --dtoa", &jobs, |(script, dtoa)| {
        let want = std::fs::read(script.with_extension("out")).ok()?;
        let code = std::fs::read_to_string(script.with_extension("exit"))
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
            .unwrap_or(0);
        let mut cmd = minizts("tls");
        cmd.current_dir(script.parent().unwrap())
            .args(["--dtoa", dtoa, "run"])
            .arg(script.file_name().unwrap());
        let out = run(cmd, LIMIT);
        (out.stdout != want || out.code != Some(code)).then(|| {
            format!(
                "{} --dtoa={dtoa}: exit {:?}\n{}",
                script.display(),
                out.code,
                support::diff(&want, &out.stdout)
            )
        })
    });
}

/// A worker that cannot start its engine fails the requests it took and
/// those nobody ran, once each.
#[test]
fn requests_no_engine_could_run_count_once_each() {
    let mut cmd = minizts("table");
    cmd.args(["run", "-d", "bogus=1", "--threads", "2", "--requests", "5"])
        .args(["--thread-init", "per-request", "--no-cache", "-r", "echo 1;"]);
    let out = run(cmd, LIMIT);
    assert_eq!(out.code, Some(1));
    assert!(
        text(&out.stdout).starts_with("requests: 5 (5 failed) on 2 thread(s)"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stderr).contains("minizts: a worker stopped: unknown setting: bogus"));
}

/// `cmd` run under an address-space limit of `kib` KiB (`ulimit -v`), so
/// that only a few 512 MiB engine stacks fit.
fn under_address_limit(cmd: std::process::Command, kib: u64) -> std::process::Command {
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$@\""))
        .arg("sh")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_remove("MINIZTS_GLOBALS");
    sh
}

/// More worker threads than the process can start: one line saying how
/// many could, exit 2, no request run and no panic; a count that fits
/// runs every request.
#[test]
fn worker_threads_that_cannot_start_are_one_line_and_exit_2() {
    for init in ["per-thread", "per-request"] {
        let mut cmd = minizts("table");
        cmd.args(["run", "--threads", "64", "--requests", "64", "--thread-init", init])
            .args(["--output", "all", "-r", "echo \"ok\\n\";"]);
        let out = run(under_address_limit(cmd, 8_000_000), LIMIT);
        let e = text(&out.stderr);
        assert_eq!(out.code, Some(2), "{init}: {e}");
        assert!(out.stdout.is_empty(), "{init}: {}", text(&out.stdout));
        assert_eq!(e.lines().count(), 1, "{init}: {e}");
        assert!(!e.contains("panicked"), "{init}: {e}");
        assert!(
            e.starts_with("minizts: cannot start worker thread ")
                && e.contains(" of 64 (each needs 512 MiB of stack): ")
                && e.contains("; no request was run: use --threads "),
            "{init}: {e}"
        );
        let fits: usize = e
            .split("use --threads ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{init}: no thread count in {e}"));
        assert!((1..64).contains(&fits), "{init}: {e}");

        let mut cmd = minizts("table");
        cmd.args(["run", "--threads", "2", "--requests", "6", "--thread-init", init])
            .args(["--output", "all", "-r", "echo \"ok\\n\";"]);
        let out = run(under_address_limit(cmd, 8_000_000), LIMIT);
        assert_eq!(out.code, Some(0), "{init}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout).matches("ok\n").count(), 6, "{init}");
    }
}

/// Not even the engine thread fits: one line, exit 1, for a plain run
/// and for the threaded runner.
#[test]
fn an_engine_thread_that_cannot_start_is_one_line_and_exit_1() {
    for threaded in [false, true] {
        let mut cmd = minizts("tls");
        cmd.arg("run");
        if threaded {
            cmd.args(["--threads", "2"]);
        }
        cmd.args(["-r", "echo 1;"]);
        let out = run(under_address_limit(cmd, 400_000), LIMIT);
        let e = text(&out.stderr);
        assert_eq!(out.code, Some(1), "{e}");
        assert!(out.stdout.is_empty());
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.starts_with("minizts: cannot start the engine thread (it needs 512 MiB of stack): "),
            "{e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
}

/// The request body for [`every_way_of_failing_fails_alone`]: request `n`
/// (the extension's start-order counter) takes case `n % 20`. Every case
/// prints `begin n` first; the failing ones stop there, the others print
/// what they compute and `end n`.
fn hostile_script() -> String {
    let chain = "$x .= ".repeat(40);
    format!(
        r#"$n = faulty_sequence();
echo "begin $n\n";
switch ($n % 20) {{
    case 1: if ($n < 40) {{ while (true) {{}} }} break;
    case 2: $a = [1]; $b = [1]; $a[] = &$b; $b[] = &$a; var_dump($a == $b); break;
    case 3: $a = [1]; $a[] = &$a; var_dump($a == $a, $a <=> $a, array_search($a, [$a])); break;
    case 4: $x = "ab"; {chain}$x; break;
    case 5: $x = str_split(str_repeat("x", 100000000), 1); break;
    case 6: $s = "a"; $s[1e11] = "x"; break;
    case 7: echo sprintf("%2147483646d", 1); break;
    case 8: if ($n < 40) {{ echo levenshtein(str_repeat("abcd", 25000), str_repeat("bcda", 25000)); }} break;
    case 9: faulty_index(9); break;
    case 10: for ($i = 0; $i < 20000; $i++) {{ $c = [str_repeat("x", 100)]; $c[] = &$c; }} unset($c); echo gc_collect_cycles() > 0 ? "collected\n" : "none\n"; break;
    case 11: $d = []; for ($i = 0; $i < 200000; $i++) {{ $d = [$d]; }} $e = $d; var_dump($d == $e); unset($d, $e); break;
    case 12: $a = [1, 2]; foreach ($a as &$v) {{ echo "$v\n"; if ($v == 2) array_unshift($a, 0); }} unset($v); break;
    case 13: echo strlen([]); break;
    case 14: echo intdiv(1, 0); break;
    case 15: $f = function ($k) use (&$f) {{ return $f($k + 1); }}; $f(0); break;
    case 16: $x = explode(",", str_repeat(",", 100000000)); break;
    case 17: exit(3);
    default: break;
}}
echo "end $n\n";"#
    )
}

/// What request `n` of [`hostile_script`] prints on stdout when it
/// succeeds (`None`: it fails after printing `begin n`), as PHP 8.2 does.
fn hostile_output(n: usize) -> Option<String> {
    let middle = match n % 20 {
        1 | 8 if n < 40 => return None,
        2 | 4 | 5 | 6 | 7 | 9 | 13 | 14 | 15 | 16 | 17 => return None,
        3 => "bool(true)\nint(0)\nint(0)\n",
        10 => "collected\n",
        11 => "bool(true)\n",
        12 => "1\n2\n",
        _ => "",
    };
    Some(format!("begin {n}\n{middle}end {n}\n"))
}

/// Two hundred requests on two threads, a tenth of which end each way a
/// hostile script can end (time limit in a loop and inside a builtin (`levenshtein`),
/// memory limit inside one statement, one builtin, one string offset
/// write, one `sprintf` width, runaway recursion, nesting too deep, an
/// uncaught error, an extension panic, `exit(3)`) and others that used
/// to take the process down (self-referencing arrays, cycles, deep
/// nesting, `foreach` over a changing array). The run finishes, reports
/// exactly the failed requests by number, and every request's stdout is
/// there: whole for those that succeed, up to the failure for the rest.
#[test]
fn every_way_of_failing_fails_alone() {
    const REQUESTS: usize = 200;
    let faulty = extension("minizts-ext-faulty");
    let mut cmd = minizts("tls");
    cmd.env_remove("MINIZTS_FAULTY")
        .env("RUST_BACKTRACE", "1")
        .args(["run", "--threads", "2", "--requests"])
        .arg(REQUESTS.to_string())
        .args(["--output", "all"])
        .args(["-d", "max_execution_time=1", "-d", "memory_limit=64M", "-d"])
        .arg(format!("extension={}", faulty.display()))
        .args(["-r", &hostile_script()]);
    let out = run(cmd, LIMIT);
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.code, Some(1), "stdout: {o}\nstderr: {e}");
    // Outputs come in the order requests were taken; each starts with
    // its `begin n` line, which maps a request's place to its case.
    let (outputs, report) = o.split_at(o.find("requests: ").expect("the report"));
    let mut chunks: Vec<String> = Vec::new();
    for line in outputs.split_inclusive('\n') {
        match chunks.last_mut() {
            Some(c) if !line.starts_with("begin ") => c.push_str(line),
            _ => chunks.push(line.to_string()),
        }
    }
    assert_eq!(chunks.len(), REQUESTS, "one output per request: {outputs}");
    let mut failed = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let n: usize = chunk["begin ".len()..chunk.find('\n').unwrap()]
            .parse()
            .expect("a request number");
        match hostile_output(n) {
            Some(want) => assert_eq!(chunk, &want, "request {i} (case {n})"),
            None => {
                assert_eq!(chunk, &format!("begin {n}\n"), "request {i} (case {n})");
                failed.push(i);
            }
        }
    }
    let listed: Vec<usize> = report
        .lines()
        .find_map(|l| l.strip_prefix("failed requests (numbered from 0 in the order taken): "))
        .expect("the failed requests are listed")
        .split(", ")
        .flat_map(|r| match r.split_once('-') {
            Some((a, b)) => (a.parse::<usize>().unwrap()..=b.parse().unwrap()).collect::<Vec<_>>(),
            None => vec![r.parse().unwrap()],
        })
        .collect();
    assert_eq!(listed, failed, "{report}");
    assert!(
        report.starts_with(&format!(
            "requests: {REQUESTS} ({} failed) on 2 thread(s)",
            failed.len()
        )),
        "{report}"
    );
    let count = |needle: &str| e.matches(needle).count();
    let per_case = REQUESTS / 20;
    assert_eq!(
        count("Fatal error: Maximum execution time of 1 second exceeded"),
        4,
        "{e}"
    );
    assert_eq!(
        count("Fatal error: Nesting level too deep - recursive dependency?"),
        per_case,
        "{e}"
    );
    // `.=`, str_split, the string offset, sprintf, recursion, explode.
    assert_eq!(
        count("Fatal error: Allowed memory size of 67108864 bytes exhausted"),
        6 * per_case,
        "{e}"
    );
    assert_eq!(count("Warning: String offset cast occurred"), per_case, "{e}");
    assert_eq!(
        count("Fatal error: Extension 'faulty' panicked in faulty_index()"),
        per_case,
        "{e}"
    );
    assert_eq!(count("Fatal error: Uncaught TypeError: strlen()"), per_case, "{e}");
    assert_eq!(
        count("Fatal error: Uncaught DivisionByZeroError: Division by zero"),
        per_case,
        "{e}"
    );
    for bad in ["panicked at", "RUST_BACKTRACE", "stack backtrace", "internal error"] {
        assert!(!e.contains(bad), "{bad}: {e}");
    }
}
