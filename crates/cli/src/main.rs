//! The `minizts` command: run, lint and dump PHP-subset scripts.

use std::io::Read;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod runner;
use minizts_core::PhpStr;
use minizts_globals::lock::LockKind;
use minizts_globals::{eg, memory::CountingAlloc, strategies, with_strategy, Globals, Sink};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// An experimental ZTS-style mini PHP engine.
#[derive(Parser)]
#[command(name = "minizts", version, about, propagate_version = true)]
struct Cli {
    /// How the engine reaches its executor and compiler globals: nts, ctx,
    /// fetch, table, offset or tls; `help` lists them. The MINIZTS_GLOBALS
    /// environment variable sets the default.
    #[arg(long, global = true, value_name = "STRATEGY", env = "MINIZTS_GLOBALS", default_value = strategies::DEFAULT)]
    globals: String,
    /// The lock guarding the engine's shared tables: std, spin, adaptive or pthread.
    #[arg(long, global = true, value_name = "KIND", default_value = "std")]
    lock: String,
    /// Where float formatting gets its digits: shared (big-integer dtoa,
    /// one freelist behind the --lock lock, PHP <= 8.3), per-thread (the
    /// freelist in EG, PHP 8.4) or stateless (no freelist).
    /// MINIZTS_DTOA sets the default.
    #[arg(
        long,
        global = true,
        value_name = "KIND",
        env = "MINIZTS_DTOA",
        default_value = "stateless"
    )]
    dtoa: String,
    /// Load an extension (a shared object) before running; repeatable. A
    /// name without `/` is looked up in the extension directory (`-d
    /// extension_dir=`, default: the directory of the minizts binary) as
    /// NAME, libNAME.so or NAME.so. The MINIZTS_EXTENSIONS environment
    /// variable adds a colon-separated list, loaded after these.
    #[arg(long = "extension", global = true, value_name = "PATH", value_delimiter = ':')]
    extensions: Vec<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run a script (`-` reads it from stdin) or, with -r, code given here.
    Run(RunArgs),
    /// Check a script's syntax (parse and compile), like `php -l`.
    Lint {
        /// The script.
        file: String,
    },
    /// List the globals strategies (and, with --probe, exercise the
    /// probe functions `scripts/globals-disasm.sh` disassembles).
    Globals {
        #[arg(long)]
        probe: bool,
    },
    /// List the loaded extension modules and their functions (`php -m`).
    Modules {
        /// `-d extension=PATH` loads one (as for `run`).
        #[arg(short = 'd', value_name = "NAME=VALUE")]
        define: Vec<String>,
    },
    /// Show an extension's entry (name, version, API, functions, globals,
    /// hooks) without loading it into the engine or running anything.
    ExtInfo {
        /// The shared object.
        path: String,
    },
    /// Print a script's bytecode, per function, with source lines.
    Dump {
        /// Print the syntax tree instead of the bytecode.
        #[arg(long)]
        ast: bool,
        /// The script (`-` reads stdin).
        file: String,
    },
}

