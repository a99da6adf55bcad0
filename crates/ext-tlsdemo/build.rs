//! Compiles the C counters: initial-exec always, TLSDESC where the C
//! compiler accepts `-mtls-dialect=gnu2` on x86-64 (then `cfg(tlsdemo_tlsdesc)`
//! enables `tlsdemo_tlsdesc()`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tlsdemo_tlsdesc)");
    println!("cargo::rerun-if-changed=c/initial_exec.c");
    println!("cargo::rerun-if-changed=c/tlsdesc.c");

    // -O2 and no forced frame pointer in every profile (cc forces one when
    // debug info is on; rustc does not), so the debug and release
    // libraries hold the same access sequences as the Rust code's.
    cc::Build::new()
        .file("c/initial_exec.c")
        .opt_level(2)
        .force_frame_pointer(false)
        .compile("tlsdemo_initial_exec");

    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let mut desc = cc::Build::new();
    desc.file("c/tlsdesc.c").opt_level(2).force_frame_pointer(false);
    if arch == "x86_64" && desc.is_flag_supported("-mtls-dialect=gnu2").unwrap_or(false) {
        desc.flag("-mtls-dialect=gnu2").compile("tlsdemo_tlsdesc");
        println!("cargo::rustc-cfg=tlsdemo_tlsdesc");
    } else {
        println!("cargo::warning=TLSDESC (-mtls-dialect=gnu2) not available: tlsdemo_tlsdesc() left out");
    }
}
