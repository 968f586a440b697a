/* Every op of the CUDA backend, forward and backward, against the CPU
 * backend (kernels/cpu/, the reference) on the same inputs: fresh random
 * values, rounded to bf16 on the host wherever the op takes bf16 (act)
 * operands, so that both backends see identical numbers and only the
 * arithmetic differs. Outputs an op overwrites are filled with NaN first,
 * on both sides, so an element the kernel never writes fails; outputs it
 * accumulates into (+=) start from the same random values.
 *
 * Tolerances are relative L2 errors ‖cuda − cpu‖/‖cpu‖ derived from bf16's
 * unit roundoff u = 2⁻⁸: rounding a value to bf16 moves it by at most u of
 * itself, so an output rounded once from an fp32 result that is otherwise
 * exact is within u (ROUND1). Where a kernel rounds an intermediate to bf16
 * as well (attention's rotated q and k, its P for the P·V product, dS for
 * dQ and dK), each such rounding adds at most u more of the terms it enters
 * (ROUND2 … ROUND4:
 * independent rounding errors add in quadrature, and P ≥ 0 keeps them from
 * growing beyond the result's own size). fp32 results from identical bf16
 * inputs (weight gradients, norms' 1/rms, losses, Adam) differ only in fp32
 * summation order and library exp/sqrt: FP32 = 1e-5. Needs a GPU
 * (tests/gpu/run.sh) or the CUDA emulator (tests/cuda_emu.sh). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/gpu/gpu.h"
#include "tests/gpu/t3.h"
#include "trainer/rng.h"

/* ---- matmul ---- */
static void matmul_at(int N, int In, int Out)
{
    struct t3 in = make((size_t)N * In, 1), w = make((size_t)Out * In, 0.1),
              res = make((size_t)N * Out, 1), out = poisoned((size_t)N * Out),
              dout = make((size_t)N * Out, 1), din = poisoned((size_t)N * In),
              rin = make((size_t)N * In, 1), dw = make_real((size_t)Out * In, 1);
    C->matmul_fwd(out.c, in.c, w.c, N, In, Out, 1, NULL, 0);
    G->matmul_fwd(out.g, in.g, w.g, N, In, Out, 1, NULL, 0);
    SAME(out, ROUND1, "matmul_fwd");
    C->matmul_fwd(out.c, in.c, w.c, N, In, Out, 0.5f, res.c, 1.25f);
    G->matmul_fwd(out.g, in.g, w.g, N, In, Out, 0.5f, res.g, 1.25f);
    SAME(out, ROUND1, "matmul_fwd a·(in·wᵀ) + b·res");
    C->matmul_bwd(din.c, dw.c, dout.c, in.c, w.c, N, In, Out, 0.75f, NULL, 0);
    G->matmul_bwd(din.g, dw.g, dout.g, in.g, w.g, N, In, Out, 0.75f, NULL, 0);
    G->wgrad_join(-1); /* dw may be on the second stream (ops.h) */
    SAME(din, ROUND1, "matmul_bwd din");
    SAME(dw, FP32, "matmul_bwd dw (+= in fp32)");
    C->matmul_bwd(din.c, NULL, dout.c, NULL, w.c, N, In, Out, 1, rin.c, 2);
    G->matmul_bwd(din.g, NULL, dout.g, NULL, w.g, N, In, Out, 1, rin.g, 2);
    SAME(din, ROUND1, "matmul_bwd din + b·res");
    C->matmul_bwd(NULL, dw.c, dout.c, in.c, NULL, N, In, Out, 1, NULL, 0);
    G->matmul_bwd(NULL, dw.g, dout.g, in.g, NULL, N, In, Out, 1, NULL, 0);
    G->wgrad_join(-1);
    SAME(dw, FP32, "matmul_bwd dw alone");
    drop(&in), drop(&w), drop(&res), drop(&out), drop(&dout), drop(&din), drop(&rin), drop(&dw);
}

static void matmul(void)
{
    matmul_at(37, 50, 29);     /* odd sizes: unaligned rows */
    matmul_at(512, 768, 2304); /* llama-130m's fused q|k|v */
    matmul_at(256, 2048, 10928); /* llama-1b's gate|up, FFN padded to 5464 */
}

