//! PHP's builtin functions: the registry, argument handling, dispatch.
//!
//! Each module under `builtins/` declares its functions with
//! [`builtin_table!`]: PHP's name, parameter names (for PHP's messages;
//! `...name` for a variadic rest), how many are required, which are by
//! reference, and the Rust function. A function's id is its position in
//! the concatenation of the modules' tables; the compiler gets the table
//! through the compiler globals at thread startup, the VM dispatches ids
//! here. Builtins are generic over the globals strategy like the rest of
//! the VM, and take their arguments as an [`Args`].

use std::marker::PhantomData;
use std::rc::Rc;

use minizts_core::numfmt::{self, Number};
use minizts_core::{PhpArray, PhpStr, Value};
use minizts_globals::{cg, eg, Globals, InternalFunction};

use crate::call::builtin_arity;
use crate::error::{deprecated, type_error, warning, VmResult};

mod array;
mod classes;
mod codec;
mod math;
mod misc;
mod output;
mod pcre;
mod scope;
mod spl;
mod string;
mod var;
mod web;

pub(crate) use misc::run_shutdown_functions;

/// A builtin as PHP's messages and the compiler see it.
#[derive(Debug)]
pub struct BuiltinInfo {
    pub name: &'static str,
    /// Parameter names; a leading `...` marks a variadic rest.
    pub params: &'static [&'static str],
    /// Required arguments.
    pub min: u8,
    /// Bit `i`: parameter `i` by reference (bit 31: the variadic rest).
    pub by_ref: u32,
    /// Whether the last parameter is a variadic rest (`...name`).
    pub variadic: bool,
}

/// Whether a parameter list ends in a variadic rest (for `builtin_table!`).
pub const fn ends_variadic(params: &[&str]) -> bool {
    if params.is_empty() {
        return false;
    }
    let last = params[params.len() - 1].as_bytes();
    last.len() > 3 && last[0] == b'.' && last[1] == b'.' && last[2] == b'.'
}

impl BuiltinInfo {
    pub fn variadic(&self) -> bool {
        self.variadic
    }

    /// The most arguments accepted (`None`: any number).
    pub fn max(&self) -> Option<usize> {
        (!self.variadic()).then_some(self.params.len())
    }

    pub fn param_by_ref(&self, i: usize) -> bool {
        if i < 31 {
            if self.by_ref & (1 << i) != 0 {
                return true;
            }
            if self.variadic() && i + 1 >= self.params.len() {
                return self.by_ref & (1 << 31) != 0;
            }
            false
        } else {
            self.variadic() && self.by_ref & (1 << 31) != 0
        }
    }

    fn param_name(&self, i: usize) -> &'static str {
        match self.params.get(i) {
            Some(p) => p.trim_start_matches("..."),
            None => self.params.last().map_or("", |p| p.trim_start_matches("...")),
        }
    }
}

/// A builtin's implementation.
pub type BuiltinFn<G> = fn(G, &mut Args<'_>) -> VmResult<Value>;

/// Declares a module's builtins: `"name", ["param", …], required,
/// by_ref_mask, function;` — generating `INFO` (for the compiler and
/// messages) and `Fns::<G>::FNS` (for dispatch) in the same order.
#[macro_export]
macro_rules! builtin_table {
    ($($name:literal, [$($param:literal),*], $min:literal, $by_ref:literal, $f:ident;)*) => {
        pub(crate) const INFO: &[$crate::builtins::BuiltinInfo] = &[
            $($crate::builtins::BuiltinInfo {
                name: $name,
                params: &[$($param),*],
                min: $min,
                by_ref: $by_ref,
                variadic: $crate::builtins::ends_variadic(&[$($param),*]),
            },)*
        ];
        pub(crate) struct Fns<G>(std::marker::PhantomData<G>);
        impl<G: minizts_globals::Globals> Fns<G> {
            pub(crate) const FNS: &'static [$crate::builtins::BuiltinFn<G>] = &[$($f::<G>,)*];
        }
    };
}

/// The modules, in id order: written once, giving both the descriptions
/// (`MODULES`) and, per strategy, the implementations (`module_fns`).
macro_rules! modules {
    ($($m:ident),* $(,)?) => {
        const MODULES: &[&[BuiltinInfo]] = &[$($m::INFO),*];

        /// Every module's implementations for strategy `G`, in id order.
        const fn module_fns<G: Globals>() -> &'static [&'static [BuiltinFn<G>]] {
            &[$($m::Fns::<G>::FNS),*]
        }
    };
}

