/* A sweep's replicate groups and their statistics (views/replicates.c,
 * views/stats.c) against values worked out by hand: the summaries, the
 * Student t tail and its inverse, the paired t-test, which cells a group
 * averages, counts apart or waits for, and which seeds a comparison pairs. */
#include <math.h>
#include <string.h>

#include "views/replicates.h"
#include "views/stats.h"
#include "tests/check.h"

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * (1 + fabs(b)); }

static void summary_by_hand(void)
{
    struct summary s;
    double x[] = {10, 12, 11};
    stats_summary(x, 3, &s);
    CHECK(s.n == 3 && s.mean == 11 && near(s.sd, 1, 1e-15) && s.min == 10 && s.max == 12,
          "n %d mean %g sd %g min %g max %g", s.n, s.mean, s.sd, s.min, s.max);
    /* replicates close together far from zero: the two-pass deviation stays exact */
    double y[] = {1e8 + 1, 1e8 + 2, 1e8 + 3};
    stats_summary(y, 3, &s);
    CHECK(near(s.sd, 1, 1e-12), "sd %.17g", s.sd);
    stats_summary(x, 1, &s);
    CHECK(s.n == 1 && s.mean == 10 && isnan(s.sd), "one value: sd %g", s.sd);
    stats_summary(x, 0, &s);
    CHECK(s.n == 0 && isnan(s.mean), "no value: mean %g", s.mean);
}

static void t_distribution_by_hand(void)
{
    /* df = 1 (Cauchy): P(|T| >= t) = 1 - 2 atan(t) / pi; df = 2: 1 - t / sqrt(t^2 + 2) */
    CHECK(near(stats_t_two_sided(1, 1), 0.5, 1e-12), "%.17g", stats_t_two_sided(1, 1));
    CHECK(near(stats_t_two_sided(3, 1), 1 - 2 * atan(3) / M_PI, 1e-12), "%.17g", stats_t_two_sided(3, 1));
    CHECK(near(stats_t_two_sided(sqrt(7), 2), 1 - sqrt(7) / 3, 1e-12), "%.17g",
          stats_t_two_sided(sqrt(7), 2));
    CHECK(stats_t_two_sided(0, 5) == 1, "t = 0: %.17g", stats_t_two_sided(0, 5));
    /* large df: the normal's 1.959964 */
    CHECK(near(stats_t_two_sided(1.959963984540054, 1e7), 0.05, 1e-5), "%.17g",
          stats_t_two_sided(1.959963984540054, 1e7));
    /* the tables' 12.706 (df 1) and 4.303 (df 2, closed form sqrt(2 (1-p)^2 / (1 - (1-p)^2))) */
    CHECK(near(stats_t_critical(0.05, 1), tan(M_PI * 0.475), 1e-9), "%.17g", stats_t_critical(0.05, 1));
    CHECK(near(stats_t_critical(0.05, 2), sqrt(2 * 0.9025 / 0.0975), 1e-9), "%.17g",
          stats_t_critical(0.05, 2));
    CHECK(near(stats_t_critical(0.05, 10), 2.2281388519649385, 1e-9), "%.17g", stats_t_critical(0.05, 10));
}

static void paired_t_by_hand(void)
{
    /* d = 1, 2, 0.5: mean 7/6, sd sqrt(7/12), t = mean / (sd / sqrt 3) = sqrt 7, df 2 */
    double d[] = {1, 2, 0.5};
    struct paired t;
    CHECK(stats_paired_t(d, 3, &t) == 0, "refused");
    double se = sqrt(7.0 / 12) / sqrt(3), half = sqrt(2 * 0.9025 / 0.0975) * se;
    CHECK(t.n == 3 && near(t.mean, 7.0 / 6, 1e-15) && near(t.sd, sqrt(7.0 / 12), 1e-15), "mean %g sd %g",
          t.mean, t.sd);
    CHECK(near(t.t, sqrt(7), 1e-14) && near(t.p, 1 - sqrt(7) / 3, 1e-12), "t %.17g p %.17g", t.t, t.p);
    CHECK(near(t.lo, 7.0 / 6 - half, 1e-9) && near(t.hi, 7.0 / 6 + half, 1e-9), "ci [%g, %g]", t.lo, t.hi);
    double same[] = {0.5, 0.5}, zero[] = {0, 0};
    CHECK(stats_paired_t(same, 2, &t) == 0 && t.p == 0 && isinf(t.t), "equal nonzero: p %g", t.p);
    CHECK(stats_paired_t(zero, 2, &t) == 0 && t.p == 1 && t.t == 0, "all zero: p %g", t.p);
    CHECK(stats_paired_t(d, 1, &t) == -1, "one pair is no test");
}