#[derive(Args)]
struct RunArgs {
    /// Run this code (without `<?php`), like `php -r`.
    #[arg(short = 'r', long = "code", value_name = "CODE", conflicts_with = "file")]
    code: Option<String>,
    /// Set an ini setting: memory_limit, precision, max_execution_time,
    /// error_reporting, extension (repeatable), extension_dir (like `php -d`).
    #[arg(short = 'd', value_name = "NAME=VALUE")]
    define: Vec<String>,
    /// Report how many executor and compiler globals accesses the run made
    /// (on stderr, after the script).
    #[arg(long)]
    stats: bool,
    /// Run the script as many requests on this many worker threads
    /// (`php-cgi -T` style) and report requests/s and latency.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// How many requests the worker threads run in all (default: one per
    /// thread).
    #[arg(long, value_name = "M")]
    requests: Option<usize>,
    /// Recompile the script at every request (PHP without opcache)
    /// instead of sharing one compiled copy.
    #[arg(long)]
    no_cache: bool,
    /// When a worker thread starts its engine: once, or at every request
    /// (freed at request end, re-acquired through the shared tables).
    #[arg(long, value_enum, default_value = "per-thread")]
    thread_init: runner::ThreadInit,
    /// What happens to each request's output with --threads/--requests.
    #[arg(long, value_enum, default_value = "discard")]
    output: runner::KeepOutput,
    /// Print the --threads/--requests report as one JSON object.
    #[arg(long)]
    json: bool,
    /// The script to run (`-` for stdin).
    #[arg(required_unless_present = "code")]
    file: Option<String>,
    /// Arguments passed to the script in `$argv`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Reads the script: its bytes and the file name PHP would print.
fn load(file: &str) -> Result<(Vec<u8>, String), String> {
    if file == "-" {
        let mut src = Vec::new();
        std::io::stdin()
            .read_to_end(&mut src)
            .map_err(|e| format!("Could not read standard input: {e}"))?;
        return Ok((src, "Standard input code".into()));
    }
    let src = std::fs::read(file).map_err(|_| format!("Could not open input file: {file}"))?;
    let name = std::fs::canonicalize(file)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| file.to_string());
    Ok((src, name))
}

fn parse_bytes(v: &str) -> Option<Option<usize>> {
    let v = v.trim();
    if v == "-1" {
        return Some(None);
    }
    let (num, mult) = match v.chars().last()? {
        'k' | 'K' => (&v[..v.len() - 1], 1024),
        'm' | 'M' => (&v[..v.len() - 1], 1024 * 1024),
        'g' | 'G' => (&v[..v.len() - 1], 1024 * 1024 * 1024),
        _ => (v, 1),
    };
    num.parse::<usize>().ok().map(|n| Some(n * mult))
}

fn apply_settings(eg: &mut minizts_globals::ExecutorGlobals, defines: &[String]) -> Result<(), String> {
    for d in defines {
        let (name, value) = d.split_once('=').unwrap_or((d.as_str(), "1"));
        let settings = &mut eg.settings;
        match name.trim() {
            "memory_limit" => {
                settings.memory_limit = parse_bytes(value).ok_or_else(|| format!("bad memory_limit: {value}"))?
            }
            "precision" => settings.precision = value.trim().parse().map_err(|_| format!("bad precision: {value}"))?,
            "max_execution_time" => {
                let secs: u64 = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("bad max_execution_time: {value}"))?;
                settings.max_execution_time = std::time::Duration::from_secs(secs);
            }
            "error_reporting" => {
                settings.error_reporting = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("bad error_reporting: {value}"))?
            }
            "include_path" => settings.include_path = value.to_string(),
            // Loaded before the engine starts (see `extension_paths`).
            "extension" | "extension_dir" => {}
            // Settings PHP has and minizts does not need are accepted.
            "display_errors" | "log_errors" | "html_errors" | "opcache.enable" | "opcache.enable_cli" => {}
            other => return Err(format!("unknown setting: {other}")),
        }
    }
    Ok(())
}

fn compile_error_text(e: &minizts_compiler::CompileError, file: &str) -> String {
    let label = match e.kind {
        minizts_compiler::CompileErrorKind::Parse => "Parse error",
        minizts_compiler::CompileErrorKind::Fatal => "Fatal error",
    };
    let file = if e.line == 0 { "[no active file]" } else { file };
    format!("{label}: {} in {file} on line {}\n", e.message, e.line)
}