modules!(string, array, math, var, output, misc, codec, web, pcre, scope, classes, spl);

/// How many builtins there are.
const COUNT: usize = {
    let mut n = 0;
    let mut m = 0;
    while m < MODULES.len() {
        n += MODULES[m].len();
        m += 1;
    }
    n
};

/// Every builtin's description, by id.
const INFOS: [&BuiltinInfo; COUNT] = {
    let mut out = [&MODULES[0][0]; COUNT];
    let (mut k, mut m) = (0, 0);
    while m < MODULES.len() {
        let mut i = 0;
        while i < MODULES[m].len() {
            out[k] = &MODULES[m][i];
            k += 1;
            i += 1;
        }
        m += 1;
    }
    out
};

struct Dispatch<G>(PhantomData<G>);

impl<G: Globals> Dispatch<G> {
    /// Every builtin's implementation for strategy `G`, by id: one
    /// indexed load per call.
    const FNS: [BuiltinFn<G>; COUNT] = {
        let tables = module_fns::<G>();
        let mut out = [tables[0][0]; COUNT];
        let (mut k, mut m) = (0, 0);
        while m < tables.len() {
            let mut i = 0;
            while i < tables[m].len() {
                out[k] = tables[m][i];
                k += 1;
                i += 1;
            }
            m += 1;
        }
        out
    };
}

/// Every builtin, by id.
pub fn all() -> impl Iterator<Item = &'static BuiltinInfo> {
    MODULES.iter().flat_map(|m| m.iter())
}

/// How many builtins there are (extension functions' ids follow).
pub fn count() -> usize {
    COUNT
}

/// The builtin (or extension function) with id `id`.
pub fn info(id: u16) -> &'static BuiltinInfo {
    static UNKNOWN: BuiltinInfo = BuiltinInfo {
        name: "unknown",
        params: &[],
        min: 0,
        by_ref: 0,
        variadic: true,
    };
    match INFOS.get(id as usize) {
        Some(info) => info,
        None => crate::extensions::info(id as usize - COUNT).unwrap_or(&UNKNOWN),
    }
}

/// Whether builtin `name` works on the scope that calls it, and so must
/// be called by name (`compact`, `extract`, `func_get_args`, …).
pub(crate) fn scope_bound(name: &str) -> bool {
    scope::SCOPE_BOUND.contains(&name)
}

/// The builtins PHP's compiler turns into instructions of their own
/// (`zend_try_compile_special_func`), which run without a frame and so
/// leave none in a stack trace.
const COMPILED_BY_PHP: &[&str] = &[
    "strlen",
    "count",
    "sizeof",
    "is_null",
    "is_bool",
    "is_long",
    "is_int",
    "is_integer",
    "is_float",
    "is_double",
    "is_string",
    "is_array",
    "is_object",
    "is_resource",
    "is_scalar",
    "boolval",
    "intval",
    "floatval",
    "doubleval",
    "strval",
    "defined",
    "gettype",
    "array_key_exists",
    "call_user_func",
    "call_user_func_array",
];

/// Whether builtin `id` is one that PHP's compiler turns, called by name,
/// into a call of its callback (`ZEND_INIT_USER_CALL`): the callback is
/// called from the script's line, as if by the script itself.
pub(crate) fn is_user_call(id: u16) -> bool {
    (id as usize) < COUNT && matches!(INFOS[id as usize].name, "call_user_func" | "call_user_func_array")
}