static json_t *cell(int id, const char *norm, int seed, const char *state, double ppl, const char *reason)
{
    json_t *c = json_pack("{s:i,s:s,s:{s:s,s:i},s:o,s:o,s:o}", "experiment", id, "state", state, "params",
                          "norm", norm, "train.seed", seed, "eval/ppl",
                          isnan(ppl) ? json_null() : json_real(ppl), "eval/loss",
                          isnan(ppl) ? json_null() : json_real(log(ppl)), "reason",
                          reason ? json_string(reason) : json_null());
    return c;
}

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }
static long count(const json_t *o, const char *k) { return (long)json_integer_value(json_object_get(o, k)); }

static void groups_by_hand(void)
{
    /* pre: seeds 1-3 finished (10, 12, 11), seed 4 still running; lns: 9, 10,
     * seed 3 diverged, seed 4 10.5; post: every seed failed otherwise or
     * cancelled, seed 4 ended with a perplexity that is not finite */
    json_t *cells = json_array();
    json_array_append_new(cells, cell(1, "pre", 1, "succeeded", 10, NULL));
    json_array_append_new(cells, cell(2, "lns", 1, "succeeded", 9, NULL));
    json_array_append_new(cells, cell(3, "post", 1, "failed", NAN, "out of memory"));
    json_array_append_new(cells, cell(4, "pre", 2, "succeeded", 12, NULL));
    json_array_append_new(cells, cell(5, "lns", 2, "succeeded", 10, NULL));
    json_array_append_new(cells, cell(6, "post", 2, "cancelled", NAN, NULL));
    json_array_append_new(cells, cell(7, "pre", 3, "succeeded", 11, NULL));
    json_array_append_new(cells, cell(8, "lns", 3, "failed", NAN, "diverged at step 7"));
    json_array_append_new(cells, cell(9, "post", 3, "queued", NAN, NULL));
    json_array_append_new(cells, cell(10, "pre", 4, "running", 50, NULL));
    json_array_append_new(cells, cell(11, "lns", 4, "succeeded", 10.5, NULL));
    json_array_append_new(cells, cell(12, "post", 4, "succeeded", NAN, NULL));
    json_t *groups, *cmp;
    CHECK(replicates_group(cells, &groups, &cmp) == 0, "failed");
    CHECK(json_array_size(groups) == 3, "%zu groups", json_array_size(groups));
    const json_t *pre = json_array_get(groups, 0), *lns = json_array_get(groups, 1),
                 *post = json_array_get(groups, 2);
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(pre, "params"), "norm")), "pre") &&
              json_object_size(json_object_get(pre, "params")) == 1,
          "a group's params leave the seed out");
    const json_t *p = json_object_get(pre, "eval/ppl");
    CHECK(count(pre, "n") == 3 && count(pre, "unfinished") == 1 && count(pre, "diverged") == 0,
          "pre: n %ld unfinished %ld", count(pre, "n"), count(pre, "unfinished"));
    CHECK(num(p, "mean") == 11 && near(num(p, "sd"), 1, 1e-15) && num(p, "min") == 10 && num(p, "max") == 12,
          "pre: mean %g sd %g", num(p, "mean"), num(p, "sd"));
    CHECK(json_array_size(json_object_get(pre, "averaged")) == 3 &&
              json_array_size(json_object_get(pre, "experiments")) == 4,
          "pre: 3 averaged of 4");
    /* the diverged replicate is counted, never averaged: mean of 9, 10, 10.5 */
    p = json_object_get(lns, "eval/ppl");
    CHECK(count(lns, "n") == 3 && count(lns, "diverged") == 1, "lns: n %ld diverged %ld", count(lns, "n"),
          count(lns, "diverged"));
    CHECK(near(num(p, "mean"), 29.5 / 3, 1e-15) && near(num(p, "sd"), sqrt(7.0 / 12), 1e-14),
          "lns: mean %.17g sd %.17g", num(p, "mean"), num(p, "sd"));
    CHECK(near(num(json_object_get(lns, "eval/loss"), "mean"), (log(9) + log(10) + log(10.5)) / 3, 1e-14),
          "lns: eval/loss");
    CHECK(count(post, "n") == 0 && count(post, "failed") == 1 && count(post, "cancelled") == 1 &&
              count(post, "unfinished") == 1 && count(post, "diverged") == 1 &&
              json_is_null(json_object_get(post, "eval/ppl")),
          "post: nothing to average");
    CHECK(json_is_true(json_object_get(json_array_get(cells, 7), "diverged")) &&
              json_is_true(json_object_get(json_array_get(cells, 11), "diverged")) &&
              json_is_false(json_object_get(json_array_get(cells, 0), "diverged")),
          "each cell says whether it diverged");
    CHECK(count(json_array_get(cells, 3), "group") == 0 && count(json_array_get(cells, 4), "group") == 1 &&
              count(json_array_get(cells, 3), "seed") == 2,
          "each cell names its group and seed");

    /* pre vs lns: seeds 1 and 2 pair (3: lns diverged, 4: pre running):
     * d = 1, 2, mean 1.5, sd sqrt(1/2), t = 3 with df 1 */
    CHECK(json_array_size(cmp) == 3, "%zu comparisons", json_array_size(cmp));
    const json_t *c = json_array_get(cmp, 0);
    CHECK(count(c, "a") == 0 && count(c, "b") == 1 &&
              !strcmp(json_string_value(json_object_get(c, "differs")), "norm") && count(c, "pairs") == 2,
          "pre vs lns: a %ld b %ld pairs %ld", count(c, "a"), count(c, "b"), count(c, "pairs"));
    CHECK(num(c, "mean_diff") == 1.5 && near(num(c, "sd_diff"), sqrt(0.5), 1e-15) && near(num(c, "t"), 3, 1e-14),
          "mean %g sd %g t %g", num(c, "mean_diff"), num(c, "sd_diff"), num(c, "t"));
    CHECK(near(num(c, "p"), 1 - 2 * atan(3) / M_PI, 1e-12), "p %.17g", num(c, "p"));
    const json_t *ci = json_object_get(c, "ci95");
    double half = tan(M_PI * 0.475) * 0.5;
    CHECK(near(json_number_value(json_array_get(ci, 0)), 1.5 - half, 1e-9) &&
              near(json_number_value(json_array_get(ci, 1)), 1.5 + half, 1e-9),
          "ci [%g, %g]", json_number_value(json_array_get(ci, 0)), json_number_value(json_array_get(ci, 1)));
    CHECK(json_is_true(json_object_get(c, "within_noise")), "two pairs this far apart are noise");
    c = json_array_get(cmp, 1);
    CHECK(count(c, "pairs") == 0 && json_is_null(json_object_get(c, "p")) &&
              json_is_null(json_object_get(c, "within_noise")),
          "pre vs post: nothing to pair");
    json_decref(groups);
    json_decref(cmp);
    json_decref(cells);
}