/* ---- embedding ---- */
static void embedding_at(int N, int d, int V)
{
    int32_t *tok = malloc(N * sizeof(int32_t)), *pos = malloc(N * sizeof(int32_t)),
            *start = malloc((N + 1) * sizeof(int32_t)), *count = calloc(V + 1, sizeof(int32_t));
    for (int n = 0; n < N; n++) {
        tok[n] = (int32_t)(rng_uniform(&R) * V);
        count[tok[n] + 1]++;
    }
    int groups = 0;
    for (int v = 0; v < V; v++) {
        if (count[v + 1])
            start[groups++] = count[v];
        count[v + 1] += count[v];
    }
    /* padded with empty groups, as the model does for a recorded step */
    for (int most = N < V ? N : V; groups < most; groups++)
        start[groups] = N;
    start[groups] = N;
    for (int n = 0; n < N; n++)
        pos[count[tok[n]]++] = n;
    int32_t *tg = i32_dev(tok, N), *pg = i32_dev(pos, N), *sg = i32_dev(start, groups + 1);
    struct t3 table = make((size_t)V * d, 1), out = poisoned((size_t)N * d),
              dout = make((size_t)N * d, 1), dtable = make_real((size_t)V * d, 1);
    C->embedding_fwd(out.c, tok, table.c, N, d);
    G->embedding_fwd(out.g, tg, table.g, N, d);
    SAME(out, 1e-30, "embedding_fwd (a copy)");
    C->embedding_bwd(dtable.c, dout.c, tok, pos, start, groups, d);
    G->embedding_bwd(dtable.g, dout.g, tg, pg, sg, groups, d);
    SAME(dtable, FP32, "embedding_bwd");
    drop(&table), drop(&out), drop(&dout), drop(&dtable);
    G->free(tg), G->free(pg), G->free(sg);
    free(tok), free(pos), free(start), free(count);
}

static void embedding(void)
{
    embedding_at(777, 96, 50); /* few tokens: many rows per group */
    embedding_at(4096, 100, 3000);
}

/* ---- rmsnorm ---- */
static void rmsnorm_at(int N, int d, real s_in, real s_out, int with_res)
{
    struct t3 x = make((size_t)N * d, 2), g = make_real(d, 1), out = poisoned((size_t)N * d),
              rstd = poisoned_real(N), dout = make((size_t)N * d, 1),
              res = make((size_t)N * d, 1), dx = poisoned((size_t)N * d), dg = make_real(d, 1);
    void *rc = with_res ? res.c : NULL, *rg = with_res ? res.g : NULL;
    C->rmsnorm_fwd(out.c, rstd.c, x.c, g.c, N, d, s_in, s_out, 1e-6f, rc, 0.5f);
    G->rmsnorm_fwd(out.g, rstd.g, x.g, g.g, N, d, s_in, s_out, 1e-6f, rg, 0.5f);
    SAME(out, ROUND1, "rmsnorm_fwd out");
    SAME(rstd, FP32, "rmsnorm_fwd 1/rms");
    C->rmsnorm_bwd(dx.c, dg.c, dout.c, x.c, g.c, rstd.c, N, d, s_in, s_out, rc, 0.5f);
    G->rmsnorm_bwd(dx.g, dg.g, dout.g, x.g, g.g, rstd.g, N, d, s_in, s_out, rg, 0.5f);
    SAME(dx, ROUND1, "rmsnorm_bwd dx");
    SAME(dg, FP32, "rmsnorm_bwd dg");
    /* frozen gains: the same input gradient, no gain gradient asked for */
    C->rmsnorm_bwd(dx.c, NULL, dout.c, x.c, g.c, rstd.c, N, d, s_in, s_out, rc, 0.5f);
    G->rmsnorm_bwd(dx.g, NULL, dout.g, x.g, g.g, rstd.g, N, d, s_in, s_out, rg, 0.5f);
    SAME(dx, ROUND1, "rmsnorm_bwd dx without dg");
    drop(&x), drop(&g), drop(&out), drop(&rstd), drop(&dout), drop(&res), drop(&dx), drop(&dg);
}

