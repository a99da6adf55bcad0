//! Statements: control flow, loops, declarations.

use minizts_core::bytecode::{type_bits, Op, Reg, Src, Target, NO_CACHE};
use minizts_globals::{cg, Globals};
use minizts_syntax::ast::*;
use minizts_syntax::names;

use crate::{Compiler, LoopCtx, Result};

impl<'a, G: Globals> Compiler<'a, '_, G> {
    pub(crate) fn stmt(&mut self, s: &'a Stmt<'a>) -> Result<()> {
        self.at(s.pos);
        match &s.kind {
            StmtKind::Expr(e) => {
                let mark = self.mark();
                self.expr_discard(e)?;
                self.release(mark);
            }
            StmtKind::Echo(es) => {
                for e in es.iter() {
                    self.at(e.pos);
                    let mark = self.mark();
                    let v = self.expr(e)?;
                    self.emit(Op::Echo { src: v });
                    self.release(mark);
                }
            }
            StmtKind::InlineHtml(text) => {
                let v = self.const_str(text)?;
                self.emit(Op::Echo { src: v });
            }
            StmtKind::If { cond, then, els: None } if self.lone_loop_exit(then).is_some() => {
                // `if (c) break;` / `if (c) continue;`: the condition jumps
                // straight to the loop's exit or step, one branch instead of
                // a branch over a jump.
                let (levels, is_break) = self.lone_loop_exit(then).expect("checked by the guard");
                self.break_continue_if(cond, levels, is_break)?;
            }
            StmtKind::If { cond, then, els } => {
                let to_else = self.cond_jump(cond, false)?;
                self.stmt(then)?;
                match els {
                    Some(els) => {
                        let over = self.emit(Op::Jmp { target: 0 });
                        self.patch_all_here(&to_else);
                        self.stmt(els)?;
                        self.patch_here(over);
                    }
                    None => self.patch_all_here(&to_else),
                }
            }
            StmtKind::While { cond, body } => {
                // The condition goes at the bottom, so each iteration takes
                // one (backward, interrupt-checking) branch.
                let to_cond = self.emit(Op::Jmp { target: 0 });
                let top = self.next_pc();
                self.loop_body(body, None, false)?;
                let ctx = self.loops.pop().expect("loop context");
                self.patch_here(to_cond);
                self.patch_all_here(&ctx.continues);
                self.at(cond.pos);
                let again = self.cond_jump(cond, true)?;
                self.patch_all(&again, top);
                self.patch_all_here(&ctx.breaks);
            }
            StmtKind::DoWhile { body, cond } => {
                let top = self.next_pc();
                self.loop_body(body, None, false)?;
                let ctx = self.loops.pop().expect("loop context");
                self.patch_all_here(&ctx.continues);
                self.at(cond.pos);
                let again = self.cond_jump(cond, true)?;
                self.patch_all(&again, top);
                self.patch_all_here(&ctx.breaks);
            }
            StmtKind::For { init, cond, step, body } => {
                for e in init.iter() {
                    self.discard(e)?;
                }
                let to_cond = self.emit(Op::Jmp { target: 0 });
                let top = self.next_pc();
                self.loop_body(body, None, false)?;
                let ctx = self.loops.pop().expect("loop context");
                self.patch_all_here(&ctx.continues);
                let step_start = self.next_pc();
                for e in step.iter() {
                    self.discard(e)?;
                }
                self.patch_here(to_cond);
                match cond.split_last() {
                    Some((last, rest)) => {
                        for e in rest {
                            self.discard(e)?;
                        }
                        self.at(last.pos);
                        let again = self.cond_jump(last, true)?;
                        self.patch_all(&again, top);
                        if rest.is_empty() && again.len() == 1 {
                            self.fuse_loop_bottom(step_start, again[0]);
                        }
                    }
                    None => {
                        self.at(s.pos);
                        self.emit(Op::JmpBack { target: top });
                    }
                }
                self.patch_all_here(&ctx.breaks);
            }
            StmtKind::Foreach {
                subject,
                key,
                value,
                by_ref,
                body,
            } => self.foreach(subject, *key, value, *by_ref, body)?,
            StmtKind::Switch { subject, cases } => self.switch(subject, cases)?,
            StmtKind::Break(n) => self.break_continue(*n, true)?,
            StmtKind::Continue(n) => self.break_continue(*n, false)?,
            StmtKind::Return(Some(e)) if self.by_ref_return => {
                self.check_return(Some(e))?;
                let mark = self.mark();
                // Leaving `try` blocks with a `finally`, the reference is
                // kept where their code does not reach.
                let t = match self.finallies.first() {
                    Some(f) => f.ret,
                    None => self.temp()?,
                };
                match e.kind {
                    ExprKind::Var(_)
                    | ExprKind::VarVar { .. }
                    | ExprKind::Index { .. }
                    | ExprKind::Prop { .. }
                    | ExprKind::StaticProp { .. } => self.reference_into(e, t)?,
                    _ => self.expr_into(e, t)?,
                }
                self.at(e.pos);
                if self
                    .return_type
                    .as_ref()
                    .is_some_and(|ty| ty.mask & type_bits::MIXED == 0)
                {
                    self.emit(Op::VerifyReturnRef { src: t });
                }
                self.call_finallies(0);
                self.emit(Op::ReturnRef { src: t });
                self.release(mark);
            }
            StmtKind::Return(e) => {
                self.check_return(*e)?;
                let mark = self.mark();
                let v = match e {
                    Some(e) => {
                        let v = self.expr(e)?;
                        // A variable returned as it is is read by the
                        // return itself: an undefined one is reported on
                        // its own line (`return` may stand on the line
                        // above), as PHP does.
                        self.at(e.pos);
                        v
                    }
                    None => self.const_null()?,
                };
                let mut v = self.checked_return(v)?;
                // Leaving `try` blocks with a `finally`: the value is kept
                // where their code does not reach while they run.
                if let Some(ret) = self.finallies.first().map(|f| f.ret) {
                    self.emit(Op::Move { dst: ret, src: v });
                    self.call_finallies(0);
                    v = Src::reg(ret);
                }
                if self.caller_scope && !self.in_function {
                    self.emit(Op::DetachScope {});
                }
                self.emit(Op::Return { src: v });
                self.release(mark);
            }
            StmtKind::Global(names) => {
                for name in names.iter() {
                    if *name == "this" {
                        return self.error("Cannot use $this as global variable");
                    }
                    if !self.in_function {
                        // Top-level variables are the globals already.
                        continue;
                    }
                    let var = self.cv(name)?;
                    let k = self.const_str_index(name.as_bytes())?;
                    self.emit(Op::BindGlobal {
                        var,
                        name: k,
                        cache: NO_CACHE,
                    });
                }
            }
            StmtKind::GlobalByName(name) => {
                let mark = self.mark();
                // The name is evaluated at the top level too (it may have
                // effects), where the variable is the global already.
                let name = self.expr(name)?;
                if self.in_function {
                    self.at(s.pos);
                    self.emit(Op::BindGlobalByName { name });
                }
                self.release(mark);
            }
            StmtKind::Static(vars) => {
                for v in vars.iter() {
                    if v.name == "this" {
                        return self.error("Cannot use $this as static variable");
                    }
                    let var = self.cv(v.name)?;
                    let slot = cg!(self.g, |cg| {
                        let op_array = cg.op_array();
                        op_array.num_statics += 1;
                        op_array.num_statics - 1
                    });
                    let bind = self.emit(Op::BindStatic { var, slot, target: 0 });
                    let mark = self.mark();
                    let init = match v.init {
                        Some(e) => self.expr(e)?,
                        None => self.const_null()?,
                    };
                    self.emit(Op::InitStatic { var, slot, src: init });
                    self.release(mark);
                    self.patch_here(bind);
                }
            }
            StmtKind::Unset(es) => {
                for e in es.iter() {
                    self.at(e.pos);
                    self.unset(e)?;
                }
            }
            StmtKind::Function(f) => {
                let id = self.compile_function(f)?;
                self.at(s.pos);
                self.emit(Op::DeclareFunction { func: id });
            }
            StmtKind::Const(items) => {
                for (name, e) in items.iter() {
                    if ["true", "false", "null"].iter().any(|c| name.eq_ignore_ascii_case(c)) {
                        return self.error(format!("Cannot redeclare constant '{name}'"));
                    }
                    let full = self.ns.prefixed(name);
                    self.check_declaration(UseKind::Const, name, &full)?;
                    let mark = self.mark();
                    let saved = std::mem::replace(&mut self.const_operand, true);
                    let v = self.expr(e);
                    self.const_operand = saved;
                    let v = v?;
                    let k = self.const_str_index(&names::to_bytes(&full))?;
                    self.emit(Op::DeclareConst { name: k, src: v });
                    self.release(mark);
                }
            }
            StmtKind::Block(stmts) => {
                for s in stmts.iter() {
                    self.stmt(s)?;
                }
            }
            StmtKind::Nop => {}
            StmtKind::Label(name) => self.label(name)?,
            StmtKind::Goto(name) => self.goto(name)?,
            StmtKind::Refused(message) => return self.error(*message),
            StmtKind::Class(decl) => self.class_stmt(decl, false)?,
            StmtKind::Try { body, catches, finally } => self.try_stmt(body, catches, *finally)?,
            // Taken apart before the top-level code is compiled (see
            // `namespaces`); the grammar has them nowhere else.
            StmtKind::Namespace { .. } | StmtKind::Use(_) => {}
        }
        Ok(())
    }

    fn discard(&mut self, e: &'a Expr<'a>) -> Result<()> {
        self.at(e.pos);
        let mark = self.mark();
        self.expr_discard(e)?;
        self.release(mark);
        Ok(())
    }

    pub(crate) fn patch_all(&mut self, pcs: &[Target], target: Target) {
        for &pc in pcs {
            self.patch(pc, target);
        }
    }

    pub(crate) fn patch_all_here(&mut self, pcs: &[Target]) {
        let here = self.next_pc();
        self.patch_all(pcs, here);
    }

    /// Compiles a loop body inside a new loop context (left on the stack
    /// for the caller to patch).
    fn loop_body(&mut self, body: &'a Stmt<'a>, iter: Option<Reg>, is_switch: bool) -> Result<()> {
        self.loops.push(LoopCtx {
            breaks: Vec::new(),
            continues: Vec::new(),
            iter,
            is_switch,
            id: self.next_loop_id,
        });
        self.next_loop_id += 1;
        self.stmt(body)
    }

    /// Emits jumps taken when `e`'s truth equals `when`; returns them for
    /// patching. `&&`, `||` and `!` become jumps, not values.
    pub(crate) fn cond_jump(&mut self, e: &'a Expr<'a>, when: bool) -> Result<Vec<Target>> {
        match &e.kind {
            ExprKind::Unary { op: UnaryOp::Not, expr } => self.cond_jump(expr, !when),
            ExprKind::Binary {
                op: op @ (BinaryOp::And | BinaryOp::Or),
                lhs,
                rhs,
            } => {
                // `a && b` jumps on false if either is false; on true only
                // if both are. `||` is the mirror image.
                let short_on = *op == BinaryOp::Or;
                if when == short_on {
                    let mut jumps = self.cond_jump(lhs, when)?;
                    jumps.extend(self.cond_jump(rhs, when)?);
                    Ok(jumps)
                } else {
                    let skip = self.cond_jump(lhs, !when)?;
                    let jumps = self.cond_jump(rhs, when)?;
                    self.patch_all_here(&skip);
                    Ok(jumps)
                }
            }
            ExprKind::Binary {
                op:
                    op @ (BinaryOp::Lt
                    | BinaryOp::Le
                    | BinaryOp::Gt
                    | BinaryOp::Ge
                    | BinaryOp::Eq
                    | BinaryOp::NotEq
                    | BinaryOp::Identical
                    | BinaryOp::NotIdentical),
                lhs,
                rhs,
            } => {
                // A comparison feeding a branch becomes one instruction.
                let mark = self.mark();
                let a = self.expr(lhs)?;
                let b = self.expr(rhs)?;
                self.at(lhs.pos);
                let flip = matches!(op, BinaryOp::NotEq | BinaryOp::NotIdentical);
                let if_true = when != flip;
                let target = 0;
                let jump = match op {
                    BinaryOp::Lt => Op::JmpLt { a, b, if_true, target },
                    BinaryOp::Le => Op::JmpLe { a, b, if_true, target },
                    BinaryOp::Gt => Op::JmpLt {
                        a: b,
                        b: a,
                        if_true,
                        target,
                    },
                    BinaryOp::Ge => Op::JmpLe {
                        a: b,
                        b: a,
                        if_true,
                        target,
                    },
                    BinaryOp::Eq | BinaryOp::NotEq => Op::JmpEq { a, b, if_true, target },
                    _ => Op::JmpIdentical { a, b, if_true, target },
                };
                let pc = self.emit(jump);
                self.release(mark);
                Ok(vec![pc])
            }
            _ => {
                let mark = self.mark();
                let v = self.expr(e)?;
                let pc = if when {
                    self.emit(Op::JmpIf { cond: v, target: 0 })
                } else {
                    self.emit(Op::JmpIfNot { cond: v, target: 0 })
                };
                self.release(mark);
                Ok(vec![pc])
            }
        }
    }

    /// `for (…; $i < $n; $i++)`: when the step is exactly `IncVar $i` and
    /// the test right after it is `JMP_LT ($i < limit)` back to the top,
    /// the step becomes `INC_JMP_LT`, one dispatch per iteration instead
    /// of two (likewise `<=`, and `$i--` with `>` or `>=`). The test stays in place for the loop's entry jump; the
    /// fused instruction skips it when the loop ends.
    fn fuse_loop_bottom(&mut self, step: Target, test: Target) {
        if test != step + 1 {
            return;
        }
        cg!(self.g, |cg| {
            let code = &mut cg.op_array().code;
            let fused = match (code[step as usize], code[test as usize]) {
                (
                    Op::IncVar { var },
                    Op::JmpLt {
                        a,
                        b,
                        if_true: true,
                        target,
                    },
                ) if a == Src::reg(var) => Op::IncJmpLt { var, limit: b, target },
                (
                    Op::IncVar { var },
                    Op::JmpLe {
                        a,
                        b,
                        if_true: true,
                        target,
                    },
                ) if a == Src::reg(var) => Op::IncJmpLe { var, limit: b, target },
                (
                    Op::DecVar { var },
                    Op::JmpLt {
                        a,
                        b,
                        if_true: true,
                        target,
                    },
                ) if b == Src::reg(var) => Op::DecJmpGt { var, limit: a, target },
                (
                    Op::DecVar { var },
                    Op::JmpLe {
                        a,
                        b,
                        if_true: true,
                        target,
                    },
                ) if b == Src::reg(var) => Op::DecJmpGe { var, limit: a, target },
                _ => return,
            };
            code[step as usize] = fused;
        });
    }

    fn foreach(
        &mut self,
        subject: &'a Expr<'a>,
        key: Option<&'a Expr<'a>>,
        value: &'a Expr<'a>,
        by_ref: bool,
        body: &'a Stmt<'a>,
    ) -> Result<()> {
        // `foreach ($a as [&$x, $y])` iterates by reference, as PHP does
        // for a list that binds references.
        let ref_list = matches!(&value.kind, ExprKind::Array(items, _) if crate::lvalue::list_has_ref(items));
        let by_ref = by_ref || ref_list;
        let mark = self.mark();
        let iter = self.temp()?;
        // The temporary holding the reference a property iterated by
        // reference was made into.
        let mut prop_ref = None;
        let inner = self.mark();
        for target in key.into_iter().chain(std::iter::once(value)) {
            if let ExprKind::Var("this") = target.kind {
                self.at(target.pos);
                return self.error("Cannot re-assign $this");
            }
        }
        let reset = if by_ref {
            match &subject.kind {
                ExprKind::Var(name) => {
                    let var = self.cv(name)?;
                    self.emit(Op::FeResetRef { iter, var, end: 0 })
                }
                _ => {
                    let src = self.reference_to(subject)?;
                    if matches!(subject.kind, ExprKind::Prop { .. }) {
                        prop_ref = Some(src);
                    }
                    self.emit(Op::FeResetRefFrom { iter, src, end: 0 })
                }
            }
        } else {
            let v = self.expr(subject)?;
            self.emit(Op::FeReset {
                iter,
                subject: v,
                end: 0,
            })
        };
        self.release(inner);
        let top = self.next_pc();
        // Simple variables are written by the fetch itself; anything else
        // (array elements, list()) goes through a temporary.
        let key_reg = match key {
            None => Reg::NONE,
            Some(Expr {
                kind: ExprKind::Var(name),
                ..
            }) => self.cv(name)?,
            Some(_) => self.temp()?,
        };
        let value_reg = match &value.kind {
            ExprKind::Var(name) => self.cv(name)?,
            _ => self.temp()?,
        };
        if let ExprKind::Array(items, syntax) = &value.kind {
            // PHP compiles the subject first, which leaves its line current.
            let mut line = self.line_of(subject.pos);
            self.check_list(items, *syntax, &mut line)?;
        }
        let fetch = if by_ref {
            self.emit(Op::FeFetchRef {
                iter,
                value: value_reg,
                key: key_reg,
                end: 0,
            })
        } else {
            self.emit(Op::FeFetch {
                iter,
                value: value_reg,
                key: key_reg,
                end: 0,
            })
        };
        match &value.kind {
            ExprKind::Var(_) => {}
            ExprKind::Array(items, _) if ref_list => self.destructure_ref(items, value_reg, &[])?,
            _ if by_ref => {
                self.ensure_writable(value)?;
                self.assign_ref_from(value, value_reg)?;
            }
            _ => self.assign_from(value, Src::reg(value_reg))?,
        }
        if let Some(k) = key {
            if !matches!(k.kind, ExprKind::Var(_)) {
                self.assign_from(k, Src::reg(key_reg))?;
            }
        }
        self.loop_body(body, Some(iter), false)?;
        let ctx = self.loops.pop().expect("loop context");
        self.patch_all(&ctx.continues, top);
        self.emit(Op::JmpBack { target: top });
        self.patch_here(reset);
        self.patch_here(fetch);
        self.patch_all_here(&ctx.breaks);
        self.emit(Op::FeFree { iter });
        // The property is no reference shared with anything after it.
        if let Some(var) = prop_ref {
            self.emit(Op::UnsetVar { var });
        }
        self.release(mark);
        Ok(())
    }

    fn switch(&mut self, subject: &'a Expr<'a>, cases: &'a [Case<'a>]) -> Result<()> {
        let mark = self.mark();
        // A plain variable is compared as it is at each case (as PHP does);
        // anything else is evaluated once.
        let subj = match &subject.kind {
            ExprKind::Var(name) => Src::reg(self.cv(name)?),
            _ => {
                let t = self.temp()?;
                self.expr_into(subject, t)?;
                Src::reg(t)
            }
        };
        let mut entry = Vec::with_capacity(cases.len());
        let mut has_default = false;
        for case in cases {
            match case.test {
                Some(test) => {
                    self.at(case.pos);
                    let m = self.mark();
                    let v = self.expr(test)?;
                    let t = self.temp()?;
                    self.emit(Op::Eq { dst: t, a: subj, b: v });
                    entry.push(Some(self.emit(Op::JmpIf {
                        cond: Src::reg(t),
                        target: 0,
                    })));
                    self.release(m);
                }
                None if has_default => {
                    self.at(case.sep_pos);
                    return self.error("Switch statements may only contain one default clause");
                }
                None => {
                    has_default = true;
                    entry.push(None);
                }
            }
        }
        let to_default = self.emit(Op::Jmp { target: 0 });
        self.loops.push(LoopCtx {
            breaks: Vec::new(),
            continues: Vec::new(),
            iter: None,
            is_switch: true,
            id: self.next_loop_id,
        });
        self.next_loop_id += 1;
        let mut default_at = None;
        for (case, jump) in cases.iter().zip(entry) {
            match jump {
                Some(pc) => self.patch_here(pc),
                None => default_at = Some(self.next_pc()),
            }
            for s in case.body.iter() {
                self.stmt(s)?;
            }
        }
        let ctx = self.loops.pop().expect("switch context");
        match default_at {
            Some(at) => self.patch(to_default, at),
            None => self.patch_here(to_default),
        }
        self.patch_all_here(&ctx.breaks);
        self.patch_all_here(&ctx.continues);
        self.release(mark);
        Ok(())
    }

    /// `break N;` or `continue N;`, alone or alone in a block, that leaves
    /// only the innermost loop (nothing to release on the way): its
    /// levels and whether it is a break.
    fn lone_loop_exit(&self, s: &Stmt<'_>) -> Option<(u32, bool)> {
        let (levels, is_break) = match &s.kind {
            StmtKind::Break(n) => (*n, true),
            StmtKind::Continue(n) => (*n, false),
            StmtKind::Block([inner]) => return self.lone_loop_exit(inner),
            _ => return None,
        };
        // Nor across a `finally`, which must run first, nor out of one.
        let crosses_finally = self.finallies.last().is_some_and(|f| f.loop_depth >= self.loops.len())
            || self
                .finally_bodies
                .last()
                .is_some_and(|&(_, loops)| loops >= self.loops.len());
        (levels == 1 && !self.loops.is_empty() && !crosses_finally).then_some((levels, is_break))
    }

    /// `if (cond) break;` (or continue): the jumps `cond` takes when true
    /// become the loop's break (or continue) jumps.
    fn break_continue_if(&mut self, cond: &'a Expr<'a>, levels: u32, is_break: bool) -> Result<()> {
        debug_assert_eq!(levels, 1);
        let jumps = self.cond_jump(cond, true)?;
        let target = self.loops.last_mut().expect("checked by lone_loop_exit");
        if is_break || target.is_switch {
            target.breaks.extend(jumps);
        } else {
            target.continues.extend(jumps);
        }
        Ok(())
    }

    fn break_continue(&mut self, levels: u32, is_break: bool) -> Result<()> {
        let word = if is_break { "break" } else { "continue" };
        let n = levels as usize;
        if self.loops.is_empty() {
            return self.error(format!("'{word}' not in the 'loop' or 'switch' context"));
        }
        if n > self.loops.len() {
            return self.error(format!(
                "Cannot '{word}' {levels} level{}",
                if n == 1 { "" } else { "s" }
            ));
        }
        let depth = self.loops.len();
        self.check_finally_breakout(depth - n)?;
        // Loops left entirely release their foreach iterators here; the
        // target loop's own iterator is released at its end (break) or
        // kept (continue). The `finally` blocks left run first, each
        // where the loops it is inside are left.
        let mut finallies = self.finallies.len();
        for i in 1..n {
            finallies = self.call_finallies_inside(finallies, depth - i);
            if let Some(iter) = self.loops[depth - i].iter {
                self.emit(Op::FeFree { iter });
            }
        }
        self.call_finallies_inside(finallies, depth - n);
        let pc = self.emit(Op::Jmp { target: 0 });
        let target = &mut self.loops[depth - n];
        if is_break || target.is_switch {
            target.breaks.push(pc);
        } else {
            target.continues.push(pc);
        }
        Ok(())
    }
}
