//! The host side of the extension ABI: the [`HostApi`] table an extension
//! calls back into, one table per globals strategy (every function is
//! generic over `G`, so a host call reaches EG through the same accessor
//! as the rest of the VM), and the per-call state behind `CallInfo::call`.
//!
//! Values stay on this side: a [`Val`] handle `i < argc` is argument `i`,
//! larger ones index the values the extension made during the call. Bad
//! handles read as `null` and writes to them are ignored, so a buggy
//! extension gets wrong results, not memory errors in the host.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use minizts_core::{KeyRef, PhpArray, PhpStr, Value};
use minizts_ext_api::{value_type, HostApi, ThreadResources, Val, API_VERSION, NO_VAL};
use minizts_globals::resources::{self, ResourceId};
use minizts_globals::Globals;

use crate::builtins::{Args, BuiltinInfo};
use crate::error::{fatal, VmError};

/// One extension call's state (what `CallInfo::call` points at).
pub(crate) struct HostCall<'a, G> {
    pub g: G,
    pub args: &'a mut [Value],
    pub info: &'static BuiltinInfo,
    /// The module's name, for panic reports.
    pub module: &'static str,
    /// Values the extension made, handles `argc..`.
    pub values: Vec<Value>,
    /// Strings handed out as pointers, kept alive until the call returns.
    pub keep: Vec<PhpStr>,
    pub ret: Value,
    /// The first error raised; the call fails with it.
    pub error: Option<Box<VmError>>,
    /// A panic caught inside a host function, resumed after the handler.
    pub panic: Option<Box<dyn std::any::Any + Send>>,
}

impl<G: Globals> HostCall<'_, G> {
    fn get(&self, v: Val) -> Value {
        let i = v as usize;
        match self.args.get(i) {
            Some(a) => a.deref_clone(),
            None => self.values.get(i - self.args.len()).cloned().unwrap_or(Value::Null),
        }
    }

    fn slot(&mut self, v: Val) -> Option<&mut Value> {
        let i = v as usize;
        let n = self.args.len();
        if i < n {
            Some(&mut self.args[i])
        } else {
            self.values.get_mut(i - n)
        }
    }

    fn add(&mut self, v: Value) -> Val {
        let h = self.args.len() + self.values.len();
        if h >= NO_VAL as usize {
            return NO_VAL;
        }
        self.values.push(v);
        h as Val
    }

    fn raise(&mut self, e: Box<VmError>) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    fn arguments(&mut self) -> Args<'_> {
        Args {
            v: self.args,
            info: self.info,
            from_script: true,
        }
    }

    /// Keeps `s` alive for the call and returns its bytes.
    fn hand_out(&mut self, s: PhpStr, len: *mut usize) -> *const u8 {
        // SAFETY: the extension passes a valid place for the length.
        unsafe { *len = s.len() };
        let p = s.as_ptr();
        self.keep.push(s);
        p
    }
}

/// Runs `f` on the running call's state, or returns `fallback` without
/// running it: when `call` is null (a hook calling a function that needs
/// a call), or after a panic inside an earlier host function of this
/// call. Host functions are `extern "C"`, so a panic in the engine code
/// they run (a bug in minizts) must not unwind out of them: it is caught
/// here and recorded, and `extensions::call` resumes it once the handler
/// has returned, where the runner's request guard sees it.
///
/// # Safety
/// `call` is null or the `CallInfo::call` of a running extension call
/// under `G`.
unsafe fn with_state<'c, G: Globals, R>(
    call: *mut c_void,
    fallback: R,
    f: impl FnOnce(&mut HostCall<'c, G>) -> R,
) -> R {
    let p = call.cast::<HostCall<'c, G>>();
    // SAFETY: the caller's contract; the host made `call` from a
    // `HostCall<G>` that outlives the handler.
    if p.is_null() || unsafe { (*p).panic.is_some() } {
        return fallback;
    }
    // SAFETY: as above; no other reference to the state is alive while a
    // host function runs (handlers only hold the opaque pointer).
    match catch_unwind(AssertUnwindSafe(|| f(unsafe { &mut *p }))) {
        Ok(r) => r,
        Err(payload) => {
            // SAFETY: as above.
            unsafe { (*p).panic = Some(payload) };
            fallback
        }
    }
}

fn bytes<'b>(s: *const u8, len: usize) -> &'b [u8] {
    if s.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the extension passes a valid buffer of `len` bytes.
        unsafe { std::slice::from_raw_parts(s, len) }
    }
}

unsafe extern "C" fn strategy_name<G: Globals>() -> *const c_char {
    let name: &'static CStr = match G::NAME {
        "nts" => c"nts",
        "ctx" => c"ctx",
        "fetch" => c"fetch",
        "table" => c"table",
        "offset" => c"offset",
        "tls" => c"tls",
        _ => c"unknown",
    };
    name.as_ptr()
}

