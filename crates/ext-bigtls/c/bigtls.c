/* The big initial-exec TLS block of minizts-ext-bigtls.
 *
 * 4096 bytes of initial-exec TLS: more than glibc's whole static TLS
 * surplus (1664 bytes by default, of which a dlopen'ed library may use
 * what libraries loaded before it left). dlopen then fails with "cannot
 * allocate memory in static TLS block" unless the process was started
 * with a larger GLIBC_TUNABLES=glibc.rtld.optional_static_tls. */

#define BIGTLS_SLOTS 512

static __thread long slots[BIGTLS_SLOTS] __attribute__((tls_model("initial-exec")));

/* Adds `i` to slot `i mod 512` and returns the slot's new value. */
long bigtls_touch_slot(long i)
{
    unsigned long k = (unsigned long)i % BIGTLS_SLOTS;
    slots[k] += i;
    return slots[k];
}

/* The size of the initial-exec block, in bytes. */
long bigtls_block_size(void)
{
    return (long)sizeof slots;
}
