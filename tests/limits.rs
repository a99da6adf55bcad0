//! `memory_limit` and `max_execution_time` hold inside statements and
//! builtins: each case is a script that passes a limit in one statement
//! or one builtin call, run as its own `minizts run` process. Every case
//! must end the way PHP ends it: exit 255 with PHP's fatal message on
//! stderr, the stdout printed before the failure kept (`start` and
//! nothing after it), no Rust panic or backtrace (`RUST_BACKTRACE=1` is
//! set to make one show), no signal, a peak RSS under 1 GiB (the default
//! limit is 128 MB), and for the time limit an end within 3 seconds of
//! it (PHP's hard timeout allows 2).
//!
//! The cases are the shapes issue 18 found taking the process down, and
//! a case for each builtin whose work or result grows with a product of
//! its inputs or with a size the script chose. Inputs are built before
//! the time limit is set (`ini_set` starts it afresh), so the builtin is
//! what the limit interrupts. The binary is the one cargo built for the
//! tests, or `MINIZTS_TEST_BIN`; `MINIZTS_TEST_FILTER` runs the cases
//! whose name contains it.

#[path = "support.rs"]
mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which limit a case passes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Limit {
    /// The default `memory_limit` of 128 MB.
    Memory,
    /// `max_execution_time` of 1 second, set just before the builtin.
    Time,
    /// Either, whichever comes first: work that makes a large result as
    /// it goes reaches the time limit in a slow build, the memory limit
    /// in a fast one.
    Either,
}

struct Case {
    name: &'static str,
    limit: Limit,
    /// The script after `<?php`: it builds its input, then prints
    /// `start` (through `START`, which also sets the time limit for
    /// time cases), then passes the limit.
    body: String,
}

/// Where a case's script prints `start` (and a time case sets its limit).
const START: &str = "echo \"start\\n\";";
const SET_TIME_LIMIT: &str = "ini_set('max_execution_time', 1);";

const MEMORY_MESSAGE: &str = "Allowed memory size of 134217728 bytes exhausted (tried to allocate ";
const TIME_MESSAGE: &str = "Maximum execution time of 1 second exceeded";

/// The most a process may take. Issue 18 asks for less than 1 GiB under
/// the default limit; the cases stay far below that when every check
/// holds (the largest limit a case sets is 512 MB), so half of it still
/// catches a result made whole before it is checked.
const MAX_RSS: u64 = 512 << 20;
/// A time case ends this soon after its limit (a second) at the latest.
const TIME_CASE_WALL: Duration = Duration::from_secs(4);
/// A memory case ends this soon at the latest (PHP's own take a fraction
/// of a second; the debug build is slower, and CI's cores are shared).
const MEMORY_CASE_WALL: Duration = Duration::from_secs(15);
/// Past this a case is killed (it would have failed anyway).
const KILL_AFTER: Duration = Duration::from_secs(30);

fn case(name: &'static str, limit: Limit, body: &str) -> Case {
    Case {
        name,
        limit,
        body: body.to_string(),
    }
}

