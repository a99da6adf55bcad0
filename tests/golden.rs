//! Golden script tests: every `tests/golden/**/NAME.mz` runs under
//! `minizts run` with every globals strategy; the runs must agree byte for
//! byte (stdout, stderr, exit code), the stdout must equal `NAME.out`, the
//! exit code `NAME.exit` (0 if absent), and every line of `NAME.err` must
//! appear in the stderr (`%FILE%` stands for the script's absolute path,
//! `%DIR%` for its folder's).
//! All failures are reported at once; `MINIZTS_TEST_GLOBALS=tls,nts`
//! narrows the strategies for a quick local run. `MINIZTS_REGEN=1` rewrites `.out` and
//! `.exit` from minizts's results (review the diff before committing);
//! `MINIZTS_TEST_FILTER=substring` runs a subset.

#[path = "support.rs"]
mod support;

use std::path::Path;
use std::time::Duration;

fn check(script: &Path, regen: bool) -> Option<String> {
    let dir = script.parent().unwrap();
    let name = script.file_name().unwrap().to_string_lossy().into_owned();
    let rel = script
        .strip_prefix(support::root())
        .unwrap_or(script)
        .display()
        .to_string();
    let out = match support::run_every_strategy(Duration::from_secs(60), |cmd| {
        cmd.current_dir(dir).arg("run").arg(&name);
    }) {
        Ok(out) => out,
        Err(report) => return Some(format!("{rel}: strategies disagree\n{report}")),
    };
    if out.timed_out {
        return Some(format!("{rel}: timed out"));
    }
    let Some(code) = out.code else {
        return Some(format!(
            "{rel}: killed by a signal (crash)\n    stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    };
    let out_path = script.with_extension("out");
    let exit_path = script.with_extension("exit");
    if regen {
        std::fs::write(&out_path, &out.stdout).unwrap();
        if code == 0 {
            let _ = std::fs::remove_file(&exit_path);
        } else {
            std::fs::write(&exit_path, format!("{code}\n")).unwrap();
        }
        return None;
    }
    let mut problems = Vec::new();
    let want = std::fs::read(&out_path).unwrap_or_default();
    // An absolute path recorded in `.out` holds the folder of whoever
    // generated it and fails everywhere else (stderr has `%FILE%`).
    if String::from_utf8_lossy(&want).contains("/tests/golden/") {
        problems.push("  NAME.out holds an absolute path: print paths relative to __DIR__".to_string());
    }
    if want != out.stdout {
        problems.push(format!("  stdout differs\n{}", support::diff(&want, &out.stdout)));
    }
    let want_code: i32 = std::fs::read_to_string(&exit_path)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if want_code != code {
        problems.push(format!("  exit code {code}, expected {want_code}"));
    }
    if let Ok(err) = std::fs::read_to_string(script.with_extension("err")) {
        let abs = script.canonicalize().unwrap();
        let abs_dir = abs.parent().unwrap().display().to_string();
        let abs = abs.display().to_string();
        let stderr = String::from_utf8_lossy(&out.stderr);
        for line in err.lines().filter(|l| !l.trim().is_empty()) {
            let line = line.replace("%FILE%", &abs).replace("%DIR%", &abs_dir);
            if !stderr.contains(&line) {
                problems.push(format!("  stderr lacks: {line}"));
            }
        }
    }
    if problems.is_empty() {
        return None;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stderr: String = stderr.lines().take(6).map(|l| format!("      | {l}\n")).collect();
    Some(format!("{rel}:\n{}\n    stderr:\n{stderr}", problems.join("\n")))
}

#[test]
fn golden_scripts() {
    let scripts = support::scripts(&support::root().join("tests/golden"));
    assert!(!scripts.is_empty(), "no golden scripts found");
    let regen = std::env::var("MINIZTS_REGEN").is_ok_and(|v| v == "1");
    support::run_all("golden scripts", &scripts, |s| check(s, regen));
}