static void no_seeds(void)
{
    json_t *cells = json_array(), *groups, *cmp;
    json_array_append_new(cells, json_pack("{s:i,s:s,s:{s:s},s:f,s:n}", "experiment", 1, "state", "succeeded",
                                           "params", "norm", "pre", "eval/ppl", 7.5, "reason"));
    json_array_append_new(cells, json_pack("{s:i,s:s,s:{s:s},s:f,s:n}", "experiment", 2, "state", "succeeded",
                                           "params", "norm", "lns", "eval/ppl", 8.2, "reason"));
    CHECK(replicates_group(cells, &groups, &cmp) == 0, "failed");
    CHECK(json_array_size(groups) == 2 && json_array_size(cmp) == 0,
          "without seeds: a group per cell and nothing to pair (%zu, %zu)", json_array_size(groups),
          json_array_size(cmp));
    const json_t *p = json_object_get(json_array_get(groups, 1), "eval/ppl");
    CHECK(num(p, "mean") == 8.2 && json_is_null(json_object_get(p, "sd")) && count(p, "n") == 1,
          "one run: its value, no sd");
    CHECK(json_is_null(json_object_get(json_array_get(cells, 0), "seed")), "no seed");
    json_decref(groups);
    json_decref(cmp);
    json_decref(cells);
}

int main(void)
{
    RUN(summary_by_hand);
    RUN(t_distribution_by_hand);
    RUN(paired_t_by_hand);
    RUN(groups_by_hand);
    RUN(no_seeds);
    CHECK_EXIT();
}
