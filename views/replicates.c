#include "views/replicates.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "views/stats.h"

/* A non-finite number is JSON null, as metrics travel. */
static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *replicates_summary(const double *x, int n)
{
    if (n < 1)
        return json_null();
    struct summary s;
    stats_summary(x, n, &s);
    return json_pack("{s:i,s:o,s:o,s:o,s:o}", "n", s.n, "mean", num(s.mean), "sd", num(s.sd), "min",
                     num(s.min), "max", num(s.max));
}

int replicates_diverged(const json_t *cell)
{
    const char *state = json_string_value(json_object_get(cell, "state"));
    const char *reason = json_string_value(json_object_get(cell, "reason"));
    if (state && !strcmp(state, "failed") && reason && !strncmp(reason, "diverged", 8))
        return 1;
    return state && !strcmp(state, "succeeded") && !json_is_number(json_object_get(cell, "eval/ppl"));
}

/* Counted in a group's figures: finished, not diverged, with a final perplexity. */
static int counted(const json_t *cell)
{
    const char *state = json_string_value(json_object_get(cell, "state"));
    return state && !strcmp(state, "succeeded") && !replicates_diverged(cell);
}

/* The cell's params without the seed: what its group shares. */
static json_t *group_params(const json_t *cell)
{
    json_t *p = json_deep_copy(json_object_get(cell, "params"));
    if (!p)
        return json_object();
    json_object_del(p, REPLICATE_KEY);
    return p;
}

/* A new group's object, its statistics filled in by finish_group. */
static json_t *new_group(size_t index, json_t *params)
{
    return json_pack("{s:I,s:o,s:[],s:[],s:i,s:i,s:i,s:i,s:i}", "group", (json_int_t)index, "params",
                     params, "experiments", "averaged", "n", 0, "diverged", 0, "unfinished", 0,
                     "failed", 0, "cancelled", 0);
}

static int add_count(json_t *g, const char *key)
{
    return json_object_set_new(g, key, json_integer(json_integer_value(json_object_get(g, key)) + 1));
}

/* The cell goes into its group's counts by what became of it. */
static int tally(json_t *g, const json_t *cell)
{
    const char *state = json_string_value(json_object_get(cell, "state"));
    json_t *id = json_object_get(cell, "experiment");
    if (json_array_append(json_object_get(g, "experiments"), id))
        return -1;
    if (counted(cell))
        return add_count(g, "n") || json_array_append(json_object_get(g, "averaged"), id);
    if (replicates_diverged(cell))
        return add_count(g, "diverged");
    if (state && (!strcmp(state, "queued") || !strcmp(state, "running") ||
                  !strcmp(state, "waiting")))
        return add_count(g, "unfinished");
    return add_count(g, state && !strcmp(state, "cancelled") ? "cancelled" : "failed");
}

/* The group's final eval/ppl and eval/loss over its counted cells. */
static int summarise(json_t *g, const json_t *members)
{
    size_t n = json_array_size(members), i;
    double *ppl = malloc((n + 1) * sizeof *ppl), *loss = malloc((n + 1) * sizeof *loss);
    int np = 0, nl = 0, rc = -1;
    json_t *cell;
    if (!ppl || !loss)
        goto done;
    json_array_foreach(members, i, cell) {
        ppl[np++] = json_number_value(json_object_get(cell, "eval/ppl"));
        json_t *l = json_object_get(cell, "eval/loss");
        if (json_is_number(l))
            loss[nl++] = json_number_value(l);
    }
    rc = json_object_set_new(g, "eval/ppl", replicates_summary(ppl, np)) ||
         json_object_set_new(g, "eval/loss", replicates_summary(loss, nl));
done:
    free(ppl);
    free(loss);
    return rc;
}

/* The one grid key whose values tell groups a and b apart, or NULL when
 * they differ in none or in more than one. */
static const char *differs_in(const json_t *a, const json_t *b)
{
    const char *k, *found = NULL;
    json_t *v;
    json_object_foreach((json_t *)a, k, v) {
        if (json_equal(v, json_object_get(b, k)))
            continue;
        if (found)
            return NULL;
        found = k;
    }
    return found;
}

