//! preg_split (php_pcre.c's `php_pcre_split_impl`): the pieces between
//! matches, with the limit, NO_EMPTY, DELIM_CAPTURE and OFFSET_CAPTURE.

use minizts_core::{PhpArray, Value};
use minizts_globals::Globals;

use super::ffi::{PCRE2_ERROR_NOMATCH, PCRE2_NO_UTF_CHECK};
use super::matching::offset_pair;
use super::{
    compile, last_error, set_error, set_exec_error, Matcher, INTERNAL_ERROR, NO_ERROR, PREG_SPLIT_DELIM_CAPTURE,
    PREG_SPLIT_NO_EMPTY, PREG_SPLIT_OFFSET_CAPTURE,
};
use crate::builtins::Args;
use crate::error::VmResult;
use crate::limits::Ticker;

pub(super) fn preg_split<G: Globals>(g: G, a: &mut Args) -> VmResult<Value> {
    let regex = a.str(g, 0)?;
    let subject = a.str(g, 1)?;
    let mut limit = if a.has(2) && a.value(2).is_null() {
        -1
    } else {
        a.opt_int(g, 2, -1)?
    };
    let flags = a.opt_int(g, 3, 0)?;
    let Some(pattern) = compile(g, a.name(), &regex) else {
        return Ok(Value::Bool(false));
    };
    let no_empty = flags & PREG_SPLIT_NO_EMPTY != 0;
    let delim_capture = flags & PREG_SPLIT_DELIM_CAPTURE != 0;
    let offset_capture = flags & PREG_SPLIT_OFFSET_CAPTURE != 0;
    let s: &[u8] = &subject;
    let len = s.len();
    let mut out = PhpArray::new();
    let piece = |out: &mut PhpArray, from: usize, to: usize| {
        let v = if offset_capture {
            offset_pair(s, from, to, false)
        } else {
            Value::str(&s[from..to])
        };
        let _ = out.push(v);
    };
    set_error(g, NO_ERROR);
    if limit == 0 {
        limit = -1;
    }
    let mut last_match = 0usize;
    if limit == -1 || limit > 1 {
        let Some(mut m) = Matcher::new(g, &pattern, s) else {
            return Ok(Value::Bool(false));
        };
        let mut ticker = Ticker::new();
        let mut start;
        let mut rc = m.exec(0, pattern.first_options());
        'outer: loop {
            if rc >= 0 {
                loop {
                    ticker.tick(g)?;
                    let count = if rc == 0 { pattern.groups } else { rc as usize };
                    let ov = m.ovector().to_vec();
                    if ov[1] < ov[0] {
                        set_error(g, INTERNAL_ERROR);
                        break 'outer;
                    }
                    if !no_empty || ov[0] != last_match {
                        piece(&mut out, last_match, ov[0]);
                        if limit != -1 {
                            limit -= 1;
                        }
                    }
                    if delim_capture {
                        for i in 1..count {
                            if !no_empty || ov[2 * i] != ov[2 * i + 1] {
                                if offset_capture {
                                    let _ = out.push(offset_pair(s, ov[2 * i], ov[2 * i + 1], false));
                                } else {
                                    let _ = out.push(super::matching::group_text(s, ov[2 * i], ov[2 * i + 1]));
                                }
                            }
                        }
                    }
                    start = ov[1];
                    last_match = ov[1];
                    if start == ov[0] {
                        if limit != -1 && limit <= 1 {
                            break 'outer;
                        }
                        rc = m.exec_not_empty(start);
                        if rc >= 0 {
                            continue;
                        } else if rc == PCRE2_ERROR_NOMATCH {
                            if start < len {
                                start += pattern.unit_len(s, start);
                            } else {
                                break 'outer;
                            }
                        } else {
                            set_exec_error(g, rc);
                            break 'outer;
                        }
                    }
                    break;
                }
            } else if rc == PCRE2_ERROR_NOMATCH {
                break;
            } else {
                set_exec_error(g, rc);
                break;
            }
            if limit != -1 && limit <= 1 {
                break;
            }
            rc = m.exec(start, PCRE2_NO_UTF_CHECK);
        }
        if last_error(g) != NO_ERROR {
            return Ok(Value::Bool(false));
        }
    }
    if !no_empty || last_match < len {
        if offset_capture || last_match != 0 {
            piece(&mut out, last_match, len);
        } else {
            let _ = out.push(Value::Str(subject.clone()));
        }
    }
    Ok(Value::arr(out))
}
