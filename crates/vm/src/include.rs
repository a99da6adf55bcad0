//! `include`, `require` and their `_once` siblings (PHP's
//! `zend_include_or_eval`): finds the file by PHP's rules, compiles it
//! into the request once, and hands its top-level code to `eval::enter`,
//! which runs it in the including frame's scope.
//!
//! Where PHP looks for a file (`php_resolve_path`): a path that is
//! absolute or starts with `./` or `../` is taken as it is (relative to
//! the working directory); any other is tried in each folder of
//! `include_path` (`.` being the working directory), then in the folder
//! of the file that is running. The file is known by its real path, which
//! is what `__FILE__` says inside it and what `_once` compares.
//!
//! A file is compiled the first time the request includes it and kept, as
//! opcache keeps a script: including it again runs the same code, after
//! declaring its top-level functions again (which fails as PHP's
//! recompilation does, "Cannot redeclare").

use std::path::{Path, PathBuf};

use minizts_compiler::UnitKind;
use minizts_core::bytecode::FuncId;
use minizts_core::Value;
use minizts_globals::{eg, Globals};

use crate::error::{VmError, VmResult};

/// What an include instruction does next.
pub(crate) enum Included {
    /// Enter the file's top-level code.
    Run(FuncId),
    /// Nothing to run: this is the instruction's result (`false` after a
    /// warning, `true` for a file a `_once` form included already).
    Done(Value),
}

/// The keyword, as PHP's messages name it.
pub(crate) fn keyword(once: bool, required: bool) -> &'static str {
    match (required, once) {
        (false, false) => "include",
        (false, true) => "include_once",
        (true, false) => "require",
        (true, true) => "require_once",
    }
}

/// Opens `path` for an include instruction of the given form.
pub(crate) fn open<G: Globals>(g: G, path: &[u8], once: bool, required: bool) -> VmResult<Included> {
    let word = keyword(once, required);
    if path.is_empty() {
        return crate::error::value_error("Path cannot be empty");
    }
    // A NUL byte cannot be in a file name; PHP reports the name up to it.
    if let Some(nul) = path.iter().position(|&b| b == 0) {
        return failed(g, word, required, &path[..nul]);
    }
    let name = String::from_utf8_lossy(path).into_owned();
    let found = resolve(g, &name);
    if once {
        if let Some(real) = &found {
            if is_included(g, real) {
                return Ok(Included::Done(Value::Bool(true)));
            }
        }
    }
    let Some(real) = found else {
        crate::error::warning(
            g,
            &format!("{word}({name}): Failed to open stream: No such file or directory"),
        );
        return failed(g, word, required, path);
    };
    let cached = eg!(g).code.included(&real);
    if let Some(func) = cached {
        crate::eval::declare_early(g, &early_functions(g, func))?;
        return Ok(Included::Run(func));
    }
    let src = match read(Path::new(&real)) {
        Ok(src) => src,
        Err(why) => {
            crate::error::warning(g, &format!("{word}({name}): Failed to open stream: {why}"));
            return failed(g, word, required, path);
        }
    };
    let func = crate::eval::load(g, &src, &real, UnitKind::Include)?;
    eg!(g).code.add_included(&real, func);
    Ok(Included::Run(func))
}

/// Whether the file at real path `real` ran already this request (the
/// main script counts).
fn is_included<G: Globals>(g: G, real: &str) -> bool {
    eg!(g, |eg| {
        eg.code.included(real).is_some() || eg.script().is_some_and(|s| &*s.file == real)
    })
}

/// The top-level functions of the file whose top-level code is `func`.
fn early_functions<G: Globals>(g: G, func: FuncId) -> Vec<FuncId> {
    eg!(g, |eg| eg
        .code
        .unit_of(func)
        .map(|u| u.early_functions.clone())
        .unwrap_or_default())
}

/// The file's contents, or the reason PHP's stream layer gives for not
/// reading it (a folder opens, so its reason is errno 0's).
fn read(path: &Path) -> Result<Vec<u8>, String> {
    if path.is_dir() {
        return Err("Success".into());
    }
    std::fs::read(path).map_err(|e| {
        let text = e.to_string();
        // Rust appends " (os error N)" to strerror's text.
        match text.find(" (os error") {
            Some(cut) => text[..cut].to_string(),
            None => text,
        }
    })
}

/// PHP's second report for a file it could not open: a warning and
/// `false` for `include`, an `Error` for `require`.
fn failed<G: Globals>(g: G, word: &str, required: bool, path: &[u8]) -> VmResult<Included> {
    let name = String::from_utf8_lossy(path);
    let include_path = eg!(g).settings.include_path.clone();
    if required {
        return Err(Box::new(VmError::Uncaught {
            class: "Error",
            message: format!("Failed opening required '{name}' (include_path='{include_path}')"),
            at: None,
            trace: Vec::new(),
        }));
    }
    crate::error::warning(
        g,
        &format!("{word}(): Failed opening '{name}' for inclusion (include_path='{include_path}')"),
    );
    Ok(Included::Done(Value::Bool(false)))
}

/// Where `name` would be found by an include (PHP's
/// `php_resolve_path`), if anywhere.
pub(crate) fn find<G: Globals>(g: G, name: &str) -> Option<String> {
    resolve(g, name)
}

/// The real path of the file `name` names, by PHP's search rules; `None`
/// if no candidate exists.
fn resolve<G: Globals>(g: G, name: &str) -> Option<String> {
    let real = |p: &Path| std::fs::canonicalize(p).ok().map(|p| p.to_string_lossy().into_owned());
    let explicit = name.starts_with('/') || name.starts_with("./") || name.starts_with("../");
    let include_path = eg!(g).settings.include_path.clone();
    if explicit || include_path.is_empty() {
        return real(Path::new(name));
    }
    for dir in include_path.split(':').filter(|d| !d.is_empty()) {
        if let Some(r) = real(&Path::new(dir).join(name)) {
            return Some(r);
        }
    }
    // Then the folder of the running file (not for code that has no
    // file: `-r`, standard input).
    let here = crate::error::current_location(g)?;
    let dir = match here.file.rfind('/') {
        Some(0) | None => return None,
        Some(cut) => PathBuf::from(&here.file[..cut]),
    };
    real(&dir.join(name))
}