/* The paired t-test of group a against b: their counted cells (ma, mb)
 * matched by seed, difference a − b of the final perplexity. */
static json_t *compare(json_int_t a, json_int_t b, const json_t *ma, const json_t *mb, const char *key)
{
    size_t n = json_array_size(ma), i, j;
    double *d = malloc((n + 1) * sizeof *d);
    json_t *seeds = json_array(), *ca, *cb, *out = NULL;
    int pairs = 0;
    if (!d || !seeds)
        goto done;
    json_array_foreach(ma, i, ca) {
        json_array_foreach(mb, j, cb) {
            if (!json_equal(json_object_get(ca, "seed"), json_object_get(cb, "seed")))
                continue;
            d[pairs++] = json_number_value(json_object_get(ca, "eval/ppl")) -
                         json_number_value(json_object_get(cb, "eval/ppl"));
            json_array_append(seeds, json_object_get(ca, "seed"));
            break;
        }
    }
    struct paired t;
    int tested = stats_paired_t(d, pairs, &t) == 0;
    out = json_pack("{s:I,s:I,s:s,s:s,s:i,s:O,s:o,s:o,s:o,s:o,s:o,s:o}", "a", a, "b", b, "differs",
                    key, "metric", "eval/ppl", "pairs", pairs, "seeds", seeds, "mean_diff",
                    tested ? num(t.mean) : json_null(), "sd_diff", tested ? num(t.sd) : json_null(),
                    "t", tested ? num(t.t) : json_null(), "p", tested ? num(t.p) : json_null(),
                    "ci95", tested ? json_pack("[o,o]", num(t.lo), num(t.hi)) : json_null(),
                    "within_noise", tested ? json_boolean(t.p >= 0.05) : json_null());
done:
    free(d);
    json_decref(seeds);
    return out;
}

int replicates_group(json_t *cells, json_t **groups, json_t **comparisons)
{
    *groups = json_array();
    *comparisons = json_array();
    /* each group's counted cells, so that pairing looks at those only */
    json_t *members = json_array();
    if (!*groups || !*comparisons || !members)
        goto fail;
    size_t i, gi;
    json_t *cell, *g;
    int seeded = 0;
    json_array_foreach(cells, i, cell) {
        json_t *params = group_params(cell), *seed = json_object_get(json_object_get(cell, "params"),
                                                                      REPLICATE_KEY);
        seeded |= seed != NULL;
        size_t found = json_array_size(*groups);
        json_array_foreach(*groups, gi, g) if (json_equal(json_object_get(g, "params"), params)) {
            found = gi;
            break;
        }
        if (found == json_array_size(*groups)) {
            if (json_array_append_new(*groups, new_group(found, json_incref(params))) ||
                json_array_append_new(members, json_array()))
                found = (size_t)-1;
        }
        json_decref(params);
        if (found == (size_t)-1 ||
            json_object_set_new(cell, "group", json_integer((json_int_t)found)) ||
            json_object_set(cell, "seed", seed ? seed : json_null()) ||
            json_object_set_new(cell, "diverged", json_boolean(replicates_diverged(cell))) ||
            tally(json_array_get(*groups, found), cell) ||
            (counted(cell) && json_array_append(json_array_get(members, found), cell)))
            goto fail;
    }
    json_array_foreach(*groups, gi, g) if (summarise(g, json_array_get(members, gi))) goto fail;
    /* Without seeds in the grid there is nothing to pair. */
    for (size_t a = 0; seeded && a < json_array_size(*groups); a++)
        for (size_t b = a + 1; b < json_array_size(*groups); b++) {
            json_t *ga = json_array_get(*groups, a), *gb = json_array_get(*groups, b);
            const char *key = differs_in(json_object_get(ga, "params"), json_object_get(gb, "params"));
            if (key && json_array_append_new(*comparisons, compare((json_int_t)a, (json_int_t)b,
                                                                   json_array_get(members, a),
                                                                   json_array_get(members, b), key)))
                goto fail;
        }
    json_decref(members);
    return 0;
fail:
    json_decref(members);
    json_decref(*groups);
    json_decref(*comparisons);
    *groups = *comparisons = NULL;
    return -1;
}
