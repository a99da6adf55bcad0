//! The compiler: AST to register bytecode.
//!
//! [`compile`] parses a script into an AST held in the compiler globals'
//! arena, walks it once per function, and produces an immutable
//! [`Script`]. All compiler state that PHP keeps in `CG()` — the arena, the
//! op array under construction, the interned strings, the tables of
//! internal functions and constants — is reached through the globals
//! strategy `G`, exactly as the VM reaches `EG()`.
//!
//! Registers: every variable a function names is a CV with a fixed
//! register (collected before code is emitted), and temporaries are
//! allocated above them like a stack, released when an expression's value
//! has been consumed.

mod attributes;
mod classes;
mod ct;
mod default_text;
mod exceptions;
mod export;
mod expr;
mod goto;
mod lvalue;
mod namespaces;
mod objects;
mod peephole;
mod refs;
mod stmt;
#[cfg(test)]
mod tests;
mod types;
pub use types::is_reserved_class_name;
mod vars;

use minizts_core::bytecode::NO_CACHE;
use std::sync::Arc;

use hashbrown::HashMap;
use minizts_core::bytecode::{ClassDef, FuncId, Function, Op, Reg, Script, Site, Src, Target};
use minizts_globals::{cg, Globals, OpArrayBuilder};
use minizts_syntax::ast::{FunctionDecl, StmtKind};
use minizts_syntax::{ast, names, LineIndex};

/// A compile-time error: PHP reports these before running anything.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileError {
    pub kind: CompileErrorKind,
    pub message: String,
    /// 0 when PHP reports no file and no line (see
    /// [`minizts_syntax::SyntaxError::unlocated`]).
    pub line: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileErrorKind {
    /// "Parse error: …"
    Parse,
    /// "Fatal error: …" raised by the compiler.
    Fatal,
}

type Result<T> = std::result::Result<T, CompileError>;

/// What a compiled script is to its request.
#[derive(Debug, Clone, Copy)]
pub struct Unit<'f> {
    /// The name messages will print.
    pub file: &'f str,
    /// The id its first function takes (see `Script::first_func`).
    pub first_func: FuncId,
    /// Its first runtime-cache slot.
    pub first_cache_slot: u32,
    /// What the top-level code is.
    pub kind: UnitKind,
}

/// The three kinds of compiled script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// A request's script: its top-level code is the global scope.
    Script,
    /// The code of an `eval()`: its top-level code runs in the caller's
    /// scope and returns null unless it says otherwise.
    Eval,
    /// An included file: runs in the caller's scope like an `eval()`, and
    /// returns 1 unless it says otherwise.
    Include,
}

