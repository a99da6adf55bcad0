//! Compiles the C file that holds the big initial-exec TLS array.

fn main() {
    println!("cargo::rerun-if-changed=c/bigtls.c");
    cc::Build::new().file("c/bigtls.c").opt_level(2).compile("bigtls");
}