static void rmsnorm(void)
{
    rmsnorm_at(33, 100, 1, 1, 0);                 /* rows not a multiple of 8 */
    rmsnorm_at(1024, 768, 1, 0.2886751f, 0);      /* LNS after the norm, s = 1/√12 */
    rmsnorm_at(300, 2048, 0.5f, 1, 1);            /* before the norm; with a residual */
    rmsnorm_at(100, 520, 1, 1, 1);                /* a lane's last chunk past the row */
    rmsnorm_at(64, 4096, 1, 1, 0);                /* rows too wide for the fused backward */
    rmsnorm_at(9000, 64, 1, 1, 1); /* more rows than the GPU's resident warps: several a warp */
}

/* ---- attention, with RoPE on q and k ---- */

/* the implementations the backend may run: its default choice (cuDNN where
 * it takes the call, else cod's own), cod's tensor-core kernels, cod's
 * CUDA-core kernels, cuDNN's fused attention */
enum attn { DEFAULT, MMA, CORES, CUDNN };
static const char *const attn_name[] = {"default", "mma", "fallback", "cudnn"};

static void use(enum attn a)
{
    ops_cuda_fallback_attention(a == CORES);
    ops_cuda_set_attention(a == DEFAULT ? OPS_CUDA_ATTENTION_ENV
                           : a == CUDNN ? OPS_CUDA_ATTENTION_CUDNN
                                        : OPS_CUDA_ATTENTION_OWN);
}

/* RoPE tables of the model's form, for sequences up to T */
static void rope_tables(struct t3 *cs, struct t3 *sn, int T, int hd)
{
    int h2 = hd / 2;
    *cs = make_real((size_t)T * h2, 1);
    *sn = make_real((size_t)T * h2, 1);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < h2; i++) {
            double a = t * pow(10000.0, -2.0 * i / hd);
            cs->h[t * h2 + i] = (real)cos(a);
            sn->h[t * h2 + i] = (real)sin(a);
        }
    push(cs);
    push(sn);
}

/* The forward on one implementation and the backward on another (cuDNN
 * and the tensor-core kernels keep the same state, so either backward
 * follows either forward), each against the CPU. */
static void attention_pair(int B, int T, int nh, int hd, enum attn fwd, enum attn bwd)
{
    size_t n = (size_t)B * T * nh * hd;
    struct t3 cs, sn;
    rope_tables(&cs, &sn, T, hd);
    struct t3 qkv = make(3 * n, 1), dout = make(n, 1), out = poisoned(n), dqkv = poisoned(3 * n);
    real *sc = C->alloc(C->attn_state_size(B, T, nh, hd)),
         *sg = G->alloc(G->attn_state_size(B, T, nh, hd));
    char what[128], after[40] = "";
    use(fwd);
    C->attention_fwd(out.c, sc, qkv.c, cs.c, sn.c, B, T, nh, hd);
    G->attention_fwd(out.g, sg, qkv.g, cs.g, sn.g, B, T, nh, hd);
    snprintf(what, sizeof what, "attention_fwd %s B%d T%d h%d hd%d", attn_name[fwd], B, T, nh, hd);
    SAME(out, ROUND3, what);
    /* the backward reads the forward's output; both sides get the same */
    G->download_act(out.h, out.g, n);
    push(&out);
    use(bwd);
    C->attention_bwd(dqkv.c, dout.c, out.c, sc, qkv.c, cs.c, sn.c, B, T, nh, hd);
    G->attention_bwd(dqkv.g, dout.g, out.g, sg, qkv.g, cs.g, sn.g, B, T, nh, hd);
    if (bwd != fwd)
        snprintf(after, sizeof after, " after %s", attn_name[fwd]);
    snprintf(what, sizeof what, "attention_bwd %s%s B%d T%d h%d hd%d", attn_name[bwd], after, B, T,
             nh, hd);
    SAME(dqkv, ROUND4, what);
    use(DEFAULT);
    C->free(sc), G->free(sg);
    drop(&qkv), drop(&dout), drop(&out), drop(&dqkv), drop(&cs), drop(&sn);
}

