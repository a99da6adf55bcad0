//! Declared parameter and return types as compiled: a mask of PHP's
//! builtin types and the class names, as `zend_type` keeps them, and the
//! type's text as PHP prints it in messages (`zend_type_to_string`).

/// The builtin types of a declaration (PHP's `MAY_BE_*` bits).
pub mod bits {
    pub const NULL: u16 = 1 << 0;
    pub const FALSE: u16 = 1 << 1;
    pub const TRUE: u16 = 1 << 2;
    pub const INT: u16 = 1 << 3;
    pub const FLOAT: u16 = 1 << 4;
    pub const STRING: u16 = 1 << 5;
    pub const ARRAY: u16 = 1 << 6;
    pub const OBJECT: u16 = 1 << 7;
    pub const CALLABLE: u16 = 1 << 8;
    pub const VOID: u16 = 1 << 9;
    pub const NEVER: u16 = 1 << 10;
    pub const STATIC: u16 = 1 << 11;
    pub const BOOL: u16 = FALSE | TRUE;
    /// Every value's type.
    pub const ANY: u16 = NULL | BOOL | INT | FLOAT | STRING | ARRAY | OBJECT;
    /// Written `mixed` (with [`ANY`]'s bits): PHP's `mixed` also takes
    /// resources, so it is not the union of the others.
    pub const MIXED: u16 = 1 << 12;
}

/// A parameter or return type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeDecl {
    /// The builtin types it takes ([`bits`]).
    pub mask: u16,
    /// The class and interface names, as written (`iterable` adds
    /// `Traversable`, as PHP 8.2 compiles it). In a union, an entry may
    /// be an intersection, its names joined by `&` (a DNF type's
    /// `(A&B)`: no class name has a `&`); [`TypeDecl::group`] reads it.
    pub classes: Box<[Box<str>]>,
    /// The classes are an intersection (`A&B`), not a union.
    pub intersection: bool,
}

impl TypeDecl {
    pub fn allows_null(&self) -> bool {
        self.mask & bits::NULL != 0
    }

    /// The intersection a DNF type's class entry stands for (`A&B`), or
    /// `None` for a class name.
    pub fn group(entry: &str) -> Option<TypeDecl> {
        entry.contains('&').then(|| TypeDecl {
            mask: 0,
            classes: entry.split('&').map(Into::into).collect(),
            intersection: true,
        })
    }

    /// The type as PHP's messages print it (`?array`, `int|float`,
    /// `Traversable|array|null`).
    pub fn to_php_string(&self) -> String {
        if self.intersection {
            return self.classes.join("&");
        }
        let mut parts: Vec<std::borrow::Cow<'_, str>> = self
            .classes
            .iter()
            .map(|c| match c.contains('&') {
                true => format!("({c})").into(),
                false => (&**c).into(),
            })
            .collect();
        let m = self.mask;
        if m & bits::MIXED != 0 {
            parts.push("mixed".into());
            return parts.join("|");
        }
        for (bit, name) in [
            (bits::STATIC, "static"),
            (bits::CALLABLE, "callable"),
            (bits::OBJECT, "object"),
            (bits::ARRAY, "array"),
            (bits::STRING, "string"),
            (bits::INT, "int"),
            (bits::FLOAT, "float"),
        ] {
            if m & bit != 0 {
                parts.push(name.into());
            }
        }
        if m & bits::BOOL == bits::BOOL {
            parts.push("bool".into());
        } else if m & bits::FALSE != 0 {
            parts.push("false".into());
        } else if m & bits::TRUE != 0 {
            parts.push("true".into());
        }
        if m & bits::VOID != 0 {
            parts.push("void".into());
        }
        if m & bits::NEVER != 0 {
            parts.push("never".into());
        }
        let text = parts.join("|");
        if m & bits::NULL == 0 {
            text
        } else if parts.len() == 1 && !text.starts_with('(') {
            format!("?{text}")
        } else if parts.is_empty() {
            "null".into()
        } else {
            format!("{text}|null")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(mask: u16, classes: &[&str]) -> TypeDecl {
        TypeDecl {
            mask,
            classes: classes.iter().map(|c| (*c).into()).collect(),
            intersection: false,
        }
    }

    #[test]
    fn prints_as_php_does() {
        assert_eq!(ty(bits::ARRAY | bits::NULL, &[]).to_php_string(), "?array");
        assert_eq!(ty(bits::FLOAT | bits::INT, &[]).to_php_string(), "int|float");
        assert_eq!(
            ty(bits::ARRAY | bits::OBJECT | bits::NULL, &["Traversable", "T"]).to_php_string(),
            "Traversable|T|object|array|null"
        );
        assert_eq!(ty(bits::ANY | bits::MIXED, &[]).to_php_string(), "mixed");
        assert_eq!(
            ty(bits::ANY, &[]).to_php_string(),
            "object|array|string|int|float|bool|null"
        );
        assert_eq!(ty(bits::NULL, &[]).to_php_string(), "null");
        assert_eq!(
            ty(bits::NULL | bits::INT, &["A&B", "C"]).to_php_string(),
            "(A&B)|C|int|null"
        );
        assert_eq!(ty(bits::NULL, &["A&B"]).to_php_string(), "(A&B)|null");
        assert_eq!(ty(bits::FALSE | bits::STRING, &[]).to_php_string(), "string|false");
    }
}