/// Whether the running frame is calling, by name, a builtin that
/// [`is_user_call`].
pub(crate) fn in_user_call<G: Globals>(g: G) -> bool {
    eg!(g, |eg| {
        eg.frames.last().is_some_and(|f| {
            // SAFETY: a frame's saved pc is an instruction of its code.
            matches!(unsafe { *f.pc }, minizts_core::bytecode::Op::CallBuiltin { id, .. } if is_user_call(id))
        })
    })
}

/// The parameters PHP marks `#[\SensitiveParameter]`, which stack
/// traces show as `Object(SensitiveParameterValue)`.
const SENSITIVE: &[(&str, usize)] = &[
    ("crypt", 0),
    ("password_hash", 0),
    ("password_verify", 0),
    ("hash_hmac", 2),
];

/// Whether parameter `i` of builtin `name` is sensitive.
pub(crate) fn sensitive_param(name: &str, i: usize) -> bool {
    SENSITIVE.contains(&(name, i))
}

/// How a builtin is being called.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum CallSite {
    /// By its name, from script code.
    Named,
    /// Through a callable value (`$f()`), from script code.
    Dynamic,
    /// As a callback, from inside another builtin or the engine: its
    /// frame comes from PHP's "[internal function]".
    Callback,
}

/// Calls builtin `id` by name from script code.
pub fn call<G: Globals>(g: G, id: u16, args: &mut [Value]) -> VmResult<Value> {
    call_at(g, id, args, CallSite::Named)
}

/// Calls builtin `id` from `site` (checking the argument count as PHP
/// does, then, for a call other than by name, that the builtin does not
/// work on the scope that names it).
pub fn call_at<G: Globals>(g: G, id: u16, args: &mut [Value], site: CallSite) -> VmResult<Value> {
    crate::limits::publish_line(g);
    let r = call_unchecked(g, id, args, site);
    // A limit passed inside the builtin stops the request at its call, as
    // PHP's allocator or timer would have stopped it inside.
    crate::limits::check(g)?;
    r
}

/// [`call_at`] without publishing the line and without the interrupt
/// check after the call: for the run loop's call by name, which saves its
/// position (and publishes the line) with the program counter before the
/// call and tests the interrupt flag with the pending exception after it,
/// in one access each.
#[inline(always)]
pub(crate) fn call_unchecked<G: Globals>(g: G, id: u16, args: &mut [Value], site: CallSite) -> VmResult<Value> {
    if id as usize >= COUNT {
        return crate::extensions::call(g, id as usize - COUNT, args);
    }
    let info = INFOS[id as usize];
    let n = args.len();
    let arity_ok = n >= info.min as usize && info.max().is_none_or(|max| n <= max);
    let r = if !arity_ok {
        builtin_arity(info.name, info.min as usize, info.max(), n)
    } else if site != CallSite::Named && scope_bound(info.name) {
        crate::error::error(format!("Cannot call {}() dynamically", info.name))
    } else {
        Dispatch::<G>::FNS[id as usize](
            g,
            &mut Args {
                v: args,
                info,
                from_script: site != CallSite::Callback,
            },
        )
    };
    match r {
        Ok(v) => Ok(v),
        Err(e) => Err(locate_builtin_error(g, e, info, args, site, arity_ok)),
    }
}

/// An error the builtin throws has the builtin's own frame at the top of
/// its stack trace, as PHP's internal functions have, except for those PHP
/// compiles to instructions of their own (which it does only for a call
/// by name with the right number of arguments).
#[cold]
#[inline(never)]
fn locate_builtin_error<G: Globals>(
    g: G,
    e: Box<crate::error::VmError>,
    info: &BuiltinInfo,
    args: &[Value],
    site: CallSite,
    arity_ok: bool,
) -> Box<crate::error::VmError> {
    if arity_ok && site == CallSite::Named && COMPILED_BY_PHP.contains(&info.name) {
        e
    } else {
        crate::error::locate_in_builtin(g, e, info.name, args, site == CallSite::Callback)
    }
}

