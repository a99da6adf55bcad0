//! Compiler globals (PHP's `zend_compiler_globals`): the AST arena, the
//! tables of internal functions and constants the compiler resolves names
//! against, the interned strings of the script being compiled and the op
//! arrays under construction.

use bumpalo::Bump;
use hashbrown::HashMap;
use minizts_core::bytecode::{ConstPool, Function, Op, ParamInfo, Reg, Site, Src, Target};
use minizts_core::{InternedStrings, Value};

/// A function implemented in Rust (a builtin or, later, an extension's),
/// as the compiler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InternalFunction {
    /// The VM's dispatch id.
    pub id: u16,
    /// Arguments required.
    pub min_args: u8,
    /// Arguments accepted (`u8::MAX`: any number).
    pub max_args: u8,
    /// Bit `i` set: parameter `i` is by reference.
    pub by_ref: u32,
    /// Whether parameters past the last one in `by_ref` are by reference
    /// too (`array_push(&$a, ...$values)` is not; `sscanf`-like ones are).
    pub rest_by_ref: bool,
    /// Whether the by-reference parameters also take values that are not
    /// variables (PHP's `ZEND_SEND_PREFER_REF`: `array_multisort($a,
    /// SORT_DESC)`): those are passed by value instead of failing.
    pub prefer_ref: bool,
}

impl InternalFunction {
    pub fn param_by_ref(&self, i: usize) -> bool {
        if i < 32 {
            self.by_ref & (1 << i) != 0
        } else {
            self.rest_by_ref
        }
    }
}

/// A constant pool key: values compare by identity of their bits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum ConstKey {
    Null,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(usize),
}

/// An op array under construction (PHP's `CG(active_op_array)`).
pub struct OpArrayBuilder {
    pub name: Box<str>,
    pub params: Vec<ParamInfo>,
    pub required: u16,
    pub code: Vec<Op>,
    pub lines: Vec<u32>,
    consts: Vec<Value>,
    const_index: HashMap<ConstKey, u16>,
    pub cv_names: Vec<Box<str>>,
    cv_index: HashMap<Box<str>, u16>,
    pub sites: Vec<Site>,
    /// The constant array literals (see `Function::arrays`).
    pub arrays: Vec<minizts_core::bytecode::ArrayLiteral>,
    /// The first free temporary (temporaries are allocated like a stack).
    pub temp_top: u16,
    /// The highest register count reached.
    pub max_regs: u16,
    pub num_statics: u16,
    pub bound_cvs: Vec<u16>,
    pub is_closure: bool,
    /// The top-level code of an `eval()` or an included file (see
    /// `Function::in_caller_scope`).
    pub in_caller_scope: bool,
    /// Compiled under `declare(strict_types=1)` (see
    /// `Function::strict_types`).
    pub strict_types: bool,
    pub line_start: u32,
    pub line_end: u32,
    pub symbols: Option<u16>,
    pub extra_args: Option<u16>,
    pub return_type: Option<minizts_core::bytecode::TypeDecl>,
    pub by_ref_return: bool,
    /// See the `Function` fields of the same names.
    pub this_cv: Option<u16>,
    pub try_ranges: Vec<minizts_core::bytecode::TryRange>,
    pub method_flags: u16,
    pub in_trait: bool,
    pub class_decl: Option<u32>,
}

/// A function has more registers or constants than an instruction can
/// name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

impl OpArrayBuilder {
    pub fn new(name: &str, line_start: u32, line_end: u32) -> OpArrayBuilder {
        OpArrayBuilder {
            name: name.into(),
            params: Vec::new(),
            required: 0,
            code: Vec::new(),
            lines: Vec::new(),
            consts: Vec::new(),
            const_index: HashMap::new(),
            cv_names: Vec::new(),
            cv_index: HashMap::new(),
            sites: Vec::new(),
            arrays: Vec::new(),
            temp_top: 0,
            max_regs: 0,
            num_statics: 0,
            bound_cvs: Vec::new(),
            is_closure: false,
            in_caller_scope: false,
            strict_types: false,
            line_start,
            line_end,
            symbols: None,
            extra_args: None,
            return_type: None,
            by_ref_return: false,
            this_cv: None,
            try_ranges: Vec::new(),
            method_flags: 0,
            in_trait: false,
            class_decl: None,
        }
    }