/* cod's own kernels: the tensor-core ones where they take the head size,
 * and the CUDA-core ones always */
static void attention_at(int B, int T, int nh, int hd)
{
    if (hd % 16 == 0 && hd <= 128)
        attention_pair(B, T, nh, hd, MMA, MMA);
    attention_pair(B, T, nh, hd, CORES, CORES);
}

static void attention(void)
{
    attention_at(1, 1, 1, 32);
    attention_at(2, 37, 3, 16);  /* partial tiles */
    attention_at(2, 100, 2, 40); /* fallback only: 40 is no multiple of 16 */
    attention_at(2, 256, 4, 48);
    attention_at(4, 256, 12, 64); /* llama-130m's heads */
    attention_at(1, 300, 4, 128);
    attention_at(1, 1024, 2, 64); /* many tiles */
}

/* both paths at shapes small enough for the emulator's race check, which
 * runs every launch twice (tests/cuda_emu.sh): partial tiles, a loop of
 * several tiles each way, the smallest and largest head sizes */
static void attention_small(void)
{
    attention_at(2, 37, 3, 16);
    attention_at(1, 300, 2, 64);
    attention_at(1, 140, 1, 128);
}

/* cuDNN's fused attention, with the tolerances of cod's tensor-core
 * kernels (it rounds P and dS to bf16 as they do): every head size the
 * presets use at their sequence of 256 (cuDNN must take these: where it is
 * present and refuses one, training runs cod's kernels instead, and this
 * fails saying why), then shapes it may refuse (each says so). A forward
 * and a backward of cuDNN's each follow one of the tensor-core kernels. */
static void attention_cudnn(void)
{
    static const struct {
        int B, T, nh, hd, must;
    } shapes[] = {
        {2, 256, 4, 32, 1},   /* llama-9m */
        {2, 256, 8, 48, 1},   /* llama-35m, -250m */
        {4, 256, 12, 64, 1},  /* llama-130m; and -20m, -60m, -71m, -350m, -1b */
        {1, 256, 4, 128, 1},  /* llama-7b */
        {1, 1024, 2, 64, 1},  /* many tiles */
        {2, 128, 3, 16, 0},   /* the smallest head size */
        {2, 100, 2, 40, 0},   /* a head size and a sequence the presets do not use */
        {1, 1, 1, 32, 0},     /* one position */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int B = shapes[i].B, T = shapes[i].T, nh = shapes[i].nh, hd = shapes[i].hd;
        char why[800];
        if (!ops_cuda_cudnn_takes(B, T, nh, hd, why, sizeof why)) {
            printf("  cuDNN does not take B%d T%d h%d hd%d: %s\n", B, T, nh, hd, why);
            CHECK(!shapes[i].must, "B%d T%d h%d hd%d, a preset's: %s", B, T, nh, hd, why);
            continue;
        }
        attention_pair(B, T, nh, hd, CUDNN, CUDNN);
    }
    char why[800];
    if (ops_cuda_cudnn_takes(2, 256, 4, 64, why, sizeof why)) {
        attention_pair(2, 256, 4, 64, CUDNN, MMA);
        attention_pair(2, 256, 4, 64, MMA, CUDNN);
    }
    CHECK(ops_cuda_cudnn_takes(2, 256, 4, 64, why, sizeof why), "B2 T256 h4 hd64: %s", why);
}

/* The state a forward of a leaves for the backward (its statistics, and
 * q and k rotated where it keeps them), as bytes: a trace of which kernels
 * ran. The state starts zeroed. */
static void *state_after(enum attn a, const struct t3 *qkv, const struct t3 *cs,
                         const struct t3 *sn, int B, int T, int nh, int hd, size_t *bytes)
{
    size_t n = G->attn_state_size(B, T, nh, hd);
    real *sg = G->alloc(n), *host = malloc(n * sizeof(real));
    act *out = G->alloc_act((size_t)B * T * nh * hd);
    use(a);
    G->attention_fwd(out, sg, qkv->g, cs->g, sn->g, B, T, nh, hd);
    use(DEFAULT);
    G->download(host, sg, n);
    G->free(sg), G->free(out);
    *bytes = n * sizeof(real);
    return host;
}

