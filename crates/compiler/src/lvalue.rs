//! Writes: assignments, compound assignments, `++`/`--`, references,
//! `unset`, and `list()` destructuring.
//!
//! A write target is a variable or a chain of dimensions on one
//! (`$a[1]['x'][]`). For a chain, the keys are evaluated first, left to
//! right, into consecutive registers, then one instruction walks the chain,
//! creating arrays as needed, and writes: no pointer into an array ever
//! lives in a register between instructions.

use minizts_core::bytecode::NO_CACHE;
use minizts_core::bytecode::{IncDec, Op, Reg, Src};
use minizts_globals::Globals;
use minizts_syntax::ast::*;

use crate::expr::bin_op;
use crate::objects::has_nullsafe;
use crate::{Compiler, Result};

/// Whether `e` compiles to code that writes its destination once, at the
/// end, after reading everything else (so the destination may be the
/// variable being assigned, even if `e` reads it).
fn writes_once(e: &Expr<'_>) -> bool {
    match &e.kind {
        ExprKind::Binary { op, .. } => !matches!(op, BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::Coalesce),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Var(_)
        | ExprKind::Const(_)
        | ExprKind::Interp(_)
        | ExprKind::Array(_, _)
        | ExprKind::Index { .. }
        | ExprKind::Call { .. }
        | ExprKind::CallValue { .. }
        | ExprKind::Closure(_)
        | ExprKind::Unary { .. }
        | ExprKind::Cast { .. }
        // One instruction (or a call) writes the result last; a nullsafe
        // chain writes null instead, without reading anything.
        | ExprKind::Prop { .. }
        | ExprKind::MethodCall { .. }
        | ExprKind::StaticCall { .. }
        | ExprKind::ClassConst { .. }
        | ExprKind::StaticProp { .. }
        | ExprKind::InstanceOf { .. }
        | ExprKind::Clone(_) => true,
        _ => false,
    }
}

/// `$name[key]`: the variable and key of a one-key write target, which
/// compiles to one instruction reading the key when it runs.
/// `$name[]` (not `$this[]` or `$GLOBALS[]`): the variable's name.
fn push_target<'a>(target: &'a Expr<'a>) -> Option<&'a str> {
    match &target.kind {
        ExprKind::Index { base, index: None } => match base.kind {
            ExprKind::Var(name) if name != "this" && name != "GLOBALS" => Some(name),
            _ => None,
        },
        _ => None,
    }
}

fn one_key<'a>(target: &'a Expr<'a>) -> Option<(&'a str, &'a Expr<'a>)> {
    match &target.kind {
        ExprKind::Index { base, index: Some(key) } => match &base.kind {
            ExprKind::Var(name) => Some((name, key)),
            _ => None,
        },
        _ => None,
    }
}

/// The variable at the root of a dimension chain and the keys below it
/// (`None` for `[]`).
struct DimPath<'a> {
    /// `$name` or `$$name`.
    root: &'a Expr<'a>,
    keys: Vec<Option<&'a Expr<'a>>>,
}

impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// PHP's `zend_ensure_writable_variable`, the first check of every
    /// write: a call's result is no write target. An expression PHP
    /// refuses is refused first.
    pub(crate) fn ensure_writable(&self, target: &'a Expr<'a>) -> Result<()> {
        match target.kind {
            ExprKind::Refused(message) => self.error(message),
            ExprKind::CurlyIndex { .. } => self.error(crate::expr::CURLY_INDEX),
            ExprKind::Call { .. }
            | ExprKind::CallValue { .. }
            | ExprKind::CallableFromName(_)
            | ExprKind::CallableFromValue(_) => self.error("Can't use function return value in write context"),
            ExprKind::MethodCall { .. } | ExprKind::StaticCall { .. } => {
                self.error("Can't use method return value in write context")
            }
            ExprKind::Var("this") => self.error("Cannot re-assign $this"),
            _ if has_nullsafe(target) => self.error("Can't use nullsafe operator in write context"),
            _ => Ok(()),
        }
    }

    /// The object of a property written: read, as objects are handles;
    /// below an append (`$a[][]->p = 1`), fetched for writing as PHP does
    /// (creating the elements).
    pub(crate) fn write_object(&mut self, obj: &'a Expr<'a>) -> Result<Src> {
        let mut cur = obj;
        while let ExprKind::Index { base, index } = &cur.kind {
            if index.is_none() {
                return Ok(Src::reg(self.reference_to(obj)?));
            }
            cur = base;
        }
        self.expr(obj)
    }

    /// After a write through the reference a property was made into for
    /// it (`$o->a[] = 1`), lets the temporary's hold of it go, so that
    /// the property is no reference shared with anything (a clone would
    /// share it).
    fn release_root(&mut self, root: &'a Expr<'a>, var: Reg) {
        if matches!(root.kind, ExprKind::Prop { .. }) {
            self.emit(Op::UnsetVar { var });
        }
    }

    /// The error for writing below `root`, the base of a dimension chain
    /// that is no variable.
    fn not_a_variable<T>(&self, root: &'a Expr<'a>) -> Result<T> {
        match root.kind {
            ExprKind::Refused(message) => self.error(message),
            ExprKind::CurlyIndex { .. } => self.error(crate::expr::CURLY_INDEX),
            _ if self.builtin_result(root) => self.error("Cannot use result of built-in function in write context"),
            _ => self.error("Cannot use temporary expression in write context"),
        }
    }

    /// The register the variable instructions work on for `$name` (its
    /// CV) or `$$name` (a temporary bound to the named variable, which
    /// they write through).
    fn var_reg(&mut self, root: &'a Expr<'a>) -> Result<Reg> {
        match &root.kind {
            ExprKind::Var(name) => self.cv(name),
            ExprKind::VarVar { name, global } => {
                let name = self.expr(name)?;
                let dst = self.temp()?;
                self.at(root.pos);
                self.emit(Op::BindVarVar {
                    dst,
                    name,
                    global: *global,
                });
                Ok(dst)
            }
            // A property: the reference it is made into, written through
            // (`$o->a[] = 1`, `$o->n++`). An object below it is a handle,
            // read as any value (`$a->b->c[] = 1`).
            ExprKind::Prop {
                obj,
                name,
                nullsafe: false,
            } => {
                let dst = self.temp()?;
                self.at(root.pos);
                self.prop_ref(obj, *name, dst)?;
                Ok(dst)
            }
            ExprKind::StaticProp { class, name } => {
                let dst = self.temp()?;
                self.at(root.pos);
                self.static_prop_ref(*class, *name, dst, false)?;
                Ok(dst)
            }
            // `f()[0] = 1`: the call's result is the container. A
            // by-reference function's result is its reference, written
            // through; any other is a temporary copy, as in PHP. A
            // builtin's result cannot be written.
            ExprKind::Call { .. }
            | ExprKind::CallValue { .. }
            | ExprKind::MethodCall { .. }
            | ExprKind::StaticCall { .. }
                if !self.builtin_result(root) =>
            {
                let dst = self.temp()?;
                self.expr_into(root, dst)?;
                Ok(dst)
            }
            _ => self.not_a_variable(root),
        }
    }

    /// Whether dimension chain `e` has a root that can be written (a
    /// variable or a call), not a temporary such as a literal.
    pub(crate) fn writable_dim(&self, e: &'a Expr<'a>) -> bool {
        self.dim_path(e).is_ok()
    }

    fn dim_path(&self, e: &'a Expr<'a>) -> Result<DimPath<'a>> {
        let mut keys = Vec::new();
        let mut cur = e;
        loop {
            match &cur.kind {
                ExprKind::Index { base, index } => {
                    keys.push(*index);
                    cur = base;
                }
                ExprKind::Var(_)
                | ExprKind::VarVar { .. }
                | ExprKind::Call { .. }
                | ExprKind::CallValue { .. }
                | ExprKind::MethodCall { .. }
                | ExprKind::StaticCall { .. }
                | ExprKind::Prop { nullsafe: false, .. }
                | ExprKind::StaticProp { .. } => {
                    keys.reverse();
                    if keys.len() > 255 {
                        return self.error("minizts: array access nested too deeply");
                    }
                    return Ok(DimPath { root: cur, keys });
                }
                _ => return self.not_a_variable(cur),
            }
        }
    }

    /// Evaluates a chain's keys into consecutive registers; `[]` becomes an
    /// unset register, which the instruction reads as "append".
    fn keys(&mut self, path: &DimPath<'a>) -> Result<(Reg, Reg, u8)> {
        let var = self.var_reg(path.root)?;
        let (start, depth) = self.key_regs(path)?;
        Ok((var, start, depth))
    }

    /// [`Self::keys`] without the variable: the first key register and
    /// how many there are.
    fn key_regs(&mut self, path: &DimPath<'a>) -> Result<(Reg, u8)> {
        let start = self.temps(path.keys.len())?;
        for (i, key) in path.keys.iter().enumerate() {
            let r = start.plus(i as u16);
            match key {
                Some(k) => self.expr_into(k, r)?,
                None => {
                    self.emit(Op::UnsetVar { var: r });
                }
            }
        }
        Ok((start, path.keys.len() as u8))
    }

    /// A one-key write's variable, key and value (in that order of
    /// evaluation, the key a variable read by the instruction itself).
    fn one_key_operands(&mut self, target: &'a Expr<'a>, value: &'a Expr<'a>) -> Result<(Reg, Src, Src)> {
        let (name, key) = one_key(target).expect("a one-key target");
        let var = self.cv(name)?;
        let key = self.expr(key)?;
        let v = self.expr(value)?;
        self.at(target.pos);
        Ok((var, key, v))
    }

    /// After an assignment into an element or a property whose value
    /// nobody reads (`unused`): a temporary holding the value is released
    /// at once when the value may be an object (or hold one) made for it
    /// (`new`, a call's result, a closure), as PHP frees a `TMP` operand
    /// when the instruction consumes it, so that the object goes when the
    /// element or property lets it go (its destructor runs then). A copy
    /// of a variable's, element's or property's value is left alone: its
    /// source keeps it alive anyway, and loops copying elements pay no
    /// instruction for it. Returns `v`.
    fn release_consumed(&mut self, unused: bool, v: Src, value: &'a Expr<'a>) -> Result<Src> {
        let copy_or_scalar = match &value.kind {
            ExprKind::Var(_)
            | ExprKind::Index { .. }
            | ExprKind::Prop { .. }
            | ExprKind::StaticProp { .. }
            | ExprKind::ClassConst { .. }
            | ExprKind::Const(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Interp(_)
            | ExprKind::Unary { .. }
            | ExprKind::IncDec { .. }
            | ExprKind::Isset(_)
            | ExprKind::Empty(_)
            | ExprKind::InstanceOf { .. }
            | ExprKind::Print(_) => true,
            ExprKind::Binary { op, .. } => *op != BinaryOp::Coalesce,
            _ => false,
        };
        if unused && !copy_or_scalar && self.is_temp(v) {
            if let Some(var) = v.as_reg() {
                self.emit(Op::UnsetVar { var });
            }
        }
        Ok(v)
    }

    /// `target = value`; returns where the assigned value is.
    pub(crate) fn assign(&mut self, target: &'a Expr<'a>, value: &'a Expr<'a>) -> Result<Src> {
        // (Taken at once: an assignment nested in the value is read.)
        let unused = std::mem::replace(&mut self.assign_value_unused, false);
        self.ensure_writable(target)?;
        match &target.kind {
            ExprKind::Var(name) if self.plain_vars.contains(name) && writes_once(value) => {
                // The variable never holds a reference, and the value is
                // computed by one instruction that reads its operands before
                // writing: it can write the variable directly.
                let var = self.cv(name)?;
                self.expr_into(value, var)?;
                Ok(Src::reg(var))
            }
            ExprKind::Var(name) => {
                let v = self.expr(value)?;
                let var = self.cv(name)?;
                self.at(target.pos);
                match v.as_reg().filter(|_| unused && self.is_temp(v)) {
                    // The statement's value is not read: the temporary
                    // moves into the variable.
                    Some(src) => self.emit(Op::AssignTmp { var, src }),
                    None => self.emit(Op::Assign { var, src: v }),
                };
                Ok(v)
            }
            ExprKind::VarVar { .. } => {
                let var = self.var_reg(target)?;
                let v = self.expr(value)?;
                self.at(target.pos);
                self.emit(Op::Assign { var, src: v });
                Ok(v)
            }
            ExprKind::Index { .. } if one_key(target).is_some() => {
                let (var, key, v) = self.one_key_operands(target, value)?;
                self.emit(Op::AssignDim1 { var, key, src: v });
                self.release_consumed(unused, v, value)
            }
            ExprKind::Index { .. } if push_target(target).is_some() => {
                let var = self.cv(push_target(target).expect("a push target"))?;
                let v = self.expr(value)?;
                self.at(target.pos);
                let tmp = unused && self.is_temp(v);
                self.emit(Op::AssignDimPush { var, src: v, tmp });
                Ok(v)
            }
            ExprKind::Index { .. } => {
                let path = self.dim_path(target)?;
                if let ExprKind::Prop {
                    obj,
                    name,
                    nullsafe: false,
                } = &path.root.kind
                {
                    // A property's element: the object, the keys, the
                    // value, then the property fetched for writing and
                    // written in one instruction (PHP's delayed
                    // `FETCH_OBJ_W` before its `ASSIGN_DIM`).
                    let (obj, name) = self.prop_operands(obj, *name)?;
                    let (keys, depth) = self.key_regs(&path)?;
                    let v = self.expr(value)?;
                    self.at(target.pos);
                    self.emit(Op::AssignPropDim {
                        obj,
                        name,
                        keys,
                        depth,
                        src: v,
                        cache: NO_CACHE,
                    });
                    return self.release_consumed(unused, v, value);
                }
                let (var, keys, depth) = self.keys(&path)?;
                let v = self.expr(value)?;
                self.at(target.pos);
                self.emit(Op::AssignDim {
                    var,
                    keys,
                    depth,
                    src: v,
                });
                self.release_root(path.root, var);
                self.release_consumed(unused, v, value)
            }
            ExprKind::Prop { obj, name, .. } => {
                let o = self.write_object(obj)?;
                let n = self.member_name(*name)?;
                let v = self.expr(value)?;
                self.at(target.pos);
                self.emit(Op::AssignProp {
                    obj: o,
                    name: n,
                    src: v,
                    cache: NO_CACHE,
                });
                self.release_consumed(unused, v, value)
            }
            ExprKind::StaticProp { class, name } => {
                let v = self.expr(value)?;
                self.at(target.pos);
                let (class, mode, name) = self.static_prop_operands(*class, *name)?;
                self.emit(Op::AssignStaticProp {
                    class,
                    mode,
                    name,
                    src: v,
                    cache: NO_CACHE,
                });
                self.release_consumed(unused, v, value)
            }
            ExprKind::Array(items, syntax) if list_has_ref(items) => {
                // With references the right side is a variable whose
                // elements the list binds (PHP fetches it for writing).
                let mut line = self.list_line(target);
                self.check_list(items, *syntax, &mut line)?;
                if has_nullsafe(value) {
                    return self.error("Cannot take reference of a nullsafe chain");
                }
                let path = match &value.kind {
                    ExprKind::Var(_)
                    | ExprKind::VarVar { .. }
                    | ExprKind::Index { index: Some(_), .. }
                    | ExprKind::Prop { .. }
                    | ExprKind::StaticProp { .. } => self.dim_path(value)?,
                    ExprKind::Call { .. }
                    | ExprKind::CallValue { .. }
                    | ExprKind::MethodCall { .. }
                    | ExprKind::StaticCall { .. } => {
                        return self.error("minizts does not support references in list() from a call's result")
                    }
                    _ => {
                        self.at(value.pos);
                        return self.error("Cannot assign reference to non referenceable value");
                    }
                };
                // PHP's `MAKE_REF` of the right side: the list works on
                // that reference, so binding one of its own variables
                // (`[&$a] = $a`) does not change what it destructures, and
                // the reference is the assignment's value.
                let (var, start, depth) = self.keys(&path)?;
                let r = self.temp()?;
                match depth {
                    0 => self.emit(Op::MakeRef { dst: r, var }),
                    _ => self.emit(Op::MakeRefDim {
                        dst: r,
                        var,
                        keys: start,
                        depth,
                    }),
                };
                self.destructure_ref(items, r, &[])?;
                Ok(Src::reg(r))
            }
            ExprKind::Array(items, syntax) => {
                // The right side is evaluated into a temporary first, so
                // `[$a, $b] = [$b, $a]` swaps.
                let t = self.temp()?;
                self.expr_into(value, t)?;
                // PHP compiles the right side first too; only a plain
                // variable there leaves the assignment's line current.
                let mut line = match value.kind {
                    ExprKind::Var(_) => self.list_line(target),
                    _ => self.line_of(value.pos),
                };
                self.check_list(items, *syntax, &mut line)?;
                self.destructure(items, Src::reg(t))?;
                Ok(Src::reg(t))
            }
            _ => self.error("Cannot assign to this expression"),
        }
    }

    /// `target = value` on an element, whose value is used: it is the
    /// byte written where the element is a string offset.
    pub(crate) fn assign_dim_result(&mut self, target: &'a Expr<'a>, value: &'a Expr<'a>) -> Result<Src> {
        if one_key(target).is_some() {
            // The key is read after the value, as for `ASSIGN_DIM1`.
            let (var, key, v) = self.one_key_operands(target, value)?;
            let t = self.temp()?;
            self.emit(Op::Move { dst: t, src: v });
            let keys = self.temp()?;
            self.emit(Op::Move { dst: keys, src: key });
            self.emit(Op::AssignDimResult {
                var,
                keys,
                depth: 1,
                src: t,
            });
            return Ok(Src::reg(t));
        }
        let path = self.dim_path(target)?;
        let (var, keys, depth) = self.keys(&path)?;
        let t = self.temp()?;
        self.expr_into(value, t)?;
        self.at(target.pos);
        self.emit(Op::AssignDimResult {
            var,
            keys,
            depth,
            src: t,
        });
        self.release_root(path.root, var);
        Ok(Src::reg(t))
    }

    /// Assigns an already computed value to `target`.
    pub(crate) fn assign_from(&mut self, target: &'a Expr<'a>, v: Src) -> Result<()> {
        self.ensure_writable(target)?;
        let mark = self.mark();
        match &target.kind {
            ExprKind::Var(_) | ExprKind::VarVar { .. } => {
                let var = self.var_reg(target)?;
                self.emit(Op::Assign { var, src: v });
            }
            ExprKind::Index { .. } => {
                let path = self.dim_path(target)?;
                let (var, keys, depth) = self.keys(&path)?;
                self.emit(Op::AssignDim {
                    var,
                    keys,
                    depth,
                    src: v,
                });
                self.release_root(path.root, var);
            }
            ExprKind::Prop { obj, name, .. } => {
                let o = self.write_object(obj)?;
                let n = self.member_name(*name)?;
                self.at(target.pos);
                self.emit(Op::AssignProp {
                    obj: o,
                    name: n,
                    src: v,
                    cache: NO_CACHE,
                });
            }
            ExprKind::StaticProp { class, name } => {
                let (class, mode, name) = self.static_prop_operands(*class, *name)?;
                self.emit(Op::AssignStaticProp {
                    class,
                    mode,
                    name,
                    src: v,
                    cache: NO_CACHE,
                });
            }
            ExprKind::Array(items, _) => self.destructure(items, v)?,
            _ => return self.error("Cannot assign to this expression"),
        }
        self.release(mark);
        Ok(())
    }

    /// PHP's compile-time checks of a destructuring target written with
    /// `syntax`, in the order `zend_compile_list_assign` makes them as it
    /// compiles each element (so the first error is PHP's): the keys,
    /// each target (`zend_verify_list_assign_target`, then the checks of
    /// its own assignment), and last a list with no element at all.
    /// `line` follows the line PHP's compiler is at: it starts where the
    /// caller says and moves to each key and variable compiled.
    pub(crate) fn check_list(&mut self, items: &'a [ArrayItem<'a>], syntax: ArraySyntax, line: &mut u32) -> Result<()> {
        // Keyed or not as the first element is.
        let keyed = items
            .iter()
            .find(|item| item.value.is_some())
            .is_some_and(|item| item.key.is_some() && !item.spread);
        let mut any = false;
        for item in items {
            let fail = |c: &mut Self, line: u32, message: &str| {
                c.line = line;
                c.error(message)
            };
            let Some(value) = item.value else {
                if keyed {
                    return fail(self, *line, "Cannot use empty array entries in keyed array assignment");
                }
                continue;
            };
            if item.spread {
                return fail(self, *line, "Spread operator is not supported in assignments");
            }
            any = true;
            if keyed != item.key.is_some() {
                return fail(self, *line, "Cannot mix keyed and unkeyed array entries in assignments");
            }
            if let Some(key) = item.key {
                *line = self.line_of(key.pos);
            }
            match &value.kind {
                ExprKind::Array(_, ArraySyntax::Long) => {
                    return fail(self, *line, "Cannot assign to array(), use [] instead");
                }
                ExprKind::Array(_, inner) if *inner != syntax => {
                    return fail(self, *line, "Cannot mix [] and list()");
                }
                ExprKind::Array(inner, inner_syntax) => self.check_list(inner, *inner_syntax, line)?,
                _ if !can_write_to_variable(value) => {
                    return fail(self, *line, "Assignments can only happen to writable values");
                }
                _ => {
                    *line = self.line_of(value.pos);
                    self.line = *line;
                    self.ensure_writable(value)?;
                }
            }
        }
        if !any {
            self.line = *line;
            return self.error("Cannot use empty list");
        }
        Ok(())
    }

    /// The line PHP gives a list: its first element's, or where the first
    /// token after its bracket is when that element is missing (which is
    /// where the parser puts such an array).
    fn list_line(&self, e: &'a Expr<'a>) -> u32 {
        match &e.kind {
            ExprKind::Array([ArrayItem { value: Some(v), .. }, ..], _) => self.list_line(v),
            _ => self.line_of(e.pos),
        }
    }

    /// `[$a, 'k' => $b, [$c]] = src`
    fn destructure(&mut self, items: &'a [ArrayItem<'a>], src: Src) -> Result<()> {
        let mut next_index = 0i64;
        for item in items {
            let Some(value) = item.value else {
                next_index += 1;
                continue;
            };
            if item.by_ref || item.spread {
                // Lists with references go through `destructure_ref`, and
                // `check_list` refuses spreads.
                return self.error("minizts: internal error: a reference in a by-value list");
            }
            let mark = self.mark();
            let key = match item.key {
                Some(k) => self.expr(k)?,
                None => {
                    next_index += 1;
                    self.const_int(next_index - 1)?
                }
            };
            let t = self.temp()?;
            self.emit(Op::FetchDimList { dst: t, base: src, key });
            self.assign_from(value, Src::reg(t))?;
            self.release(mark);
        }
        Ok(())
    }

    /// `[&$a, 'k' => [&$b], $c] = var…`: binds each by-reference item to
    /// the element of the variable `var` at the keys `prefix` and its own
    /// key, creating it; reads the others from there.
    pub(crate) fn destructure_ref(&mut self, items: &'a [ArrayItem<'a>], var: Reg, prefix: &[Reg]) -> Result<()> {
        let mut next_index = 0i64;
        for item in items {
            let Some(value) = item.value else {
                next_index += 1;
                continue;
            };
            let mark = self.mark();
            let key = self.temp()?;
            match item.key {
                Some(k) => self.expr_into(k, key)?,
                None => {
                    next_index += 1;
                    let k = self.const_int(next_index - 1)?;
                    self.emit(Op::Move { dst: key, src: k });
                }
            }
            self.at(value.pos);
            let nested_ref = matches!(&value.kind, ExprKind::Array(inner, _) if list_has_ref(inner));
            if item.by_ref || nested_ref {
                let mut keys = prefix.to_vec();
                keys.push(key);
                if nested_ref {
                    let ExprKind::Array(inner, _) = &value.kind else {
                        unreachable!()
                    };
                    self.destructure_ref(inner, var, &keys)?;
                } else {
                    let r = self.element_ref(var, &keys)?;
                    self.assign_ref_from(value, r)?;
                }
            } else {
                let container = match prefix {
                    [] => Src::reg(var),
                    _ => Src::reg(self.element_ref(var, prefix)?),
                };
                let t = self.temp()?;
                self.emit(Op::FetchDimList {
                    dst: t,
                    base: container,
                    key: Src::reg(key),
                });
                self.assign_from(value, Src::reg(t))?;
            }
            self.release(mark);
        }
        Ok(())
    }

    /// A new temporary holding a reference to `var[keys…]` (created).
    fn element_ref(&mut self, var: Reg, keys: &[Reg]) -> Result<Reg> {
        if keys.len() > 255 {
            return self.error("minizts: array access nested too deeply");
        }
        let start = self.temps(keys.len())?;
        for (i, &k) in keys.iter().enumerate() {
            self.emit(Op::Move {
                dst: start.plus(i as u16),
                src: Src::reg(k),
            });
        }
        let dst = self.temp()?;
        self.emit(Op::MakeRefDim {
            dst,
            var,
            keys: start,
            depth: keys.len() as u8,
        });
        Ok(dst)
    }

    /// `target = &source`
    pub(crate) fn assign_ref(&mut self, target: &'a Expr<'a>, source: &'a Expr<'a>) -> Result<()> {
        self.ensure_writable(target)?;
        let mark = self.mark();
        let r = self.temp()?;
        let saved = std::mem::replace(&mut self.binding_call_result, true);
        let bound = self.reference_into(source, r);
        self.binding_call_result = saved;
        bound?;
        // A builtin PHP compiles inline, or a first-class callable, has a
        // temporary as its result, which no reference can bind.
        if self.builtin_result(source) {
            return self.error("Cannot use result of built-in function in write context");
        }
        self.assign_ref_from(target, r)?;
        self.release(mark);
        Ok(())
    }

    /// Binds `target` to the reference in register `r`.
    pub(crate) fn assign_ref_from(&mut self, target: &'a Expr<'a>, r: Reg) -> Result<()> {
        let mark = self.mark();
        match &target.kind {
            ExprKind::Var(name) => {
                let var = self.cv(name)?;
                self.emit(Op::AssignRef { var, src: r });
            }
            ExprKind::VarVar { name, global } => {
                let name = self.expr(name)?;
                self.at(target.pos);
                self.emit(Op::AssignRefVarVar {
                    name,
                    src: r,
                    global: *global,
                });
            }
            ExprKind::Index { .. } => {
                let path = self.dim_path(target)?;
                let (var, keys, depth) = self.keys(&path)?;
                self.emit(Op::AssignDimRef {
                    var,
                    keys,
                    depth,
                    src: r,
                });
                self.release_root(path.root, var);
            }
            ExprKind::Prop { obj, name, .. } => {
                let o = self.write_object(obj)?;
                let n = self.member_name(*name)?;
                self.at(target.pos);
                self.emit(Op::AssignPropRef {
                    obj: o,
                    name: n,
                    src: r,
                });
            }
            ExprKind::StaticProp { class, name } => {
                let line = self.line;
                let (c, mode) = self.class_operand(*class, false)?;
                let n = self.member_name(*name)?;
                self.line = line;
                self.emit(Op::AssignStaticPropRef {
                    class: c,
                    mode,
                    name: n,
                    src: r,
                });
            }
            _ => return self.error("Cannot assign reference to this expression"),
        }
        self.release(mark);
        Ok(())
    }

    /// Puts a reference to variable or element `e` into `dst`, making the
    /// slot a reference first if needed.
    pub(crate) fn reference_into(&mut self, e: &'a Expr<'a>, dst: Reg) -> Result<()> {
        match &e.kind {
            ExprKind::Var(name) => {
                let var = self.cv(name)?;
                self.emit(Op::MakeRef { dst, var });
            }
            ExprKind::VarVar { name, global } => {
                let mark = self.mark();
                let name = self.expr(name)?;
                self.at(e.pos);
                self.emit(Op::BindVarVar {
                    dst,
                    name,
                    global: *global,
                });
                self.release(mark);
            }
            _ if has_nullsafe(e) => return self.error("Cannot take reference of a nullsafe chain"),
            ExprKind::Index { .. } => {
                let mark = self.mark();
                let path = self.dim_path(e)?;
                let (var, keys, depth) = self.keys(&path)?;
                self.emit(Op::MakeRefDim { dst, var, keys, depth });
                self.release_root(path.root, var);
                self.release(mark);
            }
            ExprKind::Prop { obj, name, .. } => {
                let mark = self.mark();
                self.prop_ref(obj, *name, dst)?;
                self.release(mark);
            }
            ExprKind::StaticProp { class, name } => {
                let mark = self.mark();
                self.static_prop_ref(*class, *name, dst, true)?;
                self.release(mark);
            }
            // `$x =& f()`: the reference a by-reference function returns.
            ExprKind::Call { .. }
            | ExprKind::CallValue { .. }
            | ExprKind::MethodCall { .. }
            | ExprKind::StaticCall { .. }
                if self.binding_call_result =>
            {
                // Only the outermost call: its arguments are compiled as usual.
                self.binding_call_result = false;
                let call = self.expr_into(e, dst);
                self.binding_call_result = true;
                call?;
                self.emit(Op::RefResult { dst });
            }
            _ => {
                // Not a variable: PHP passes the value (with a notice for
                // functions); a reference to a temporary copy does that.
                self.expr_into(e, dst)?;
                self.emit(Op::MakeRef { dst, var: dst });
            }
        }
        Ok(())
    }

    /// A new temporary holding a reference to `e`.
    pub(crate) fn reference_to(&mut self, e: &'a Expr<'a>) -> Result<Reg> {
        let t = self.temp()?;
        self.reference_into(e, t)?;
        Ok(t)
    }

    /// `target op= value` (`dst`, unless NONE, gets the result).
    pub(crate) fn assign_op(
        &mut self,
        op: BinaryOp,
        target: &'a Expr<'a>,
        value: &'a Expr<'a>,
        dst: Reg,
    ) -> Result<()> {
        self.ensure_writable(target)?;
        if op == BinaryOp::Coalesce {
            // `$a ??= v` only evaluates v (and assigns) when $a is null.
            let t = if dst.is_none() { self.temp()? } else { dst };
            let cur = self.quiet(target)?;
            self.emit(Op::Move { dst: t, src: cur });
            let done = self.emit(Op::JmpIfNotNull {
                src: Src::reg(t),
                target: 0,
            });
            let v = self.assign(target, value)?;
            self.emit(Op::Move { dst: t, src: v });
            self.patch_here(done);
            return Ok(());
        }
        let op = bin_op(op);
        match &target.kind {
            ExprKind::Prop {
                obj,
                name,
                nullsafe: false,
            } => {
                let mark = self.mark();
                let (o, n) = self.prop_operands(obj, *name)?;
                let v = self.expr(value)?;
                self.at(target.pos);
                self.emit(Op::AssignPropOp {
                    op,
                    obj: o,
                    name: n,
                    src: v,
                    dst,
                    cache: NO_CACHE,
                });
                self.release(mark);
            }
            ExprKind::StaticProp { class, name } => {
                let mark = self.mark();
                let (class, mode, name) = self.static_prop_operands(*class, *name)?;
                let v = self.expr(value)?;
                self.at(target.pos);
                self.emit(Op::AssignStaticPropOp {
                    op,
                    class,
                    mode,
                    name,
                    src: v,
                    dst,
                });
                self.release(mark);
            }
            ExprKind::Var(_) | ExprKind::VarVar { .. } | ExprKind::Prop { .. } => {
                let var = self.var_reg(target)?;
                let v = self.expr(value)?;
                self.at(target.pos);
                self.emit(Op::AssignOp { op, var, src: v });
                if !dst.is_none() {
                    self.emit(Op::Move {
                        dst,
                        src: Src::reg(var),
                    });
                }
                self.release_root(target, var);
            }
            ExprKind::Index { .. } if one_key(target).is_some() => {
                let (var, key, v) = self.one_key_operands(target, value)?;
                self.emit(Op::AssignDimOp1 {
                    op,
                    var,
                    key,
                    src: v,
                    dst,
                });
            }
            ExprKind::Index { .. } => {
                let path = self.dim_path(target)?;
                let (var, keys, depth) = self.keys(&path)?;
                let v = self.expr(value)?;
                self.at(target.pos);
                self.emit(Op::AssignDimOp {
                    op,
                    var,
                    keys,
                    depth,
                    src: v,
                    dst,
                });
                self.release_root(path.root, var);
            }
            _ => return self.error("Cannot assign to this expression"),
        }
        Ok(())
    }

    pub(crate) fn inc_dec(&mut self, target: &'a Expr<'a>, kind: IncDec, dst: Reg) -> Result<()> {
        self.ensure_writable(target)?;
        match &target.kind {
            ExprKind::Prop {
                obj,
                name,
                nullsafe: false,
            } => {
                let mark = self.mark();
                let (o, n) = self.prop_operands(obj, *name)?;
                self.at(target.pos);
                self.emit(Op::IncDecProp {
                    obj: o,
                    name: n,
                    kind,
                    dst,
                    cache: NO_CACHE,
                });
                self.release(mark);
            }
            ExprKind::StaticProp { class, name } => {
                let mark = self.mark();
                let (class, mode, name) = self.static_prop_operands(*class, *name)?;
                self.at(target.pos);
                self.emit(Op::IncDecStaticProp {
                    class,
                    mode,
                    name,
                    kind,
                    dst,
                    cache: NO_CACHE,
                });
                self.release(mark);
            }
            ExprKind::Var(_) | ExprKind::VarVar { .. } | ExprKind::Prop { .. } => {
                let mark = self.mark();
                let var = self.var_reg(target)?;
                self.at(target.pos);
                self.emit(Op::IncDecVar { var, kind, dst });
                self.release_root(target, var);
                self.release(mark);
            }
            ExprKind::Index { .. } => {
                let mark = self.mark();
                let path = self.dim_path(target)?;
                let (var, keys, depth) = self.keys(&path)?;
                self.emit(Op::IncDecDim {
                    var,
                    keys,
                    depth,
                    kind,
                    dst,
                });
                self.release_root(path.root, var);
                self.release(mark);
            }
            _ => return self.error("Cannot increment/decrement this expression"),
        }
        Ok(())
    }

    pub(crate) fn unset(&mut self, e: &'a Expr<'a>) -> Result<()> {
        if let ExprKind::Var("this") = e.kind {
            return self.error("Cannot unset $this");
        }
        self.ensure_writable(e)?;
        let mark = self.mark();
        match &e.kind {
            ExprKind::Var(name) => {
                let var = self.cv(name)?;
                self.emit(Op::UnsetVar { var });
            }
            ExprKind::VarVar { name, global } => {
                let name = self.expr(name)?;
                self.emit(Op::UnsetVarVar { name, global: *global });
            }
            ExprKind::Index { index: None, .. } => return self.error("Cannot use [] for unsetting"),
            ExprKind::Index { .. } => {
                let path = self.dim_path(e)?;
                let (var, keys, depth) = self.keys(&path)?;
                self.emit(Op::UnsetDim { var, keys, depth });
                self.release_root(path.root, var);
            }
            ExprKind::Prop { obj, name, .. } => {
                let o = self.expr(obj)?;
                let n = self.member_name(*name)?;
                self.at(e.pos);
                self.emit(Op::UnsetProp { obj: o, name: n });
            }
            // PHP compiles it to an instruction that throws this.
            ExprKind::StaticProp { class, name } => {
                let class = match class {
                    ClassRef::Name(n) => self.class_name(n)?,
                    _ => "static".to_string(),
                };
                let name = match name {
                    MemberName::Ident(n) => n,
                    MemberName::Expr(_) => "",
                };
                let message =
                    self.const_str_index(format!("Attempt to unset static property {class}::${name}").as_bytes())?;
                self.at(e.pos);
                self.emit(Op::ThrowError { message });
            }
            _ => return self.error("Cannot unset this expression"),
        }
        self.release(mark);
        Ok(())
    }
}

/// PHP's `zend_can_write_to_variable`: below its dimensions, a variable
/// or a call (whose own assignment is refused later).
fn can_write_to_variable(e: &Expr<'_>) -> bool {
    let mut e = e;
    while let ExprKind::Index { base, .. } = &e.kind {
        e = base;
    }
    matches!(
        e.kind,
        ExprKind::Var(_)
            | ExprKind::VarVar { .. }
            | ExprKind::Call { .. }
            | ExprKind::CallValue { .. }
            | ExprKind::CallableFromName(_)
            | ExprKind::CallableFromValue(_)
            | ExprKind::CurlyIndex { .. }
            | ExprKind::Prop { .. }
            | ExprKind::StaticProp { .. }
            | ExprKind::MethodCall { .. }
            | ExprKind::StaticCall { .. }
    )
}

/// Whether a list binds any element by reference, at any depth.
pub(crate) fn list_has_ref(items: &[ArrayItem<'_>]) -> bool {
    items.iter().any(|item| {
        item.by_ref || matches!(item.value, Some(Expr { kind: ExprKind::Array(inner, _), .. }) if list_has_ref(inner))
    })
}
