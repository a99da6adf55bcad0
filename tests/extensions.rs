//! Extensions loaded from shared objects: the in-tree examples work under
//! every globals strategy (identically), the module commands describe
//! them, and every kind of broken extension gets one clear error and a
//! non-zero exit, never a crash.

mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use support::{extension, minizts, run, run_every_strategy, Output};

const LIMIT: Duration = Duration::from_secs(60);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A script in a temporary file (removed when dropped).
struct Script(PathBuf);

impl Script {
    fn new(name: &str, src: &str) -> Script {
        let dir = std::env::temp_dir().join(format!("minizts-ext-tests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, src).unwrap();
        Script(p)
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn load(cmd: &mut Command, libs: &[&PathBuf]) {
    cmd.env_remove("MINIZTS_EXTENSIONS")
        .env_remove("MINIZTS_FAULTY")
        .arg("run");
    for l in libs {
        cmd.arg("-d").arg(format!("extension={}", l.display()));
    }
}

const EXAMPLES: &str = r#"<?php
echo mzstr_reverse_words("one two  three"), "\n";
echo mzstr_caesar("Hello, World!"), " ", mzstr_caesar("abc", -1), "\n";
echo implode("|", mzstr_chunks("abcdefg", 3)), "\n";
foreach (mzstr_histogram("hello") as $k => $n) echo "$k$n ";
echo "\n";
var_dump(mzstr_sum([1, 2, "3", 4.5]), mzstr_sum([1, 2]), mzstr_sum([PHP_INT_MAX, 1]));
foreach (mzstr_map(['a' => 1, 'b' => 2, 7 => 3], fn($v, $k) => "$k=" . ($v * 10)) as $k => $v) echo "$k:$v ";
echo "\n";
ob_start(); mzstr_echo_upper("abc", "def"); $x = ob_get_clean(); echo "[$x]\n";
echo counter_get(), " ", counter_bump(), " ", counter_bump(5), " ", counter_get(), " ", counter_via_host(), "\n";
echo "requests: ", counter_requests(), "\n";
echo implode(",", counter_log()), "\n";
echo function_exists('mzstr_map') ? "yes" : "no", " ", function_exists('MZSTR_MAP') ? "yes" : "no", "\n";
$f = 'mzstr_caesar';
echo $f('n'), " ", implode(",", array_map('mzstr_caesar', ['a', 'b'])), "\n";
"#;

const EXAMPLES_OUT: &str = "three two one
Uryyb, Jbeyq! zab
abc|def|g
h1 e1 l2 o1 
float(10.5)
int(3)
float(9.223372036854776E+18)
a:a=10 b:b=20 7:7=30 
[ABCDEF]
0 1 6 6 6
requests: 1
1,5
yes yes
a n,o
";

#[test]
fn example_extensions_work_under_every_strategy() {
    let libs = [extension("minizts-ext-strings"), extension("minizts-ext-counter")];
    let s = Script::new("examples.mz", EXAMPLES);
    let out = run_every_strategy(LIMIT, |cmd| {
        load(cmd, &[&libs[0], &libs[1]]);
        cmd.arg(&s.0);
    })
    .unwrap_or_else(|report| panic!("strategies disagree:\n{report}"));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), EXAMPLES_OUT);
    assert_eq!(out.code, Some(0));
}

#[test]
fn extension_errors_are_php_errors() {
    let lib = extension("minizts-ext-strings");
    let cases = [
        (
            "mzstr_caesar([]);",
            "Fatal error: Uncaught TypeError: mzstr_caesar(): Argument #1 ($s) must be of type string, array given",
        ),
        (
            "mzstr_chunks('a');",
            "Fatal error: Uncaught ArgumentCountError: mzstr_chunks() expects exactly 2 arguments, 1 given",
        ),
        (
            "mzstr_chunks('abc', 0);",
            "Fatal error: mzstr_chunks(): Argument #2 ($size) must be greater than 0",
        ),
        (
            "mzstr_map([1], 'no_such_function');",
            "mzstr_map(): Argument #2 ($callback) must be a valid callback, function \"no_such_function\" not found",
        ),
        (
            "mzstr_map([1], fn($v) => intdiv($v, 0));",
            "Fatal error: Uncaught DivisionByZeroError: Division by zero",
        ),
    ];
    for (code, want) in cases {
        let s = Script::new(
            "errors.mz",
            &format!("<?php\necho \"before\\n\";\n{code}\necho \"after\\n\";\n"),
        );
        let out = run_every_strategy(LIMIT, |cmd| {
            load(cmd, &[&lib]);
            cmd.arg(&s.0);
        })
        .unwrap_or_else(|report| panic!("{code}: strategies disagree:\n{report}"));
        assert_eq!(text(&out.stdout), "before\n", "{code}");
        assert!(
            text(&out.stderr).contains(want),
            "{code}: stderr was {}",
            text(&out.stderr)
        );
        assert_eq!(out.code, Some(255), "{code}");
    }
}

#[test]
fn a_panic_in_an_extension_is_a_fatal_error_for_the_request() {
    let lib = extension("minizts-ext-faulty");
    let s = Script::new(
        "panic.mz",
        "<?php\necho \"before\\n\";\necho faulty_index(1), \"\\n\";\necho faulty_index(7), \"\\n\";\necho \"after\\n\";\n",
    );
    let out = run_every_strategy(LIMIT, |cmd| {
        load(cmd, &[&lib]);
        cmd.arg(&s.0);
    })
    .unwrap_or_else(|report| panic!("strategies disagree:\n{report}"));
    let err = text(&out.stderr);
    assert_eq!(text(&out.stdout), "before\n20\n");
    assert!(
        err.contains("Fatal error: Extension 'faulty' panicked in faulty_index(): index out of bounds"),
        "{err}"
    );
    assert!(err.contains(" on line 4"), "{err}");
    // The extension's own panic hook printed nothing; the process exited
    // normally (no abort) with PHP's fatal-error status.
    assert!(!err.contains("panicked at"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(out.code, Some(255));

    // The panic message the script chose, through a callback.
    let s = Script::new("panic2.mz", "<?php\nfaulty_call('faulty_panic', 'boom');\n");
    let mut cmd = minizts("tls");
    load(&mut cmd, &[&lib]);
    cmd.arg(&s.0);
    let out = run(cmd, LIMIT);
    assert!(
        text(&out.stderr).contains("panicked in faulty_panic(): boom (at "),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(out.code, Some(255));
}

#[test]
fn warnings_and_callbacks_from_extensions() {
    let lib = extension("minizts-ext-faulty");
    let s = Script::new(
        "warn.mz",
        "<?php\necho faulty_warn(), \"\\n\";\necho faulty_call('strtoupper', 'abc'), faulty_call(fn($a, $b) => $a + $b, 2, 3), \"\\n\";\n",
    );
    let out = run_every_strategy(LIMIT, |cmd| {
        load(cmd, &[&lib]);
        cmd.arg(&s.0);
    })
    .unwrap_or_else(|report| panic!("strategies disagree:\n{report}"));
    assert_eq!(text(&out.stdout), "1\nABC5\n");
    assert!(text(&out.stderr).contains("Warning: faulty_warn(): something looks odd in "));
    assert!(text(&out.stderr).contains(" on line 2"));
    assert_eq!(out.code, Some(0));
}

/// One broken-extension case: how to run it, what stderr must say, the
/// exit code.
struct Bad {
    what: &'static str,
    libs: Vec<String>,
    faulty: Option<&'static str>,
    want: Vec<String>,
    code: i32,
}

fn check_bad(case: &Bad) -> Result<(), String> {
    let s = Script::new("bad.mz", "<?php\necho \"ran\\n\";\n");
    let mut cmd = minizts("tls");
    cmd.env_remove("MINIZTS_EXTENSIONS")
        .env_remove("MINIZTS_FAULTY")
        .arg("run");
    if let Some(v) = case.faulty {
        cmd.env("MINIZTS_FAULTY", v);
    }
    for l in &case.libs {
        cmd.arg("-d").arg(format!("extension={l}"));
    }
    cmd.arg(&s.0);
    let out: Output = run(cmd, LIMIT);
    let err = text(&out.stderr);
    let mut problems = Vec::new();
    for w in &case.want {
        if !err.contains(w.as_str()) {
            problems.push(format!("stderr lacks {w:?}"));
        }
    }
    if err.trim().lines().count() != 1 {
        problems.push("stderr is not one line".into());
    }
    if out.code != Some(case.code) {
        problems.push(format!("exit {:?}, want {}", out.code, case.code));
    }
    if err.contains("panicked at") || err.contains("RUST_BACKTRACE") {
        problems.push("a Rust panic reached stderr".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}: {}\n  stderr: {err}", case.what, problems.join("; ")))
    }
}

#[test]
fn broken_extensions_get_one_clear_error() {
    let faulty = extension("minizts-ext-faulty").display().to_string();
    let strings = extension("minizts-ext-strings").display().to_string();
    let dir = std::env::temp_dir().join(format!("minizts-ext-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let not_elf = dir.join("not-an-elf.so");
    std::fs::write(&not_elf, "this is text, not a shared object\n".repeat(8)).unwrap();
    let not_elf = not_elf.display().to_string();
    let s = |x: &str| x.to_string();
    let cases = vec![
        Bad {
            what: "missing file",
            libs: vec![s("/nonexistent/minizts_ext_missing.so")],
            faulty: None,
            want: vec![s(
                "minizts: Unable to load dynamic library '/nonexistent/minizts_ext_missing.so' (/nonexistent/minizts_ext_missing.so: cannot open shared object file: No such file or directory)",
            )],
            code: 1,
        },
        Bad {
            what: "not a shared object",
            libs: vec![not_elf.clone()],
            faulty: None,
            want: vec![format!("Unable to load dynamic library '{not_elf}'"), s("invalid ELF header")],
            code: 1,
        },
        Bad {
            what: "no entry symbol",
            libs: vec![s("libm.so.6")],
            faulty: None,
            want: vec![s(
                "minizts: Invalid library (maybe not a minizts extension) 'libm.so.6': no symbol minizts_get_module",
            )],
            code: 1,
        },
        Bad {
            what: "wrong API version",
            libs: vec![faulty.clone()],
            faulty: Some("api"),
            want: vec![s("Unable to initialize module: Module compiled with module API=20200101, minizts compiled with module API=20261130; these options need to match")],
            code: 1,
        },
        Bad {
            what: "no module entry",
            libs: vec![faulty.clone()],
            faulty: Some("null"),
            want: vec![s("minizts_get_module() returned no module entry")],
            code: 1,
        },
        Bad {
            what: "two modules with one name",
            libs: vec![strings.clone(), strings.clone()],
            faulty: None,
            want: vec![format!("minizts: Module \"mzstr\" is already loaded ('{strings}')")],
            code: 1,
        },
        Bad {
            what: "a function named like a builtin",
            libs: vec![faulty.clone()],
            faulty: Some("clash"),
            want: vec![s("minizts: faulty: Function registration failed - duplicate name - strlen")],
            code: 1,
        },
        Bad {
            what: "module startup fails",
            libs: vec![faulty.clone()],
            faulty: Some("minit"),
            want: vec![s("minizts: Unable to start up module 'faulty'")],
            code: 1,
        },
        Bad {
            what: "request startup fails",
            libs: vec![faulty.clone()],
            faulty: Some("rinit"),
            want: vec![s("Fatal error: Unable to start request: module 'faulty' request startup failed")],
            code: 255,
        },
        Bad {
            what: "request startup panics",
            libs: vec![faulty.clone()],
            faulty: Some("rinit-panic"),
            want: vec![s("Fatal error: Unable to start request: module 'faulty' request startup failed")],
            code: 255,
        },
    ];
    let failures: Vec<String> = cases.iter().filter_map(|c| check_bad(c).err()).collect();
    let _ = std::fs::remove_file(&not_elf);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn extensions_load_from_the_flag_the_environment_and_by_name() {
    let strings = extension("minizts-ext-strings");
    let s = Script::new("load.mz", "<?php echo mzstr_caesar('a'), \"\\n\";");
    let by_flag = {
        let mut cmd = minizts("tls");
        cmd.env_remove("MINIZTS_EXTENSIONS")
            .arg("--extension")
            .arg(&strings)
            .arg("run")
            .arg(&s.0);
        run(cmd, LIMIT)
    };
    let by_env = {
        let mut cmd = minizts("tls");
        cmd.env("MINIZTS_EXTENSIONS", &strings).arg("run").arg(&s.0);
        run(cmd, LIMIT)
    };
    // A bare name is looked up next to the minizts binary, where cargo
    // puts the extension.
    let by_name = {
        let mut cmd = minizts("tls");
        cmd.env_remove("MINIZTS_EXTENSIONS")
            .args(["run", "-d", "extension=minizts_ext_strings"])
            .arg(&s.0);
        run(cmd, LIMIT)
    };
    for (how, out) in [
        ("--extension", by_flag),
        ("MINIZTS_EXTENSIONS", by_env),
        ("-d extension=NAME", by_name),
    ] {
        assert_eq!(text(&out.stdout), "n\n", "{how}: {}", text(&out.stderr));
        assert_eq!(out.code, Some(0), "{how}");
    }
}

#[test]
fn modules_and_ext_info_describe_extensions() {
    let strings = extension("minizts-ext-strings");
    let counter = extension("minizts-ext-counter");
    let mut cmd = minizts("table");
    cmd.env_remove("MINIZTS_EXTENSIONS")
        .arg("modules")
        .arg("-d")
        .arg(format!("extension={}", strings.display()))
        .arg("-d")
        .arg(format!("extension={}", counter.display()));
    let out = run(cmd, LIMIT);
    let o = text(&out.stdout);
    assert_eq!(out.code, Some(0), "{}", text(&out.stderr));
    assert!(o.starts_with("[Extension modules]\nmzstr 0.1.0 ("), "{o}");
    assert!(
        o.contains("  functions: mzstr_reverse_words, mzstr_caesar, mzstr_chunks,"),
        "{o}"
    );
    assert!(o.contains("\ncounter 0.1.0 ("), "{o}");
    assert!(o.contains("  functions: counter_bump, counter_get, counter_requests, counter_log, counter_via_host\n"));
    assert!(o.contains("  module globals: "), "{o}");
    assert!(o.contains(" bytes, resource id "), "{o}");

    let mut cmd = minizts("tls");
    cmd.arg("ext-info").arg(&counter);
    let out = run(cmd, LIMIT);
    let o = text(&out.stdout);
    assert_eq!(out.code, Some(0));
    assert!(o.starts_with("module: counter 0.1.0\nmodule API: 20261130\n"), "{o}");
    assert!(o.contains("function: counter_bump($by) requires 0\n"), "{o}");
    assert!(o.contains("module globals: "), "{o}");
    assert!(o.ends_with("hooks: request startup\n"), "{o}");

    let mut cmd = minizts("tls");
    cmd.env_remove("MINIZTS_EXTENSIONS").arg("modules");
    let out = run(cmd, LIMIT);
    assert!(text(&out.stdout).contains("(none loaded"));
}

#[test]
fn module_globals_and_hooks_run_in_php_order_under_every_strategy() {
    let lib = extension("minizts-ext-faulty");
    let s = Script::new("trace.mz", "<?php echo \"script\\n\";");
    let out = run_every_strategy(LIMIT, |cmd| {
        load(cmd, &[&lib]);
        cmd.env("MINIZTS_FAULTY", "trace").arg(&s.0);
    })
    .unwrap_or_else(|report| panic!("strategies disagree:\n{report}"));
    assert_eq!(text(&out.stdout), "script\n");
    assert_eq!(
        text(&out.stderr),
        "faulty: module startup\nfaulty: globals constructor\nfaulty: request startup\nfaulty: request shutdown\n\
         faulty: globals destructor after 1 request(s)\nfaulty: module shutdown\n"
    );
    assert_eq!(out.code, Some(0));
}

#[test]
fn every_tls_model_counts_per_thread_under_every_strategy() {
    let lib = extension("minizts-ext-tlsdemo");
    let root = support::root();
    let out = run_every_strategy(LIMIT, |cmd| {
        load(cmd, &[&lib]);
        cmd.current_dir(&root).args(["bench-scripts/tls_models.mz", "--check"]);
    })
    .unwrap_or_else(|report| panic!("strategies disagree:\n{report}"));
    let want: String = [
        "dynamic",
        "initial_exec",
        "module_globals",
        "host_accessor",
        "ctx",
        "tlsdesc",
    ]
    .iter()
    .map(|v| format!("{v}: 1 2 3 (get: 3)\n"))
    .collect();
    assert_eq!(text(&out.stdout), want, "{}", text(&out.stderr));
    assert_eq!(out.code, Some(0));

    // The loop inside the extension and the per-call path share the counter;
    // a bad variant name is a PHP error.
    let s = Script::new(
        "tlsdemo.mz",
        "<?php echo tlsdemo_repeat('ctx', 5), ' ', tlsdemo_get('ctx'), ' ', tlsdemo_ctx(), \"\\n\";\ntlsdemo_get('nope');\n",
    );
    let mut cmd = minizts("ctx");
    load(&mut cmd, &[&lib]);
    cmd.arg(&s.0);
    let out = run(cmd, LIMIT);
    assert_eq!(text(&out.stdout), "5 5 6\n");
    assert!(text(&out.stderr).contains("Fatal error: tlsdemo_get(): Argument #1 ($which) must be one of dynamic,"));
    assert_eq!(out.code, Some(255));

    // Without the extension the bench script says what it needs.
    let mut cmd = minizts("tls");
    cmd.env_remove("MINIZTS_EXTENSIONS")
        .current_dir(&root)
        .args(["run", "bench-scripts/tls_models.mz"]);
    let out = run(cmd, LIMIT);
    assert!(text(&out.stdout).starts_with("tls_models.mz needs the tlsdemo extension"));
    assert_eq!(out.code, Some(1));
}

/// An extension whose initial-exec TLS is larger than glibc's static TLS
/// surplus fails to load with the loader's words and the remedy, and loads
/// with the remedy applied.
#[test]
fn initial_exec_tls_beyond_the_static_surplus_fails_clearly_and_the_tunable_fixes_it() {
    let lib = extension("minizts-ext-bigtls");
    let s = Script::new(
        "bigtls.mz",
        "<?php echo bigtls_size(), ' ', bigtls_touch(3), ' ', bigtls_touch(3), ' ', bigtls_touch(515), \"\\n\";",
    );
    let mut cmd = minizts("tls");
    load(&mut cmd, &[&lib]);
    cmd.env_remove("GLIBC_TUNABLES").arg(&s.0);
    let out = run(cmd, LIMIT);
    let err = text(&out.stderr);
    assert_eq!(out.code, Some(1), "{err}");
    assert!(out.stdout.is_empty());
    for want in [
        format!("minizts: Unable to load dynamic library '{}'", lib.display()),
        "cannot allocate memory in static TLS block".to_string(),
        "its initial-exec TLS block is ".to_string(),
        "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=N".to_string(),
    ] {
        assert!(err.contains(&want), "stderr lacks {want:?}: {err}");
    }
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    for strategy in ["tls", "ctx", "table"] {
        let mut cmd = minizts(strategy);
        load(&mut cmd, &[&lib]);
        cmd.env("GLIBC_TUNABLES", "glibc.rtld.optional_static_tls=65536")
            .arg(&s.0);
        let out = run(cmd, LIMIT);
        assert_eq!(text(&out.stdout), "4096 3 6 521\n", "{strategy}: {}", text(&out.stderr));
        assert_eq!(out.code, Some(0));
    }
}

#[test]
fn an_extension_reading_an_argument_that_was_not_passed_is_a_fatal_error() {
    let lib = extension("minizts-ext-faulty");
    let s = Script::new(
        "missing.mz",
        "<?php\necho faulty_missing_arg(1, 2, 3), \"\\n\";\necho faulty_missing_arg(1), \"\\n\";\necho \"not reached\\n\";\n",
    );
    let out = run_every_strategy(LIMIT, |cmd| {
        load(cmd, &[&lib]);
        cmd.arg(&s.0);
    })
    .unwrap_or_else(|report| panic!("strategies disagree:\n{report}"));
    assert_eq!(text(&out.stdout), "3\n");
    assert!(
        text(&out.stderr)
            .contains("Fatal error: faulty_missing_arg(): the extension read argument #3 but only 1 were passed in "),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(out.code, Some(255));
}

/// Entries that declare absurd sizes, counts or pointers are refused by
/// `run` and by `ext-info` before anything they describe is read or
/// allocated: one line naming the library and the field, exit 1, never
/// an abort or a crash.
#[test]
fn absurd_module_entries_are_refused_with_the_field_named() {
    let lib = extension("minizts-ext-faulty");
    let path = lib.display().to_string();
    let cases = [
        (
            "globals-huge",
            "globals_size = 1125899906842624 bytes, more than the 16777216 allowed",
        ),
        ("globals-align", "globals_align = 3, not a power of two up to 4096"),
        ("functions-huge", "function_count = 1099511627776, more than the "),
        ("functions-null", "functions is null with function_count = 7"),
        (
            "functions-unmapped",
            "functions (0x1000, 224 bytes) is not in readable memory",
        ),
        ("name-unterminated", "name is not NUL-terminated within 4096 bytes"),
        ("name-utf8", "name is not valid UTF-8"),
        ("name-null", "name is null"),
        (
            "function-name-unterminated",
            "functions[1].name is not NUL-terminated within 4096 bytes",
        ),
        (
            "globals-id-unmapped",
            "globals_id (0x1000) is not an aligned, writable AtomicUsize",
        ),
        ("handler-not-code", "functions[0].handler ("),
    ];
    let s = Script::new("absurd.mz", "<?php\necho \"ran\\n\";\n");
    let mut failures = Vec::new();
    for (variant, field) in cases {
        for command in ["run", "ext-info"] {
            let mut cmd = minizts("tls");
            cmd.env_remove("MINIZTS_EXTENSIONS").env("MINIZTS_FAULTY", variant);
            if command == "run" {
                cmd.args(["run", "-d"]).arg(format!("extension={path}")).arg(&s.0);
            } else {
                cmd.arg("ext-info").arg(&lib);
            }
            let out = run(cmd, LIMIT);
            let err = text(&out.stderr);
            let want = format!("minizts: '{path}': Unable to initialize module: invalid module entry: {field}");
            let good = out.code == Some(1)
                && out.stdout.is_empty()
                && err.lines().count() == 1
                && err.starts_with(&want)
                && !err.contains("panicked");
            if !good {
                failures.push(format!(
                    "{command} with MINIZTS_FAULTY={variant}: exit {:?}, want 1 and {want:?}\n  stdout: {}\n  stderr: {err}",
                    out.code,
                    text(&out.stdout)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `--extension` and `MINIZTS_EXTENSIONS` together load both, flags
/// first (the order `minizts modules` lists), then `-d extension=`.
#[test]
fn the_extension_flag_and_the_environment_both_load() {
    let strings = extension("minizts-ext-strings");
    let counter = extension("minizts-ext-counter");
    let tlsdemo = extension("minizts-ext-tlsdemo");
    let mut cmd = minizts("tls");
    cmd.env("MINIZTS_EXTENSIONS", &strings)
        .arg("--extension")
        .arg(&counter)
        .args(["run", "-r", "echo mzstr_caesar('a'), counter_bump(2), \"\\n\";"]);
    let out = run(cmd, LIMIT);
    assert_eq!(text(&out.stdout), "n2\n", "{}", text(&out.stderr));
    assert_eq!(out.code, Some(0));

    let mut cmd = minizts("tls");
    cmd.env("MINIZTS_EXTENSIONS", format!("{}:", strings.display()))
        .arg("--extension")
        .arg(&counter)
        .arg("modules")
        .arg("-d")
        .arg(format!("extension={}", tlsdemo.display()));
    let out = run(cmd, LIMIT);
    let o = text(&out.stdout);
    assert_eq!(out.code, Some(0), "{}", text(&out.stderr));
    let modules: Vec<&str> = o
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('['))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert_eq!(modules, ["counter", "mzstr", "tlsdemo"], "{o}");
}
