/* The initial-exec counter of minizts-ext-tlsdemo (variant b).
 *
 * Stable Rust cannot choose a TLS model (`-Z tls-model` is nightly), so
 * this counter is C. `tls_model("initial-exec")` makes the compiler read
 * the variable's offset from the thread pointer out of the GOT (one
 * R_X86_64_TPOFF64 relocation, filled in by the dynamic linker) and
 * access it `%fs`-relative: no call. The linker marks the library
 * DF_STATIC_TLS, and glibc must then place the library's whole TLS block
 * in the static TLS surplus when it is dlopen'ed (docs/tls-models.md). */

static __thread long counter __attribute__((tls_model("initial-exec")));

long tlsdemo_inc_initial_exec(void)
{
    return ++counter;
}

long tlsdemo_get_initial_exec(void)
{
    return counter;
}

void tlsdemo_set_initial_exec(long value)
{
    counter = value;
}
