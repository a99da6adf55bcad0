//! `goto` and its labels, resolved when the function's code is complete
//! (PHP's `zend_resolve_goto_label`): a `goto` leaving loops releases
//! their foreach iterators as `break` does. It releases every enclosing
//! loop's iterator, and the releases of loops the label is inside too are
//! turned into `NOP`s once the label is known, as PHP does.

use hashbrown::HashMap;
use minizts_core::bytecode::{Op, Target};
use minizts_globals::{cg, Globals};

use crate::{Compiler, Result};

/// A `goto` waiting for its label.
struct PendingGoto<'a> {
    name: &'a str,
    line: u32,
    jump: Target,
    /// The loops it is inside, outermost first.
    loops: Vec<u32>,
    /// The iterator releases before its jump, with their loops.
    frees: Vec<(u32, Target)>,
    /// The `FAST_CALL`s of the finally blocks before its jump, with
    /// their `try` blocks' ids.
    finally_calls: Vec<(u32, Target)>,
    /// The finally blocks it is inside.
    finally_bodies: Vec<u32>,
}

/// A label's position, the loops it is inside, the `try` blocks with a
/// finally it is inside and the finally blocks it is inside.
type Label = (Target, Vec<u32>, Vec<u32>, Vec<u32>);

/// The labels and `goto`s of the function being compiled.
#[derive(Default)]
pub(crate) struct Labels<'a> {
    defined: HashMap<&'a str, Label>,
    gotos: Vec<PendingGoto<'a>>,
}

impl<'a, G: Globals> Compiler<'a, '_, G> {
    fn loop_ids(&self) -> Vec<u32> {
        self.loops.iter().map(|l| l.id).collect()
    }

    pub(crate) fn label(&mut self, name: &'a str) -> Result<()> {
        if self.labels.defined.contains_key(name) {
            return self.error(format!("Label '{name}' already defined"));
        }
        let here = self.next_pc();
        let loops = self.loop_ids();
        let finallies = self.finally_ids();
        let bodies = self.finally_body_ids();
        self.labels.defined.insert(name, (here, loops, finallies, bodies));
        Ok(())
    }

    pub(crate) fn goto(&mut self, name: &'a str) -> Result<()> {
        // Every enclosing loop's iterator is released and every enclosing
        // finally block called; those the label is inside too become
        // `NOP`s when it is found.
        let mut frees = Vec::new();
        let finally_calls = self.call_finallies_for_goto(&mut frees);
        let jump = self.emit(Op::Jmp { target: 0 });
        let loops = self.loop_ids();
        self.labels.gotos.push(PendingGoto {
            name,
            line: self.line,
            jump,
            loops,
            frees,
            finally_calls,
            finally_bodies: self.finally_body_ids(),
        });
        Ok(())
    }

    /// Points every `goto` of the finished function at its label.
    pub(crate) fn resolve_gotos(&mut self) -> Result<()> {
        let labels = std::mem::take(&mut self.labels);
        for g in labels.gotos {
            self.line = g.line;
            let Some((target, label_loops, label_finallies, label_bodies)) = labels.defined.get(g.name) else {
                return self.error(format!("'goto' to undefined label '{}'", g.name));
            };
            if label_bodies.iter().any(|b| !g.finally_bodies.contains(b)) {
                return self.error("jump into a finally block is disallowed");
            }
            if g.finally_bodies.iter().any(|b| !label_bodies.contains(b)) {
                return self.error("jump out of a finally block is disallowed");
            }
            if !g.loops.starts_with(label_loops) {
                return self.error("'goto' into loop or switch statement is disallowed");
            }
            for (id, pc) in g.frees {
                if label_loops.contains(&id) {
                    cg!(self.g).op_array().code[pc as usize] = Op::Nop {};
                }
            }
            for (id, pc) in g.finally_calls {
                if label_finallies.contains(&id) {
                    cg!(self.g).op_array().code[pc as usize] = Op::Nop {};
                }
            }
            self.patch(g.jump, *target);
        }
        Ok(())
    }
}
