//! `shuffle` and `array_rand`, drawing from `mt_rand`'s generator as
//! PHP 8.2's default engine does, so a seeded script picks the same.

use minizts_core::{PhpArray, Value};
use minizts_globals::Globals;

use crate::builtins::math::{shuffle_slice, with_mt_rand};
use crate::builtins::Args;
use crate::error::{error, VmResult};

/// PHP's `php_array_data_shuffle`: Fisher–Yates from the end; the keys
/// are dropped.
pub(super) fn shuffle<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let mut vals: Vec<Value> = arr.values().cloned().collect();
    drop(arr);
    shuffle_slice(g, &mut vals);
    a.with_ref(0, |slot| *slot = Value::arr(PhpArray::from_list(vals)));
    Ok(Value::Bool(true))
}

/// PHP's `php_array_pick_keys` (an array without holes: minizts's
/// arrays are compact when a script sees them).
pub(super) fn array_rand<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let arr = a.array(0)?;
    let num = a.opt_int(g, 1, 1)?;
    let avail = arr.len();
    if avail == 0 {
        return a.value_error(0, "cannot be empty");
    }
    if num == 1 {
        let i = with_mt_rand(g, |mt| mt.uniform_range(0, avail as i64 - 1)) as usize;
        return Ok(arr.iter().nth(i).map_or(Value::Null, |(k, _)| k.to_value()));
    }
    if num <= 0 || num as u64 > avail as u64 {
        return a.value_error(
            1,
            "must be between 1 and the number of elements in argument #1 ($array)",
        );
    }
    let mut want = num as usize;
    // Picking more than half: the ones left out are drawn instead.
    let negative = want > avail >> 1;
    if negative {
        want = avail - want;
    }
    let mut picked = vec![false; avail];
    let mut failures = 0;
    while want > 0 {
        let r = with_mt_rand(g, |mt| mt.uniform_range(0, avail as i64 - 1)) as usize;
        if picked[r] {
            failures += 1;
            if failures > 50 {
                return error("Failed to generate an acceptable random number in 50 attempts");
            }
        } else {
            picked[r] = true;
            want -= 1;
            failures = 0;
        }
    }
    let keys = arr
        .iter()
        .zip(picked)
        .filter(|(_, p)| *p != negative)
        .map(|((k, _), _)| k.to_value())
        .collect();
    Ok(Value::arr(PhpArray::from_list(keys)))
}
