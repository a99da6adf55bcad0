//! array_walk_recursive: PHP's `php_array_walk` with `recursive` set.
//!
//! Like `array_walk` it walks the live array by position, so elements
//! the callback adds are visited and removed ones are not; each nested
//! array is reached afresh from the by-reference argument through the
//! keys that lead to it, so no borrow is held while the callback runs.

use minizts_core::value::PhpRef;
use minizts_core::{Key, PhpArray, Value};
use minizts_globals::Globals;

use crate::builtins::Args;
use crate::call::{call_resolved, Callee};
use crate::error::{error, fatal, type_error, VmResult};

/// How deeply nested arrays are walked (each level recurses).
const MAX_WALK_DEPTH: usize = 10_000;

/// Runs `f` on the array reached from `slot` through `path`; `None` if
/// something on the way is no longer an array.
fn navigate<R>(slot: &mut Value, path: &[Key], f: &mut dyn FnMut(&mut PhpArray) -> R) -> Option<R> {
    if let Value::Ref(r) = slot {
        let r = r.clone();
        let mut inner = r.try_borrow_mut().ok()?;
        return navigate(&mut inner, path, f);
    }
    let arr = slot.array_mut()?;
    match path.split_first() {
        None => Some(f(arr)),
        Some((k, rest)) => navigate(arr.get_mut(k)?, rest, f),
    }
}

/// What one step of the walk found at a position.
enum Step {
    /// A nested array under this key, inside the current one.
    Nested(usize, Key),
    /// A nested array behind a reference, under this key.
    NestedRef(usize, Key, PhpRef),
    /// An element to hand to the callback.
    Call(usize, Key, Value),
}

struct Walk<'c> {
    callback: &'c Callee,
    extra: Option<Value>,
    by_ref: bool,
    /// The nested arrays being walked (PHP's recursion guard, which
    /// leaves out the outermost array).
    active: Vec<*const PhpArray>,
}

/// Runs `f` on the array a level walks: reached through `path` from the
/// by-reference argument or, below a reference, from that reference (so
/// only one reference is borrowed at a time).
fn with_target<R>(
    a: &mut Args,
    base: Option<&PhpRef>,
    path: &[Key],
    f: &mut dyn FnMut(&mut PhpArray) -> R,
) -> Option<R> {
    match base {
        None => a.with_ref(0, |slot| navigate(slot, path, f)),
        Some(r) => {
            let mut slot = r.try_borrow_mut().ok()?;
            navigate(&mut slot, path, f)
        }
    }
}

impl Walk<'_> {
    fn level<G: Globals>(
        &mut self,
        g: G,
        a: &mut Args,
        base: Option<&PhpRef>,
        path: &mut Vec<Key>,
        depth: usize,
    ) -> VmResult<()> {
        if depth > MAX_WALK_DEPTH {
            return fatal(format!(
                "minizts: array nested too deeply to walk (more than {MAX_WALK_DEPTH} levels)"
            ));
        }
        let by_ref = self.by_ref;
        let outermost = depth == 0;
        let gone = |a: &Args| outermost && !matches!(a.value(0).as_ref(), Value::Arr(_));
        let mut pos = 0;
        loop {
            let step = with_target(a, base, path, &mut |arr| {
                let (p, k, v) = arr.at_or_after(pos)?;
                let key = k.to_key();
                match v {
                    // A reference the walk holds borrowed is to an array
                    // being walked.
                    Value::Ref(r) => {
                        let nested = match r.try_borrow() {
                            Ok(inner) => matches!(&*inner, Value::Arr(_)),
                            Err(_) => true,
                        };
                        if nested {
                            return Some(Step::NestedRef(p, key, r.clone()));
                        }
                    }
                    Value::Arr(_) => return Some(Step::Nested(p, key)),
                    _ => {}
                }
                if by_ref {
                    let v = arr.value_at_mut(p)?;
                    Some(Step::Call(p, key, Value::Ref(crate::gc::slot_ref(g, v))))
                } else {
                    Some(Step::Call(p, key, v.deref_clone()))
                }
            });
            let step = match step {
                Some(Some(step)) => step,
                None if gone(a) => return type_error("Iterated value is no longer an array or object"),
                _ => break,
            };
            let (p, key) = match step {
                Step::Nested(p, key) => {
                    path.push(key.clone());
                    let r = self.nested(g, a, base, path, depth);
                    path.pop();
                    r?;
                    (p, key)
                }
                Step::NestedRef(p, key, r) => {
                    self.nested(g, a, Some(&r), &mut Vec::new(), depth)?;
                    (p, key)
                }
                Step::Call(p, key, arg) => {
                    let mut args = vec![arg, key.to_value()];
                    if let Some(x) = &self.extra {
                        args.push(x.clone());
                    }
                    call_resolved(g, self.callback, args)?;
                    (p, key)
                }
            };
            let next = with_target(a, base, path, &mut |arr| {
                let at = arr.position_of(&key);
                if let Some(v) = at.and_then(|q| arr.value_at_mut(q)) {
                    // Unwrap the reference again if only the array holds
                    // it, so copies of the array do not share the element.
                    if let Value::Ref(r) = v {
                        if r.count() == 1 {
                            let inner = r.get();
                            *v = inner;
                        }
                    }
                }
                at.map_or(p + 1, |q| q + 1)
            });
            match next {
                Some(next) => pos = next,
                None if gone(a) => return type_error("Iterated value is no longer an array or object"),
                None => break,
            }
        }
        Ok(())
    }

    /// Walks a nested array, which PHP's guard refuses to enter twice.
    fn nested<G: Globals>(
        &mut self,
        g: G,
        a: &mut Args,
        base: Option<&PhpRef>,
        path: &mut Vec<Key>,
        depth: usize,
    ) -> VmResult<()> {
        let Some(ptr) = with_target(a, base, path, &mut |arr| arr as *const PhpArray) else {
            return error("Recursion detected");
        };
        if self.active.contains(&ptr) {
            return error("Recursion detected");
        }
        self.active.push(ptr);
        let r = self.level(g, a, base, path, depth + 1);
        self.active.pop();
        r
    }
}

pub(super) fn array_walk_recursive<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    match super::objprops::object_arg(a, 0) {
        Some(o) => super::objprops::with_properties(g, a, 0, &o, walk_array),
        None => walk_array(g, a),
    }
}

fn walk_array<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    a.array(0)?;
    let callback = a.callable(g, 1)?;
    let extra = a.has(2).then(|| a.get(2));
    let by_ref = crate::call::param_by_ref(g, &callback, 0);
    let mut walk = Walk {
        callback: &callback,
        extra,
        by_ref,
        active: Vec::new(),
    };
    walk.level(g, a, None, &mut Vec::new(), 0)?;
    Ok(Value::Bool(true))
}