/* What the backend says it runs (the run's log says it, ops.h), and that
 * it runs it: cuDNN's attention where it takes the call, else cod's
 * tensor-core kernels saying why not (the default's state is then the
 * one of the implementation it names, bit for bit, and not the CUDA-core
 * kernels'); cod's own where asked for, the CUDA-core kernels for a head
 * size the tensor cores do not take. On the emulator, where cuDNN is
 * absent, and on a GPU alike. */
static void attention_choice(void)
{
    char why[800], want[1024];
    const char *env = getenv("COD_ATTENTION");
    const int B = 2, T = 128, nh = 2, hd = 64;
    int takes = ops_cuda_cudnn_takes(B, T, nh, hd, why, sizeof why);
    attention_pair(B, T, nh, hd, DEFAULT, DEFAULT);
    const char *said = G->attention_choice();
    printf("  the default: %s\n", said ? said : "(nothing)");
    if (env && *env)
        printf("  (COD_ATTENTION=%s in the environment: the default is not checked)\n", env);
    else if (takes)
        CHECK(said && strncmp(said, "cuDNN ", 6) == 0 && strstr(said, "fused flash attention"),
              "cuDNN takes the shape, yet the backend says \"%s\"", said ? said : "");
    else {
        snprintf(want, sizeof want, "cod's tensor-core kernels (cuDNN not used: %s)", why);
        CHECK(said && strcmp(said, want) == 0, "said \"%s\", not \"%s\"", said ? said : "", want);
    }
    if (!(env && *env)) {
        struct t3 cs, sn, qkv = make(3 * (size_t)B * T * nh * hd, 1);
        rope_tables(&cs, &sn, T, hd);
        size_t bytes;
        void *by_default = state_after(DEFAULT, &qkv, &cs, &sn, B, T, nh, hd, &bytes),
             *named = state_after(takes ? CUDNN : MMA, &qkv, &cs, &sn, B, T, nh, hd, &bytes),
             *cores = state_after(CORES, &qkv, &cs, &sn, B, T, nh, hd, &bytes);
        CHECK(memcmp(by_default, named, bytes) == 0,
              "the default's state is not the one %s leave", takes ? "cuDNN's" : "the tensor cores'");
        CHECK(memcmp(by_default, cores, bytes) != 0, "the default's state is the CUDA-core kernels'");
        free(by_default), free(named), free(cores);
        drop(&qkv), drop(&cs), drop(&sn);
    }
    const struct {
        enum attn a;
        int hd;
        const char *want;
    } asked[] = {
        {MMA, 64, "cod's tensor-core kernels (asked for by the caller)"},
        {MMA, 40, "cod's CUDA-core kernels (asked for by the caller)"},
        {CORES, 64, "cod's CUDA-core kernels (asked for by the caller)"},
    };
    for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
        attention_pair(2, 128, 2, asked[i].hd, asked[i].a, asked[i].a);
        said = G->attention_choice();
        printf("  %s, head size %d: %s\n", attn_name[asked[i].a], asked[i].hd, said ? said : "");
        CHECK(said && strcmp(said, asked[i].want) == 0, "said \"%s\", not \"%s\"",
              said ? said : "", asked[i].want);
    }
}

/* ---- swiglu ---- */
static void swiglu_at(int N, int f)
{
    struct t3 gu = make((size_t)N * 2 * f, 4), h = poisoned((size_t)N * f),
              dh = make((size_t)N * f, 1), dgu = poisoned((size_t)N * 2 * f),
              h2 = poisoned((size_t)N * f);
    C->swiglu_fwd(h.c, gu.c, N, f);
    G->swiglu_fwd(h.g, gu.g, N, f);
    SAME(h, ROUND1, "swiglu_fwd");
    C->swiglu_bwd(dgu.c, h2.c, dh.c, gu.c, N, f);
    G->swiglu_bwd(dgu.g, h2.g, dh.g, gu.g, N, f);
    SAME(dgu, ROUND1, "swiglu_bwd dgate|dup");
    SAME(h2, ROUND1, "swiglu_bwd h again");
    drop(&gu), drop(&h), drop(&dh), drop(&dgu), drop(&h2);
}

