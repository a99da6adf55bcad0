//! Golden tests for the front end: token dumps (`tests/lexer/*.mz` →
//! `.tokens`) and AST dumps or parse errors (`tests/parser/*.mz` → `.ast`).
//! `MINIZTS_REGEN=1 cargo test -p minizts-syntax` rewrites the expected
//! files; review the diff before committing.

use std::path::{Path, PathBuf};

use minizts_syntax::lexer::Lexer;
use minizts_syntax::{ast, parse, LineIndex};

fn cases(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mz"))
        .collect();
    v.sort();
    v
}

fn check(path: &Path, ext: &str, got: String, failures: &mut Vec<String>) {
    let expected = path.with_extension(ext);
    if std::env::var("MINIZTS_REGEN").is_ok_and(|v| v == "1") {
        std::fs::write(&expected, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&expected).unwrap_or_default();
    if want != got {
        failures.push(format!("{}:\n--- want\n{want}\n--- got\n{got}", path.display()));
    }
}

fn tokens(src: &[u8]) -> String {
    let lines = LineIndex::new(src);
    let mut out = String::new();
    for item in Lexer::new(src) {
        match item {
            Ok((start, tok, _)) => out.push_str(&format!("L{} {tok}\n", lines.line(start as u32))),
            Err((pos, e)) => {
                out.push_str(&format!("L{} error: {e}\n", lines.line(pos as u32)));
                break;
            }
        }
    }
    out
}

fn ast_or_error(src: &[u8]) -> String {
    let arena = bumpalo::Bump::new();
    match parse(&arena, src) {
        Ok(script) => ast::dump::script(&script),
        Err(e) => {
            let kind = if e.fatal { "fatal" } else { "parse" };
            format!(
                "{kind} error on line {}: {}\n",
                LineIndex::new(src).line(e.pos as u32),
                e.message
            )
        }
    }
}

#[test]
fn lexer_golden() {
    let mut failures = Vec::new();
    let all = cases("lexer");
    assert!(!all.is_empty());
    for path in all {
        let src = std::fs::read(&path).unwrap();
        check(&path, "tokens", tokens(&src), &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn parser_golden() {
    let mut failures = Vec::new();
    let all = cases("parser");
    assert!(!all.is_empty());
    for path in all {
        let src = std::fs::read(&path).unwrap();
        check(&path, "ast", ast_or_error(&src), &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
