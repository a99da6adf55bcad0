//! Golden bytecode: each `tests/bytecode/*.mz` compiles to the listing in
//! its `.bc` file (`minizts dump` prints the same). `MINIZTS_REGEN=1 cargo
//! test -p minizts-compiler` rewrites the listings; review the diff.

use std::path::{Path, PathBuf};

use minizts_globals::Tls;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bytecode");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mz"))
        .collect();
    v.sort();
    v
}

#[test]
fn bytecode_golden() {
    let g: Tls = minizts_vm::thread_startup().unwrap();
    let regen = std::env::var("MINIZTS_REGEN").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    let all = cases();
    assert!(!all.is_empty());
    for path in all {
        let src = std::fs::read(&path).unwrap();
        let got = match minizts_compiler::compile(g, &src, "test.mz") {
            Ok(script) => script.disassemble_with(&|id| minizts_vm::builtins::info(id).name.to_string()),
            Err(e) => format!("error on line {}: {}\n", e.line, e.message),
        };
        let expected = path.with_extension("bc");
        if regen {
            std::fs::write(&expected, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&expected).unwrap_or_default();
        if want != got {
            failures.push(format!("{}:\n--- want\n{want}\n--- got\n{got}", path.display()));
        }
    }
    // SAFETY: `g` is not used after this.
    unsafe { minizts_vm::thread_shutdown(g) };
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
