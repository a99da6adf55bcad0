//! The bench scripts' kernels compute the right results: each
//! `bench-scripts/NAME.mz --check` (every kernel, output kept, no timing)
//! must print `tests/bench/NAME.check.out`, which PHP 8.2 produced, under
//! every globals strategy.

#[path = "support.rs"]
mod support;

use std::time::Duration;

#[test]
fn bench_kernels_compute_php_results() {
    let root = support::root();
    let expected: Vec<_> = support::scripts(&root.join("bench-scripts"))
        .into_iter()
        .filter(|s| {
            let name = s.file_stem().unwrap().to_string_lossy().into_owned();
            root.join(format!("tests/bench/{name}.check.out")).exists()
        })
        .collect();
    assert!(expected.len() >= 4, "bench check files missing");
    support::run_all("bench kernel checks", &expected, |script| {
        let name = script.file_stem().unwrap().to_string_lossy().into_owned();
        let want = std::fs::read(root.join(format!("tests/bench/{name}.check.out"))).unwrap();
        let out = match support::run_every_strategy(Duration::from_secs(300), |cmd| {
            cmd.current_dir(&root).arg("run").arg(script).arg("--check");
        }) {
            Ok(out) => out,
            Err(report) => return Some(format!("{name}: strategies disagree\n{report}")),
        };
        if out.timed_out {
            return Some(format!("{name}: timed out"));
        }
        if out.code != Some(0) || out.stdout != want {
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
