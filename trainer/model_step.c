/* A training micro-batch (model_step): its forward and backward, from a
 * recording where the backend records, and its losses kept on the backend
 * until model_losses_take. */
#include "trainer/model_internal.h"

/* Runs the loaded micro-batch's forward and backward from a recording
 * when the backend can record (ops.h): the first micro-batch of a shape
 * runs op by op, which settles what a backend sizes on first use
 * (cuBLASLt's plans, scratch memory); the second is recorded and
 * replayed, later ones replayed. A shape is the batch size and the loss
 * scale, the only values of the step that the ops take by value and the
 * model could change; everything else they take is a buffer. Returns 0
 * where the caller must run the ops itself. */
static int replayed(struct model *m, real grad_scale)
{
    const struct ops *o = m->ops;
    if (!o->record_begin || m->rec.off || m->grads_ready || m->skip)
        return 0;
    int same = m->rec.B == m->B && m->rec.scale == grad_scale;
    if (m->rec.r && !same) {
        o->recording_free(m->rec.r);
        m->rec.r = NULL;
    }
    if (!m->rec.r) {
        if (!same) {
            m->rec.B = m->B;
            m->rec.scale = grad_scale;
            return 0;
        }
        if (o->record_begin(m->rec.why, sizeof m->rec.why)) {
            m->rec.off = 1;
            return 0;
        }
        model_forward_ops(m, grad_scale, NULL);
        model_backward(m);
        m->rec.r = o->record_end(m->rec.why, sizeof m->rec.why);
        if (!m->rec.r) {
            m->rec.off = 1;
            return 0;
        }
    }
    if (o->replay(m->rec.r) != 0) {
        /* the backend's memory moved under it: op by op now, recorded anew next time */
        o->recording_free(m->rec.r);
        m->rec.r = NULL;
        return 0;
    }
    m->rec.replays++;
    return 1;
}

/* The micro-batch's n per-token losses after those kept before: a copy in
 * the backend's stream order. Reading their sum at once made the host wait
 * for the GPU at the end of every micro-batch, and the GPU then wait for
 * the host to sample, sort and upload the next one (the H200's profile:
 * 0.4-0.5 ms idle a micro-batch). The rows grow by doubling, in
 * the first update; where the memory is refused, the sum is read now. */
static void keep_losses(struct model *m, size_t n)
{
    const struct ops *o = m->ops;
    if (m->loss_n + n > m->loss_cap) {
        size_t cap = m->loss_cap ? 2 * m->loss_cap : n;
        while (cap < m->loss_n + n)
            cap *= 2;
        real *rows = o->alloc(cap);
        if (!rows) {
            m->loss_host += o->sum(m->losses, n);
            return;
        }
        if (m->loss_n)
            o->copy(rows, m->loss_rows, m->loss_n);
        if (m->loss_rows)
            o->free(m->loss_rows);
        m->loss_rows = rows;
        m->loss_cap = cap;
    }
    o->copy(m->loss_rows + m->loss_n, m->losses, n);
    m->loss_n += n;
}

void model_step(struct model *m, const int32_t *tokens, const int32_t *targets, int B,
                real grad_scale)
{
    model_load_batch(m, tokens, targets, B, grad_scale);
    if (!replayed(m, grad_scale)) {
        model_forward_ops(m, grad_scale, NULL);
        model_backward(m);
    }
    keep_losses(m, (size_t)B * m->cfg.seq_len);
}

double model_losses_take(struct model *m)
{
    double sum = m->loss_host + (m->loss_n ? m->ops->sum(m->loss_rows, m->loss_n) : 0);
    m->loss_host = 0;
    m->loss_n = 0;
    return sum;
}
