//! Attributes (`#[A]`). minizts has no reflection to read them with;
//! what PHP does with them at compile time is check the internal ones
//! (`zend_compile_attributes`): each may target only some declarations,
//! and none may be repeated on one.

use minizts_globals::Globals;
use minizts_syntax::ast::Attribute;

use crate::{Compiler, Result};

/// What an attribute is attached to (PHP's `ZEND_ATTRIBUTE_TARGET_*`
/// bits, of which minizts's declarations have two).
#[derive(Clone, Copy)]
pub(crate) enum Target {
    Class = 1,
    Function = 1 << 1,
    Method = 1 << 2,
    Parameter = 1 << 5,
}

/// The targets' names, by bit, as PHP's messages list them.
const TARGET_NAMES: [&str; 6] = ["class", "function", "method", "property", "class constant", "parameter"];

const CLASS: u32 = Target::Class as u32;
const METHOD: u32 = Target::Method as u32;

/// PHP 8.2's internal attributes (lowercase) and the targets each allows.
const INTERNAL: [(&str, u32); 4] = [
    ("attribute", CLASS),
    ("returntypewillchange", METHOD),
    ("allowdynamicproperties", CLASS),
    ("sensitiveparameter", Target::Parameter as u32),
];

fn target_names(bits: u32) -> String {
    let names: Vec<&str> = (0..TARGET_NAMES.len())
        .filter(|i| bits & (1 << i) != 0)
        .map(|i| TARGET_NAMES[i])
        .collect();
    names.join(", ")
}

impl<'a, G: Globals> Compiler<'a, '_, G> {
    /// Checks the internal attributes among those of one declaration, in
    /// order, as PHP does once it has collected them all.
    /// Whether a parameter's attributes include `SensitiveParameter`.
    pub(crate) fn is_sensitive(&self, attributes: &[Attribute<'a>]) -> Result<bool> {
        for a in attributes {
            if self.class_name(a.name)?.eq_ignore_ascii_case("SensitiveParameter") {
                return Ok(true);
            }
        }
        Ok(false)
    }

    pub(crate) fn check_attributes(&self, attributes: &[Attribute<'a>], target: Target) -> Result<()> {
        // Attribute names are class names, resolved in the namespace.
        let names: Vec<String> = attributes
            .iter()
            .map(|a| self.class_name(a.name))
            .collect::<Result<_>>()?;
        for name in &names {
            let Some(&(_, allowed)) = INTERNAL.iter().find(|(n, _)| name.eq_ignore_ascii_case(n)) else {
                continue;
            };
            let target = target as u32;
            if allowed & target == 0 {
                return self.error(format!(
                    "Attribute \"{}\" cannot target {} (allowed targets: {})",
                    name,
                    target_names(target),
                    target_names(allowed)
                ));
            }
            if names.iter().filter(|b| b.eq_ignore_ascii_case(name)).count() > 1 {
                return self.error(format!("Attribute \"{name}\" must not be repeated"));
            }
        }
        Ok(())
    }
}