fn cases() -> Vec<Case> {
    use Limit::{Either, Memory, Time};
    let concat = format!("$x = 'x'; $x{};", " .= $x".repeat(40));
    vec![
        // The cases of issue 18: one statement or builtin past the memory limit.
        case("concat_40_deep", Memory, &format!("START {concat}")),
        case("str_split", Memory, "START $a = str_split(str_repeat('x', 100000000), 1);"),
        case("explode", Memory, "START $a = explode(',', str_repeat(',', 100000000));"),
        case("string_offset_1e11", Memory, "START $s = 'abc'; $s[1e11] = 'x';"),
        case("string_offset_4e9", Memory, "START $s = 'abc'; $s[4e9] = 'x';"),
        case("sprintf_width", Memory, "START $s = sprintf('%2147483646d', 1);"),
        case("str_repeat", Memory, "START $s = str_repeat('ab', 1000000000);"),
        case("str_pad", Memory, "START $s = str_pad('x', 1000000000);"),
        case("array_fill", Memory, "START $a = array_fill(0, 100000000, 0);"),
        case("range", Memory, "START $a = range(1, 100000000);"),
        // Builtins whose result grows with a product of their inputs.
        case(
            "number_format_separator",
            Memory,
            "START $s = number_format(1e308, 2, '.', str_repeat(',', 20000000));",
        ),
        case(
            "json_encode_shared_string",
            Memory,
            "START $s = json_encode(array_fill(0, 2000, str_repeat('x', 1000000)));",
        ),
        case(
            "print_r_shared_string",
            Memory,
            "START $s = print_r(array_fill(0, 2000, str_repeat('x', 1000000)), true);",
        ),
        case(
            "var_export_shared_string",
            Memory,
            "START $s = var_export(array_fill(0, 2000, str_repeat('x', 1000000)), true);",
        ),
        case(
            "substr_replace_items",
            Memory,
            "START $a = substr_replace(array_fill(0, 2000, ''), str_repeat('x', 1000000), 0);",
        ),
        case(
            "str_replace_subjects",
            Memory,
            "START $a = str_replace('a', str_repeat('b', 1000000), array_fill(0, 2000, 'a'));",
        ),
        case(
            "strtr_long_replacement",
            Memory,
            "START $s = strtr(str_repeat('a', 1000000), ['a' => str_repeat('b', 2000), 'bb' => '']);",
        ),
        case("array_chunk_singles", Memory, "$a = range(1, 3000000); START $c = array_chunk($a, 1);"),
        case(
            "array_merge_unpacked",
            Memory,
            "$a = range(1, 1000000); START $m = array_merge(...array_fill(0, 200, $a));",
        ),
        case(
            "array_map_rows",
            Memory,
            "$a = range(1, 3000000); START $m = array_map(null, $a, $a);",
        ),
        case(
            "htmlspecialchars_entities",
            Memory,
            "$s = str_repeat('\"', 50000000); START $h = htmlspecialchars($s);",
        ),
        case(
            "str_word_count_words",
            Memory,
            "$s = str_repeat('a ', 50000000); START $w = str_word_count($s, 1);",
        ),
        // The cases of issue 18 under a one-second limit.
        // Random text: no long common substring for similar_text to stop
        // at (on issue 18's "abab…" and "baba…" it now answers at once).
        case(
            "similar_text_60k",
            Time,
            "mt_srand(1); $a = ''; $b = ''; \
             for ($i = 0; $i < 60000; $i++) { $a .= chr(97 + mt_rand(0, 3)); $b .= chr(97 + mt_rand(0, 3)); } \
             START echo similar_text($a, $b);",
        ),

        case(
            "levenshtein_100k",
            Time,
            "$a = str_repeat('abcd', 25000); $b = str_repeat('bcda', 25000); START echo levenshtein($a, $b);",
        ),
        case(
            "sort_3m",
            Time,
            "ini_set('memory_limit', '512M'); $a = range(1, 3000000); START rsort($a, SORT_STRING);",
        ),
        case(
            "usort_3m",
            Time,
            "ini_set('memory_limit', '512M'); $a = range(1, 3000000); START usort($a, fn($x, $y) => $y <=> $x);",
        ),
        // Builtins whose work grows with a product of their inputs.
        case(
            "count_recursive_shared",
            Time,
            "$a = array_fill(0, 1000, array_fill(0, 1000, array_fill(0, 1000, range(1, 1000)))); \
             START echo count($a, COUNT_RECURSIVE);",
        ),
        case(
            "in_array_of_arrays",
            Time,
            "$a = range(1, 100000); $h = array_fill(0, 100000, $a); $a[99999] = 0; START var_dump(in_array($a, $h));",
        ),
        case(
            "min_of_arrays",
            Time,
            "$a = range(1, 100000); $h = array_fill(0, 100000, $a); $a[99999] = 0; $h[0] = $a; \
             START var_dump(min($h));",
        ),
        case(
            "array_diff_unpacked",
            Time,
            "$a = range(1, 100000); START $d = array_diff([1, 2], ...array_fill(0, 100000, $a));",
        ),
        case(
            "array_intersect_key_unpacked",
            Time,
            "$a = range(1, 1000000); START $d = array_intersect_key($a, ...array_fill(0, 2000, $a));",
        ),
        case(
            "array_replace_unpacked",
            Time,
            "$a = range(1, 1000000); START $r = array_replace(['k' => 1], ...array_fill(0, 3000, $a));",
        ),
        case(
            "str_replace_many_searches",
            Time,
            "$s = str_repeat('abcdefgh', 100000); $q = []; for ($i = 0; $i < 100000; $i++) $q[] = \"x$i\"; \
             START $r = str_replace($q, 'y', $s);",
        ),
        case(
            "strtr_many_key_lengths",
            Time,
            "$s = str_repeat('a', 1000000); $p = []; for ($i = 1; $i <= 2000; $i++) $p[str_repeat('a', $i) . 'b'] = 'x'; \
             START echo strlen(strtr($s, $p));",
        ),
        case(
            "json_encode_shared_nest",
            Either,
            "$a = array_fill(0, 1000, array_fill(0, 1000, array_fill(0, 1000, range(1, 1000)))); \
             START $s = json_encode($a);",
        ),
        case(
            "var_export_shared_nest",
            Either,
            "$a = array_fill(0, 1000, array_fill(0, 1000, array_fill(0, 1000, range(1, 1000)))); \
             START $s = var_export($a, true);",
        ),
    ]
}