unsafe extern "C" fn thread_resources() -> *mut ThreadResources {
    resources::current().cast()
}

unsafe extern "C" fn module_globals(id: ResourceId) -> *mut c_void {
    let res = resources::current();
    if res.is_null() || id == 0 || id > resources::MAX_RESOURCES {
        return std::ptr::null_mut();
    }
    // SAFETY: `res` is this thread's live table with room for every id;
    // an id not yet allocated reads as null.
    unsafe { (*(*res).storage.add(id - 1)).cast() }
}

unsafe extern "C" fn memory_usage() -> usize {
    minizts_globals::memory::usage()
}

impl<G: Globals> HostCall<'_, G> {
    /// Argument `i` must have been passed: asking for one that was not is
    /// a bug in the extension (optional parameters are checked with
    /// `argc` first), reported as a fatal error rather than a silent null.
    fn has_arg(&mut self, i: u32) -> bool {
        if (i as usize) < self.args.len() {
            return true;
        }
        let message = format!(
            "{}(): the extension read argument #{} but only {} were passed",
            self.info.name,
            i + 1,
            self.args.len()
        );
        self.raise(fatal::<()>(message).unwrap_err());
        false
    }
}

macro_rules! arg_fn {
    ($name:ident, $ty:ty, $method:ident) => {
        unsafe extern "C" fn $name<G: Globals>(call: *mut c_void, i: u32, out: *mut $ty) -> bool {
            // SAFETY: the host passed `call` to this extension call.
            unsafe {
                with_state::<G, _>(call, false, |st| {
                    if !st.has_arg(i) {
                        return false;
                    }
                    let g = st.g;
                    match st.arguments().$method(g, i as usize) {
                        Ok(v) => {
                            // SAFETY: the extension passes a valid place.
                            *out = v;
                            true
                        }
                        Err(e) => {
                            st.raise(e);
                            false
                        }
                    }
                })
            }
        }
    };
}

arg_fn!(arg_long, i64, int);
arg_fn!(arg_double, f64, float);
arg_fn!(arg_bool, bool, bool);

unsafe extern "C" fn arg_string<G: Globals>(call: *mut c_void, i: u32, len: *mut usize) -> *const u8 {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, std::ptr::null(), |st| {
            if !st.has_arg(i) {
                return std::ptr::null();
            }
            let g = st.g;
            match st.arguments().str(g, i as usize) {
                Ok(s) => st.hand_out(s, len),
                Err(e) => {
                    st.raise(e);
                    std::ptr::null()
                }
            }
        })
    }
}

unsafe extern "C" fn arg_array<G: Globals>(call: *mut c_void, i: u32) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, NO_VAL, |st| {
            if !st.has_arg(i) {
                return NO_VAL;
            }
            match st.arguments().array(i as usize) {
                Ok(_) => i,
                Err(e) => {
                    st.raise(e);
                    NO_VAL
                }
            }
        })
    }
}

unsafe extern "C" fn arg_callable<G: Globals>(call: *mut c_void, i: u32) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, NO_VAL, |st| {
            if !st.has_arg(i) {
                return NO_VAL;
            }
            let g = st.g;
            match st.arguments().callable(g, i as usize) {
                Ok(_) => i,
                Err(e) => {
                    st.raise(e);
                    NO_VAL
                }
            }
        })
    }
}

unsafe extern "C" fn type_of<G: Globals>(call: *mut c_void, v: Val) -> u32 {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, value_type::NULL, |st| match st.get(v) {
            Value::Bool(_) => value_type::BOOL,
            Value::Int(_) => value_type::LONG,
            Value::Float(_) => value_type::DOUBLE,
            Value::Str(_) => value_type::STRING,
            Value::Arr(_) => value_type::ARRAY,
            Value::Closure(_) => value_type::CLOSURE,
            _ => value_type::NULL,
        })
    }
}

unsafe extern "C" fn to_long<G: Globals>(call: *mut c_void, v: Val) -> i64 {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { with_state::<G, _>(call, 0, |st| st.get(v).to_int()) }
}

unsafe extern "C" fn to_double<G: Globals>(call: *mut c_void, v: Val) -> f64 {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { with_state::<G, _>(call, 0.0, |st| st.get(v).to_float()) }
}

unsafe extern "C" fn to_bool<G: Globals>(call: *mut c_void, v: Val) -> bool {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { with_state::<G, _>(call, false, |st| st.get(v).to_bool()) }
}