static void swiglu(void)
{
    swiglu_at(97, 1001); /* not a multiple of 8 */
    swiglu_at(512, 2048);
}

static void elementwise(void)
{
    size_t n = 70001;
    struct t3 x = make(n, 1), y = make(n, 1);
    C->axpby(y.c, 0.7f, x.c, -1.3f, n);
    G->axpby(y.g, 0.7f, x.g, -1.3f, n);
    SAME(y, ROUND1, "axpby");
    C->axpby(y.c, 0, y.c, 0.25f, n); /* in place, as the model scales a buffer */
    G->axpby(y.g, 0, y.g, 0.25f, n);
    SAME(y, ROUND1, "axpby in place");
    int N = 513, d = 96;
    for (int c = 1; c <= d; c += d - 1) {
        struct t3 in = make((size_t)N * d, 1), lam = make_real(c, 1),
                  out = poisoned((size_t)N * d), dout = make((size_t)N * d, 1),
                  din = poisoned((size_t)N * d), dlam = make_real(c, 1);
        C->chscale_fwd(out.c, in.c, lam.c, N, d, c);
        G->chscale_fwd(out.g, in.g, lam.g, N, d, c);
        SAME(out, ROUND1, c == 1 ? "chscale_fwd scalar" : "chscale_fwd per channel");
        C->chscale_bwd(din.c, dlam.c, dout.c, in.c, lam.c, N, d, c);
        G->chscale_bwd(din.g, dlam.g, dout.g, in.g, lam.g, N, d, c);
        SAME(din, ROUND1, "chscale_bwd din");
        SAME(dlam, FP32, c == 1 ? "chscale_bwd dlam scalar" : "chscale_bwd dlam");
        drop(&in), drop(&lam), drop(&out), drop(&dout), drop(&din), drop(&dlam);
    }
    {
        /* Qwen2's q/k/v biases, then grouped-query attention's repeat (2 of 6 heads) */
        int nh = 6, nkv = 2, hd = 16, w = (nh + 2 * nkv) * hd;
        struct t3 qkv = make((size_t)N * w, 1), bias = make_real((size_t)w, 1),
                  wide = poisoned((size_t)N * 3 * nh * hd);
        C->bias_add(qkv.c, bias.c, N, w);
        G->bias_add(qkv.g, bias.g, N, w);
        SAME(qkv, ROUND1, "bias_add");
        push(&qkv); /* the same bf16 values on both sides again */
        C->repeat_kv(wide.c, qkv.c, N, nh, nkv, hd);
        G->repeat_kv(wide.g, qkv.g, N, nh, nkv, hd);
        SAME(wide, 1e-30, "repeat_kv");
        drop(&qkv), drop(&bias), drop(&wide);
    }
    struct t3 z = poisoned(n), master = make_real(n, 3);
    C->copy_act(z.c, x.c, n);
    G->copy_act(z.g, x.g, n);
    SAME(z, 1e-30, "copy_act");
    C->zero_act(z.c, n);
    G->zero_act(z.g, n);
    SAME(z, 1e-30, "zero_act");
    C->to_act(z.c, master.c, n);
    G->to_act(z.g, master.g, n);
    SAME(z, ROUND1, "to_act (fp32 → bf16)");
    drop(&x), drop(&y), drop(&z), drop(&master);
}

static void cross_entropy_at(int N, int V)
{
    int32_t *tgt = malloc(N * sizeof(int32_t));
    for (int n = 0; n < N; n++)
        tgt[n] = n % 7 == 3 ? -1 : (int32_t)(rng_uniform(&R) * V);
    int32_t *tg = i32_dev(tgt, N);
    struct t3 logits = make((size_t)N * V, 8), loss = poisoned_real(N);
    C->cross_entropy(loss.c, logits.c, tgt, N, V, 0);
    G->cross_entropy(loss.g, logits.g, tg, N, V, 0);
    SAME(loss, FP32, "cross_entropy loss, no gradient");
    SAME(logits, 1e-30, "cross_entropy leaves the logits");
    C->cross_entropy(loss.c, logits.c, tgt, N, V, 1.0f / N);
    G->cross_entropy(loss.g, logits.g, tg, N, V, 1.0f / N);
    SAME(loss, FP32, "cross_entropy loss");
    SAME(logits, ROUND1, "cross_entropy gradient in place");
    drop(&logits), drop(&loss);
    G->free(tg), free(tgt);
}