/// What a finished child did.
struct Outcome {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// The exit code, or the signal that ended it.
    status: Result<i32, i32>,
    wall: Duration,
    max_rss: u64,
}

/// The binary under test.
fn binary() -> std::ffi::OsString {
    std::env::var_os("MINIZTS_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_minizts").into())
}

/// Runs `path` as `minizts run`, measuring its peak RSS with `wait4`.
fn run(path: &std::path::Path) -> Outcome {
    let start = Instant::now();
    let mut child = Command::new(binary())
        .arg("run")
        .arg(path)
        .env("RUST_BACKTRACE", "1")
        .env_remove("MINIZTS_GLOBALS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn minizts");
    let pid = child.id() as libc::pid_t;
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = read(Box::new(child.stdout.take().expect("stdout")));
    let err = read(Box::new(child.stderr.take().expect("stderr")));
    // The child is reaped here rather than by `Child::wait`, for its
    // rusage. It is first waited for without reaping, so a kill by the
    // watchdog can only reach it (or its zombie), never a process that
    // reused its id.
    let reaped = Arc::new(Mutex::new(false));
    let watchdog = {
        let reaped = reaped.clone();
        std::thread::spawn(move || {
            let until = Instant::now() + KILL_AFTER;
            while Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
                if *reaped.lock().unwrap() {
                    return;
                }
            }
            let reaped = reaped.lock().unwrap();
            if !*reaped {
                // SAFETY: `pid` is our unreaped child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        })
    };
    loop {
        // SAFETY: waitid fills the siginfo it is given.
        let r = unsafe {
            let mut info = std::mem::zeroed::<libc::siginfo_t>();
            libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT)
        };
        if r == 0 {
            break;
        }
        assert_eq!(
            std::io::Error::last_os_error().kind(),
            std::io::ErrorKind::Interrupted,
            "waitid"
        );
    }
    let wall = start.elapsed();
    let (status, max_rss) = {
        let mut reaped = reaped.lock().unwrap();
        let mut status = 0;
        // SAFETY: wait4 fills the status and rusage it is given; the
        // child has exited, so it returns at once.
        let usage = unsafe {
            let mut usage = std::mem::zeroed::<libc::rusage>();
            let r = libc::wait4(pid, &mut status, 0, &mut usage);
            assert_eq!(r, pid, "wait4");
            usage
        };
        *reaped = true;
        let status = if libc::WIFEXITED(status) {
            Ok(libc::WEXITSTATUS(status))
        } else {
            Err(libc::WTERMSIG(status))
        };
        (status, usage.ru_maxrss as u64 * 1024)
    };
    let _ = watchdog.join();
    // Already reaped: dropping `child` waits for nothing.
    drop(child);
    Outcome {
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        status,
        wall,
        max_rss,
    }
}

/// The script of `c`.
fn script(c: &Case) -> String {
    let start = match c.limit {
        Limit::Memory => START.to_string(),
        Limit::Time | Limit::Either => format!("{START} {SET_TIME_LIMIT}"),
    };
    format!("<?php\n{}\necho \"not reached\\n\";\n", c.body.replace("START", &start))
}

/// Runs case `c`; a report of what went wrong, if anything did.
fn check(c: &Case, dir: &std::path::Path) -> Option<String> {
    let path = dir.join(format!("{}.mz", c.name));
    std::fs::write(&path, script(c)).expect("write the case's script");
    let o = run(&path);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let messages: &[&str] = match c.limit {
        Limit::Memory => &[MEMORY_MESSAGE],
        Limit::Time => &[TIME_MESSAGE],
        Limit::Either => &[MEMORY_MESSAGE, TIME_MESSAGE],
    };
    let mut problems = Vec::new();
    match o.status {
        Ok(255) => {}
        Ok(code) => problems.push(format!("exit code {code}, expected 255")),
        Err(signal) => problems.push(format!("killed by signal {signal}")),
    }
    if o.stdout != b"start\n" {
        let shown = String::from_utf8_lossy(&o.stdout[..o.stdout.len().min(200)]).into_owned();
        problems.push(format!("stdout {shown:?}, expected \"start\\n\""));
    }
    let place = format!(" in {} on line ", path.display());
    let fatal = |l: &str| {
        messages
            .iter()
            .any(|m| l.strip_prefix("Fatal error: ").is_some_and(|rest| rest.starts_with(m)))
            && l.contains(&place)
    };
    if !stderr.lines().any(fatal) {
        problems.push(format!(
            "stderr lacks \"Fatal error: {}… in {}\"",
            messages.join("…\" or \""),
            path.display()
        ));
    }
    for bad in ["panicked", "RUST_BACKTRACE", "stack backtrace", "memory allocation of"] {
        if stderr.contains(bad) {
            problems.push(format!("stderr has {bad:?}"));
        }
    }
    if o.max_rss >= MAX_RSS {
        problems.push(format!("peak RSS {} MiB", o.max_rss >> 20));
    }
    let wall_limit = match c.limit {
        Limit::Memory => MEMORY_CASE_WALL,
        Limit::Time | Limit::Either => TIME_CASE_WALL,
    };
    if o.wall >= wall_limit {
        problems.push(format!(
            "took {:.1} s (at most {} s)",
            o.wall.as_secs_f64(),
            wall_limit.as_secs()
        ));
    }
    eprintln!(
        "  {:<30} {:?}: {:.2} s, {} MiB",
        c.name,
        c.limit,
        o.wall.as_secs_f64(),
        o.max_rss >> 20
    );
    if problems.is_empty() {
        return None;
    }
    let head: String = stderr.lines().take(4).map(|l| format!("      | {l}\n")).collect();
    Some(format!(
        "{} ({:?}):\n    {}\n    stderr:\n{head}",
        c.name,
        c.limit,
        problems.join("\n    ")
    ))
}

#[test]
fn limits_hold_inside_statements_and_builtins() {
    let mut cases = cases();
    if let Ok(filter) = std::env::var("MINIZTS_TEST_FILTER") {
        cases.retain(|c| c.name.contains(&filter));
    }
    let dir = std::env::temp_dir().join(format!("minizts-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the cases");
    let started = Instant::now();
    support::run_all("limit cases", &cases, |c| check(c, &dir));
    eprintln!("limit cases: {:.1} s in all", started.elapsed().as_secs_f64());
    let _ = std::fs::remove_dir_all(&dir);
}
