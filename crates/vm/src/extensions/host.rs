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

/// # Safety
/// `call` is the `CallInfo::call` of a running extension call under `G`.
unsafe fn state<'c, G: Globals>(call: *mut c_void) -> &'c mut HostCall<'c, G> {
    // SAFETY: the caller's contract; the host made it from a `HostCall<G>`.
    unsafe { &mut *call.cast::<HostCall<'c, G>>() }
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

macro_rules! arg_fn {
    ($name:ident, $ty:ty, $method:ident) => {
        unsafe extern "C" fn $name<G: Globals>(call: *mut c_void, i: u32, out: *mut $ty) -> bool {
            // SAFETY: the host passed `call` to this extension call.
            let st = unsafe { state::<G>(call) };
            let g = st.g;
            if i as usize >= st.args.len() {
                return false;
            }
            match st.arguments().$method(g, i as usize) {
                Ok(v) => {
                    // SAFETY: the extension passes a valid place.
                    unsafe { *out = v };
                    true
                }
                Err(e) => {
                    st.raise(e);
                    false
                }
            }
        }
    };
}

arg_fn!(arg_long, i64, int);
arg_fn!(arg_double, f64, float);
arg_fn!(arg_bool, bool, bool);

unsafe extern "C" fn arg_string<G: Globals>(call: *mut c_void, i: u32, len: *mut usize) -> *const u8 {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    let g = st.g;
    if i as usize >= st.args.len() {
        return std::ptr::null();
    }
    match st.arguments().str(g, i as usize) {
        Ok(s) => st.hand_out(s, len),
        Err(e) => {
            st.raise(e);
            std::ptr::null()
        }
    }
}

unsafe extern "C" fn arg_array<G: Globals>(call: *mut c_void, i: u32) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    if i as usize >= st.args.len() {
        return NO_VAL;
    }
    match st.arguments().array(i as usize) {
        Ok(_) => i,
        Err(e) => {
            st.raise(e);
            NO_VAL
        }
    }
}

unsafe extern "C" fn arg_callable<G: Globals>(call: *mut c_void, i: u32) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    let g = st.g;
    if i as usize >= st.args.len() {
        return NO_VAL;
    }
    match st.arguments().callable(g, i as usize) {
        Ok(_) => i,
        Err(e) => {
            st.raise(e);
            NO_VAL
        }
    }
}

unsafe extern "C" fn type_of<G: Globals>(call: *mut c_void, v: Val) -> u32 {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    match st.get(v) {
        Value::Bool(_) => value_type::BOOL,
        Value::Int(_) => value_type::LONG,
        Value::Float(_) => value_type::DOUBLE,
        Value::Str(_) => value_type::STRING,
        Value::Arr(_) => value_type::ARRAY,
        Value::Closure(_) => value_type::CLOSURE,
        _ => value_type::NULL,
    }
}

unsafe extern "C" fn to_long<G: Globals>(call: *mut c_void, v: Val) -> i64 {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { state::<G>(call) }.get(v).to_int()
}

unsafe extern "C" fn to_double<G: Globals>(call: *mut c_void, v: Val) -> f64 {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { state::<G>(call) }.get(v).to_float()
}

unsafe extern "C" fn to_bool<G: Globals>(call: *mut c_void, v: Val) -> bool {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { state::<G>(call) }.get(v).to_bool()
}

unsafe extern "C" fn to_string<G: Globals>(call: *mut c_void, v: Val, len: *mut usize) -> *const u8 {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    let value = st.get(v);
    match crate::ops::to_str(st.g, &value) {
        Ok(s) => st.hand_out(s, len),
        Err(e) => {
            st.raise(e);
            std::ptr::null()
        }
    }
}

unsafe extern "C" fn new_null<G: Globals>(call: *mut c_void) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { state::<G>(call) }.add(Value::Null)
}

unsafe extern "C" fn new_bool<G: Globals>(call: *mut c_void, b: bool) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { state::<G>(call) }.add(Value::Bool(b))
}

unsafe extern "C" fn new_long<G: Globals>(call: *mut c_void, n: i64) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { state::<G>(call) }.add(Value::Int(n))
}

unsafe extern "C" fn new_double<G: Globals>(call: *mut c_void, d: f64) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { state::<G>(call) }.add(Value::Float(d))
}