fn run<G: Globals>(args: &RunArgs) -> u8 {
    let (src, file, argv0) = match (&args.code, &args.file) {
        (Some(code), _) => {
            let mut src = b"<?php ".to_vec();
            src.extend_from_slice(code.as_bytes());
            (src, "Command line code".to_string(), "Standard input code".to_string())
        }
        (None, Some(f)) => match load(f) {
            Ok((src, name)) => (src, name, f.clone()),
            Err(msg) => {
                eprintln!("{msg}");
                return 1;
            }
        },
        (None, None) => unreachable!("clap requires a file or code"),
    };
    if args.threads.is_some() || args.requests.is_some() {
        let threads = args.threads.unwrap_or(1);
        let configure = |eg: &mut minizts_globals::ExecutorGlobals| apply_settings(eg, &args.define);
        let lock = minizts_globals::resources::manager().lock_kind().name();
        let argv: Vec<String> = std::iter::once(argv0.clone())
            .chain(args.args.iter().cloned())
            .collect();
        return runner::run::<G>(&runner::Plan {
            threads,
            requests: args.requests.unwrap_or(threads),
            no_cache: args.no_cache,
            thread_init: args.thread_init,
            output: args.output,
            json: args.json,
            src: &src,
            file: &file,
            argv: &argv,
            configure: &configure,
            strategy: G::NAME,
            lock,
            dtoa: minizts_vm::dtoa::mode().name(),
        });
    }
    let g: G = match minizts_vm::thread_startup() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("minizts: {e}");
            return 255;
        }
    };
    if let Err(msg) = apply_settings(eg!(g), &args.define) {
        eprintln!("minizts: {msg}");
        return 2;
    }
    let script = match minizts_compiler::compile(g, &src, &file) {
        Ok(s) => s,
        Err(e) => {
            eprint!("{}", compile_error_text(&e, &file));
            return 255;
        }
    };
    let mut argv = vec![PhpStr::from(argv0.as_str())];
    argv.extend(args.args.iter().map(|a| PhpStr::from(a.as_str())));
    let outcome = minizts_vm::run_request(g, script, &argv, Sink::Stdout(Vec::new()));
    // SAFETY: `g` is not used after this.
    unsafe { minizts_vm::thread_shutdown(g) };
    outcome.exit_status as u8
}

fn lint<G: Globals>(file: &str) -> u8 {
    let (src, name) = match load(file) {
        Ok(x) => x,
        Err(msg) => {
            eprintln!("{msg}");
            return 1;
        }
    };
    let g: G = match minizts_vm::thread_startup() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("minizts: {e}");
            return 255;
        }
    };
    let r = minizts_compiler::compile(g, &src, &name);
    // SAFETY: `g` is not used after this.
    unsafe { minizts_vm::thread_shutdown(g) };
    match r {
        Ok(_) => {
            println!("No syntax errors detected in {file}");
            0
        }
        Err(e) => {
            eprint!("{}", compile_error_text(&e, &name));
            println!("Errors parsing {file}");
            255
        }
    }
}

fn dump<G: Globals>(file: &str, ast: bool) -> u8 {
    let (src, name) = match load(file) {
        Ok(x) => x,
        Err(msg) => {
            eprintln!("{msg}");
            return 1;
        }
    };
    if ast {
        let arena = bumpalo::Bump::new();
        return match minizts_syntax::parse(&arena, &src) {
            Ok(script) => {
                print!("{}", minizts_syntax::ast::dump::script(&script));
                0
            }
            Err(e) => {
                let line = minizts_syntax::LineIndex::new(&src).line(e.pos as u32);
                eprintln!("Parse error: {} in {name} on line {line}", e.message);
                255
            }
        };
    }
    let g: G = match minizts_vm::thread_startup() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("minizts: {e}");
            return 255;
        }
    };
    let r = minizts_compiler::compile(g, &src, &name);
    let code = match &r {
        Ok(script) => {
            print!(
                "{}",
                script.disassemble_with(&|id| minizts_vm::builtins::info(id).name.to_string())
            );
            0
        }
        Err(e) => {
            eprint!("{}", compile_error_text(e, &name));
            255
        }
    };
    drop(r);
    // SAFETY: `g` is not used after this.
    unsafe { minizts_vm::thread_shutdown(g) };
    code
}

/// The interpreter runs on a thread with a large stack: script calls do not
/// use native stack, but builtins calling back into scripts, deeply nested
/// arrays and deeply nested expressions do.
pub(crate) const ENGINE_STACK: usize = 512 * 1024 * 1024;

