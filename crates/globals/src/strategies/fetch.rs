//! The `fetch` strategy: every access asks the operating system for this
//! thread's resource table through a thread-specific key, then indexes it
//! by resource id, as PHP 5's `TSRMLS_FETCH()` / `ts_resource_ex(0, NULL)`
//! did (`pthread_getspecific`, a call into libc, on every access).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;

use super::ThreadBound;
use crate::resources::{self, ThreadResources, CG_ID, EG_ID};
use crate::{CompilerGlobals, ExecutorGlobals, Globals, StartupError};

/// The thread-specific key (PHP's `tls_key`), created by the first
/// `thread_startup`, before any access can happen; a plain load on the
/// access path, as in PHP.
static KEY: AtomicU32 = AtomicU32::new(0);

fn create_key() {
    static CREATE: Once = Once::new();
    CREATE.call_once(|| {
        let mut key: libc::pthread_key_t = 0;
        // SAFETY: `key` is a valid out-pointer; no destructor is set (the
        // engine tears resources down explicitly).
        let rc = unsafe { libc::pthread_key_create(&mut key, None) };
        assert_eq!(rc, 0, "pthread_key_create failed");
        KEY.store(key, Ordering::Release);
    });
}

#[inline(always)]
fn key() -> libc::pthread_key_t {
    KEY.load(Ordering::Relaxed)
}

/// Reaches EG and CG through `pthread_getspecific` on every access.
#[derive(Clone, Copy, Debug)]
pub struct Fetch(ThreadBound);

#[inline(always)]
fn slot(id: usize) -> *mut u8 {
    // SAFETY: reading this thread's own key, created before any handle.
    let res = unsafe { libc::pthread_getspecific(key()) } as *mut ThreadResources;
    // SAFETY: `thread_startup` stored this thread's live resources under
    // the key; the handle exists only between startup and shutdown on this
    // thread.
    let storage = unsafe { (*res).storage };
    // SAFETY: `id` is a registered resource, inside the slot table.
    let slot = unsafe { storage.add(id - 1) };
    // SAFETY: a registered resource's slot holds its block.
    unsafe { *slot }
}

// SAFETY: see `slot`.
unsafe impl Globals for Fetch {
    const NAME: &'static str = "fetch";
    const DESCRIPTION: &'static str = "pthread_getspecific() on every access, then table[id] (PHP 5's TSRMLS_FETCH)";

    #[inline(always)]
    fn eg_ptr(self) -> *mut ExecutorGlobals {
        slot(EG_ID.load(Ordering::Relaxed)).cast()
    }

    #[inline(always)]
    fn cg_ptr(self) -> *mut CompilerGlobals {
        slot(CG_ID.load(Ordering::Relaxed)).cast()
    }

    fn thread_startup() -> Result<Fetch, StartupError> {
        resources::register_engine_globals();
        create_key();
        // SAFETY: reading this thread's own key.
        if !unsafe { libc::pthread_getspecific(key()) }.is_null() {
            return Err(StartupError::AlreadyStarted);
        }
        let res = resources::manager().thread_startup();
        // SAFETY: setting this thread's own key.
        let rc = unsafe { libc::pthread_setspecific(key(), res as *const libc::c_void) };
        assert_eq!(rc, 0, "pthread_setspecific failed");
        Ok(Fetch(ThreadBound::new()))
    }

    unsafe fn thread_shutdown(self) {
        // SAFETY: reading this thread's own key.
        let res = unsafe { libc::pthread_getspecific(key()) } as *mut ThreadResources;
        // SAFETY: clearing this thread's own key, before the resources it
        // held are freed.
        unsafe { libc::pthread_setspecific(key(), std::ptr::null()) };
        if !res.is_null() {
            // SAFETY: the key held this thread's resources, which the
            // caller's promise says nothing uses again.
            unsafe { resources::manager().thread_shutdown(res) };
        }
    }
}