impl<'f> Unit<'f> {
    /// A request's script.
    pub fn script(file: &'f str) -> Unit<'f> {
        Unit {
            file,
            first_func: 0,
            first_cache_slot: 0,
            kind: UnitKind::Script,
        }
    }
}

/// Parses and compiles `src`; `file` is the name messages will print.
pub fn compile<G: Globals>(g: G, src: &[u8], file: &str) -> Result<Arc<Script>> {
    compile_unit(g, src, Unit::script(file))
}

/// Parses and compiles `src` as `unit`.
pub fn compile_unit<G: Globals>(g: G, src: &[u8], unit: Unit<'_>) -> Result<Arc<Script>> {
    // The arena belongs to CG between compilations; this compilation
    // borrows it and gives it back reset.
    let mut arena = std::mem::take(&mut cg!(g).arena);
    let result = compile_in(g, &arena, src, unit);
    arena.reset();
    cg!(g).arena = arena;
    cg!(g, |cg| {
        cg.active.clear();
        cg.cache_slots = 0;
        if result.is_err() {
            cg.interned = Default::default();
        }
    });
    result
}

fn compile_in<G: Globals>(g: G, arena: &bumpalo::Bump, src: &[u8], unit: Unit<'_>) -> Result<Arc<Script>> {
    let lines = LineIndex::new(src);
    let ast = minizts_syntax::parse(arena, src).map_err(|e| CompileError {
        kind: if e.fatal {
            CompileErrorKind::Fatal
        } else {
            CompileErrorKind::Parse
        },
        message: e.message,
        // Line 0 is PHP's "[no active file] on line 0".
        line: if e.unlocated { 0 } else { lines.line(e.pos as u32) },
    })?;
    compile_ast(g, &ast, &lines, src.len(), unit)
}

/// Compiles a parsed script (`src_len` bytes long, its lines in
/// `lines`).
fn compile_ast<'a, G: Globals>(
    g: G,
    ast: &ast::Script<'a>,
    lines: &LineIndex,
    src_len: usize,
    unit: Unit<'_>,
) -> Result<Arc<Script>> {
    let file = unit.file;
    cg!(g, |cg| {
        cg.active.clear();
        cg.cache_slots = unit.first_cache_slot;
        cg.interned = Default::default();
    });
    let mut c = Compiler {
        g,
        file,
        first_func: unit.first_func,
        caller_scope: unit.kind != UnitKind::Script,
        implicit_return: if unit.kind == UnitKind::Include {
            ImplicitReturn::One
        } else {
            ImplicitReturn::Null
        },
        lines,
        line: 1,
        decls: HashMap::new(),
        functions: vec![None],
        early: Vec::new(),
        early_names: HashMap::new(),
        loops: Vec::new(),
        next_loop_id: 0,
        labels: goto::Labels::default(),
        in_function: false,
        return_type: None,
        by_ref_return: false,
        binding_call_result: false,
        assign_value_unused: false,
        plain_vars: hashbrown::HashSet::new(),
        halt_offset: ast.halt_offset,
        strict_types: ast.strict_types,
        classes: Vec::new(),
        early_classes: Vec::new(),
        early_class_names: HashMap::new(),
        class: None,
        pending_method: None,
        method_name: None,
        finallies: Vec::new(),
        next_finally_id: 0,
        short_circuits: Vec::new(),
        in_chain: false,
        anonymous_classes: 0,
        const_expr: false,
        const_operand: false,
        no_this: false,
        finally_bodies: Vec::new(),
        ns: Default::default(),
        warnings: Default::default(),
    };
    let top = c.top_level(ast.stmts)?;
    c.collect_decls(&top);
    let last_line = lines.line(src_len as u32);
    c.compile_main(&top, last_line)?;
    let mut functions: Vec<Function> = c
        .functions
        .into_iter()
        .map(|f| f.expect("every function id is filled"))
        .collect();
    bind_early_calls(&mut functions, unit.first_func, &c.early);
    // The functions' instruction caches after the unit's call and
    // constant sites, each function's together.
    cg!(g, |cg| {
        for f in &mut functions {
            f.cache_base = cg.cache_slots;
            cg.cache_slots += u32::from(f.num_caches);
        }
    });
    let classes: Vec<ClassDef> = c
        .classes
        .into_iter()
        .map(|d| d.expect("every class index is filled"))
        .collect();
    let (strings, cache_slots) = cg!(g, |cg| (std::mem::take(&mut cg.interned), cg.cache_slots));
    Ok(Arc::new(Script {
        file: file.into(),
        first_func: unit.first_func,
        functions,
        early_functions: c.early,
        classes,
        early_classes: c.early_classes,
        strings,
        cache_slots,
        warnings: c.warnings.into_inner(),
    }))
}

/// The lookup key of a function name: PHP's bytes (see
/// [`minizts_syntax::names`]) with ASCII letters lowercased, the only
/// bytes PHP folds.
pub(crate) fn function_key(name: &str) -> Vec<u8> {
    names::to_bytes(name).to_ascii_lowercase()
}

/// Turns calls of functions declared at the top level (bound before the
/// script runs, so a name always means the same function) into
/// `CallDirect` where the argument count needs no run-time handling.
/// Calls of other functions (conditional or nested declarations) keep
/// the run-time lookup through the cache.
fn bind_early_calls(functions: &mut [Function], first: FuncId, early: &[FuncId]) {
    let index = |id: FuncId| (id - first) as usize;
    let by_name: HashMap<Vec<u8>, FuncId> = early
        .iter()
        .map(|&id| (function_key(&functions[index(id)].name), id))
        .collect();
    // Decided on the finished functions first (a call may name its own
    // function), then written.
    let mut bound = Vec::new();
    for (caller, f) in functions.iter().enumerate() {
        for (pc, op) in f.code.iter().enumerate() {
            if let Op::CallUser { dst, site, args, argc } = *op {
                let Some(&func) = by_name.get(&*f.sites[site as usize].key) else {
                    continue;
                };
                if functions[index(func)].takes_plainly(argc as usize) {
                    let direct = Op::CallDirect {
                        dst,
                        site,
                        args,
                        argc,
                        func,
                    };
                    bound.push((caller, pc, direct));
                }
            }
        }
    }
    for (caller, pc, direct) in bound {
        functions[caller].code[pc] = direct;
    }
}

/// A loop or switch being compiled, for `break` and `continue`.
struct LoopCtx {
    /// Jumps to patch to the loop's end.
    breaks: Vec<Target>,
    /// Jumps to patch to the loop's continue point.
    continues: Vec<Target>,
    /// The foreach iterator register (freed when leaving the loop early).
    iter: Option<Reg>,
    /// `switch` (where `continue` acts as `break`).
    is_switch: bool,
    /// Which loop it is (for `goto`).
    id: u32,
}