/// `--stats`: the access counts of the run just made, and the allocator
/// calls it made since `allocator_calls_before` was read.
fn report_stats(name: &str, allocator_calls_before: u64) {
    let (eg, cg) = strategies::access_counts();
    let calls = minizts_globals::memory::allocator_calls() - allocator_calls_before;
    eprintln!(
        "minizts stats ({name}): {eg} EG accesses, {cg} CG accesses, {} in all; {calls} allocator calls",
        eg + cg
    );
    let general = strategies::general_path_counts();
    let total: u64 = general.iter().map(|(_, n)| n).sum();
    eprintln!("minizts stats ({name}): {total} instructions on the general path");
    for (mnemonic, n) in general.iter().take(12) {
        eprintln!("  {n:>12}  {mnemonic}");
    }
}

fn globals_command(probe: bool) -> u8 {
    for (name, description) in strategies::ALL {
        println!("{name:<7} {description}");
    }
    if probe {
        // Runs each probe once on a thread of its own (nts allows one
        // engine thread at a time), so they stay in the binary and work.
        for (name, _) in strategies::ALL {
            let probe = std::thread::Builder::new()
                .name(format!("minizts-probe-{name}"))
                .spawn(move || minizts_globals::probes::run(name));
            match probe.map(|h| h.join()) {
                Ok(Ok(Ok(v))) => println!("probe {name}: read the interrupt flag: {v}"),
                Ok(Ok(Err(e))) => println!("probe {name}: {e}"),
                Ok(Err(_)) => println!("probe {name}: panicked"),
                Err(e) => {
                    eprintln!("minizts: cannot start a thread for probe {name}: {e}");
                    return 1;
                }
            }
        }
    }
    0
}

/// The extensions to load, in order: `--extension`, then
/// `MINIZTS_EXTENSIONS`, then `-d extension=…` (all of them: one source
/// never hides another); names without `/` are looked up in
/// `extension_dir` (default: the minizts binary's directory).
fn extension_paths(cli: &Cli, defines: &[String]) -> Vec<String> {
    let setting = |key: &'static str| {
        defines.iter().filter_map(move |d| {
            let (k, v) = d.split_once('=')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let dir = setting("extension_dir")
        .next_back()
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|d| d.to_path_buf()))
        });
    let from_env: Vec<String> = std::env::var_os("MINIZTS_EXTENSIONS")
        .map(|v| v.to_string_lossy().split(':').map(str::to_string).collect())
        .unwrap_or_default();
    cli.extensions
        .iter()
        .cloned()
        .chain(from_env)
        .filter(|p| !p.is_empty())
        .chain(setting("extension"))
        .map(|name| {
            if name.contains('/') {
                return name;
            }
            let Some(dir) = &dir else { return name };
            [name.clone(), format!("lib{name}.so"), format!("{name}.so")]
                .iter()
                .map(|f| dir.join(f))
                .find(|p| p.is_file())
                .map_or(name, |p| p.to_string_lossy().into_owned())
        })
        .collect()
}

/// Loads the extensions (module startup), runs `f`, then module shutdown.
fn with_extensions<G: Globals>(paths: &[String], f: impl FnOnce() -> u8) -> u8 {
    if !paths.is_empty() {
        if let Err(e) = minizts_vm::extensions::load_all::<G>(paths) {
            eprintln!("minizts: {e}");
            return 1;
        }
    }
    let code = f();
    minizts_vm::extensions::shutdown_modules::<G>();
    code
}

/// `minizts modules`: what `php -m` shows, for extensions.
fn modules_command() -> u8 {
    println!("[Extension modules]");
    let Some(reg) = minizts_vm::extensions::registry() else {
        println!("(none loaded: use -d extension=PATH, --extension PATH or MINIZTS_EXTENSIONS)");
        return 0;
    };
    for m in &reg.modules {
        println!("{} {} ({})", m.name, m.version, m.path);
        println!("  functions: {}", m.functions.join(", "));
        if let Some((id, size)) = m.globals {
            println!("  module globals: {size} bytes, resource id {id}");
        }
    }
    0
}