static void cross_entropy(void)
{
    cross_entropy_at(29, 300);
    cross_entropy_at(512, 32000);
    cross_entropy_at(64, 50257);
}

/* extra: NULL, or bf16 rounding with a gradient scale and ranges that
 * leave some elements out (frozen gains) */
static void adam_with(const struct adam_extra *x, const char *what)
{
    size_t n = 123457;
    char name[128];
    for (int clipped = 0; clipped <= 1; clipped++) {
        struct t3 p = make_real(n, 1), m = make_real(n, 0), v = make_real(n, 0),
                  pact = poisoned(n);
        if (x && x->bf16) {
            for (size_t i = 0; i < n; i++)
                p.h[i] = bf16_round(p.h[i]);
            push(&p);
        }
        /* left out of the ranges, the copy keeps what the model synced */
        if (x && x->ranges)
            G->to_act(pact.g, p.g, n);
        for (long step = 1; step <= 5; step++) {
            struct t3 g = make_real(n, 1);
            double clip = clipped ? 10.0 : 0; /* ‖g‖ ≈ √(n/3) ≈ 203 */
            double nc = C->adam(p.c, pact.c, g.c, m.c, v.c, n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f,
                                step, clip, x);
            double ng = G->adam(p.g, pact.g, g.g, m.g, v.g, n, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f,
                                step, clip, x);
            SAME_D(ng, nc, 1e-9, "adam returns ‖g‖");
            drop(&g);
        }
        /* in bf16, an fp32 ulp between the backends (the GPU's fused
         * multiply-adds) may round to neighbouring bf16 values */
        double tol = x && x->bf16 ? ROUND1 : FP32;
        snprintf(name, sizeof name, "adam parameters%s%s", clipped ? ", clipped" : "", what);
        SAME(p, tol, name);
        snprintf(name, sizeof name, "adam first moment%s", what);
        SAME(m, tol, name);
        snprintf(name, sizeof name, "adam second moment%s", what);
        SAME(v, tol, name);
        /* the CPU's act is its master copy: compare the bf16 copy with it */
        C->to_act(pact.c, p.c, n);
        snprintf(name, sizeof name, "adam's bf16 copy of the parameters%s", what);
        SAME(pact, ROUND1, name);
        if (x) {
            /* held in bf16 and left alone outside the ranges, on the device too */
            real *hp = malloc(n * sizeof(real)), *hm = malloc(n * sizeof(real));
            G->download(hp, p.g, n);
            G->download(hm, m.g, n);
            size_t not_bf16 = 0, moved = 0;
            for (size_t i = 0; i < n; i++)
                not_bf16 += hp[i] != bf16_round(hp[i]) || hm[i] != bf16_round(hm[i]);
            for (int k = 0; k + 1 < x->n_ranges; k++)
                for (size_t i = x->ranges[2 * k + 1]; i < x->ranges[2 * k + 2]; i++)
                    moved += hp[i] != p.h[i] || hm[i] != 0;
            CHECK(not_bf16 == 0 && moved == 0,
                  "adam%s: %zu values not in bf16, %zu left-out elements written", what, not_bf16,
                  moved);
            free(hp);
            free(hm);
        }
        drop(&p), drop(&m), drop(&v), drop(&pact);
    }
}

static void adam(void)
{
    adam_with(NULL, "");
    size_t ranges[] = {0, 1000, 1007, 65536, 65600, 123457};
    struct adam_extra x = {.grad_scale = 0.37, .bf16 = 1, .ranges = ranges, .n_ranges = 3};
    adam_with(&x, " (bf16, scaled, ranges)");
}