/// The builtins whose by-reference parameters also take values (PHP's
/// `ZEND_SEND_PREFER_REF`).
const PREFER_REF: &[&str] = &["array_multisort", "extract"];

/// Whether `callee` is a builtin whose by-reference parameters also take
/// values.
pub(crate) fn prefers_ref(callee: &crate::call::Callee) -> bool {
    matches!(callee, crate::call::Callee::Builtin(id) if PREFER_REF.contains(&info(*id).name))
}

/// Registers every builtin and internal constant in this thread's compiler
/// globals (PHP copies its internal function table into each thread).
pub fn register<G: Globals>(g: G) {
    cg!(g, |cg| {
        for (id, info) in all().enumerate() {
            let max = info.max().map_or(u8::MAX, |m| m.min(254) as u8);
            cg.function_table.insert(
                info.name.as_bytes().into(),
                InternalFunction {
                    id: id as u16,
                    min_args: info.min,
                    max_args: max,
                    by_ref: info.by_ref & !(1 << 31),
                    rest_by_ref: info.by_ref & (1 << 31) != 0,
                    prefer_ref: PREFER_REF.contains(&info.name),
                },
            );
        }
        let first = crate::extensions::first_id();
        for (k, info) in crate::extensions::all_functions().enumerate() {
            cg.function_table.insert(
                info.name.to_ascii_lowercase().into_bytes().into(),
                InternalFunction {
                    id: (first + k) as u16,
                    min_args: info.min,
                    max_args: info.max().map_or(u8::MAX, |m| m.min(254) as u8),
                    by_ref: 0,
                    rest_by_ref: false,
                    prefer_ref: false,
                },
            );
        }
        for (name, value) in misc::constants()
            .into_iter()
            .chain(pcre::constants())
            .chain(codec::crypt_constants())
        {
            cg.constant_table.insert(name.as_bytes().into(), value);
        }
        for &(name, value) in scope::CONSTANTS {
            cg.constant_table.insert(name.as_bytes().into(), Value::Int(value));
        }
    });
}

/// The value of a deprecated internal constant, reporting its use: they
/// are not folded by the compiler, so that each fetch reports, as PHP's
/// (which does not cache them) does.
pub(crate) fn deprecated_constant<G: Globals>(g: G, name: &[u8]) -> Option<Value> {
    let &(name, value) = misc::DEPRECATED_CONSTANTS.iter().find(|(n, _)| n.as_bytes() == name)?;
    deprecated(g, &format!("Constant {name} is deprecated"));
    Some(Value::Int(value))
}

/// The constant a `FETCH_CONSTANT` site names: its key's, or else, for
/// an unqualified name in a namespace, the global one's (which may be a
/// builtin constant: the compiler could not fold it, the namespace's
/// own might have been defined).
pub(crate) fn lookup_site_constant<G: Globals>(g: G, s: &minizts_core::bytecode::Site) -> Option<Value> {
    if let Some(v) = eg!(g).constants.get(&*s.key).cloned() {
        return Some(v);
    }
    let fallback = s.fallback.as_deref()?;
    let found = eg!(g).constants.get(fallback).cloned();
    found.or_else(|| cg!(g).constant_table.get(fallback).cloned())
}

/// The key of constant `name` in the constant table: PHP folds the case
/// of a namespaced name's namespace part (`A\B\X` is `a\b\X`), not of
/// the constant's own name.
pub fn constant_key(name: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    match name.iter().rposition(|&b| b == b'\\') {
        Some(at) if name[..at].iter().any(u8::is_ascii_uppercase) => {
            let mut key = name.to_vec();
            key[..at].make_ascii_lowercase();
            std::borrow::Cow::Owned(key)
        }
        _ => std::borrow::Cow::Borrowed(name),
    }
}

