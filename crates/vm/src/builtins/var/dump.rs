//! `var_dump`, `print_r`, `var_export` and `debug_zval_dump`, byte for
//! byte as PHP 8.2's `php_var_dump`, `zend_print_zval_r`,
//! `php_var_export_ex` and `php_debug_zval_dump`.
//!
//! All three build their text in memory and write it (or return it) at
//! the end. An array reached again while it is being printed (only
//! possible through a reference) is PHP's recursion case: the arrays and
//! closures being printed are kept in a set, by address, as PHP flags
//! them with `GC_PROTECT_RECURSION`.
//!
//! `var_dump` and `print_r` show an object's debug properties, as PHP's
//! `get_debug_info` gives them: for a closure `static` (the `use`
//! variables and `static` variables), `this` and `parameter` (the
//! parameters); for an object of a class with `__debugInfo()` what it
//! returns; for another its properties. `var_export` shows properties
//! only.

use std::collections::HashSet;
use std::rc::Rc;

use minizts_core::bytecode::{Function, Op};
use minizts_core::numfmt;
use minizts_core::value::{Closure, ClosureKind};
use minizts_core::{Key, KeyRef, PhpArray, PhpRef, PhpStr, Value};
use minizts_globals::{eg, Globals};

use crate::builtins::Args;
use crate::error::{warning, VmError, VmResult};
use crate::limits::Ticker;

/// Printing state shared by the three formats.
struct Printer<G> {
    g: G,
    out: Vec<u8>,
    /// Arrays and closures being printed, by address.
    active: HashSet<*const ()>,
    /// `precision` (print_r prints floats as strings do).
    precision: i32,
    /// Where float digits come from (`--dtoa`).
    dtoa: Box<dyn minizts_core::numfmt::DigitSource>,
    /// Circular references var_export met (one warning each).
    circular: usize,
    /// How many output bytes fit under `memory_limit`.
    budget: usize,
    /// Set when the value nests too deeply, the output outgrows the
    /// budget or a limit's check fails: printing stops and the call fails
    /// instead of exhausting the native stack or the machine's memory,
    /// or running past the time limit (a value shared many times over
    /// prints far more than memory holds).
    gave_up: bool,
    /// The failed check, when that is why printing stopped.
    failed: Option<Box<VmError>>,
    /// Set when script code the printing ran (`__debugInfo()`) failed:
    /// what was printed before it is written out, as PHP had written it.
    partial: bool,
    /// How much had been printed then.
    partial_len: usize,
    /// Counts the elements printed and the bytes they took.
    ticker: Ticker,
    /// The output's length at the last step.
    mark: usize,
}

/// How deeply nested containers are printed (each level recurses).
const MAX_PRINT_DEPTH: usize = 10_000;

impl<G: Globals> Printer<G> {
    fn new(g: G) -> Printer<G> {
        let (precision, limit) = eg!(g, |eg| (eg.settings.precision, eg.settings.memory_limit));
        Printer {
            g,
            out: Vec::new(),
            active: HashSet::new(),
            precision,
            dtoa: crate::dtoa::source(g),
            circular: 0,
            budget: match limit {
                Some(limit) => limit.saturating_sub(minizts_globals::memory::usage()),
                None => usize::MAX,
            },
            gave_up: false,
            failed: None,
            partial: false,
            partial_len: 0,
            ticker: Ticker::new(),
            mark: 0,
        }
    }

    /// One element about to be printed; false when printing must stop.
    fn step(&mut self) -> bool {
        if self.gave_up {
            return false;
        }
        if self.out.len() > self.budget {
            self.gave_up = true;
            return false;
        }
        let grown = self.out.len() - self.mark;
        self.mark = self.out.len();
        if let Err(e) = self.ticker.tick_bytes(self.g, grown) {
            self.failed = Some(e);
            self.gave_up = true;
            return false;
        }
        true
    }