static void reductions(void)
{
    size_t sizes[] = {1, 1000, 3000017};
    for (int i = 0; i < 3; i++) {
        size_t n = sizes[i];
        struct t3 x = make_real(n, 1), y = make_real(n, 1), a = make(n, 1);
        SAME_D(G->sum(x.g, n), C->sum(x.c, n), 1e-9, "sum");
        SAME_D(G->sumsq(x.g, n), C->sumsq(x.c, n), 1e-9, "sumsq");
        SAME_D(G->dist2(x.g, y.g, n), C->dist2(x.c, y.c, n), 1e-9, "dist2");
        SAME_D(G->act_sum(a.g, n), C->act_sum(a.c, n), 1e-9, "act_sum");
        SAME_D(G->act_sumsq(a.g, n), C->act_sumsq(a.c, n), 1e-9, "act_sumsq");
        drop(&x), drop(&y), drop(&a);
    }
    int N = 2049, d = 384;
    struct t3 a = make((size_t)N * d, 1), b = make((size_t)N * d, 1);
    C->axpby(b.c, 1, a.c, 0.3f, (size_t)N * d); /* correlated rows: angles away from π/2 */
    for (size_t i = 0; i < (size_t)N * d; i++)  /* the same bf16 values on the device */
        b.h[i] = bf16_round((real)(a.h[i] + 0.3 * b.h[i]));
    C->upload_act(b.c, b.h, (size_t)N * d);
    G->upload_act(b.g, b.h, (size_t)N * d);
    SAME_D(G->angular_sum(a.g, b.g, N, d), C->angular_sum(a.c, b.c, N, d), 1e-9, "angular_sum");
    drop(&a), drop(&b);
}

static void out_of_memory(void)
{
    real *p = G->alloc((size_t)1 << 42); /* 16 TiB */
    CHECK(p == NULL, "an impossible allocation must return NULL");
    real *q = G->alloc(1024);
    CHECK(q != NULL, "and leave the device usable");
    G->free(q);
}

static void no_errors(void)
{
    char err[600];
    CHECK(G->error(err, sizeof err) == 0, "%s", err);
    printf("  worst: %s at %.2f of its limit\n", worst_what, worst_ratio);
}

#define CASES(X)                                                                           \
    X(matmul) X(embedding) X(rmsnorm) X(attention) X(attention_small) X(attention_cudnn)      \
        X(attention_choice) X(swiglu) X(elementwise) X(cross_entropy) X(adam) X(reductions)    \
            X(out_of_memory)

/* Why a case cannot run here, or NULL: cuDNN's without a cuDNN to use (a
 * SKIP line, never a pass; the emulator has none). */
static const char *cannot_run(const char *name)
{
    static char why[800];
    if (strcmp(name, "attention_cudnn") == 0 && ops_cuda_cudnn_usable(why, sizeof why) != 0)
        return why;
    return NULL;
}

/* whether the command line names the case (no names: every case) */
static int wanted(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return argc == 1;
}

/* The cases named on the command line, or every case; no_errors after
 * them. Some cases alone are for the emulator's race check
 * (COD_EMU_RACECHECK=1, tests/cuda_emu.sh), which runs every launch twice:
 * attention_small, not attention. */
int main(int argc, char **argv)
{
#define NAME(fn) #fn,
    static const char *const names[] = {CASES(NAME)};
#undef NAME
    for (int i = 1; i < argc; i++) {
        int known = 0;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            known |= strcmp(argv[i], names[k]) == 0;
        if (!known) {
            fprintf(stderr, "test_ops_cuda: no case named '%s'; the cases:", argv[i]);
            for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
                fprintf(stderr, " %s", names[k]);
            fputc('\n', stderr);
            return 2;
        }
    }
    if (gpu_start() != 0)
        return 1;
    rng_seed(&R, 20240601, 1);
#define RUN_WANTED(fn)                                                                     \
    if (wanted(argc, argv, #fn)) {                                                         \
        const char *no_ = cannot_run(#fn);                                                 \
        if (no_)                                                                           \
            printf("SKIP %s: %s\n", #fn, no_);                                             \
        else                                                                               \
            RUN(fn);                                                                       \
    }
    CASES(RUN_WANTED)
#undef RUN_WANTED
    RUN(no_errors);
    CHECK_EXIT();
}
