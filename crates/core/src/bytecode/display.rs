//! The listing format of instructions (`minizts dump`, the bytecode
//! goldens): the mnemonic, then the instruction's template (see
//! `table.rs`) with each field rendered by its kind, registers by their
//! variable names and constants by their values.

use super::{Function, Op, Reg, Src};
use crate::value::Value;

/// Renders the instructions of one function.
pub(super) struct Renderer<'a> {
    pub f: &'a Function,
    /// Names a builtin by its id.
    pub builtin: &'a dyn Fn(u16) -> String,
}

impl Renderer<'_> {
    /// One instruction as the listing shows it.
    pub fn instruction(&self, op: &Op) -> String {
        let fields = op.rendered_fields(self);
        let mut out = String::from(op.mnemonic());
        let template = op.template();
        if !template.is_empty() {
            out.push(' ');
        }
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
            let name = &rest[open + 1..close];
            match fields.iter().find(|(n, _)| *n == name) {
                Some((_, text)) => out.push_str(text),
                None => out.push_str(&rest[open..=close.min(rest.len() - 1)]),
            }
            rest = rest.get(close + 1..).unwrap_or("");
        }
        out.push_str(rest);
        out
    }

    pub fn reg(&self, r: Reg) -> String {
        if r.is_none() {
            "_".into()
        } else if let Some(name) = self.f.cv_names.get(r.idx()) {
            format!("${name}")
        } else {
            format!("t{}", r.idx())
        }
    }

    /// `n` consecutive registers from `first`.
    pub fn regs(&self, first: Reg, n: usize) -> String {
        (0..n)
            .map(|i| self.reg(first.plus(i as u16)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn src(&self, s: Src) -> String {
        match s.as_reg() {
            Some(r) => self.reg(r),
            None => match self.f.consts.values().get(s.index()) {
                Some(Value::Str(st)) => format!("{:?}", String::from_utf8_lossy(st)),
                Some(Value::Null) => "null".into(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Int(n)) => n.to_string(),
                Some(Value::Float(x)) => format!("{x:?}"),
                _ => format!("k{}", s.index()),
            },
        }
    }

    /// Constant array literal `lit` as it is written (`[1, "a" => [true]]`).
    pub fn literal(&self, lit: u16) -> String {
        let Some(l) = self.f.arrays.get(usize::from(lit)) else {
            return format!("array #{lit}");
        };
        let items: Vec<String> = l
            .items
            .iter()
            .map(|item| {
                let v = match item.value {
                    super::LiteralValue::Const(c) => self.src(Src::konst(c)),
                    super::LiteralValue::Array(n) => self.literal(n),
                };
                match item.key {
                    Some(k) => format!("{} => {v}", self.src(Src::konst(k))),
                    None => v,
                }
            })
            .collect();
        format!("[{}]", items.join(", "))
    }

    pub fn site(&self, site: u16) -> String {
        self.f.sites.get(site as usize).map_or_else(
            || format!("site{site}"),
            |s| match &s.fallback {
                // The global name a namespaced one falls back to.
                Some(f) => format!("{}|{}", s.name, String::from_utf8_lossy(f)),
                None => s.name.to_string(),
            },
        )
    }

    pub fn builtin(&self, id: u16) -> String {
        (self.builtin)(id)
    }
}