    /// Stops printing for an error of script code printing ran.
    fn script_failed(&mut self, e: Box<VmError>) {
        self.partial_len = self.out.len();
        self.failed = Some(e);
        self.gave_up = true;
        self.partial = true;
    }

    /// The error for a print that gave up.
    fn gave_up(&mut self) -> VmResult<Value> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        match eg!(self.g).settings.memory_limit {
            Some(limit) if self.out.len() > self.budget => crate::error::fatal(format!(
                "Allowed memory size of {limit} bytes exhausted (tried to allocate {} bytes)",
                self.out.len()
            )),
            _ => crate::error::fatal(format!(
                "minizts: value nested too deeply to print (more than {MAX_PRINT_DEPTH} levels)"
            )),
        }
    }

    fn spaces(&mut self, n: usize) {
        self.out.resize(self.out.len() + n, b' ');
    }

    fn push(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
    }

    fn int(&mut self, n: i64) {
        numfmt::write_int(&mut self.out, n);
    }

    /// Starts printing the container at `p`; false if it is already being
    /// printed (recursion).
    fn enter(&mut self, p: *const ()) -> bool {
        if self.active.len() >= MAX_PRINT_DEPTH || self.out.len() > self.budget {
            self.gave_up = true;
            return false;
        }
        self.active.insert(p)
    }

    fn leave(&mut self, p: *const ()) {
        self.active.remove(&p);
    }

    fn closure_props(&self, c: &Closure) -> PhpArray {
        eg!(self.g, |eg| {
            let f = eg.code.get(c.func);
            // A named function's closure shows the function's statics.
            let statics = match c.kind {
                ClosureKind::Named => eg.statics.get(c.func as usize).map(Vec::as_slice),
                _ => None,
            };
            // A method's closure names it with its class.
            let class = (matches!(c.kind, ClosureKind::Named | ClosureKind::Magic) && c.scope != 0)
                .then(|| eg.classes.list.get(c.scope as usize - 1).map(|k| k.name.clone()))
                .flatten();
            closure_debug_info(f, c, statics, class)
        })
    }

    // --- var_dump ---------------------------------------------------------

    /// `php_var_dump(v, level)`.
    fn dump(&mut self, v: &Value, level: usize) {
        if level > 1 {
            self.spaces(level - 1);
        }
        self.dump_body(v, level, false);
    }

    fn dump_body(&mut self, v: &Value, level: usize, is_ref: bool) {
        let amp: &[u8] = if is_ref { b"&" } else { b"" };
        match v {
            Value::Ref(r) => {
                // A reference nobody else holds is shown as a plain value.
                let is_ref = r.count() > 1;
                let inner = r.borrow();
                self.dump_body(&inner, level, is_ref);
            }
            Value::Undef | Value::Null | Value::IterVal(..) | Value::IterRef(_) => {
                self.push(amp);
                self.push(b"NULL\n");
            }
            Value::Bool(b) => {
                self.push(amp);
                self.push(if *b { b"bool(true)\n" } else { b"bool(false)\n" });
            }
            Value::Int(n) => {
                self.push(amp);
                self.push(b"int(");
                self.int(*n);
                self.push(b")\n");
            }
            Value::Float(f) => {
                self.push(amp);
                self.push(b"float(");
                numfmt::write_float_repr_with(&mut *self.dtoa, &mut self.out, *f);
                self.push(b")\n");
            }
            Value::Str(s) => {
                self.push(amp);
                self.push(b"string(");
                self.int(s.len() as i64);
                self.push(b") \"");
                self.push(s);
                self.push(b"\"\n");
            }
            Value::Arr(arr) => {
                let p = Rc::as_ptr(arr) as *const ();
                if !self.enter(p) {
                    self.push(b"*RECURSION*\n");
                    return;
                }
                self.push(amp);
                self.push(b"array(");
                self.int(arr.len() as i64);
                self.push(b") {\n");
                self.dump_elements(arr, level);
                self.leave(p);
                self.dump_close(level);
            }
            Value::Closure(c) => {
                let p = Rc::as_ptr(c) as *const ();
                if !self.enter(p) {
                    self.push(b"*RECURSION*\n");
                    return;
                }
                let props = self.closure_props(c);
                self.push(amp);
                self.push(b"object(Closure)#");
                self.int(i64::from(c.handle));
                self.push(b" (");
                self.int(props.len() as i64);
                self.push(b") {\n");
                self.dump_elements(&props, level);
                self.leave(p);
                self.dump_close(level);
            }
            Value::Obj(o) => {
                let p = o.addr() as *const ();
                if !self.enter(p) {
                    self.push(b"*RECURSION*\n");
                    return;
                }
                if o.class.kind == minizts_core::object::ClassKind::Enum {
                    self.leave(p);
                    self.push(amp);
                    self.push(b"enum(");
                    self.push(o.class.name.as_bytes());
                    self.push(b"::");
                    self.push(
                        crate::exceptions::get(o, "name")
                            .to_php_str(14)
                            .unwrap_or_default()
                            .as_bytes(),
                    );
                    self.push(b")\n");
                    return;
                }
                let props = match crate::objects::debug_props(self.g, o) {
                    Ok(props) => props,
                    Err(e) => {
                        self.leave(p);
                        self.script_failed(e);
                        return;
                    }
                };
                let shown = props.iter().filter(|p| !matches!(p.value, Value::Undef)).count();
                self.push(amp);
                self.push(b"object(");
                self.push(c_string(&o.class.name));
                self.push(b")#");
                self.int(i64::from(o.handle()));
                self.push(b" (");
                self.int(shown as i64);
                self.push(b") {\n");
                for prop in &props {
                    if !self.step() {
                        break;
                    }
                    self.spaces(level + 1);
                    if prop.int_key {
                        self.push(b"[");
                        self.push(prop.name.as_bytes());
                        self.push(b"]=>\n");
                    } else {
                        self.push(b"[\"");
                        self.push(prop.name.as_bytes());
                        self.push(b"\"");
                        self.push(prop.annotation().as_bytes());
                        self.push(b"]=>\n");
                    }
                    match &prop.value {
                        Value::Undef => {
                            self.spaces(level + 1);
                            self.push(b"uninitialized(");
                            self.push(prop.type_text.as_bytes());
                            self.push(b")\n");
                        }
                        v => self.dump(v, level + 2),
                    }
                }
                self.leave(p);
                self.dump_close(level);
            }
        }
    }

    fn dump_elements(&mut self, arr: &PhpArray, level: usize) {
        for (k, v) in arr.iter() {
            if !self.step() {
                return;
            }
            self.spaces(level + 1);
            match k {
                KeyRef::Int(n) => {
                    self.push(b"[");
                    self.int(n);
                    self.push(b"]=>\n");
                }
                KeyRef::Str(s) => {
                    self.push(b"[\"");
                    self.push(s);
                    self.push(b"\"]=>\n");
                }
            }
            self.dump(v, level + 2);
        }
    }

    fn dump_close(&mut self, level: usize) {
        if level > 1 {
            self.spaces(level - 1);
        }
        self.push(b"}\n");
    }

    // --- debug_zval_dump --------------------------------------------------

    /// `php_debug_zval_dump(v, level)`: var_dump's format with the
    /// refcounts, which are minizts's own counts of the same holders
    /// (variables, array slots, the argument being dumped).
    fn zval_dump(&mut self, v: &Value, level: usize) {
        if level > 1 {
            self.spaces(level - 1);
        }
        match v {
            Value::Ref(r) => {
                self.push(b"reference refcount(");
                self.int(r.count() as i64);
                self.push(b") {\n");
                let inner = r.borrow();
                self.zval_dump(&inner, level + 2);
                self.dump_close(level);
            }
            Value::Str(s) => {
                self.push(b"string(");
                self.int(s.len() as i64);
                self.push(b") \"");
                self.push(s);
                if s.is_interned() {
                    self.push(b"\" interned\n");
                } else {
                    self.push(b"\" refcount(");
                    self.int(s.strong_count() as i64);
                    self.push(b")\n");
                }
            }
            Value::Arr(arr) => {
                let p = Rc::as_ptr(arr) as *const ();
                if !self.enter(p) {
                    self.push(b"*RECURSION*\n");
                    return;
                }
                self.push(b"array(");
                self.int(arr.len() as i64);
                self.push(b") refcount(");
                self.int(Rc::strong_count(arr) as i64);
                self.push(b"){\n");
                self.zval_elements(arr, level);
                self.leave(p);
                self.dump_close(level);
            }
            Value::Closure(c) => {
                let p = Rc::as_ptr(c) as *const ();
                if !self.enter(p) {
                    self.push(b"*RECURSION*\n");
                    return;
                }
                let props = self.closure_props(c);
                self.push(b"object(Closure)#");
                self.int(i64::from(c.handle));
                self.push(b" (");
                self.int(props.len() as i64);
                self.push(b") refcount(");
                self.int(Rc::strong_count(c) as i64);
                self.push(b"){\n");
                self.zval_elements(&props, level);
                self.leave(p);
                self.dump_close(level);
            }
            // Scalars carry no count: printed as var_dump does.
            other => self.dump_body(other, level, false),
        }
    }

    fn zval_elements(&mut self, arr: &PhpArray, level: usize) {
        for (k, v) in arr.iter() {
            if !self.step() {
                return;
            }
            self.spaces(level + 1);
            match k {
                KeyRef::Int(n) => {
                    self.push(b"[");
                    self.int(n);
                    self.push(b"]=>\n");
                }
                KeyRef::Str(s) => {
                    self.push(b"[\"");
                    self.push(s);
                    self.push(b"\"]=>\n");
                }
            }
            self.zval_dump(v, level + 2);
        }
    }

    // --- print_r ------------------------------------------------------------

    /// `zend_print_zval_r_to_buf(v, indent)`.
    fn print_r(&mut self, v: &Value, indent: usize) {
        match v {
            Value::Ref(r) => {
                let inner = r.borrow();
                self.print_r(&inner, indent);
            }
            Value::Arr(arr) => {
                self.push(b"Array\n");
                let p = Rc::as_ptr(arr) as *const ();
                if !self.enter(p) {
                    self.push(b" *RECURSION*");
                    return;
                }
                self.print_hash(arr, indent);
                self.leave(p);
            }
            Value::Closure(c) => {
                self.push(b"Closure Object\n");
                let p = Rc::as_ptr(c) as *const ();
                if !self.enter(p) {
                    self.push(b" *RECURSION*");
                    return;
                }
                let props = self.closure_props(c);
                self.print_hash(&props, indent);
                self.leave(p);
            }
            Value::Obj(o) => {
                self.push(c_string(&o.class.name));
                match (o.class.kind, o.class.enum_backing) {
                    (minizts_core::object::ClassKind::Enum, Some(minizts_core::object::EnumBacking::Int)) => {
                        self.push(b" Enum:int\n")
                    }
                    (minizts_core::object::ClassKind::Enum, Some(_)) => self.push(b" Enum:string\n"),
                    (minizts_core::object::ClassKind::Enum, None) => self.push(b" Enum\n"),
                    _ => self.push(b" Object\n"),
                }
                let p = o.addr() as *const ();
                if !self.enter(p) {
                    self.push(b" *RECURSION*");
                    return;
                }
                let props = match crate::objects::debug_props(self.g, o) {
                    Ok(props) => props,
                    Err(e) => {
                        self.leave(p);
                        self.script_failed(e);
                        return;
                    }
                };
                self.spaces(indent);
                self.push(b"(\n");
                for prop in props.iter().filter(|p| !matches!(p.value, Value::Undef)) {
                    if !self.step() {
                        break;
                    }
                    self.spaces(indent + 4);
                    self.push(b"[");
                    self.push(prop.name.as_bytes());
                    self.push(prop.print_r_annotation().as_bytes());
                    self.push(b"] => ");
                    self.print_r(&prop.value, indent + 8);
                    self.push(b"\n");
                }
                self.spaces(indent);
                self.push(b")\n");
                self.leave(p);
            }
            other => {
                // Scalars print as their string conversion.
                let _ = other.write_string_with(&mut *self.dtoa, &mut self.out, self.precision);
            }
        }
    }

    fn print_hash(&mut self, arr: &PhpArray, indent: usize) {
        self.spaces(indent);
        self.push(b"(\n");
        for (k, v) in arr.iter() {
            if !self.step() {
                return;
            }
            self.spaces(indent + 4);
            self.push(b"[");
            match k {
                KeyRef::Int(n) => self.int(n),
                KeyRef::Str(s) => self.push(s),
            }
            self.push(b"] => ");
            self.print_r(v, indent + 8);
            self.push(b"\n");
        }
        self.spaces(indent);
        self.push(b")\n");
    }

    // --- var_export ---------------------------------------------------------

    /// `php_var_export_ex(v, level)`.
    fn export(&mut self, v: &Value, level: usize) {
        match v {
            Value::Ref(r) => {
                let inner = r.borrow();
                self.export(&inner, level);
            }
            Value::Undef | Value::Null | Value::IterVal(..) | Value::IterRef(_) => self.push(b"NULL"),
            Value::Bool(b) => self.push(if *b { b"true" } else { b"false" }),
            Value::Int(n) => {
                // The literal PHP_INT_MIN would read back as a float.
                if *n == i64::MIN {
                    self.push(b"-9223372036854775807-1");
                } else {
                    self.int(*n);
                }
            }
            Value::Float(f) => numfmt::write_float_var_export_with(&mut *self.dtoa, &mut self.out, *f),
            Value::Str(s) => self.export_str(s),
            Value::Arr(arr) => {
                let p = Rc::as_ptr(arr) as *const ();
                if !self.enter(p) {
                    self.push(b"NULL");
                    self.circular += 1;
                    return;
                }
                if level > 1 {
                    self.push(b"\n");
                    self.spaces(level - 1);
                }
                self.push(b"array (\n");
                for (k, v) in arr.iter() {
                    if !self.step() {
                        break;
                    }
                    self.spaces(level + 1);
                    match k {
                        KeyRef::Int(n) => self.int(n),
                        KeyRef::Str(s) => self.export_str(s),
                    }
                    self.push(b" => ");
                    self.export(v, level + 2);
                    self.push(b",\n");
                }
                self.leave(p);
                if level > 1 {
                    self.spaces(level - 1);
                }
                self.push(b")");
            }
            Value::Closure(_) => {
                // Closures have no properties to export.
                if level > 1 {
                    self.push(b"\n");
                    self.spaces(level - 1);
                }
                self.push(b"\\Closure::__set_state(array(\n");
                if level > 1 {
                    self.spaces(level - 1);
                }
                self.push(b"))");
            }
            Value::Obj(o) => {
                let p = o.addr() as *const ();
                if !self.enter(p) {
                    self.circular += 1;
                    self.push(b"NULL");
                    return;
                }
                if level > 1 {
                    self.push(b"\n");
                    self.spaces(level - 1);
                }
                let is_std = o.class.name.as_bytes() == b"stdClass";
                if o.class.kind == minizts_core::object::ClassKind::Enum {
                    self.push(b"\\");
                    self.push(o.class.name.as_bytes());
                    self.push(b"::");
                    self.push(
                        crate::exceptions::get(o, "name")
                            .to_php_str(14)
                            .unwrap_or_default()
                            .as_bytes(),
                    );
                    self.leave(p);
                    return;
                }
                if is_std {
                    self.push(b"(object) array(\n");
                } else {
                    self.push(b"\\");
                    self.push(o.class.name.as_bytes());
                    self.push(b"::__set_state(array(\n");
                }
                let props = crate::objects::visible_props(self.g, o);
                for prop in props.iter().filter(|p| !matches!(p.value, Value::Undef)) {
                    if !self.step() {
                        break;
                    }
                    self.spaces(level + 2);
                    self.export_str(prop.name.as_bytes());
                    self.push(b" => ");
                    self.export(&prop.value, level + 2);
                    self.push(b",\n");
                }
                self.leave(p);
                if level > 1 {
                    self.spaces(level - 1);
                }
                self.push(if is_std { b")" as &[u8] } else { b"))" });
            }
        }
    }

    /// A single-quoted PHP literal: `'` and `\` escaped, NUL bytes spliced
    /// in as `' . "\0" . '`.
    fn export_str(&mut self, s: &[u8]) {
        self.push(b"'");
        for &b in s {
            match b {
                b'\'' => self.push(b"\\'"),
                b'\\' => self.push(b"\\\\"),
                0 => self.push(b"' . \"\\0\" . '"),
                _ => self.out.push(b),
            }
        }
        self.push(b"'");
    }
}