unsafe extern "C" fn to_string<G: Globals>(call: *mut c_void, v: Val, len: *mut usize) -> *const u8 {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, std::ptr::null(), |st| {
            let value = st.get(v);
            match crate::ops::to_str(st.g, &value) {
                Ok(s) => st.hand_out(s, len),
                Err(e) => {
                    st.raise(e);
                    std::ptr::null()
                }
            }
        })
    }
}

unsafe extern "C" fn new_null<G: Globals>(call: *mut c_void) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { with_state::<G, _>(call, NO_VAL, |st| st.add(Value::Null)) }
}

unsafe extern "C" fn new_bool<G: Globals>(call: *mut c_void, b: bool) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { with_state::<G, _>(call, NO_VAL, |st| st.add(Value::Bool(b))) }
}

unsafe extern "C" fn new_long<G: Globals>(call: *mut c_void, n: i64) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { with_state::<G, _>(call, NO_VAL, |st| st.add(Value::Int(n))) }
}

unsafe extern "C" fn new_double<G: Globals>(call: *mut c_void, d: f64) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { with_state::<G, _>(call, NO_VAL, |st| st.add(Value::Float(d))) }
}

unsafe extern "C" fn new_string<G: Globals>(call: *mut c_void, s: *const u8, len: usize) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, NO_VAL, |st| {
            if let Err(e) = crate::limits::reserve(st.g, len) {
                st.raise(e);
                return NO_VAL;
            }
            st.add(Value::Str(PhpStr::from(bytes(s, len))))
        })
    }
}

unsafe extern "C" fn new_array<G: Globals>(call: *mut c_void) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { with_state::<G, _>(call, NO_VAL, |st| st.add(Value::arr(PhpArray::new()))) }
}

unsafe extern "C" fn array_count<G: Globals>(call: *mut c_void, a: Val) -> usize {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, 0, |st| match st.get(a) {
            Value::Arr(arr) => arr.len(),
            _ => 0,
        })
    }
}

unsafe extern "C" fn array_next<G: Globals>(
    call: *mut c_void,
    a: Val,
    cursor: *mut usize,
    key: *mut Val,
    value: *mut Val,
) -> bool {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, false, |st| {
            let Value::Arr(arr) = st.get(a) else {
                return false;
            };
            // SAFETY: the extension passes valid places.
            let at = *cursor;
            let Some((pos, k, v)) = arr.at_or_after(at) else {
                return false;
            };
            let k = match k {
                KeyRef::Int(n) => Value::Int(n),
                KeyRef::Str(s) => Value::Str(s.clone()),
            };
            let v = v.deref_clone();
            let (kh, vh) = (st.add(k), st.add(v));
            *cursor = pos + 1;
            *key = kh;
            *value = vh;
            true
        })
    }
}

unsafe extern "C" fn array_push<G: Globals>(call: *mut c_void, a: Val, v: Val) -> bool {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, false, |st| {
            let value = st.get(v);
            let g = st.g;
            let Some(Value::Arr(arr)) = st.slot(a) else {
                return false;
            };
            if Rc::make_mut(arr).push(value).is_ok() {
                return true;
            }
            crate::error::warning(
                g,
                "Cannot add element to the array as the next element is already occupied",
            );
            false
        })
    }
}

unsafe extern "C" fn array_set<G: Globals>(call: *mut c_void, a: Val, k: Val, v: Val) -> bool {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, false, |st| {
            let (key, value, g) = (st.get(k), st.get(v), st.g);
            let key = match crate::dim::to_key(g, &key) {
                Ok(key) => key,
                Err(e) => {
                    st.raise(e);
                    return false;
                }
            };
            match st.slot(a) {
                Some(Value::Arr(arr)) => {
                    Rc::make_mut(arr).insert(key, value);
                    true
                }
                _ => false,
            }
        })
    }
}

unsafe extern "C" fn set_return<G: Globals>(call: *mut c_void, v: Val) {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { with_state::<G, _>(call, (), |st| st.ret = st.get(v)) }
}

unsafe extern "C" fn echo<G: Globals>(call: *mut c_void, s: *const u8, len: usize) {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { with_state::<G, _>(call, (), |st| crate::output::write(st.g, bytes(s, len))) }
}

unsafe extern "C" fn warning<G: Globals>(call: *mut c_void, s: *const u8, len: usize) {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, (), |st| {
            crate::error::warning(st.g, &String::from_utf8_lossy(bytes(s, len)))
        })
    }
}

unsafe extern "C" fn raise_fatal<G: Globals>(call: *mut c_void, s: *const u8, len: usize) {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, (), |st| {
            let message = String::from_utf8_lossy(bytes(s, len)).into_owned();
            st.raise(fatal::<()>(message).unwrap_err());
        })
    }
}