/// `minizts ext-info PATH`: an extension's entry, without starting it.
fn ext_info_command(path: &str) -> u8 {
    match minizts_vm::extensions::inspect(path) {
        Ok(e) => {
            println!("module: {} {}", e.name, e.version);
            println!("module API: {}", e.api_version);
            for (name, params, required) in &e.functions {
                println!(
                    "function: {name}({}) requires {required}",
                    params.iter().map(|p| format!("${p}")).collect::<Vec<_>>().join(", ")
                );
            }
            if e.globals_size > 0 {
                println!("module globals: {} bytes", e.globals_size);
            }
            println!(
                "hooks: {}",
                if e.hooks.is_empty() {
                    "none".to_string()
                } else {
                    e.hooks.join(", ")
                }
            );
            0
        }
        Err(e) => {
            eprintln!("minizts: {e}");
            1
        }
    }
}

fn dispatch(cli: Cli) -> u8 {
    let Some(lock) = LockKind::parse(&cli.lock) else {
        eprintln!(
            "minizts: unknown lock kind '{}' (std, spin, adaptive, pthread)",
            cli.lock
        );
        return 2;
    };
    minizts_globals::resources::configure(lock);
    let Some(dtoa) = minizts_vm::dtoa::DtoaMode::parse(&cli.dtoa) else {
        eprintln!(
            "minizts: unknown --dtoa kind '{}' (shared, per-thread, stateless)",
            cli.dtoa
        );
        return 2;
    };
    minizts_vm::dtoa::set_mode(dtoa);
    if cli.globals == "help" {
        return globals_command(false);
    }
    let name = cli.globals.as_str();
    let Some(command) = &cli.command else {
        let _ = <Cli as clap::CommandFactory>::command().print_help();
        return 2;
    };
    let no_defines = Vec::new();
    let defines = match command {
        Command::Run(args) => &args.define,
        Command::Modules { define } => define,
        _ => &no_defines,
    };
    let exts = extension_paths(&cli, defines);
    let code = match command {
        Command::Run(args) if args.stats => with_strategy!(name, |G| {
            type C = minizts_globals::Counted<G>;
            with_extensions::<C>(&exts, || {
                strategies::reset_access_counts();
                let calls = minizts_globals::memory::allocator_calls();
                let code = run::<C>(args);
                report_stats(name, calls);
                code
            })
        }),
        Command::Run(args) => with_strategy!(name, |G| with_extensions::<G>(&exts, || run::<G>(args))),
        Command::Lint { file } => with_strategy!(name, |G| with_extensions::<G>(&exts, || lint::<G>(file))),
        Command::Dump { file, ast } => {
            with_strategy!(name, |G| with_extensions::<G>(&exts, || dump::<G>(file, *ast)))
        }
        Command::Modules { .. } => with_strategy!(name, |G| with_extensions::<G>(&exts, modules_command)),
        Command::ExtInfo { path } => Some(ext_info_command(path)),
        Command::Globals { probe } => Some(globals_command(*probe)),
    };
    code.unwrap_or_else(|| {
        eprintln!("minizts: unknown globals strategy '{name}'; --globals=help lists them");
        2
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let worker = std::thread::Builder::new()
        .name("minizts".into())
        .stack_size(ENGINE_STACK)
        .spawn(move || dispatch(cli));
    let code = match worker.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => {
            eprintln!("minizts: internal error (the engine panicked); this is a bug in minizts");
            255
        }
        // Nothing ran: exit 1, like PHP when it cannot start up.
        Err(e) => {
            eprintln!(
                "minizts: cannot start the engine thread (it needs {} MiB of stack): {e}",
                ENGINE_STACK >> 20
            );
            1
        }
    };
    ExitCode::from(code)
}