/// A reference shown as the value it holds unless someone else shares it
/// (`zend_closure_get_debug_info` unwraps references of refcount 1).
fn shown(v: &Value) -> Value {
    match v {
        Value::Ref(r) if r.count() == 1 => r.get(),
        Value::Undef => Value::Null,
        v => v.clone(),
    }
}

/// A closure's debug properties, as `zend_closure_get_debug_info` builds
/// them: `static` (the `use` variables, then the `static` variables: their
/// values, or before the first call their initial values) and `parameter`
/// (`"$name"` or `"&$name"` => `"<required>"` / `"<optional>"`).
fn closure_debug_info(
    f: Option<&Function>,
    c: &Closure,
    named_statics: Option<&[Option<PhpRef>]>,
    class: Option<PhpStr>,
) -> PhpArray {
    let mut props = PhpArray::new();
    let param_key = |by_ref: bool, name: &str| {
        let mut key = Vec::with_capacity(name.len() + 2);
        if by_ref {
            key.push(b'&');
        }
        key.push(b'$');
        key.extend_from_slice(name.trim_start_matches('$').as_bytes());
        Key::from_bytes(&key)
    };
    let required = |yes: bool| Value::str(if yes { "<required>" } else { "<optional>" });
    // The first-class callable of a function names it.
    if let ClosureKind::Builtin(id) = c.kind {
        let info = crate::builtins::info(id);
        props.insert(Key::Str(PhpStr::from("function")), Value::str(info.name));
        if !info.params.is_empty() {
            let mut params = PhpArray::new();
            for (i, p) in info.params.iter().enumerate() {
                let name = p.trim_start_matches("...");
                params.insert(param_key(info.param_by_ref(i), name), required(i < info.min as usize));
            }
            props.insert(Key::Str(PhpStr::from("parameter")), Value::arr(params));
        }
        return props;
    }
    let Some(f) = f else {
        return props;
    };
    // The closure of a name `__call` takes shows that name, and `$this`.
    if let (ClosureKind::Magic, Some(Value::Str(name))) = (c.kind, c.bound.first()) {
        let class = class.map_or_else(String::new, |c| format!("{c}::"));
        props.insert(
            Key::Str(PhpStr::from("function")),
            Value::str(format!("{class}{}", String::from_utf8_lossy(name)).as_bytes()),
        );
        if let Some(this) = &c.this {
            props.insert(Key::Str(PhpStr::from("this")), Value::Obj(this.clone()));
        }
        return props;
    }
    if c.kind == ClosureKind::Named {
        // (A trait method's alias is the name the closure keeps.)
        let fname = match c.bound.first() {
            Some(Value::Str(alias)) => String::from_utf8_lossy(alias.as_bytes()).into_owned(),
            _ => f.name.to_string(),
        };
        let name = match &class {
            Some(class) => Value::str(format!("{class}::{fname}").as_bytes()),
            None => Value::str(fname.as_bytes()),
        };
        props.insert(Key::Str(PhpStr::from("function")), name);
    }
    let cv_name = |reg: usize| -> &[u8] { f.cv_names.get(reg).map_or(&b""[..], |n| n.as_bytes()) };

    let mut statics = PhpArray::new();
    for (value, &cv) in c.bound.iter().zip(&f.bound_cvs) {
        statics.insert(Key::from_bytes(cv_name(cv as usize)), shown(value));
    }
    let own = c.statics.borrow();
    let slots = named_statics.unwrap_or(&own);
    for op in &f.code {
        if let Op::InitStatic { var, slot, src } = op {
            let value = match slots.get(*slot as usize) {
                Some(Some(r)) if r.count() == 1 => r.get(),
                Some(Some(r)) => Value::Ref(r.clone()),
                // Not run yet: the initial value when it is a constant.
                _ if src.is_const() => f.consts.values().get(src.index()).cloned().unwrap_or(Value::Null),
                _ => Value::Null,
            };
            statics.insert(Key::from_bytes(cv_name(var.idx())), value);
        }
    }
    drop(own);
    if !statics.is_empty() {
        props.insert(Key::Str(PhpStr::from("static")), Value::arr(statics));
    }
    if let Some(this) = &c.this {
        props.insert(Key::Str(PhpStr::from("this")), Value::Obj(this.clone()));
    }

    if !f.params.is_empty() {
        let mut params = PhpArray::new();
        for (i, p) in f.params.iter().enumerate() {
            params.insert(param_key(p.by_ref, &p.name), required(i < f.required as usize));
        }
        props.insert(Key::Str(PhpStr::from("parameter")), Value::arr(params));
    }
    props
}

