//! `bigtls`: an extension whose initial-exec TLS block (4 KiB, in
//! `c/bigtls.c`) is bigger than glibc's static TLS surplus (1664 bytes by
//! default). A library with initial-exec TLS is marked `DF_STATIC_TLS`,
//! and when it is loaded with `dlopen` glibc must place its whole TLS
//! block in the surplus every thread already has; when it does not fit,
//! `dlopen` fails with "cannot allocate memory in static TLS block", and
//! the host adds the remedy (`GLIBC_TUNABLES=glibc.rtld.optional_static_tls=N`).
//! docs/tls-models.md shows both runs.

use minizts_ext_api::rust::{Call, Result};
use minizts_ext_api::{export_module, function, FunctionEntry, ModuleEntry, Val};

extern "C" {
    fn bigtls_touch_slot(i: i64) -> i64;
    fn bigtls_block_size() -> i64;
}

/// `bigtls_touch(int $i): int` — adds `$i` to slot `$i mod 512` of the
/// big thread-local array and returns the slot's new value.
fn touch(call: &Call) -> Result<Val> {
    let i = call.long(0)?;
    // SAFETY: a C function with no preconditions.
    Ok(call.new_long(unsafe { bigtls_touch_slot(i) }))
}

/// `bigtls_size(): int` — the size of the initial-exec block in bytes.
fn size(call: &Call) -> Result<Val> {
    // SAFETY: as above.
    Ok(call.new_long(unsafe { bigtls_block_size() }))
}

static FUNCTIONS: [FunctionEntry; 2] = [
    function!("bigtls_touch", "i", 1, touch),
    function!("bigtls_size", "", 0, size),
];

export_module!(ModuleEntry::new(c"bigtls", c"0.1.0", &FUNCTIONS));
