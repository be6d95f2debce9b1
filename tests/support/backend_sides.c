/* Two engine contexts over one model for the backend-comparison suites (backend_sides.h). */
#include "backend_sides.h"
#include "fixture_model.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

gguf_file *open_model(const char *name, char *path, size_t n)
{
    char *p = name[0] == '/' ? NULL : model_path(name); /* a path: a file a test wrote */
    if (name[0] == '/') {
        snprintf(path, n, "%s", name);
    } else if (p) {
        snprintf(path, n, "%s", p);
        free(p);
    } else {
        /* No shared models: our writer's llama-shaped fixture (F32, F16 and Q8_0 weights). */
        snprintf(path, n, "/tmp/ggufscope-backends-%d.gguf", (int)getpid());
        gguf_error ge;
        fixture_opts o = fixture_default_opts();
        cr_assert_eq(fixture_write_file(path, &o, &ge), GGUF_OK, "%s", ge.message);
    }
    gguf_file *f;
    gguf_error ge;
    cr_assert_eq(gguf_open(path, &f, &ge), GGUF_OK, "%s: %s", path, ge.message);
    return f;
}

side load_side(const gguf_file *f, kern_backend *be, int n_ctx, int batch)
{
    side s = { .be = be };
    engine_error e;
    cr_assert(s.be);
    cr_assert_eq(engine_model_load(f, s.be, &s.m, &e), ENGINE_OK, "%s", e.message);
    cr_assert_eq(engine_ctx_create(s.m, n_ctx, batch, &s.c, &e), ENGINE_OK, "%s", e.message);
    return s;
}

side make_side(const gguf_file *f, const char *fault, int n_ctx, int batch)
{
    kern_backend *be = kern_cpu_create(2);
    cr_assert(be);
    if (fault) {
        be = kern_fault_wrap(be, fault);
        cr_assert(be, "fault %s", fault);
    }
    return load_side(f, be, n_ctx, batch);
}

void free_side(side *s)
{
    engine_ctx_free(s->c);
    engine_model_free(s->m);
    s->be->destroy(s->be);
}

static const int32_t prompt[] = { 1, 15043, 3186, 29892, 920, 526, 366, 2599, 29973, 13 };

void tokens_for(const gguf_file *f, int32_t *out, size_t n)
{
    engine_hparams hp;
    engine_error e;
    cr_assert_eq(engine_hparams_read(f, &hp, &e), ENGINE_OK);
    const gguf_tensor *t = gguf_tensor_by_name(f, "token_embd.weight");
    for (size_t i = 0; i < n; i++)
        out[i] = prompt[i] % (int32_t)t->ne[1];
}

engine_comparison compare(const char *model, const char *fault, int chunk, char *path, size_t path_len)
{
    gguf_file *f = open_model(model, path, path_len);
    int32_t toks[10];
    tokens_for(f, toks, 10);
    side a = make_side(f, NULL, 32, chunk), b = make_side(f, fault, 32, chunk);
    engine_comparison r;
    engine_error e;
    cr_assert_eq(engine_compare(a.c, b.c, toks, 10, 6, chunk, 1e-3f, &r, &e), ENGINE_OK, "%s", e.message);
    free_side(&a);
    free_side(&b);
    gguf_close(f);
    return r;
}