/// A `try` with a `finally` being compiled: what leaving it early
/// (`return`, `break`, `continue`, `goto`) must run first.
pub(crate) struct FinallyCtx {
    /// Which one it is (for `goto`).
    pub id: u32,
    /// The register its `FAST_CALL`s and `FAST_RET` share.
    pub slot: Reg,
    /// Where a `return` leaving it keeps its value while the finally
    /// blocks run (below every register they use).
    pub ret: Reg,
    /// The `FAST_CALL`s into its finally block, patched when it is placed.
    pub calls: Vec<Target>,
    /// How many loops enclose it (`loops.len()` when it started).
    pub loop_depth: usize,
}

/// The class-like declaration whose body is being compiled.
#[derive(Clone)]
pub(crate) struct ClassCtx {
    /// Its index in the script's classes.
    pub index: u32,
    /// Its name (an anonymous class's generated one).
    pub name: std::rc::Rc<str>,
    pub kind: ast::ClassKind,
    /// The class it extends, resolved.
    pub parent: Option<std::rc::Rc<str>>,
}

/// The value top-level code gives when it ends without `return`.
#[derive(Debug, Clone, Copy)]
enum ImplicitReturn {
    Null,
    One,
}

struct Compiler<'a, 'l, G: Globals> {
    g: G,
    /// The file name messages print.
    file: &'l str,
    lines: &'l LineIndex,
    /// The line instructions are being emitted for.
    line: u32,
    /// Every named function in the file (first declaration of a name), so
    /// calls know which parameters are by reference.
    decls: HashMap<Vec<u8>, &'a FunctionDecl<'a>>,
    /// The id of `functions[0]` (see `Unit::first_func`).
    first_func: FuncId,
    /// Compiling code whose top level runs in its caller's scope (an
    /// `eval()`'s or an included file's).
    caller_scope: bool,
    /// The file declares `strict_types=1`.
    strict_types: bool,
    /// What the top-level code returns when it ends without `return`.
    implicit_return: ImplicitReturn,
    /// Finished functions by id less `first_func` (0 is the top-level
    /// code).
    functions: Vec<Option<Function>>,
    /// Functions PHP declares before running the script.
    early: Vec<FuncId>,
    early_names: HashMap<Vec<u8>, u32>,
    loops: Vec<LoopCtx>,
    /// The ids the next loops get.
    next_loop_id: u32,
    /// The current function's labels and `goto`s.
    labels: goto::Labels<'a>,
    in_function: bool,
    /// The current function's declared return type.
    return_type: Option<minizts_core::bytecode::TypeDecl>,
    /// Whether the current function returns by reference (`function &f`).
    by_ref_return: bool,
    /// Set while compiling the source of `$x =& …`, where a call's
    /// result may be a reference.
    binding_call_result: bool,
    /// Set while compiling an assignment statement whose value nothing
    /// reads: a temporary it assigns can move into the variable.
    assign_value_unused: bool,
    /// The current function's variables that never hold a reference (so
    /// instructions may write them directly); empty for top-level code.
    plain_vars: hashbrown::HashSet<&'a str>,
    /// `__COMPILER_HALT_OFFSET__`, if the script calls `__halt_compiler()`.
    halt_offset: Option<usize>,
    /// Every class-like declaration, by index (filled when compiled).
    classes: Vec<Option<ClassDef>>,
    /// The top-level unconditional ones.
    early_classes: Vec<u32>,
    /// Their lowercase names, with the line each was declared on.
    early_class_names: HashMap<Vec<u8>, u32>,
    /// The class whose members are being compiled.
    class: Option<ClassCtx>,
    /// The method flags and class of the next function `compile_function`
    /// compiles (set by the class compiler for a method).
    pending_method: Option<(u16, u32)>,
    /// `Class::method` while a method's body is compiled (`__METHOD__`).
    method_name: Option<String>,
    /// The current function's `try` blocks with a `finally`, innermost
    /// last.
    finallies: Vec<FinallyCtx>,
    next_finally_id: u32,
    /// The jumps of the nullsafe operators (`?->`) of the member chains
    /// being compiled, innermost chain last: each jumps to where its
    /// chain gives null.
    short_circuits: Vec<Vec<Target>>,
    /// Set while the object (or base, or callee) of a member chain's
    /// element is compiled: it belongs to that chain, whose short circuit
    /// it uses.
    in_chain: bool,
    /// How many anonymous classes the script has (for their names).
    anonymous_classes: u32,
    /// Compiling a constant expression of a class (a constant's value, a
    /// property's default), which PHP resolves lazily.
    const_expr: bool,
    /// Compiling a constant expression (a constant's value, a property's
    /// or a parameter's default): a property is read only from an enum
    /// case.
    const_operand: bool,
    /// Compiling a named function or a static method, whose `$this` is
    /// never set: reading it is PHP's error.
    no_this: bool,
    /// The finally blocks being compiled in the current function,
    /// innermost last: their `try`'s id and how many loops enclose them
    /// (no jump may leave one).
    finally_bodies: Vec<(u32, usize)>,
    /// The namespace and imports of the top-level statement being
    /// compiled.
    ns: std::rc::Rc<namespaces::Scope>,
    /// The compile-time warnings so far.
    warnings: std::cell::RefCell<Vec<minizts_core::bytecode::CompileWarning>>,
}

