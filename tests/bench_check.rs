//! The bench scripts' kernels and the corpus programs compute the right
//! results: each `bench-scripts/NAME.mz --check` (every kernel, output
//! kept, no timing) must print `tests/bench/NAME.check.out`, and each
//! corpus program `bench-scripts/corpus/NAME.mz --check` (its small size)
//! `tests/bench/corpus/NAME.check.out`, which PHP 8.2 produced, under
//! every globals strategy.

#[path = "support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

/// `bench-scripts/DIR/NAME.mz` → `tests/bench/DIR/NAME.check.out`.
fn check_file(root: &Path, script: &Path) -> PathBuf {
    let rel = script
        .strip_prefix(root.join("bench-scripts"))
        .expect("a script under bench-scripts/")
        .with_extension("check.out");
    root.join("tests/bench").join(rel)
}

#[test]
fn bench_kernels_compute_php_results() {
    let root = support::root();
    let scripts = support::scripts(&root.join("bench-scripts"));
    // Every corpus program has its check file: a new one is not skipped.
    let corpus = root.join("bench-scripts/corpus");
    let missing: Vec<_> = scripts
        .iter()
        .filter(|s| s.starts_with(&corpus) && !check_file(&root, s).exists())
        .map(|s| s.display().to_string())
        .collect();
    assert!(missing.is_empty(), "corpus programs without a check file: {missing:?}");
    let expected: Vec<_> = scripts.into_iter().filter(|s| check_file(&root, s).exists()).collect();
    if std::env::var_os("MINIZTS_TEST_FILTER").is_none() {
        assert!(expected.len() >= 16, "bench check files missing");
    }
    support::run_all("bench kernel checks", &expected, |script| {
        let name = script
            .strip_prefix(root.join("bench-scripts"))
            .unwrap_or(script)
            .display()
            .to_string();
        let want = std::fs::read(check_file(&root, script)).unwrap();
        let out = match support::run_every_strategy(Duration::from_secs(300), |cmd| {
            cmd.current_dir(&root).arg("run").arg(script).arg("--check");
        }) {
            Ok(out) => out,
            Err(report) => return Some(format!("{name}: strategies disagree\n{report}")),
        };
        if out.timed_out {
            return Some(format!("{name}: timed out"));
        }
        // Nothing on stderr either: a warning would be a difference from php.
        if out.code != Some(0) || out.stdout != want || !out.stderr.is_empty() {
            return Some(format!(
                "{name}: exit {:?}\n{}\n    stderr: {}",
                out.code,
                support::diff(&want, &out.stdout),
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join("\n      ")
            ));
        }
        None
    });
}