pub(super) fn var_dump<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let mut p = Printer::new(g);
    for i in 0..a.len() {
        // Arguments come by value: no `&` at the top.
        p.dump(&a.value(i), 1);
        if p.gave_up {
            break;
        }
    }
    if p.gave_up {
        if p.partial {
            crate::output::write(g, &p.out[..p.partial_len]);
        }
        return p.gave_up();
    }
    crate::output::write(g, &p.out);
    Ok(Value::Null)
}

pub(super) fn print_r<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let ret = a.opt_bool(g, 1, false)?;
    let mut p = Printer::new(g);
    p.print_r(&a.value(0), 0);
    if p.gave_up {
        if p.partial && !ret {
            crate::output::write(g, &p.out[..p.partial_len]);
        }
        return p.gave_up();
    }
    if ret {
        return Ok(Value::Str(PhpStr::new(p.out)));
    }
    crate::output::write(g, &p.out);
    Ok(Value::Bool(true))
}

pub(super) fn var_export<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let ret = a.opt_bool(g, 1, false)?;
    let mut p = Printer::new(g);
    p.export(&a.value(0), 1);
    if p.gave_up {
        return p.gave_up();
    }
    for _ in 0..p.circular {
        warning(g, "var_export does not handle circular references");
    }
    if ret {
        return Ok(Value::Str(PhpStr::new(p.out)));
    }
    crate::output::write(g, &p.out);
    Ok(Value::Null)
}

pub(super) fn debug_zval_dump<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let mut p = Printer::new(g);
    for i in 0..a.len() {
        p.zval_dump(&a.value(i), 1);
    }
    if p.gave_up {
        return p.gave_up();
    }
    crate::output::write(g, &p.out);
    Ok(Value::Null)
}

/// A class name as PHP's `%s` prints it: up to a NUL byte, which an
/// anonymous class's name has before where it was declared.
fn c_string(name: &minizts_core::PhpStr) -> &[u8] {
    let bytes = name.as_bytes();
    &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())]
}