unsafe extern "C" fn panicked<G: Globals>(call: *mut c_void, s: *const u8, len: usize) {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, (), |st| {
            let message = format!(
                "Extension '{}' panicked in {}(): {}",
                st.module,
                st.info.name,
                String::from_utf8_lossy(bytes(s, len))
            );
            // A panic replaces whatever error was raised before it: it is
            // what ended the call.
            st.error = Some(fatal::<()>(message).unwrap_err());
        })
    }
}

unsafe extern "C" fn call_callable<G: Globals>(
    call: *mut c_void,
    f: Val,
    args: *const Val,
    argc: u32,
    result: *mut Val,
) -> bool {
    // SAFETY: the host passed `call` to this extension call.
    unsafe {
        with_state::<G, _>(call, false, |st| {
            // Like `zend_call_function` with `EG(exception)` set: once an
            // error is raised (or the script exited), no more script code
            // runs in this call.
            if st.error.is_some() {
                return false;
            }
            let g = st.g;
            let handles: &[Val] = if args.is_null() || argc == 0 {
                &[]
            } else {
                // SAFETY: the extension passes `argc` handles.
                std::slice::from_raw_parts(args, argc as usize)
            };
            let values: Vec<Value> = handles.iter().map(|&h| st.get(h)).collect();
            let callee = st.get(f);
            let r = crate::call::resolve_callable(g, &callee).and_then(|c| crate::call::call_resolved(g, &c, values));
            match r {
                Ok(v) => {
                    let h = st.add(v);
                    *result = h;
                    true
                }
                Err(e) => {
                    st.raise(e);
                    false
                }
            }
        })
    }
}

/// The host table for strategy `G`.
pub fn table<G: Globals>() -> &'static HostApi {
    const {
        &HostApi {
            api_version: API_VERSION,
            size: std::mem::size_of::<HostApi>() as u32,
            strategy: strategy_name::<G>,
            thread_resources,
            module_globals,
            memory_usage,
            arg_long: arg_long::<G>,
            arg_double: arg_double::<G>,
            arg_bool: arg_bool::<G>,
            arg_string: arg_string::<G>,
            arg_array: arg_array::<G>,
            arg_callable: arg_callable::<G>,
            value_type: type_of::<G>,
            to_long: to_long::<G>,
            to_double: to_double::<G>,
            to_bool: to_bool::<G>,
            to_string: to_string::<G>,
            new_null: new_null::<G>,
            new_bool: new_bool::<G>,
            new_long: new_long::<G>,
            new_double: new_double::<G>,
            new_string: new_string::<G>,
            new_array: new_array::<G>,
            array_count: array_count::<G>,
            array_next: array_next::<G>,
            array_push: array_push::<G>,
            array_set: array_set::<G>,
            set_return: set_return::<G>,
            echo: echo::<G>,
            warning: warning::<G>,
            fatal: raise_fatal::<G>,
            panicked: panicked::<G>,
            call: call_callable::<G>,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use minizts_globals::Tls;

    /// A panic inside a host function is caught and recorded (it must not
    /// unwind out of an `extern "C"` function), later host calls of the
    /// same call do nothing, and a null call (a hook) is refused.
    #[test]
    fn panics_in_host_functions_are_recorded_not_unwound() {
        std::thread::spawn(|| {
            let g: Tls = crate::thread_startup().unwrap();
            let info: &'static BuiltinInfo = Box::leak(Box::new(BuiltinInfo {
                name: "t",
                params: &[],
                min: 0,
                by_ref: 0,
                variadic: false,
            }));
            let mut args = [Value::Int(7)];
            let mut st = HostCall {
                g,
                args: &mut args,
                info,
                module: "m",
                values: Vec::new(),
                keep: Vec::new(),
                ret: Value::Null,
                error: None,
                panic: None,
            };
            let call = (&mut st as *mut HostCall<'_, Tls>).cast::<c_void>();
            // SAFETY: `call` is a live HostCall<Tls> on this thread.
            unsafe {
                assert_eq!(with_state::<Tls, _>(call, 0, |st| st.get(0).to_int()), 7);
                let r = with_state::<Tls, _>(call, -1, |_| -> i64 { panic!("engine bug") });
                assert_eq!(r, -1);
                assert!((*call.cast::<HostCall<'_, Tls>>()).panic.is_some());
                // Nothing runs after the panic.
                assert_eq!(with_state::<Tls, _>(call, -2, |st| st.get(0).to_int()), -2);
                assert_eq!(with_state::<Tls, _>(std::ptr::null_mut(), -3, |_| 0), -3);
            }
            drop(st);
            // SAFETY: `g` is not used after this.
            unsafe { crate::thread_shutdown(g) };
        })
        .join()
        .unwrap();
    }
}