unsafe extern "C" fn new_string<G: Globals>(call: *mut c_void, s: *const u8, len: usize) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    if let Err(e) = crate::builtins::reserve(st.g, len) {
        st.raise(e);
        return NO_VAL;
    }
    st.add(Value::Str(PhpStr::from(bytes(s, len))))
}

unsafe extern "C" fn new_array<G: Globals>(call: *mut c_void) -> Val {
    // SAFETY: the host passed `call` to this extension call.
    unsafe { state::<G>(call) }.add(Value::arr(PhpArray::new()))
}

unsafe extern "C" fn array_count<G: Globals>(call: *mut c_void, a: Val) -> usize {
    // SAFETY: the host passed `call` to this extension call.
    match unsafe { state::<G>(call) }.get(a) {
        Value::Arr(arr) => arr.len(),
        _ => 0,
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
    let st = unsafe { state::<G>(call) };
    let Value::Arr(arr) = st.get(a) else {
        return false;
    };
    // SAFETY: the extension passes valid places.
    let at = unsafe { *cursor };
    let Some((pos, k, v)) = arr.at_or_after(at) else {
        return false;
    };
    let k = match k {
        KeyRef::Int(n) => Value::Int(n),
        KeyRef::Str(s) => Value::Str(s.clone()),
    };
    let v = v.deref_clone();
    let (kh, vh) = (st.add(k), st.add(v));
    // SAFETY: as above.
    unsafe {
        *cursor = pos + 1;
        *key = kh;
        *value = vh;
    }
    true
}

unsafe extern "C" fn array_push<G: Globals>(call: *mut c_void, a: Val, v: Val) -> bool {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    let value = st.get(v);
    let Some(Value::Arr(arr)) = st.slot(a) else {
        return false;
    };
    if Rc::make_mut(arr).push(value).is_ok() {
        return true;
    }
    let g = st.g;
    crate::error::warning(
        g,
        "Cannot add element to the array as the next element is already occupied",
    );
    false
}

unsafe extern "C" fn array_set<G: Globals>(call: *mut c_void, a: Val, k: Val, v: Val) -> bool {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
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
}

unsafe extern "C" fn set_return<G: Globals>(call: *mut c_void, v: Val) {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    st.ret = st.get(v);
}

unsafe extern "C" fn echo<G: Globals>(call: *mut c_void, s: *const u8, len: usize) {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    crate::output::write(st.g, bytes(s, len));
}

unsafe extern "C" fn warning<G: Globals>(call: *mut c_void, s: *const u8, len: usize) {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    crate::error::warning(st.g, &String::from_utf8_lossy(bytes(s, len)));
}

unsafe extern "C" fn raise_fatal<G: Globals>(call: *mut c_void, s: *const u8, len: usize) {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    let message = String::from_utf8_lossy(bytes(s, len)).into_owned();
    st.raise(fatal::<()>(message).unwrap_err());
}

unsafe extern "C" fn panicked<G: Globals>(call: *mut c_void, s: *const u8, len: usize) {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    let message = format!(
        "Extension '{}' panicked in {}(): {}",
        st.module,
        st.info.name,
        String::from_utf8_lossy(bytes(s, len))
    );
    // A panic replaces whatever error was raised before it: it is what
    // ended the call.
    st.error = Some(fatal::<()>(message).unwrap_err());
}

unsafe extern "C" fn call_callable<G: Globals>(
    call: *mut c_void,
    f: Val,
    args: *const Val,
    argc: u32,
    result: *mut Val,
) -> bool {
    // SAFETY: the host passed `call` to this extension call.
    let st = unsafe { state::<G>(call) };
    let g = st.g;
    let handles: &[Val] = if args.is_null() || argc == 0 {
        &[]
    } else {
        // SAFETY: the extension passes `argc` handles.
        unsafe { std::slice::from_raw_parts(args, argc as usize) }
    };
    let values: Vec<Value> = handles.iter().map(|&h| st.get(h)).collect();
    let callee = st.get(f);
    let r = crate::call::resolve_callable(g, &callee).and_then(|c| crate::call::call_resolved(g, &c, values));
    match r {
        Ok(v) => {
            let h = st.add(v);
            // SAFETY: the extension passes a valid place.
            unsafe { *result = h };
            true
        }
        Err(e) => {
            st.raise(e);
            false
        }
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