/// `define()` and `const`: a constant for the rest of the request.
pub fn define_constant<G: Globals>(g: G, name: &[u8], v: Value) -> VmResult<bool> {
    if let Value::Closure(_) = v {
        return type_error("define(): Argument #2 ($value) cannot be an object, Closure given");
    }
    let key = constant_key(name);
    let exists = eg!(g).constants.contains_key(&*key)
        || cg!(g).constant_table.contains_key(&*key)
        || misc::DEPRECATED_CONSTANTS.iter().any(|(n, _)| n.as_bytes() == name);
    if exists {
        warning(
            g,
            &format!("Constant {} already defined", String::from_utf8_lossy(&key)),
        );
        return Ok(false);
    }
    eg!(g).constants.insert((*key).into(), v.deref_clone());
    Ok(true)
}

/// A builtin's arguments, with PHP's coercions for typed parameters.
pub struct Args<'a> {
    pub v: &'a mut [Value],
    pub info: &'static BuiltinInfo,
    /// Called from script code (by name or through a callable), not as
    /// another builtin's callback: the calling function's file decides
    /// whether scalar parameters are strict.
    pub from_script: bool,
}

impl Args<'_> {
    pub fn len(&self) -> usize {
        self.v.len()
    }

    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// Whether argument `i` was passed.
    /// Whether argument `i` was passed (one a named argument skipped
    /// comes unset and counts as not passed).
    pub fn has(&self, i: usize) -> bool {
        self.v.get(i).is_some_and(|v| !matches!(v, Value::Undef))
    }

    /// Argument `i` as passed (references followed).
    pub fn get(&self, i: usize) -> Value {
        match self.v.get(i) {
            Some(Value::Ref(r)) => r.get(),
            Some(Value::Undef) | None => Value::Null,
            Some(v) => v.clone(),
        }
    }

    /// Argument `i` without copying (a reference's value is copied).
    pub fn value(&self, i: usize) -> std::borrow::Cow<'_, Value> {
        match self.v.get(i) {
            Some(Value::Ref(r)) => std::borrow::Cow::Owned(r.get()),
            Some(v) => std::borrow::Cow::Borrowed(v),
            None => std::borrow::Cow::Owned(Value::Null),
        }
    }

    fn type_error<T>(&self, i: usize, expected: &str, given: &Value) -> VmResult<T> {
        type_error(format!(
            "{}(): Argument #{} (${}) must be of type {expected}, {} given",
            self.info.name,
            i + 1,
            self.info.param_name(i),
            crate::types::type_name(given)
        ))
    }

    /// Whether scalar parameters take only their own type (and an int
    /// for a float): the call came from code of a `strict_types=1` file.
    /// Asked only when an argument is not of the type already, so the
    /// usual call pays nothing for it.
    fn strict<G: Globals>(&self, g: G) -> bool {
        self.from_script
            && minizts_globals::eg!(g, |eg| eg.frames.last().is_some_and(|f| {
                // SAFETY: a frame's function is one of the request's.
                unsafe { &*f.function }.strict_types
            }))
    }

    fn null_deprecated<G: Globals>(&self, g: G, i: usize, ty: &str) {
        deprecated(
            g,
            &format!(
                "{}(): Passing null to parameter #{} (${}) of type {ty} is deprecated",
                self.info.name,
                i + 1,
                self.info.param_name(i)
            ),
        );
    }

    /// A `string` parameter.
    pub fn str<G: Globals>(&self, g: G, i: usize) -> VmResult<PhpStr> {
        if let Some(Value::Str(s)) = self.v.get(i) {
            return Ok(s.clone());
        }
        let v = self.value(i);
        match &*v {
            Value::Str(s) => Ok(s.clone()),
            other if self.strict(g) => self.type_error(i, "string", other),
            Value::Int(_) | Value::Float(_) | Value::Bool(_) => crate::ops::to_str(g, &v),
            Value::Null | Value::Undef => {
                self.null_deprecated(g, i, "string");
                Ok(PhpStr::empty())
            }
            // A Stringable object converts (`zend_parse_arg_str_weak`).
            Value::Obj(o) if o.class.magic.to_string.is_some() => crate::ops::object_to_str(g, &v),
            other => self.type_error(i, "string", other),
        }
    }

    /// An optional `string` parameter.
    pub fn opt_str<G: Globals>(&self, g: G, i: usize, default: &[u8]) -> VmResult<PhpStr> {
        if self.has(i) {
            self.str(g, i)
        } else {
            Ok(PhpStr::from(default))
        }
    }

    /// An `int` parameter.
    pub fn int<G: Globals>(&self, g: G, i: usize) -> VmResult<i64> {
        // The usual case, without the `Cow` the others go through.
        if let Some(Value::Int(n)) = self.v.get(i) {
            return Ok(*n);
        }
        let v = self.value(i);
        match &*v {
            Value::Int(n) => Ok(*n),
            other if self.strict(g) => self.type_error(i, "int", other),
            Value::Float(f) => self.float_as_int(g, i, *f, &v),
            Value::Bool(b) => Ok(*b as i64),
            Value::Null | Value::Undef => {
                self.null_deprecated(g, i, "int");
                Ok(0)
            }
            Value::Str(s) => match numfmt::is_numeric_str(s) {
                Some(Number::Int(n)) => Ok(n),
                Some(Number::Float(f)) => self.float_as_int(g, i, f, &v),
                None => self.type_error(i, "int", &v),
            },
            other => self.type_error(i, "int", other),
        }
    }

    fn float_as_int<G: Globals>(&self, g: G, i: usize, f: f64, given: &Value) -> VmResult<i64> {
        if !f.is_finite() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
            return self.type_error(i, "int", given);
        }
        if f.fract() != 0.0 {
            deprecated(
                g,
                &format!(
                    "Implicit conversion from float {} to int loses precision",
                    numfmt::php_float_repr(f)
                ),
            );
        }
        Ok(f as i64)
    }

    /// An optional `int` parameter.
    pub fn opt_int<G: Globals>(&self, g: G, i: usize, default: i64) -> VmResult<i64> {
        if self.has(i) {
            self.int(g, i)
        } else {
            Ok(default)
        }
    }

    /// A `float` parameter.
    pub fn float<G: Globals>(&self, g: G, i: usize) -> VmResult<f64> {
        if let Some(Value::Float(f)) = self.v.get(i) {
            return Ok(*f);
        }
        let v = self.value(i);
        match &*v {
            Value::Float(f) => Ok(*f),
            Value::Int(n) => Ok(*n as f64),
            other if self.strict(g) => self.type_error(i, "float", other),
            Value::Bool(b) => Ok(*b as i64 as f64),
            Value::Null | Value::Undef => {
                self.null_deprecated(g, i, "float");
                Ok(0.0)
            }
            Value::Str(s) => match numfmt::is_numeric_str(s) {
                Some(n) => Ok(n.to_f64()),
                None => self.type_error(i, "float", &v),
            },
            other => self.type_error(i, "float", other),
        }
    }

    /// An `int|float` parameter.
    pub fn number<G: Globals>(&self, g: G, i: usize) -> VmResult<Number> {
        let v = self.value(i);
        match &*v {
            Value::Int(n) => Ok(Number::Int(*n)),
            Value::Float(f) => Ok(Number::Float(*f)),
            other if self.strict(g) => self.type_error(i, "int|float", other),
            Value::Bool(b) => Ok(Number::Int(*b as i64)),
            Value::Null | Value::Undef => {
                self.null_deprecated(g, i, "int|float");
                Ok(Number::Int(0))
            }
            Value::Str(s) => match numfmt::is_numeric_str(s) {
                Some(n) => Ok(n),
                None => self.type_error(i, "int|float", &v),
            },
            other => self.type_error(i, "int|float", other),
        }
    }

    /// A `bool` parameter.
    pub fn bool<G: Globals>(&self, g: G, i: usize) -> VmResult<bool> {
        let v = self.value(i);
        match &*v {
            Value::Bool(b) => Ok(*b),
            other if self.strict(g) => self.type_error(i, "bool", other),
            Value::Null | Value::Undef => {
                self.null_deprecated(g, i, "bool");
                Ok(false)
            }
            Value::Arr(_) | Value::Closure(_) => self.type_error(i, "bool", &v),
            other => Ok(other.to_bool()),
        }
    }

    /// An optional `bool` parameter.
    pub fn opt_bool<G: Globals>(&self, g: G, i: usize, default: bool) -> VmResult<bool> {
        if self.has(i) {
            self.bool(g, i)
        } else {
            Ok(default)
        }
    }

    /// An `array` parameter.
    pub fn array(&self, i: usize) -> VmResult<Rc<PhpArray>> {
        let v = self.value(i);
        match &*v {
            Value::Arr(a) => Ok(a.clone()),
            other => self.type_error(i, "array", other),
        }
    }

    /// A by-reference parameter: runs `f` on the referenced slot.
    pub fn with_ref<R>(&mut self, i: usize, f: impl FnOnce(&mut Value) -> R) -> R {
        match &mut self.v[i] {
            Value::Ref(r) => {
                let r = r.clone();
                let mut slot = r.borrow_mut();
                f(&mut slot)
            }
            other => f(other),
        }
    }

    /// A by-reference `array` parameter: runs `f` on the array (copied
    /// first if shared), or reports PHP's TypeError.
    pub fn with_array_ref<R>(&mut self, i: usize, f: impl FnOnce(&mut PhpArray) -> R) -> VmResult<R> {
        let info = self.info;
        self.with_ref(i, |slot| match slot.array_mut() {
            Some(a) => Ok(f(a)),
            None => type_error(format!(
                "{}(): Argument #{} (${}) must be of type array, {} given",
                info.name,
                i + 1,
                info.param_name(i),
                crate::types::type_name(slot)
            )),
        })
    }

    /// PHP's `callable` check for parameter `i`.
    pub fn callable<G: Globals>(&self, g: G, i: usize) -> VmResult<crate::call::Callee> {
        self.checked_callable(g, i).map(|c| c.callee)
    }

    /// [`Args::callable`] with the class the method was found in.
    pub fn checked_callable<G: Globals>(&self, g: G, i: usize) -> VmResult<crate::call::callable::Checked> {
        let v = self.value(i);
        match crate::call::callable::check(g, &v, false)? {
            Ok(c) => Ok(c),
            Err(why) => type_error(format!(
                "{}(): Argument #{} (${}) must be a valid callback, {why}",
                self.info.name,
                i + 1,
                self.info.param_name(i),
            )),
        }
    }

    /// A `?callable` parameter (`null` or absent: none).
    pub fn opt_callable<G: Globals>(&self, g: G, i: usize) -> VmResult<Option<crate::call::Callee>> {
        if !self.has(i) || self.value(i).is_null() {
            return Ok(None);
        }
        let v = self.value(i);
        match crate::call::callable::check(g, &v, false)? {
            Ok(c) => Ok(Some(c.callee)),
            // PHP words the nullable variant differently.
            Err(why) => type_error(format!(
                "{}(): Argument #{} (${}) must be a valid callback or null, {why}",
                self.info.name,
                i + 1,
                self.info.param_name(i),
            )),
        }
    }

    /// [`Args::callable`] for an argument of a variadic rest (PHP names
    /// no parameter).
    pub fn rest_callable<G: Globals>(&self, g: G, i: usize) -> VmResult<crate::call::Callee> {
        let v = self.value(i);
        match crate::call::callable::check(g, &v, false)? {
            Ok(c) => Ok(c.callee),
            Err(why) => type_error(format!(
                "{}(): Argument #{} must be a valid callback, {why}",
                self.info.name,
                i + 1,
            )),
        }
    }

    /// A ValueError about parameter `i`.
    pub fn value_error<T>(&self, i: usize, what: &str) -> VmResult<T> {
        crate::error::value_error(format!(
            "{}(): Argument #{} (${}) {what}",
            self.info.name,
            i + 1,
            self.info.param_name(i)
        ))
    }

    /// The builtin's name (for messages).
    pub fn name(&self) -> &'static str {
        self.info.name
    }
}
