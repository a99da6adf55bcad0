//! One EG field read per strategy, compiled as the engine compiles it and
//! kept as its own symbol, so `scripts/globals-disasm.sh` can show (with
//! objdump) the machine code each strategy costs per access. The field is
//! the VM's interrupt flag, which it reads at every backward jump and
//! call.

use std::sync::atomic::Ordering;

use crate::strategies::{Ctx, Fetch, Nts, Offset, Table, Tls};
use crate::{eg, Globals, StartupError};

#[inline(always)]
fn read_interrupt<G: Globals>(g: G) -> bool {
    eg!(g).interrupt.pending.load(Ordering::Relaxed)
}

macro_rules! probes {
    ($($name:ident: $ty:ty;)*) => {
        $(
            #[doc = concat!("Reads EG's interrupt flag through `", stringify!($ty), "`.")]
            #[inline(never)]
            #[no_mangle]
            pub fn $name(g: $ty) -> bool {
                read_interrupt(g)
            }
        )*
    };
}

probes! {
    minizts_probe_nts: Nts;
    minizts_probe_ctx: Ctx;
    minizts_probe_fetch: Fetch;
    minizts_probe_table: Table;
    minizts_probe_offset: Offset;
    minizts_probe_tls: Tls;
}

fn run_one<G: Globals>(probe: fn(G) -> bool) -> Result<bool, StartupError> {
    let g = G::thread_startup()?;
    let v = probe(g);
    // SAFETY: `g` is not used after this.
    unsafe { g.thread_shutdown() };
    Ok(v)
}

/// Starts strategy `name` on this thread, runs its probe, shuts it down.
pub fn run(name: &str) -> Result<bool, StartupError> {
    match name {
        "nts" => run_one::<Nts>(minizts_probe_nts),
        "ctx" => run_one::<Ctx>(minizts_probe_ctx),
        "fetch" => run_one::<Fetch>(minizts_probe_fetch),
        "table" => run_one::<Table>(minizts_probe_table),
        "offset" => run_one::<Offset>(minizts_probe_offset),
        _ => run_one::<Tls>(minizts_probe_tls),
    }
}
