/* The paper's trainer's arithmetic: rounding to bf16 (to nearest, ties to
 * even, subnormals included) against values worked out by hand; an AdamW
 * update held in bf16 (train.precision "bf16") against its hand-computed
 * result; a gain at 1.0 that bf16 keeps at 1 at lr 1e-3 but not at 1e-2;
 * adam's ranges leaving frozen elements unread and unwritten; and frozen
 * gains (norm.gains) getting no gradient while every other tensor's is the
 * learned gains' own. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/bf16.h"
#include "tests/check.h"
#include "trainer/model.h"
#include "trainer/rng.h"

/* x = m·2^e, built exactly */
static float val(double m, int e)
{
    return (float)ldexp(m, e);
}

static void test_bf16_rounding(void)
{
    const struct {
        float in, want;
        const char *what;
    } cases[] = {
        {1.0f, 1.0f, "1 is a bf16 value"},
        /* bf16 keeps 8 significant bits: above 1 its step is 2^-7 */
        {val(1 + 0x1p-8, 0), 1.0f, "1 + 2^-8, halfway to 1 + 2^-7: ties to even (1)"},
        {val(1 + 3 * 0x1p-8, 0), val(1 + 0x1p-6, 0),
         "1 + 3·2^-8, halfway from 1 + 2^-7 (odd) to 1 + 2^-6: up to even"},
        {val(1 + 0x1p-8 + 0x1p-20, 0), val(1 + 0x1p-7, 0), "just past the tie: up"},
        {val(1 + 0x1p-8 - 0x1p-20, 0), 1.0f, "just short of the tie: down"},
        /* below 1 the step is 2^-8 */
        {val(1 - 0x1p-9, 0), 1.0f, "1 − 2^-9, halfway from 1 − 2^-8 (odd): up to 1"},
        {val(-(1 + 0x1p-8), 0), -1.0f, "the sign rides along: −(1 + 2^-8) → −1"},
        {3.14159265f, val(201, -6), "π → 3.140625 (201·2^-6)"},
        {0.0f, 0.0f, "zero"},
        /* fp32's subnormals are bf16's too: bf16's smallest is 2^-133 */
        {val(1, -133), val(1, -133), "2^-133, bf16's smallest subnormal"},
        {val(1, -134), 0.0f, "2^-134, halfway from 0: ties to even (0)"},
        {val(3, -134), val(1, -132), "3·2^-134, halfway from 2^-133 (odd): up to 2^-132"},
        {val(1 + 0x1p-10, -134), val(1, -133), "just past half of 2^-133: up"},
        {val(1, -149), 0.0f, "fp32's smallest subnormal: to 0"},
        {val(1 - 0x1p-23, -126), val(1, -126), "fp32's largest subnormal: up to 2^-126, normal"},
        {-val(5, -134), -val(1, -132), "−5·2^-134, halfway from −2^-132 (even) to −3·2^-133: −2^-132"},
        {FLT_MAX, INFINITY, "FLT_MAX is past bf16's largest and half a step: infinity"},
        {val(255.5, 120), INFINITY, "halfway from bf16's largest (odd) to infinity: up"},
        {val(255.25, 120), val(255, 120), "a quarter step past bf16's largest: down to it"},
        {INFINITY, INFINITY, "infinity"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        float got = bf16_round(cases[i].in);
        CHECK(got == cases[i].want && signbit(got) == signbit(cases[i].want),
              "%s: %a rounds to %a, not %a", cases[i].what, cases[i].in, got, cases[i].want);
    }
    CHECK(isnan(bf16_round(NAN)), "NaN stays NaN");
    float low_payload;
    uint32_t bits = 0x7f800001u; /* a NaN whose payload is below bf16's bits */
    memcpy(&low_payload, &bits, sizeof bits);
    CHECK(isnan(bf16_round(low_payload)), "a NaN with a low payload is not rounded to infinity");
}

/* One AdamW update of one element on the CPU backend. */
static void adam1(real *p, real *m, real *v, real g, real lr, long step, int bf16)
{
    struct adam_extra x = {.grad_scale = 1, .bf16 = bf16};
    ops_cpu.adam(p, (act *)p, &g, m, v, 1, lr, 0.9f, 0.999f, 1e-8f, 0, step, 0, &x);
}

/* p = 0.5, g = 0.25, lr 0.01, step 1. In fp32: 1 − β1 = 1677722·2^-24,
 * so m = 0.0250000059…; 1 − β2 = 16777·2^-24, so v = 6.2499195…e-5; m̂ =
 * m/(1 − β1) = 0.25 = √v̂, so the step is lr·(1 − 4e-8) and p = 0.49. In
 * bf16, whose step is 2^-9 in [0.25, 0.5), 2^-13 in [2^-6, 2^-5) and 2^-21
 * in [2^-14, 2^-13): p = 250.88·2^-9 → 251·2^-9, m = 204.80·2^-13 →
 * 205·2^-13, v = 131.07·2^-21 → 131·2^-21. */
static void test_adam_bf16_by_hand(void)
{
    real p = 0.5f, m = 0, v = 0;
    adam1(&p, &m, &v, 0.25f, 0.01f, 1, 1);
    CHECK(p == val(251, -9) && m == val(205, -13) && v == val(131, -21),
          "bf16: p %a (want %a), m %a (want %a), v %a (want %a)", p, val(251, -9), m,
          val(205, -13), v, val(131, -21));
    real pm = 0.5f, mm = 0, vm = 0;
    adam1(&pm, &mm, &vm, 0.25f, 0.01f, 1, 0);
    CHECK(fabs(pm - 0.49) < 1e-7 && pm != bf16_round(pm) && mm != bf16_round(mm),
          "mixed: p %.9g, m %.9g kept in fp32", pm, mm);
}

/* A gain at 1.0: bf16's step is 2^-7 above 1 and 2^-8 below, so an Adam
 * update of about lr rounds back to 1 at lr 1e-3, whatever the gradient's
 * sign and for as long as the gradient stays the same, and moves it at
 * 1e-2: 0.99 → 253·2^-8, 1.01 → 129·2^-7. */
static void test_gain_at_one(void)
{
    for (int sign = -1; sign <= 1; sign += 2) {
        real p = 1, m = 0, v = 0;
        int moved = 0;
        for (long step = 1; step <= 100; step++) {
            adam1(&p, &m, &v, 0.3f * sign, 1e-3f, step, 1);
            moved |= p != 1;
        }
        CHECK(!moved && m != 0, "gradient %+.1f: a gain at 1 moved to %a at lr 1e-3", 0.3 * sign,
              p);
        real q = 1, mq = 0, vq = 0;
        adam1(&q, &mq, &vq, 0.3f * sign, 1e-2f, 1, 1);
        float want = sign > 0 ? val(253, -8) : val(129, -7);
        CHECK(q == want, "gradient %+.1f at lr 1e-2: %a, not %a", 0.3 * sign, q, want);
        real r = 1, mr = 0, vr = 0;
        adam1(&r, &mr, &vr, 0.3f * sign, 1e-3f, 1, 0);
        CHECK(r != 1, "mixed precision moves it at lr 1e-3 (%a)", r);
    }
}

/* Elements outside the ranges are neither read nor written (weight decay
 * on: a gain with a zero gradient would still decay if it were updated);
 * those inside update as they would without ranges; ‖g‖ is over all. */
static void test_adam_ranges(void)
{
    enum { N = 1000 };
    static real p[N], m[N], v[N], g[N], p0[N], p2[N], m2[N], v2[N];
    struct rng r;
    rng_seed(&r, 3, 0);
    for (int i = 0; i < N; i++) {
        p[i] = p0[i] = p2[i] = (real)rng_normal(&r);
        g[i] = (real)rng_normal(&r);
        m[i] = m2[i] = v[i] = v2[i] = 0;
    }
    size_t ranges[] = {0, 100, 130, 700, 701, 1000};
    struct adam_extra x = {.grad_scale = 1, .ranges = ranges, .n_ranges = 3};
    double n1 = 0, n2 = 0;
    for (long step = 1; step <= 3; step++) {
        n1 = ops_cpu.adam(p, (act *)p, g, m, v, N, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f, step, 0, &x);
        n2 = ops_cpu.adam(p2, (act *)p2, g, m2, v2, N, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f, step, 0,
                          NULL);
    }
    int out_touched = 0, in_differs = 0;
    for (int i = 0; i < N; i++) {
        int in = i < 100 || (i >= 130 && i < 700) || i >= 701;
        if (in)
            in_differs |= p[i] != p2[i] || m[i] != m2[i] || v[i] != v2[i];
        else
            out_touched |= m[i] != 0 || v[i] != 0 || p[i] != p0[i];
    }
    CHECK(!out_touched && !in_differs && n1 == n2,
          "outside the ranges touched %d, inside different %d, norms %g %g", out_touched,
          in_differs, n1, n2);
}

/* norm.gains "frozen": the backward leaves every gain's gradient at zero
 * and computes every other tensor's as with learned gains, bit for bit. */
static void test_frozen_gains_get_no_gradient(void)
{
    enum { T = 8, V = 40 };
    const char *variants[] = {"lns", "post", "sandwich"};
    for (int k = 0; k < 3; k++) {
        struct model_config c = {.dim = 16, .n_layers = 3, .n_heads = 2, .ffn_dim = 24,
                                 .vocab = V, .seq_len = T, .rope_theta = 10000,
                                 .norm_eps = 1e-6, .embed_std = 0.02};
        variant_preset(variants[k], &c.norm);
        struct model a, b;
        char err[256];
        int ok = !model_create(&a, &ops_cpu, &c, 2, err, sizeof err) &&
                 !model_init_weights(&a, 8, err, sizeof err);
        c.norm.gains = GAINS_FROZEN;
        ok = ok && !model_create(&b, &ops_cpu, &c, 2, err, sizeof err) &&
             !model_init_weights(&b, 8, err, sizeof err);
        CHECK(ok, "%s", err);
        if (!ok)
            return;
        int32_t tok[2 * T], tgt[2 * T];
        for (int i = 0; i < 2 * T; i++) {
            tok[i] = (i * 7) % V;
            tgt[i] = (i * 11 + 3) % V;
        }
        struct model *mm[2] = {&a, &b};
        for (int j = 0; j < 2; j++) {
            ops_cpu.zero(mm[j]->grads, mm[j]->n_params);
            model_forward(mm[j], tok, tgt, 2, 1.0f / (2 * T));
            model_backward(mm[j]);
        }
        size_t gains = 0, gain_grads = 0, other_differ = 0, learned_gain_grads = 0;
        for (int t = 0; t < a.n_tensors; t++) {
            const struct param_info *p = &a.info[t];
            int gain = p->kind == P_NORM_IN_ATTN || p->kind == P_NORM_IN_FFN ||
                       p->kind == P_NORM_OUT_ATTN || p->kind == P_NORM_OUT_FFN ||
                       p->kind == P_FINAL_NORM;
            for (size_t i = 0; i < p->n; i++) {
                size_t q = param_index(p, i);
                if (gain) {
                    gains++;
                    gain_grads += b.grads[q] != 0;
                    learned_gain_grads += a.grads[q] != 0;
                } else {
                    other_differ += a.grads[q] != b.grads[q];
                }
            }
        }
        CHECK(gains > 0 && gain_grads == 0 && other_differ == 0 && learned_gain_grads > 0,
              "%s: %zu of %zu frozen gains with a gradient (learned: %zu); %zu other gradients "
              "differ",
              variants[k], gain_grads, gains, learned_gain_grads, other_differ);
        size_t covered = 0;
        for (int i = 0; i < b.n_learn_ranges; i++)
            covered += b.learn_ranges[2 * i + 1] - b.learn_ranges[2 * i];
        CHECK(a.learn_ranges == NULL && covered + gains == b.n_params,
              "%s: the learning ranges cover %zu of %zu elements besides %zu gains", variants[k],
              covered, b.n_params, gains);
        model_destroy(&a);
        model_destroy(&b);
    }
}

int main(void)
{
    RUN(test_bf16_rounding);
    RUN(test_adam_bf16_by_hand);
    RUN(test_gain_at_one);
    RUN(test_adam_ranges);
    RUN(test_frozen_gains_get_no_gradient);
    CHECK_EXIT();
}