    /// Appends an instruction; returns its index.
    pub fn emit(&mut self, op: Op, line: u32) -> Target {
        self.code.push(op);
        self.lines.push(line);
        (self.code.len() - 1) as Target
    }

    /// The index the next instruction will get.
    pub fn next_pc(&self) -> Target {
        self.code.len() as Target
    }

    /// The register of variable `$name`, created on first use. CVs must
    /// all exist before the first temporary is allocated; the compiler
    /// collects them up front.
    pub fn cv(&mut self, name: &str) -> Result<Reg, TooLarge> {
        if let Some(&r) = self.cv_index.get(name) {
            return Ok(Reg::new(r));
        }
        let r = self.cv_names.len();
        if r >= 0x7fff {
            return Err(TooLarge);
        }
        debug_assert!(self.temp_top as usize <= r, "CV {name} created after temporaries");
        self.cv_names.push(name.into());
        self.cv_index.insert(name.into(), r as u16);
        self.temp_top = (r + 1) as u16;
        self.max_regs = self.max_regs.max(self.temp_top);
        Ok(Reg::new(r as u16))
    }

    /// The register of `$name` if the function has one.
    pub fn find_cv(&self, name: &str) -> Option<Reg> {
        self.cv_index.get(name).map(|&r| Reg::new(r))
    }

    /// Whether `r` is a variable's register (not a temporary).
    pub fn is_cv(&self, r: Reg) -> bool {
        self.cv_index.values().any(|&i| usize::from(i) == r.idx())
    }

    /// A fresh temporary.
    pub fn temp(&mut self) -> Result<Reg, TooLarge> {
        let r = self.temp_top;
        if r >= Reg::MAX_INDEX {
            return Err(TooLarge);
        }
        self.temp_top += 1;
        self.max_regs = self.max_regs.max(self.temp_top);
        Ok(Reg::new(r))
    }

    /// `n` consecutive fresh temporaries; returns the first.
    pub fn temps(&mut self, n: usize) -> Result<Reg, TooLarge> {
        let first = self.temp_top;
        if first as usize + n >= Reg::MAX_INDEX as usize {
            return Err(TooLarge);
        }
        self.temp_top += n as u16;
        self.max_regs = self.max_regs.max(self.temp_top);
        Ok(Reg::new(first))
    }

    /// Frees every temporary from `mark` up.
    pub fn release_to(&mut self, mark: u16) {
        debug_assert!(mark as usize >= self.cv_names.len());
        self.temp_top = mark;
    }

    fn add_const(&mut self, key: ConstKey, value: impl FnOnce() -> Value) -> Result<Src, TooLarge> {
        if let Some(&k) = self.const_index.get(&key) {
            return Ok(Src::konst(k));
        }
        let k = self.consts.len();
        if k >= 0x7fff {
            return Err(TooLarge);
        }
        self.consts.push(value());
        self.const_index.insert(key, k as u16);
        Ok(Src::konst(k as u16))
    }

    pub fn const_null(&mut self) -> Result<Src, TooLarge> {
        self.add_const(ConstKey::Null, || Value::Null)
    }

    pub fn const_bool(&mut self, b: bool) -> Result<Src, TooLarge> {
        self.add_const(ConstKey::Bool(b), || Value::Bool(b))
    }

    pub fn const_int(&mut self, n: i64) -> Result<Src, TooLarge> {
        self.add_const(ConstKey::Int(n), || Value::Int(n))
    }

    pub fn const_float(&mut self, f: f64) -> Result<Src, TooLarge> {
        self.add_const(ConstKey::Float(f.to_bits()), || Value::Float(f))
    }

    /// A string constant: `i` is the string's index in `strings`.
    pub fn const_str(&mut self, strings: &InternedStrings, i: usize) -> Result<Src, TooLarge> {
        // SAFETY: the value goes into this function's constant pool, which
        // lives in the same script as `strings` (the compiler moves the
        // table into the script with the functions) and is dropped with it.
        self.add_const(ConstKey::Str(i), || Value::Str(unsafe { strings.get(i) }))
    }

