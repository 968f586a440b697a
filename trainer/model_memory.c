/* What the model spends on speed beyond what its backward needs
 * (model.h: model_memory_plan), from a budget: a share of the memory the
 * activations already take (COD_SPEED_MEMORY, default 1/8), so that the
 * model grows with what it holds anyway, and stays below what PyTorch
 * holds for the same model at every size the benchmark measures (the
 * extras are under half of the margin there: docs/speed.md). In
 * order, each from what is left:
 *   - the second stream's doubled scratch, where the backend runs the
 *     weight gradients beside the other ops (ops.h: wgrad_beside): not a
 *     choice, the backward needs it then;
 *   - more rows of logits at a time (COD_LOGIT_ROWS sets them): each
 *     chunk reads and writes the lm_head's fp32 gradient once, and its
 *     weight-gradient product has the chunk's rows as its depth;
 *   - SwiGLU's output kept from the forward for the down projection's
 *     weight gradient (COD_KEEP_SWIGLU: 1 always, 0 never), which the
 *     backward otherwise writes again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/model.h"

/* rows of logits at a time as before any budget: about 128 MiB of them */
static int base_rows(size_t act_bytes, int N, int V)
{
    size_t per_row = (size_t)V * act_bytes, rows = ((size_t)128 << 20) / per_row;
    rows = rows < 64 ? 64 : rows / 64 * 64;
    return rows >= (size_t)N ? N : (int)rows;
}

/* as many chunks as `rows` asks for, evened out: the last is not a sliver */
static int even_rows(int rows, int N)
{
    if (rows >= N)
        return N;
    int chunks = (N + rows - 1) / rows, r = (N + chunks - 1) / chunks;
    r = (r + 63) / 64 * 64;
    return r < N ? r : N;
}

static int env_long(const char *name, long lo, long hi, long *v, char *err, size_t errlen)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    char *end;
    long x = strtol(s, &end, 10);
    if (*end || x < lo || x > hi) {
        snprintf(err, errlen, "model: %s must be a whole number from %ld to %ld, not \"%.40s\"",
                 name, lo, hi, s);
        return -1;
    }
    *v = x;
    return 1;
}

int model_memory_plan(const struct model_memory_need *need, struct model_memory *p, char *err,
                      size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->logit_rows = base_rows(need->act_bytes, need->N, need->V);
    p->keep_swiglu = 0;
    if (need->forward_only) {
        snprintf(p->said, sizeof p->said, "logits %d rows at a time", p->logit_rows);
        return 0;
    }
    double share = 0.125;
    const char *s = getenv("COD_SPEED_MEMORY");
    if (s && *s) {
        char *end;
        share = strtod(s, &end);
        if (*end || !(share >= 0 && share <= 4)) {
            snprintf(err, errlen, "model: COD_SPEED_MEMORY must be a share of the activations' "
                                  "memory from 0 to 4, not \"%.40s\"", s);
            return -1;
        }
    }
    double left = share * (double)need->activations;
    p->beside = need->beside;
    if (p->beside) {
        p->extra += need->beside_bytes;
        left -= (double)need->beside_bytes;
    }
    long rows = 0, keep = -1;
    int set_rows = env_long("COD_LOGIT_ROWS", 1, need->N > 1 ? need->N : 1, &rows, err, errlen);
    int set_keep = set_rows < 0 ? -1 : env_long("COD_KEEP_SWIGLU", 0, 1, &keep, err, errlen);
    if (set_rows < 0 || set_keep < 0)
        return -1;
    size_t per_row = (size_t)need->V * need->act_bytes;
    int base = p->logit_rows;
    if (set_rows) {
        p->logit_rows = (int)rows;
    } else if (left > 0) {
        double more = left / (double)per_row;
        p->logit_rows = even_rows(base + (more > need->N ? need->N : (int)more), need->N);
        if (p->logit_rows < base)
            p->logit_rows = base;
    }
    if (p->logit_rows > base) {
        p->extra += (size_t)(p->logit_rows - base) * per_row;
        left -= (double)(p->logit_rows - base) * (double)per_row;
    }
    p->keep_swiglu = set_keep ? (int)keep : left >= (double)need->swiglu_bytes;
    if (p->keep_swiglu)
        p->extra += need->swiglu_bytes;
    snprintf(p->said, sizeof p->said,
             "logits %d rows at a time%s, SwiGLU's output %s%s, weight gradients %s; "
             "%.2f GiB for speed", p->logit_rows, set_rows ? " (COD_LOGIT_ROWS)" : "",
             p->keep_swiglu ? "kept" : "written again by the backward",
             set_keep ? " (COD_KEEP_SWIGLU)" : "", p->beside ? "beside" : "in order",
             (double)p->extra / (1 << 30));
    return 0;
}
