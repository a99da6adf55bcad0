//! `try`/`catch`/`finally` (PHP's `zend_compile_try`).
//!
//! The layout of `try { B } catch (A|B2 $e) { C1 } catch (D) { C2 }
//! finally { F }`, and the `TryRange` the function records for it:
//!
//! ```text
//! start:    B
//!           FAST_CALL slot, finally      (only with a finally)
//!           JMP end
//! catch:    CATCH "A" -> $e else k2      (the first CATCH: TryRange.catch)
//!           JMP body1                    (an earlier name of a multi-catch)
//! k2:       CATCH "B2" -> $e else k3
//! body1:    C1
//!           FAST_CALL slot, finally
//!           JMP end
//! k3:       CATCH "D" -> _ last=true     (the last name of the last clause)
//!           C2
//!           FAST_CALL slot, finally
//!           JMP end
//! finally:  F                            (TryRange.finally)
//!           FAST_RET slot                (TryRange.finally_end)
//! end:
//! ```
//!
//! `slot` is a temporary reserved for the whole statement (`Reg::NONE`
//! without a finally). A `return` inside `B` or a catch body keeps its
//! value in a second reserved temporary of the outermost such `try`
//! (below every register the finally blocks use), `FAST_CALL`s every
//! enclosing finally block from the inside out, then returns that
//! register; `break`, `continue` and `goto` leaving the `try` call the
//! finally blocks they leave first. Ranges are recorded innermost first
//! (each when its statement is complete).

use minizts_core::bytecode::{Op, Reg, Target, TryRange};
use minizts_globals::{cg, Globals};
use minizts_syntax::ast::*;
use minizts_syntax::names;

use crate::{Compiler, FinallyCtx, Result};

impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// A `FAST_CALL` into the finally block of `self.finallies[i]`
    /// (patched when the block is placed); returns where it is.
    fn fast_call(&mut self, i: usize) -> Target {
        let slot = self.finallies[i].slot;
        let pc = self.emit(Op::FastCall { slot, target: 0 });
        self.finallies[i].calls.push(pc);
        pc
    }

    /// Calls the finally blocks of `self.finallies[from..]`, innermost
    /// first (a `return` leaving them all).
    pub(crate) fn call_finallies(&mut self, from: usize) {
        for i in (from..self.finallies.len()).rev() {
            self.fast_call(i);
        }
    }

    /// Calls the finally blocks among the innermost `count` that are
    /// inside loop `index` (started after it), innermost first; returns
    /// how many are left (those outside it).
    pub(crate) fn call_finallies_inside(&mut self, mut count: usize, index: usize) -> usize {
        while count > 0 && self.finallies[count - 1].loop_depth > index {
            count -= 1;
            self.fast_call(count);
        }
        count
    }

    /// Calls every enclosing finally block, innermost first, with the
    /// iterator releases of the loops they are inside in between (a
    /// `goto`, whose label is found later); returns the calls with their
    /// blocks' ids.
    pub(crate) fn call_finallies_for_goto(&mut self, frees: &mut Vec<(u32, Target)>) -> Vec<(u32, Target)> {
        let mut calls = Vec::new();
        let mut count = self.finallies.len();
        for i in (0..self.loops.len()).rev() {
            while count > 0 && self.finallies[count - 1].loop_depth > i {
                count -= 1;
                let id = self.finallies[count].id;
                calls.push((id, self.fast_call(count)));
            }
            if let Some(iter) = self.loops[i].iter {
                let id = self.loops[i].id;
                frees.push((id, self.emit(Op::FeFree { iter })));
            }
        }
        while count > 0 {
            count -= 1;
            let id = self.finallies[count].id;
            calls.push((id, self.fast_call(count)));
        }
        calls
    }

    /// The ids of the `try` blocks with a finally the code being compiled
    /// is inside.
    pub(crate) fn finally_ids(&self) -> Vec<u32> {
        self.finallies.iter().map(|f| f.id).collect()
    }

    /// The ids of the `try` blocks whose finally block the code being
    /// compiled is inside.
    pub(crate) fn finally_body_ids(&self) -> Vec<u32> {
        self.finally_bodies.iter().map(|&(id, _)| id).collect()
    }

    /// PHP's refusal of a `break` or `continue` to loop `index` that
    /// leaves a finally block.
    pub(crate) fn check_finally_breakout(&self, index: usize) -> Result<()> {
        match self.finally_bodies.last() {
            Some(&(_, loops)) if index < loops => self.error("jump out of a finally block is disallowed"),
            _ => Ok(()),
        }
    }

    pub(crate) fn try_stmt(
        &mut self,
        body: &'a [Stmt<'a>],
        catches: &'a [Catch<'a>],
        finally: Option<&'a [Stmt<'a>]>,
    ) -> Result<()> {
        let mark = self.mark();
        let line = self.line;
        let slot = match finally {
            Some(_) => {
                let slot = self.temp()?;
                let ret = self.temp()?;
                let id = self.next_finally_id;
                self.next_finally_id += 1;
                self.finallies.push(FinallyCtx {
                    id,
                    slot,
                    ret,
                    calls: Vec::new(),
                    loop_depth: self.loops.len(),
                });
                slot
            }
            None => Reg::NONE,
        };
        let depth = self.finallies.len();
        let start = self.next_pc();
        for s in body {
            self.stmt(s)?;
        }
        self.line = line;
        if finally.is_some() {
            self.fast_call(depth - 1);
        }
        let mut ends = vec![self.emit(Op::Jmp { target: 0 })];
        let first_catch = self.next_pc();
        // The `CATCH` whose `next` is the one emitted next.
        let mut pending: Option<Target> = None;
        for (ci, c) in catches.iter().enumerate() {
            self.at(c.pos);
            let var = match c.var {
                Some("this") => return self.error("Cannot re-assign $this"),
                Some(name) => self.cv(name)?,
                None => Reg::NONE,
            };
            let mut to_body = Vec::new();
            for (ni, class) in c.classes.iter().enumerate() {
                let here = self.next_pc();
                if let Some(pc) = pending.take() {
                    self.patch(pc, here);
                }
                let last = ci + 1 == catches.len() && ni + 1 == c.classes.len();
                let class = self.class_name(class)?;
                let class = self.const_str_index(&names::to_bytes(&class))?;
                let pc = self.emit(Op::Catch {
                    class,
                    var,
                    next: 0,
                    last,
                });
                if !last {
                    pending = Some(pc);
                }
                // A match on an earlier name of `A|B` goes to the body.
                if ni + 1 < c.classes.len() {
                    to_body.push(self.emit(Op::Jmp { target: 0 }));
                }
            }
            self.patch_all_here(&to_body);
            for s in c.body {
                self.stmt(s)?;
            }
            self.at(c.pos);
            if finally.is_some() {
                self.fast_call(depth - 1);
            }
            ends.push(self.emit(Op::Jmp { target: 0 }));
        }
        let (finally_start, finally_end) = match finally {
            Some(stmts) => {
                // Code in the finally block leaves this `try` already.
                let ctx = self.finallies.pop().expect("the try's finally context");
                let here = self.next_pc();
                self.patch_all(&ctx.calls, here);
                self.finally_bodies.push((ctx.id, self.loops.len()));
                for s in stmts {
                    self.stmt(s)?;
                }
                self.finally_bodies.pop();
                self.line = line;
                let end = self.emit(Op::FastRet { slot });
                (here, end)
            }
            None => (0, 0),
        };
        self.patch_all_here(&ends);
        cg!(self.g).op_array().try_ranges.push(TryRange {
            start,
            catch: if catches.is_empty() { 0 } else { first_catch },
            finally: finally_start,
            finally_end,
            slot,
        });
        self.release(mark);
        Ok(())
    }
}