impl<'a, G: Globals> Compiler<'a, '_, G> {
    fn error<T>(&self, message: impl Into<String>) -> Result<T> {
        Err(CompileError {
            kind: CompileErrorKind::Fatal,
            message: message.into(),
            line: self.line,
        })
    }

    fn line_of(&self, pos: u32) -> u32 {
        self.lines.line(pos)
    }

    fn at(&mut self, pos: u32) {
        self.line = self.lines.line(pos);
    }

    /// A warning PHP's compiler raises (reported before the script runs):
    /// an `E_COMPILE_WARNING` when `compile`, else an `E_WARNING`.
    fn compile_warning(&self, message: String, compile: bool) {
        self.warnings.borrow_mut().push(minizts_core::bytecode::CompileWarning {
            message: message.into(),
            line: self.line,
            compile,
        });
    }

    fn too_large<T>(&self) -> Result<T> {
        self.error("minizts: function too large (more than 32767 registers or constants)")
    }

    /// Emits an instruction into the active op array.
    fn emit(&mut self, op: Op) -> Target {
        let line = self.line;
        cg!(self.g).op_array().emit(op, line)
    }

    fn next_pc(&mut self) -> Target {
        cg!(self.g).op_array().next_pc()
    }

    fn temp(&mut self) -> Result<Reg> {
        match cg!(self.g).op_array().temp() {
            Ok(r) => Ok(r),
            Err(_) => self.too_large(),
        }
    }

    fn temps(&mut self, n: usize) -> Result<Reg> {
        match cg!(self.g).op_array().temps(n) {
            Ok(r) => Ok(r),
            Err(_) => self.too_large(),
        }
    }

    /// The current temporary watermark.
    fn mark(&mut self) -> u16 {
        cg!(self.g).op_array().temp_top
    }

    fn release(&mut self, mark: u16) {
        cg!(self.g).op_array().release_to(mark);
    }

    fn cv(&mut self, name: &str) -> Result<Reg> {
        match cg!(self.g).op_array().find_cv(name) {
            Some(r) => Ok(r),
            None => self.error(format!("minizts: internal error: variable ${name} has no register")),
        }
    }

    fn const_int(&mut self, n: i64) -> Result<Src> {
        match cg!(self.g).op_array().const_int(n) {
            Ok(s) => Ok(s),
            Err(_) => self.too_large(),
        }
    }

    fn const_float(&mut self, f: f64) -> Result<Src> {
        match cg!(self.g).op_array().const_float(f) {
            Ok(s) => Ok(s),
            Err(_) => self.too_large(),
        }
    }

    fn const_bool(&mut self, b: bool) -> Result<Src> {
        match cg!(self.g).op_array().const_bool(b) {
            Ok(s) => Ok(s),
            Err(_) => self.too_large(),
        }
    }

    fn const_null(&mut self) -> Result<Src> {
        match cg!(self.g).op_array().const_null() {
            Ok(s) => Ok(s),
            Err(_) => self.too_large(),
        }
    }

    fn const_str(&mut self, bytes: &[u8]) -> Result<Src> {
        let r = cg!(self.g, |cg| {
            let i = cg.interned.intern(bytes);
            let op_array = cg.active.last_mut().expect("no active op array");
            op_array.const_str(&cg.interned, i)
        });
        match r {
            Ok(s) => Ok(s),
            Err(_) => self.too_large(),
        }
    }

    /// The constant index of a string (for instructions that name one).
    fn const_str_index(&mut self, bytes: &[u8]) -> Result<u16> {
        Ok(self.const_str(bytes)?.index() as u16)
    }

    /// Adds a call or constant site with a fresh runtime cache slot; it
    /// looks `fallback` up when `key` names nothing.
    fn site_with_fallback(&mut self, name: &str, key: &[u8], fallback: Option<Vec<u8>>) -> Result<u16> {
        let fallback = fallback.map(Vec::into_boxed_slice);
        let index = cg!(self.g, |cg| {
            let slot = cg.cache_slots;
            cg.cache_slots += 1;
            let sites = &mut cg.op_array().sites;
            if sites.len() >= u16::MAX as usize {
                return None;
            }
            sites.push(Site {
                name: name.into(),
                key: key.into(),
                fallback,
                cache_slot: slot,
            });
            Some((sites.len() - 1) as u16)
        });
        match index {
            Some(i) => Ok(i),
            None => self.too_large(),
        }
    }

    /// Points the jump at `pc` to `target`.
    fn patch(&mut self, pc: Target, target: Target) {
        cg!(self.g, |cg| {
            let op = &mut cg.op_array().code[pc as usize];
            match op.target_mut() {
                Some(t) => *t = target,
                None => panic!("patching a non-jump {op:?}"),
            }
        })
    }

    /// Points the jump at `pc` to the next instruction.
    fn patch_here(&mut self, pc: Target) {
        let here = self.next_pc();
        self.patch(pc, here);
    }

    /// Records every named function declaration in the file, by its
    /// name in its namespace.
    fn collect_decls(&mut self, top: &[(&'a ast::Stmt<'a>, std::rc::Rc<namespaces::Scope>)]) {
        for (s, scope) in top {
            vars::walk_stmt_decls(s, &mut |f| {
                self.decls.entry(function_key(&scope.prefixed(f.name))).or_insert(f);
            });
        }
    }

    /// Compiles the top-level code as function 0.
    fn compile_main(
        &mut self,
        top: &[(&'a ast::Stmt<'a>, std::rc::Rc<namespaces::Scope>)],
        last_line: u32,
    ) -> Result<()> {
        let mut builder = OpArrayBuilder::new("{main}", 1, last_line);
        builder.strict_types = self.strict_types;
        builder.in_caller_scope = self.caller_scope;
        let mut names = vars::VarNames::default();
        // An eval's variables are its caller's, bound when it starts.
        if !self.caller_scope {
            for name in minizts_core::superglobals::REQUEST_START {
                names.add(name);
            }
        }
        for (s, _) in top {
            vars::collect_stmt(s, &mut names);
        }
        for name in names.iter() {
            if builder.cv(name).is_err() {
                return self.too_large();
            }
        }
        builder.this_cv = builder.find_cv("this").map(|r| r.idx() as u16);
        cg!(self.g).active.push(builder);
        // Declarations PHP binds before running: named functions at the
        // top level of the file.
        for (s, scope) in top {
            if let StmtKind::Function(f) = &s.kind {
                self.ns = scope.clone();
                self.at(s.pos);
                let id = self.compile_function(f)?;
                let name = scope.prefixed(f.name);
                let key = function_key(&name);
                if let Some(&prev) = self.early_names.get(&key) {
                    return self.error(format!(
                        "Cannot redeclare {name}() (previously declared in {}:{})",
                        self.file, prev
                    ));
                }
                self.early_names.insert(key, self.line_of(f.pos));
                self.early.push(id);
            }
        }
        for (s, scope) in top {
            self.ns = scope.clone();
            match &s.kind {
                StmtKind::Function(_) => {}
                // Classes declared unconditionally at the top level are
                // declared before the script runs too (when what they
                // extend is known by then).
                StmtKind::Class(decl) => {
                    self.at(s.pos);
                    self.class_stmt(decl, true)?;
                }
                _ => self.stmt(s)?,
            }
        }
        self.line = last_line;
        let result = match self.implicit_return {
            ImplicitReturn::Null => self.const_null()?,
            ImplicitReturn::One => self.const_int(1)?,
        };
        if self.caller_scope {
            self.emit(Op::DetachScope {});
        }
        self.emit(Op::Return { src: result });
        self.resolve_gotos()?;
        let mut builder = cg!(self.g).active.pop().expect("main op array");
        peephole::shorten_returns(&mut builder.code, &mut builder.lines, builder.cv_names.len());
        peephole::specialise(&mut builder.code);
        self.functions[0] = Some(builder.finish());
        Ok(())
    }

    /// Compiles a named function, closure or arrow function; returns its id.
    fn compile_function(&mut self, f: &'a FunctionDecl<'a>) -> Result<FuncId> {
        // A method (see `compile_method`), a closure or a named function.
        let method = self.pending_method.take();
        let closure = method.is_none() && f.name == "{closure}";
        // Named functions and closures take the namespace's name.
        let name = match method {
            Some(_) => f.name.to_string(),
            None => self.ns.prefixed(f.name),
        };
        let key = function_key(&name);
        if method.is_none() && !closure {
            self.check_declaration(ast::UseKind::Function, f.name, &name)?;
            if name.eq_ignore_ascii_case("__autoload") {
                return self.error("__autoload() is no longer supported, use spl_autoload_register() instead");
            }
            // In any namespace: an unqualified `assert()` call is compiled
            // as PHP's own.
            if f.name.eq_ignore_ascii_case("assert") {
                return self.error(
                    "Defining a custom assert() function is not allowed, as the function has special semantics",
                );
            }
            if cg!(self.g).function_table.contains_key(key.as_slice()) {
                return self.error(format!("Cannot redeclare {name}()"));
            }
        }
        let id = self.first_func + self.functions.len() as FuncId;
        self.functions.push(None);
        let start = self.line_of(f.pos);
        let end = self.line_of(f.end_pos);
        let mut builder = OpArrayBuilder::new(&name, start, end);
        builder.strict_types = self.strict_types;
        builder.is_closure = closure;
        match method {
            Some((flags, class)) => {
                builder.method_flags = flags;
                builder.class_decl = Some(class);
                builder.in_trait = self.class.as_ref().is_some_and(|c| c.kind == ast::ClassKind::Trait);
            }
            // A closure written inside a class has its scope; a `static`
            // one has no `$this`.
            None if closure => {
                builder.class_decl = self.class.as_ref().map(|c| c.index);
                if f.is_static {
                    builder.method_flags = minizts_core::object::acc::STATIC;
                }
            }
            None => {}
        }
        // `self`, `parent` and `static` in types: where a class scope
        // may be (a method, or a closure that may be bound to one).
        let scoped = closure || method.is_some();

        // PHP checks the header at one line: the declaration's, or for a
        // closure the line its last `use` variable left current.
        self.line = match f.uses.last() {
            Some(u) => self.line_of(u.pos),
            None => start,
        };
        let target = match method {
            Some(_) => attributes::Target::Method,
            None => attributes::Target::Function,
        };
        self.check_attributes(f.attributes, target)?;
        // `parent` in a method's types needs a parent
        // (`zend_ensure_valid_class_fetch_type`).
        if method.is_some() {
            if let Some(c) = self
                .class
                .as_ref()
                .filter(|c| c.parent.is_none() && c.kind != ast::ClassKind::Trait)
            {
                let _ = c;
                let mut hints = f.params.iter().filter_map(|p| p.ty).chain(f.return_type);
                if hints.any(|h| h.names.iter().any(|n| n.eq_ignore_ascii_case("parent"))) {
                    return self.error("Cannot use \"parent\" when current class scope has no parent");
                }
            }
        }
        let return_type = match f.return_type {
            Some(hint) => Some(self.type_decl(hint, types::Place::Return, scoped)?),
            // A `__toString` method returns a string, declared or not.
            None if method.is_some() && f.name.eq_ignore_ascii_case("__toString") => {
                Some(minizts_core::bytecode::TypeDecl {
                    mask: minizts_core::bytecode::type_bits::STRING,
                    classes: Box::new([]),
                    intersection: false,
                })
            }
            None => None,
        };
        let mut required = 0;
        if method.is_none() && f.params.iter().any(|p| p.promote != 0) {
            return self.error("Cannot declare promoted property outside a constructor");
        }
        for (i, p) in f.params.iter().enumerate() {
            if p.name == "GLOBALS" || minizts_core::superglobals::is_auto_global(p.name) {
                return self.error(format!("Cannot re-assign auto-global variable {}", p.name));
            }
            if f.params[..i].iter().any(|q| q.name == p.name) {
                return self.error(format!("Redefinition of parameter ${}", p.name));
            }
            if p.name == "this" {
                return self.error("Cannot use $this as parameter");
            }
            if f.params[..i].iter().any(|q| q.variadic) {
                return self.error("Only the last parameter can be variadic");
            }
            if p.default.is_none() && !p.variadic {
                required = i + 1;
            }
            if p.variadic && p.default.is_some() {
                return self.error("Variadic parameter cannot have a default value");
            }
            self.check_attributes(p.attributes, attributes::Target::Parameter)?;
            let ty = match p.ty {
                Some(hint) => Some(self.param_type(hint, p.name, p.default, scoped)?),
                None => None,
            };
            builder.params.push(minizts_core::bytecode::ParamInfo {
                name: p.name.into(),
                by_ref: p.by_ref,
                has_default: p.default.is_some(),
                variadic: p.variadic,
                ty,
                default: p.default.map(|d| self.default_text(d).into()),
                sensitive: self.is_sensitive(p.attributes)?,
            });
        }
        builder.required = required as u16;
        // A `use` variable named as a parameter, each checked at the line
        // the one before it left current.
        for u in f.uses {
            if f.params.iter().any(|p| p.name == u.name) {
                return self.error(format!("Cannot use lexical variable ${} as a parameter name", u.name));
            }
            self.line = self.line_of(u.pos);
        }
        builder.return_type = return_type.clone();
        builder.by_ref_return = f.by_ref_return;

        // Registers: parameters, then bound (`use`) variables, then every
        // other variable the body names.
        let mut names = vars::VarNames::default();
        for p in f.params {
            names.add(p.name);
        }
        let captures = vars::captures(f);
        for c in &captures {
            names.add(c.name);
        }
        match &f.body {
            ast::FunctionBody::Block(stmts) => {
                for s in stmts.iter() {
                    vars::collect_stmt(s, &mut names);
                }
            }
            ast::FunctionBody::Arrow(e) => vars::collect_expr(e, &mut names),
            ast::FunctionBody::None => {}
        }
        // An instance method always has its `$this` in a CV: the call
        // puts the object there, and closures made inside take it from
        // there (the frame keeps no other copy).
        // So does a closure that may be bound to an object: a closure made
        // inside it takes its `$this`.
        if method.is_some_and(|(flags, _)| flags & minizts_core::object::acc::STATIC == 0) || (closure && !f.is_static)
        {
            names.add("this");
        }
        for name in names.iter() {
            if builder.cv(name).is_err() {
                return self.too_large();
            }
        }
        builder.this_cv = builder.find_cv("this").map(|r| r.idx() as u16);
        // The hidden variables of a function that reaches its scope by name
        // (names no PHP variable can have).
        if names.by_name {
            let Ok(r) = builder.cv("\0symbols") else {
                return self.too_large();
            };
            builder.symbols = Some(r.idx() as u16);
        }
        if names.arg_list {
            let Ok(r) = builder.cv("\0args") else {
                return self.too_large();
            };
            builder.extra_args = Some(r.idx() as u16);
        }
        for c in &captures {
            let r = builder.find_cv(c.name).expect("capture has a CV");
            builder.bound_cvs.push(r.idx() as u16);
        }
        self.line = start;

        let refs = self.ref_vars(f);
        // A variable reached by name may become a reference at any time.
        let plain: hashbrown::HashSet<&'a str> = if names.by_name {
            hashbrown::HashSet::new()
        } else {
            names
                .iter()
                .filter(|n| !refs.contains(n) && !minizts_core::superglobals::is_auto_global(n))
                .collect()
        };
        cg!(self.g).active.push(builder);
        let saved_plain = std::mem::replace(&mut self.plain_vars, plain);
        let saved_loops = std::mem::take(&mut self.loops);
        let saved_labels = std::mem::take(&mut self.labels);
        let saved_in_function = std::mem::replace(&mut self.in_function, true);
        let saved_return_type = std::mem::replace(&mut self.return_type, return_type);
        let saved_by_ref_return = std::mem::replace(&mut self.by_ref_return, f.by_ref_return);
        let saved_finallies = std::mem::take(&mut self.finallies);
        let saved_finally_bodies = std::mem::take(&mut self.finally_bodies);
        let saved_short_circuits = std::mem::take(&mut self.short_circuits);
        let saved_in_chain = std::mem::replace(&mut self.in_chain, false);
        // A named function declared inside a method has no class scope.
        let saved_class = if method.is_none() && !closure {
            self.class.take()
        } else {
            self.class.clone()
        };
        let method_name = match (method, &self.class) {
            (Some(_), Some(c)) => Some(format!("{}::{}", c.name, f.name)),
            _ => None,
        };
        let saved_method_name = std::mem::replace(&mut self.method_name, method_name);
        let no_this = !closure && method.is_none_or(|(flags, _)| flags & minizts_core::object::acc::STATIC != 0);
        let saved_no_this = std::mem::replace(&mut self.no_this, no_this);
        let saved_line = self.line;
        self.line = start;
        let result = self.function_body(f).and_then(|()| self.resolve_gotos());
        self.no_this = saved_no_this;
        self.loops = saved_loops;
        self.labels = saved_labels;
        self.plain_vars = saved_plain;
        self.in_function = saved_in_function;
        self.return_type = saved_return_type;
        self.by_ref_return = saved_by_ref_return;
        self.finallies = saved_finallies;
        self.finally_bodies = saved_finally_bodies;
        self.short_circuits = saved_short_circuits;
        self.in_chain = saved_in_chain;
        self.class = saved_class;
        self.method_name = saved_method_name;
        self.line = saved_line;
        let mut builder = cg!(self.g).active.pop().expect("function op array");
        result?;
        peephole::shorten_returns(&mut builder.code, &mut builder.lines, builder.cv_names.len());
        peephole::specialise(&mut builder.code);
        self.functions[(id - self.first_func) as usize] = Some(builder.finish());
        Ok(id)
    }

    fn function_body(&mut self, f: &'a FunctionDecl<'a>) -> Result<()> {
        let scoped = f.name == "{closure}" || self.method_name.is_some();
        if matches!(f.body, ast::FunctionBody::None) {
            // An abstract or interface method: never run.
            let null = self.const_null()?;
            self.emit(Op::Return { src: null });
            return Ok(());
        }
        self.emit_param_checks(f);
        // The auto-globals the body names are the global ones, bound on
        // entry as `global $_SERVER;` would bind them.
        let cvs: Vec<&'a str> = cg!(self.g, |cg| {
            let b = cg.active.last().expect("function op array");
            minizts_core::superglobals::AUTO_GLOBALS
                .iter()
                .copied()
                .filter(|n| b.find_cv(n).is_some())
                .collect()
        });
        for name in cvs {
            let var = self.cv(name)?;
            let k = self.const_str_index(name.as_bytes())?;
            self.emit(Op::BindGlobal {
                var,
                name: k,
                cache: NO_CACHE,
            });
        }
        // Default values, evaluated when the argument is missing.
        for (i, p) in f.params.iter().enumerate() {
            if let Some(default) = p.default {
                self.at(p.pos);
                self.check_static_in_default(default)?;
                let jump = self.emit(Op::JmpIfPassed {
                    param: i as u16,
                    target: 0,
                });
                let reg = self.cv(p.name)?;
                let mark = self.mark();
                let ty = match &p.ty {
                    Some(hint) => Some(self.param_type(hint, p.name, p.default, scoped)?),
                    None => None,
                };
                let v = match (&default.kind, &ty) {
                    // An int literal for a float (and not int) parameter
                    // is a float from the start (`zend_is_valid_default_value`).
                    (ast::ExprKind::Int(n), Some(t))
                        if t.mask & minizts_core::bytecode::type_bits::FLOAT != 0
                            && t.mask & minizts_core::bytecode::type_bits::INT == 0 =>
                    {
                        self.const_float(*n as f64)?
                    }
                    _ => {
                        let saved = std::mem::replace(&mut self.const_operand, true);
                        let v = self.expr(default);
                        self.const_operand = saved;
                        v?
                    }
                };
                self.emit(Op::Move { dst: reg, src: v });
                if ty.is_some() && !types::literal_default(default) {
                    self.emit(Op::VerifyDefault { param: i as u16 });
                }
                self.release(mark);
                self.patch_here(jump);
            }
        }
        // Constructor promotion: `$this->x = $x` for each promoted
        // parameter, once the defaults are in place.
        for p in f.params.iter().filter(|p| p.promote != 0) {
            self.at(p.pos);
            let this = self.cv("this")?;
            let var = self.cv(p.name)?;
            let name = self.const_str(&names::to_bytes(p.name))?;
            self.emit(Op::AssignProp {
                obj: Src::reg(this),
                name,
                src: Src::reg(var),
                cache: NO_CACHE,
            });
        }
        match &f.body {
            ast::FunctionBody::None => unreachable!("handled above"),
            ast::FunctionBody::Block(stmts) => {
                for s in stmts.iter() {
                    self.stmt(s)?;
                }
                self.line = self.line_of(f.end_pos);
                if self
                    .return_type
                    .as_ref()
                    .is_some_and(|t| t.mask != minizts_core::bytecode::type_bits::VOID)
                {
                    self.emit(Op::VerifyNoReturn {});
                }
                let null = self.const_null()?;
                self.emit(Op::Return { src: null });
            }
            ast::FunctionBody::Arrow(e) => {
                self.at(e.pos);
                let v = self.expr(e)?;
                let v = self.checked_return(v)?;
                self.emit(Op::Return { src: v });
            }
        }
        Ok(())
    }
}

/// Whether a name is a builtin the compiler knows (for `function_exists`
/// folding and redeclaration checks).
pub fn is_internal_function<G: Globals>(g: G, name: &[u8]) -> bool {
    cg!(g).function_table.contains_key(name.to_ascii_lowercase().as_slice())
}
