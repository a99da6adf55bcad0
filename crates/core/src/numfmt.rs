//! PHP 8.2's number <-> string conversions, reproduced byte for byte.
//!
//! Everything here is pure and engine-agnostic: the functions take Rust
//! numbers and byte strings, never engine values, so the VM, the compiler
//! (constant folding) and the standard library can all share them.
//!
//! * [`float`]: float to string (`echo`, `var_dump`, `var_export`,
//!   `json_encode`, `serialize`), on top of the digit generator in [`dtoa`].
//! * [`bigdtoa`]: the same digits from big-integer arithmetic with a
//!   buffer freelist (dtoa's `Balloc`/`Bfree`), for the `--dtoa` switch.
//! * [`sprintf`]: the `printf` family's format engine.
//! * [`round`]: `round()` and `number_format()`.
//! * [`numeric`]: numeric strings, `(int)`/`(float)` casts, `intval()` with a
//!   base, float to int conversion and the `<=>` of two strings.
//! * [`increment`]: Perl-style string increment (`$s++`).
//! * [`mt_rand`]: the Mersenne Twister behind `mt_rand()`/`rand()`.

pub mod bigdtoa;
pub mod dtoa;
pub mod float;
pub mod increment;
pub mod mt_rand;
pub mod numeric;
pub mod round;
pub mod sprintf;

pub use dtoa::{DigitSource, Stateless};
pub use float::{
    php_float_json, php_float_repr, php_float_to_string, php_float_var_export, php_gcvt, php_gcvt_with, write_float,
    write_float_json, write_float_json_with, write_float_repr, write_float_repr_with, write_float_var_export,
    write_float_var_export_with, write_float_with,
};
pub use increment::str_increment;
pub use mt_rand::{MtRand, MtRandMode};
pub use numeric::{
    float_to_int, float_to_int_saturating, int_to_string, intval_base, is_numeric_str, parse_numeric, parse_numeric_ex,
    smart_str_compare, smart_str_equals, str_to_float, str_to_int, write_int, Number, NumericInfo,
};
pub use round::{number_format, php_round, php_round_mode, RoundMode};
pub use sprintf::{
    php_sprintf, php_sprintf_bounded, php_sprintf_into, ArgSource, FormatArg, SprintfError, SprintfErrorKind,
};

#[cfg(test)]
mod tests;
