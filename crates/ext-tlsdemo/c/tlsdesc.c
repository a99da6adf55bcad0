/* The TLSDESC counter of minizts-ext-tlsdemo (variant f): the same code as
 * initial_exec.c with the default (dynamic) model, compiled with
 * -mtls-dialect=gnu2, so each access calls through a TLS descriptor that
 * the dynamic linker fills in: a static one (return a constant offset)
 * when the block sits in static TLS, a dynamic one (look the block up in
 * the DTV) otherwise. build.rs compiles it only where gcc accepts the
 * flag (x86-64). */

static __thread long counter;

long tlsdemo_inc_tlsdesc(void)
{
    return ++counter;
}

long tlsdemo_get_tlsdesc(void)
{
    return counter;
}

void tlsdemo_set_tlsdesc(long value)
{
    counter = value;
}
