//! The request's code: its script and the scripts its `eval()`s and
//! `include`s compiled, and every function of them by request-wide id
//! (PHP keeps an eval's op array alive while its functions and closures
//! may run; here every script lives until request shutdown).

use std::sync::Arc;

use hashbrown::HashMap;

use minizts_core::bytecode::{FuncId, Function, Script};

/// The scripts of a request and their functions by id.
#[derive(Default)]
pub struct Code {
    /// In id order: `units[0]` is the request's script.
    units: Vec<Arc<Script>>,
    /// Function `id` of the request, pointing into one of `units`.
    functions: Vec<*const Function>,
    /// Files `include` has opened, by resolved path in the order they
    /// were first included, each with the id of its top-level code (PHP's
    /// `EG(included_files)`; the compiled file is kept for the rest of the
    /// request and run again by a later `include`, as opcache keeps it).
    included: Vec<(Box<str>, FuncId)>,
    included_index: HashMap<Box<str>, usize>,
}

impl Code {
    /// The request's script (the first one added).
    pub fn main(&self) -> Option<&Arc<Script>> {
        self.units.first()
    }

    /// The id the next script's first function must have.
    pub fn next_func(&self) -> FuncId {
        self.functions.len() as FuncId
    }

    /// Adds `script`, whose ids must follow those already here.
    pub fn add(&mut self, script: Arc<Script>) {
        assert_eq!(
            script.first_func,
            self.next_func(),
            "a script's ids follow the request's"
        );
        self.functions
            .extend(script.functions.iter().map(|f| f as *const Function));
        self.units.push(script);
    }

    /// Function `id`.
    #[inline]
    pub fn get(&self, id: FuncId) -> Option<&Function> {
        let f = *self.functions.get(id as usize)?;
        // SAFETY: `f` points into a script of `units`, which holds it
        // (an `Arc`, never mutated) as long as `self` holds the pointer:
        // both are dropped together (`clear`, drop). The result borrows
        // `self`, so it cannot outlive them.
        Some(unsafe { &*f })
    }

    /// The script function `id` belongs to.
    pub fn unit_of(&self, id: FuncId) -> Option<&Arc<Script>> {
        let i = self.units.partition_point(|u| u.first_func <= id).checked_sub(1)?;
        let u = &self.units[i];
        u.function(id).map(|_| u)
    }

    /// The top-level code of file `path` if it was included already.
    pub fn included(&self, path: &str) -> Option<FuncId> {
        self.included_index.get(path).map(|&i| self.included[i].1)
    }

    /// Records that file `path`, whose top-level code is `func`, was
    /// included.
    pub fn add_included(&mut self, path: &str, func: FuncId) {
        if !self.included_index.contains_key(path) {
            self.included_index.insert(path.into(), self.included.len());
            self.included.push((path.into(), func));
        }
    }

    /// The included files, in the order they were first included.
    pub fn included_files(&self) -> impl Iterator<Item = &str> {
        self.included.iter().map(|(p, _)| &**p)
    }

    /// Drops every script (request shutdown).
    pub fn clear(&mut self) {
        self.functions.clear();
        self.units.clear();
        self.included.clear();
        self.included_index.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(first_func: FuncId, names: &[&str]) -> Arc<Script> {
        let functions = names
            .iter()
            .map(|n| {
                let mut b = crate::OpArrayBuilder::new(n, 1, 1);
                let src = b.const_null().expect("room for a constant");
                b.emit(minizts_core::bytecode::Op::Return { src }, 1);
                b.finish()
            })
            .collect();
        Arc::new(Script {
            file: "t".into(),
            first_func,
            functions,
            early_functions: Vec::new(),
            classes: Vec::new(),
            early_classes: Vec::new(),
            strings: Default::default(),
            cache_slots: 0,
            warnings: Vec::new(),
        })
    }

    #[test]
    fn ids_run_across_scripts() {
        let mut code = Code::default();
        code.add(script(0, &["{main}", "f"]));
        assert_eq!(code.next_func(), 2);
        code.add(script(2, &["{main}", "g", "h"]));
        assert_eq!(code.get(3).map(|f| &*f.name), Some("g"));
        assert_eq!(code.get(1).map(|f| &*f.name), Some("f"));
        assert!(code.get(5).is_none());
        assert_eq!(code.unit_of(4).map(|u| u.first_func), Some(2));
        assert_eq!(code.unit_of(0).map(|u| u.first_func), Some(0));
        assert!(code.unit_of(9).is_none());
        code.clear();
        assert!(code.get(0).is_none());
    }
}
