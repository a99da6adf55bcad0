//! Shared by the script-level test runners: finding scripts, running a
//! command with a time limit, comparing results, and reporting every
//! failure at once.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// Every `*.mz` file under `dir`, sorted; filtered by the
/// `MINIZTS_TEST_FILTER` substring if set.
pub fn scripts(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "mz") {
                out.push(p);
            }
        }
    }
    out.sort();
    if let Ok(filter) = std::env::var("MINIZTS_TEST_FILTER") {
        out.retain(|p| p.to_string_lossy().contains(&filter));
    }
    out
}

/// What a finished process printed and returned.
pub struct Output {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The exit code; `None` if killed (signal or time limit).
    pub code: Option<i32>,
    pub timed_out: bool,
}

/// Runs `cmd` with stdin closed, killing it after `limit`.
pub fn run(mut cmd: Command, limit: Duration) -> Output {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut buf).ok();
        buf
    });
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut buf).ok();
        buf
    });
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("wait after kill");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    Output {
        stdout: out_thread.join().unwrap_or_default(),
        stderr: err_thread.join().unwrap_or_default(),
        code: status.code(),
        timed_out,
    }
}

/// Runs `jobs` on a few threads; each returns `Some(report)` on failure.
/// Panics with every report if any failed.
pub fn run_all<T: Sync>(what: &str, jobs: &[T], job: impl Fn(&T) -> Option<String> + Sync) {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 8);
    let next = Mutex::new(0usize);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(item) = jobs.get(i) else { break };
                if let Some(report) = job(item) {
                    failures.lock().unwrap().push((i, report));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort_by_key(|(i, _)| *i);
    eprintln!("{what}: {} run, {} failed", jobs.len(), failures.len());
    if !failures.is_empty() {
        let text: Vec<String> = failures.into_iter().map(|(_, r)| r).collect();
        panic!("{} {what} failure(s):\n\n{}", text.len(), text.join("\n"));
    }
}

/// A short description of how `got` differs from `want`.
pub fn diff(want: &[u8], got: &[u8]) -> String {
    let w = String::from_utf8_lossy(want);
    let g = String::from_utf8_lossy(got);
    let wl: Vec<&str> = w.split('\n').collect();
    let gl: Vec<&str> = g.split('\n').collect();
    for i in 0..wl.len().max(gl.len()) {
        let (a, b) = (wl.get(i), gl.get(i));
        if a != b {
            return format!(
                "    first difference at line {}:\n      want: {:?}\n      got:  {:?}",
                i + 1,
                a.map_or("<end>", |s| truncate(s)),
                b.map_or("<end>", |s| truncate(s))
            );
        }
    }
    "    (outputs differ only in trailing bytes)".into()
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(200) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Whether PHP 8 is available as `php`.
pub fn php_available() -> bool {
    Command::new("php")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).starts_with("PHP 8"))
}

/// The globals strategies every script runs under: all of them, or the
/// comma-separated `MINIZTS_TEST_GLOBALS` subset (for quick local runs).
pub fn strategies() -> Vec<&'static str> {
    let all: Vec<&'static str> = minizts_globals::strategies::ALL.iter().map(|(n, _)| *n).collect();
    match std::env::var("MINIZTS_TEST_GLOBALS") {
        Ok(list) => {
            let chosen: Vec<&'static str> = all
                .into_iter()
                .filter(|n| list.split(',').any(|x| x.trim() == *n))
                .collect();
            assert!(!chosen.is_empty(), "MINIZTS_TEST_GLOBALS names no strategy: {list}");
            chosen
        }
        Err(_) => all,
    }
}

/// A `minizts` command under globals strategy `strategy`, with the
/// environment's default strategy removed so only the flag counts. The
/// binary is the one cargo built for the tests, or `MINIZTS_TEST_BIN`
/// (another build of the same source, such as `cargo build-nonpie`'s; the
/// test that loads an extension by its bare name looks next to that
/// binary, so copy `target/debug/libminizts_ext_*.so` there first).
pub fn minizts(strategy: &str) -> Command {
    let bin = std::env::var_os("MINIZTS_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_minizts").into());
    let mut cmd = Command::new(bin);
    cmd.env_remove("MINIZTS_GLOBALS")
        .env_remove("MINIZTS_GENERIC")
        .arg(format!("--globals={strategy}"));
    cmd
}

/// The configurations `run_every_strategy` runs: every strategy with the
/// VM's fast paths, then the first strategy with none
/// (`MINIZTS_GENERIC=1`: only general instruction forms, every
/// instruction on its general path), which checks that the fast paths
/// agree with the general ones.
fn configurations() -> Vec<(String, Command)> {
    let strategies = strategies();
    let mut all: Vec<(String, Command)> = strategies
        .iter()
        .map(|s| (format!("--globals={s}"), minizts(s)))
        .collect();
    let mut generic = minizts(strategies[0]);
    generic.env("MINIZTS_GENERIC", "1");
    all.push((format!("--globals={} with MINIZTS_GENERIC=1", strategies[0]), generic));
    all
}

/// Runs `configure(cmd)` under every strategy, and once more with the
/// VM's fast paths off (see `configurations`); the results must be
/// identical (stdout, stderr, exit code). Returns the first strategy's
/// output, or a report naming the configurations that differ from it.
pub fn run_every_strategy(limit: Duration, configure: impl Fn(&mut Command)) -> Result<Output, String> {
    let mut first: Option<(String, Output)> = None;
    let mut problems = Vec::new();
    for (s, mut cmd) in configurations() {
        configure(&mut cmd);
        let out = run(cmd, limit);
        match &first {
            None => first = Some((s, out)),
            Some((name, want)) => {
                if out.timed_out != want.timed_out || out.code != want.code {
                    problems.push(format!(
                        "  {s}: exit {:?} (timed out: {}), {name}: exit {:?} (timed out: {})",
                        out.code, out.timed_out, want.code, want.timed_out
                    ));
                }
                if out.stdout != want.stdout {
                    problems.push(format!(
                        "  {s}: stdout differs from {name}'s\n{}",
                        diff(&want.stdout, &out.stdout)
                    ));
                }
                if out.stderr != want.stderr {
                    problems.push(format!(
                        "  {s}: stderr differs from {name}'s\n{}",
                        diff(&want.stderr, &out.stderr)
                    ));
                }
            }
        }
    }
    match first {
        Some((_, out)) if problems.is_empty() => Ok(out),
        _ => Err(problems.join("\n")),
    }
}

/// The shared object of in-tree extension crate `package` (e.g.
/// `minizts-ext-counter`), built on first use with the same cargo and
/// profile as the `minizts` under test, so `cargo test --workspace` on a
/// fresh clone needs no earlier build step.
pub fn extension(package: &str) -> PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_minizts"));
    let profile_dir = bin.parent().expect("binary directory").to_path_buf();
    let lib = profile_dir.join(format!("lib{}.so", package.replace('-', "_")));
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !built.iter().any(|p| p == package) {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(root()).args(["build", "--quiet", "-p", package]);
        // The profile directory is `<target>/<profile>`: build into it.
        let profile = profile_dir.file_name().and_then(|n| n.to_str()).unwrap_or("debug");
        if profile != "debug" {
            cmd.args(["--profile", if profile == "release" { "release" } else { profile }]);
        }
        if let Some(target) = profile_dir.parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        let status = cmd.status().expect("run cargo build for an extension");
        assert!(status.success(), "cargo build -p {package} failed");
        built.push(package.to_string());
    }
    assert!(lib.is_file(), "{} was not built", lib.display());
    lib
}
