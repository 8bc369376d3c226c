/* Test-only NIF: the VM's own `%T` text of a term, the reference the
 * formatter is compared with. Never shipped in priv/. */
#include <erl_nif.h>
#include <string.h>

static ERL_NIF_TERM text(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    size_t size = 1 << 16;
    ErlNifBinary bin;
    (void)argc;
    for (;;) {
        if (!enif_alloc_binary(size, &bin))
            return enif_make_badarg(env);
        memset(bin.data, 0, size);
        enif_snprintf((char *)bin.data, size, "%T", argv[0]);
        /* The return value is not reliable when the text is cut: look at the
         * buffer itself, and retry bigger while it is full. */
        size_t len = strnlen((char *)bin.data, size);
        if (len + 1 < size) {
            enif_realloc_binary(&bin, len);
            return enif_make_binary(env, &bin);
        }
        enif_release_binary(&bin);
        size *= 4;
    }
}

/* `%.*T` with a precision: the VM's own cut, used to probe its printer. */
static ERL_NIF_TERM text_prec(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
    char buf[4096];
    int prec;
    (void)argc;
    if (!enif_get_int(env, argv[1], &prec))
        return enif_make_badarg(env);
    memset(buf, 0, sizeof buf);
    enif_snprintf(buf, sizeof buf, "%.*T", prec, argv[0]);
    ErlNifBinary bin;
    size_t len = strnlen(buf, sizeof buf);
    enif_alloc_binary(len, &bin);
    memcpy(bin.data, buf, len);
    return enif_make_binary(env, &bin);
}

static ErlNifFunc funcs[] = {
    {"text", 1, text, 0},
    {"text_prec", 2, text_prec, 0},
};

ERL_NIF_INIT(format_oracle, funcs, NULL, NULL, NULL, NULL)