    /// Finishes the op array. Checks what the VM relies on without
    /// checking at run time: the code ends with a return, every jump lands
    /// inside it, and every register is inside the window.
    pub fn finish(mut self) -> Function {
        let num_cvs = self.cv_names.len().min(self.max_regs as usize) as u16;
        // Each instruction that looks a constant name up gets a runtime
        // cache slot of its own.
        let mut num_caches: u16 = 0;
        for op in &mut self.code {
            if let Some((cacheable, cache)) = op.cache_mut() {
                *cache = if cacheable && num_caches < minizts_core::bytecode::NO_CACHE {
                    num_caches += 1;
                    num_caches - 1
                } else {
                    minizts_core::bytecode::NO_CACHE
                };
            }
        }
        let by_ref_args = Function::by_ref_mask(&self.params);
        let function = Function {
            num_cvs,
            name: self.name,
            params: self.params,
            required: self.required,
            cv_names: self.cv_names,
            num_regs: self.max_regs,
            code: self.code,
            lines: self.lines,
            consts: ConstPool::new(self.consts).expect("the builder only adds scalars and interned strings"),
            arrays: self.arrays.into_boxed_slice(),
            sites: self.sites,
            by_ref_args,
            cache_base: 0,
            num_caches,
            num_statics: self.num_statics,
            bound_cvs: self.bound_cvs,
            is_closure: self.is_closure,
            line_start: self.line_start,
            line_end: self.line_end,
            symbols: self.symbols,
            extra_args: self.extra_args,
            return_type: self.return_type,
            by_ref_return: self.by_ref_return,
            in_caller_scope: self.in_caller_scope,
            strict_types: self.strict_types,
            this_cv: self.this_cv,
            try_ranges: self.try_ranges,
            method_flags: self.method_flags,
            in_trait: self.in_trait,
            class_decl: self.class_decl,
        };
        if let Err(e) = function.verify() {
            panic!("the compiler emitted code the VM cannot run, in {}: {e}", function.name);
        }
        function
    }
}

/// The compiler globals (see the module docs).
pub struct CompilerGlobals {
    /// The AST arena. A compilation takes it (leaving an empty one) and
    /// gives it back reset, so the AST's lifetime is the compilation's.
    pub arena: Bump,
    /// Internal functions by lowercase name (PHP's `CG(function_table)`
    /// holds internal and user functions; user functions here are the
    /// script's own and live in the compiled script).
    pub function_table: HashMap<Box<[u8]>, InternalFunction>,
    /// Internal constants (PHP_EOL, M_PI, …), folded into the code at
    /// compile time as PHP does with persistent constants.
    pub constant_table: HashMap<Box<[u8]>, Value>,
    /// The interned strings of the script being compiled.
    pub interned: InternedStrings,
    /// The op arrays being compiled, innermost last.
    pub active: Vec<OpArrayBuilder>,
    /// The next runtime cache slot.
    pub cache_slots: u32,
}

impl CompilerGlobals {
    pub fn new() -> CompilerGlobals {
        CompilerGlobals {
            arena: Bump::new(),
            function_table: HashMap::new(),
            constant_table: HashMap::new(),
            interned: InternedStrings::new(),
            active: Vec::new(),
            cache_slots: 0,
        }
    }

    /// The op array being compiled.
    pub fn op_array(&mut self) -> &mut OpArrayBuilder {
        self.active.last_mut().expect("no active op array")
    }
}

impl Default for CompilerGlobals {
    fn default() -> Self {
        CompilerGlobals::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_positions_turn_back_into_indexes() {
        let mut b = OpArrayBuilder::new("f", 1, 3);
        b.emit(Op::Nop {}, 1);
        b.emit(Op::Nop {}, 2);
        let null = b.const_null().unwrap();
        b.emit(Op::Return { src: null }, 3);
        let f = b.finish();
        let start = f.code.as_ptr();
        for i in 0..3 {
            assert_eq!(f.index_of(start.wrapping_add(i)), Some(i));
        }
        // One past the end, before the start, and between instructions.
        assert_eq!(f.index_of(start.wrapping_add(3)), None);
        assert_eq!(f.index_of(start.wrapping_sub(1)), None);
        assert_eq!(f.index_of((start as *const u8).wrapping_add(1) as *const Op), None);
    }
}
