/* The report's tables (tables.h): Table 1 with the best of each column and
 * the ties within the seed noise, the paired comparisons, the depth summary
 * (the two numbers it derives itself: docs/report.md), and the CSV files of
 * the tables, the figures' series and every cell. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/tables.h"
#include "report/text.h"

/* ---- CSV: the group columns, then the rest ---- */

static void csv_group_head(const struct ctx *c, FILE *f)
{
    fputs("group", f);
    for (int k = 0; k < c->n_skeys; k++) {
        fputc(',', f);
        text_csv(f, c->skeys[k]);
    }
    if (c->vkey) {
        fputc(',', f);
        text_csv(f, c->vkey);
    }
}

static void csv_group(const struct ctx *c, FILE *f, int g)
{
    const json_t *params = json_object_get(json_array_get(c->groups, (size_t)g), "params");
    fprintf(f, "%d", g);
    for (int k = 0; k < c->n_skeys; k++) {
        fputc(',', f);
        text_csv_json(f, json_object_get(params, c->skeys[k]));
    }
    if (c->vkey) {
        fputc(',', f);
        text_csv_json(f, json_object_get(params, c->vkey));
    }
}

/* metrics' series, every row the API sent: group, its params, metric,
 * step, layer, mean, sd, n. */
int rp_series_csv(struct ctx *c, const char *file, const char *const *metrics)
{
    struct out o;
    if (rp_out_open(&o))
        return -1;
    csv_group_head(c, o.f);
    fputs(",metric,step,layer,mean,sd,n\n", o.f);
    for (const char *const *m = metrics; *m; m++)
        for (int g = 0; g < (int)json_array_size(c->groups); g++) {
            struct col col;
            if (rp_col_of(c, *m, g, &col) != 0)
                continue;
            for (size_t i = 0; i < col.len; i++) {
                csv_group(c, o.f, g);
                fputc(',', o.f);
                text_csv(o.f, *m);
                const json_t *cols[5] = {col.step, col.layer, col.mean, col.sd, col.n};
                for (int k = 0; k < 5; k++) {
                    fputc(',', o.f);
                    text_csv_json(o.f, json_array_get(cols[k], i));
                }
                fputc('\n', o.f);
            }
        }
    return rp_out_file(c, &o, file, "text/csv");
}

/* The angular matrices: span K from the name angular/nK. */
int rp_angular_csv(struct ctx *c, int max_layers)
{
    struct out o;
    if (rp_out_open(&o))
        return -1;
    csv_group_head(c, o.f);
    fputs(",layer,span,mean,sd,n\n", o.f);
    for (int g = 0; g < (int)json_array_size(c->groups); g++)
        for (int k = 1; k <= max_layers; k++) {
            char name[32];
            struct col col;
            snprintf(name, sizeof name, "angular/n%d", k);
            if (rp_col_of(c, name, g, &col) != 0)
                continue;
            for (size_t i = 0; i < col.len; i++) {
                csv_group(c, o.f, g);
                fputc(',', o.f);
                text_csv_json(o.f, json_array_get(col.layer, i));
                fprintf(o.f, ",%d", k);
                const json_t *cols[3] = {col.mean, col.sd, col.n};
                for (int j = 0; j < 3; j++) {
                    fputc(',', o.f);
                    text_csv_json(o.f, json_array_get(cols[j], i));
                }
                fputc('\n', o.f);
            }
        }
    return rp_out_file(c, &o, "angular.csv", "text/csv");
}

/* ---- Table 1 and the comparisons ---- */

static const json_t *ppl_of(const struct ctx *c, int g)
{
    return json_object_get(json_array_get(c->groups, (size_t)g), "eval/ppl");
}

static double ppl_mean(const struct ctx *c, int g)
{
    return g < 0 ? NAN : json_is_number(json_object_get(ppl_of(c, g), "mean"))
                             ? json_number_value(json_object_get(ppl_of(c, g), "mean"))
                             : NAN;
}

/* The comparison of groups a and b, in either order. */
static const json_t *comparison(const struct ctx *c, int a, int b)
{
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(c->view, "comparisons"), i, x) {
        json_int_t xa = json_integer_value(json_object_get(x, "a")),
                   xb = json_integer_value(json_object_get(x, "b"));
        if ((xa == a && xb == b) || (xa == b && xb == a))
            return x;
    }
    return NULL;
}

static int best_of_setting(const struct ctx *c, int s)
{
    int best = -1;
    for (int v = 0; v < c->nv; v++) {
        int g = rp_group_of(c, s, v);
        if (g >= 0 && isfinite(ppl_mean(c, g)) && (best < 0 || ppl_mean(c, g) < ppl_mean(c, best)))
            best = g;
    }
    return best;
}

static long count_of(const struct ctx *c, int g, const char *key)
{
    return (long)json_integer_value(json_object_get(json_array_get(c->groups, (size_t)g), key));
}

static void table1_cell(const struct ctx *c, FILE *f, int g, int best)
{
    if (g < 0) {
        fputs("<td></td>", f);
        return;
    }
    const json_t *p = ppl_of(c, g);
    long n = count_of(c, g, "n"), div = count_of(c, g, "diverged"),
         open = count_of(c, g, "unfinished"), other = count_of(c, g, "failed") + count_of(c, g, "cancelled");
    const json_t *cmp = best >= 0 && g != best ? comparison(c, g, best) : NULL;
    int tie = cmp && json_is_true(json_object_get(cmp, "within_noise"));
    fprintf(f, "<td class=\"%s%s\" data-group=\"%d\">", g == best ? "best" : "", tie ? " tie" : "", g);
    if (n) {
        text_short(f, json_number_value(json_object_get(p, "mean")));
        if (json_is_number(json_object_get(p, "sd"))) {
            fputs(" ± ", f);
            text_short(f, json_number_value(json_object_get(p, "sd")));
        }
        fprintf(f, " <span class=\"n\">(n=%ld)</span>", n);
        if (tie)
            fputs(" <span class=\"tie\" title=\"within seed noise of the best\">≈</span>", f);
    }
    if (div)
        fprintf(f, "%s<span class=\"diverged\">%ld diverged</span>", n ? "<br>" : "", div);
    if (open)
        fprintf(f, "%s<span class=\"n\">%ld unfinished</span>", n || div ? "<br>" : "", open);
    if (other)
        fprintf(f, "%s<span class=\"n\">%ld failed or cancelled</span>", n || div || open ? "<br>" : "",
                other);
    fputs("</td>", f);
}

int rp_table1(struct ctx *c, FILE *f)
{
    fputs("<h2 id=\"table1\">Table 1. Final evaluation perplexity</h2>\n<table class=\"t1\"><thead><tr>", f);
    rp_element(f, "th", c->vkey ? c->vkey : "");
    for (int s = 0; s < c->ns; s++) {
        char l[LABEL];
        rp_setting_label(c, s, l, sizeof l);
        rp_element(f, "th", l);
    }
    fputs("</tr></thead><tbody>\n", f);
    for (int v = 0; v < c->nv; v++) {
        char l[LABEL];
        rp_variant_label(c, v, l, sizeof l);
        fputs("<tr>", f);
        rp_element(f, "th", l);
        for (int s = 0; s < c->ns; s++)
            table1_cell(c, f, rp_group_of(c, s, v), best_of_setting(c, s));
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n<p class=\"note\">Final held-out perplexity, mean ± standard deviation "
          "over the replicates (seeds) that finished; n counts them. <b>Bold</b>: the lowest mean of "
          "its column. ≈: not distinguishable from the best at equal seeds (paired t-test, p ≥ 0.05). "
          "A diverged run (a non-finite loss) is counted as such and never averaged in.</p>\n", f);
    rp_data_link(f, "table1.csv");
    /* the CSV: one row per group */
    struct out o;
    if (rp_out_open(&o))
        return -1;
    csv_group_head(c, o.f);
    fputs(",n,diverged,unfinished,failed,cancelled,ppl_mean,ppl_sd,ppl_min,ppl_max,loss_mean,loss_sd,"
          "best_of_column,within_noise_of_best\n", o.f);
    for (int s = 0; s < c->ns; s++) {
        int best = best_of_setting(c, s);
        for (int v = 0; v < c->nv; v++) {
            int g = rp_group_of(c, s, v);
            if (g < 0)
                continue;
            const json_t *grp = json_array_get(c->groups, (size_t)g);
            const json_t *p = ppl_of(c, g), *l = json_object_get(grp, "eval/loss");
            csv_group(c, o.f, g);
            static const char *const counts[] = {"n", "diverged", "unfinished", "failed", "cancelled"};
            for (int k = 0; k < 5; k++)
                fprintf(o.f, ",%ld", count_of(c, g, counts[k]));
            static const char *const ps[] = {"mean", "sd", "min", "max"};
            for (int k = 0; k < 4; k++) {
                fputc(',', o.f);
                text_csv_json(o.f, json_object_get(p, ps[k]));
            }
            fputc(',', o.f);
            text_csv_json(o.f, json_object_get(l, "mean"));
            fputc(',', o.f);
            text_csv_json(o.f, json_object_get(l, "sd"));
            const json_t *cmp = best >= 0 && g != best ? comparison(c, g, best) : NULL;
            fprintf(o.f, ",%s,", g == best ? "true" : "false");
            text_csv_json(o.f, cmp ? json_object_get(cmp, "within_noise") : NULL);
            fputc('\n', o.f);
        }
    }
    return rp_out_file(c, &o, "table1.csv", "text/csv");
}


int rp_comparisons(struct ctx *c, FILE *f)
{
    const json_t *all = json_object_get(c->view, "comparisons"), *x;
    size_t i;
    fputs("<h2 id=\"comparisons\">Paired comparisons at equal seeds</h2>\n", f);
    if (!json_array_size(all)) {
        fputs("<p class=\"note\">The grid has no seeds (train.seed): every cell is one run, and no "
              "difference can be told from the seed noise.</p>\n", f);
    } else {
        fputs("<table class=\"cmp\"><thead><tr><th>A</th><th>B</th><th>pairs</th><th>mean Δppl (A − B)"
              "</th><th>95 % CI</th><th>p</th><th>reading</th></tr></thead><tbody>\n", f);
        json_array_foreach(all, i, x) {
            const char *key = json_string_value(json_object_get(x, "differs"));
            if (!key || (c->vkey && strcmp(key, c->vkey)))
                continue;  /* the table shows variants against each other; the CSV has all */
            char a[2 * LABEL], b[2 * LABEL];
            rp_group_label(c, (int)json_integer_value(json_object_get(x, "a")), a, sizeof a);
            rp_group_label(c, (int)json_integer_value(json_object_get(x, "b")), b, sizeof b);
            fputs("<tr>", f);
            rp_element(f, "td", a);
            rp_element(f, "td", b);
            fprintf(f, "<td>%lld</td><td>", (long long)json_integer_value(json_object_get(x, "pairs")));
            const json_t *ci = json_object_get(x, "ci95");
            if (json_is_number(json_object_get(x, "mean_diff"))) {
                text_short(f, json_number_value(json_object_get(x, "mean_diff")));
                fputs("</td><td>[", f);
                text_short(f, rp_jnum(ci, 0));
                fputs(", ", f);
                text_short(f, rp_jnum(ci, 1));
                fputs("]</td><td>", f);
                text_short(f, json_number_value(json_object_get(x, "p")));
                int noise = json_is_true(json_object_get(x, "within_noise"));
                fprintf(f, "</td><td class=\"%s\">%s</td></tr>\n", noise ? "noise" : "sig",
                        noise ? "within seed noise"
                        : json_number_value(json_object_get(x, "mean_diff")) < 0 ? "A lower"
                                                                                 : "B lower");
            } else {
                fputs("</td><td></td><td></td><td class=\"noise\">fewer than 2 pairs</td></tr>\n", f);
            }
        }
        fputs("</tbody></table>\n<p class=\"note\">Each row pairs the runs of A and B that share a seed "
              "(both finished, neither diverged) and tests the mean of their perplexity differences "
              "against zero (two-sided paired t-test, n − 1 degrees of freedom); "
              "\"within seed noise\" when p ≥ 0.05.</p>\n", f);
    }
    rp_data_link(f, "comparisons.csv");
    struct out o;
    if (rp_out_open(&o))
        return -1;
    fputs("a,b,a_label,b_label,differs,metric,pairs,mean_diff,sd_diff,t,p,ci95_lo,ci95_hi,within_noise\n", o.f);
    json_array_foreach(all, i, x) {
        char a[2 * LABEL], b[2 * LABEL];
        rp_group_label(c, (int)json_integer_value(json_object_get(x, "a")), a, sizeof a);
        rp_group_label(c, (int)json_integer_value(json_object_get(x, "b")), b, sizeof b);
        fprintf(o.f, "%lld,%lld,", (long long)json_integer_value(json_object_get(x, "a")),
                (long long)json_integer_value(json_object_get(x, "b")));
        text_csv(o.f, a);
        fputc(',', o.f);
        text_csv(o.f, b);
        static const char *const keys[] = {"differs", "metric", "pairs", "mean_diff", "sd_diff", "t", "p"};
        for (int k = 0; k < 7; k++) {
            fputc(',', o.f);
            text_csv_json(o.f, json_object_get(x, keys[k]));
        }
        const json_t *ci = json_object_get(x, "ci95");
        fputc(',', o.f);
        text_csv_json(o.f, json_array_get(ci, 0));
        fputc(',', o.f);
        text_csv_json(o.f, json_array_get(ci, 1));
        fputc(',', o.f);
        text_csv_json(o.f, json_object_get(x, "within_noise"));
        fputc('\n', o.f);
    }
    return rp_out_file(c, &o, "comparisons.csv", "text/csv");
}

/* ---- the depth summary: the numbers behind the paper's three claims ---- */

struct depth_row {
    int L;
    double ratio;      /* out_var of block L over block 1, replicate means, last step */
    double deep_loss;  /* mean prune/delta_loss over blocks L/2+1 … L */
    double deep_ppl;   /* the same of prune/delta_ppl */
    double tail;       /* relative change of eval/ppl over the last tenth of training */
    double tail_from;  /* the step that tenth starts at */
};

/* Whether training went on long enough for the perplexity to settle: the
 * relative change of the replicate-mean eval/ppl from the last evaluation
 * at or before 90 % of the last step to the last one (near 0: flat). */
static double ppl_tail(const struct ctx *c, int g, double *from)
{
    struct col o;
    *from = NAN;
    if (rp_col_of(c, "eval/ppl", g, &o) != 0 || o.len == 0)
        return NAN;
    double *x = malloc(3 * o.len * sizeof(double)), tail = NAN;
    if (!x)
        return NAN;
    double *y = x + o.len, *e = y + o.len;
    int n = rp_over_steps(&o, -1, x, y, e), at_last = -1, at_from = -1;
    for (int i = 0; i < n; i++)
        if (at_last < 0 || x[i] > x[at_last])
            at_last = i;
    for (int i = 0; i < n; i++)
        if (x[i] <= 0.9 * x[at_last] && x[i] < x[at_last] && (at_from < 0 || x[i] > x[at_from]))
            at_from = i;
    if (at_from >= 0) {
        *from = x[at_from];
        tail = y[at_last] / y[at_from] - 1;
    }
    free(x);
    return tail;
}

static double deep_half(const struct ctx *c, const char *metric, int g, int L)
{
    struct col o;
    if (rp_col_of(c, metric, g, &o) != 0)
        return NAN;
    double last = rp_last_step(&o), sum = 0;
    int n = 0;
    for (int l = L / 2 + 1; l <= L; l++) {
        double v = rp_value_at(&o, last, l);
        if (!isfinite(v))
            return NAN;
        sum += v;
        n++;
    }
    return n ? sum / n : NAN;
}

static struct depth_row depth_row(const struct ctx *c, int g)
{
    struct depth_row r = {rp_n_layers_of(c, g), NAN, NAN, NAN, NAN, NAN};
    struct col o;
    if (rp_col_of(c, "layer/out_var", g, &o) == 0) {
        double last = rp_last_step(&o);
        r.ratio = rp_value_at(&o, last, r.L) / rp_value_at(&o, last, 1);
    }
    r.deep_loss = deep_half(c, "prune/delta_loss", g, r.L);
    r.deep_ppl = deep_half(c, "prune/delta_ppl", g, r.L);
    r.tail = ppl_tail(c, g, &r.tail_from);
    return r;
}

int rp_depth_summary(struct ctx *c, FILE *f)
{
    fputs("<h2 id=\"depth\">Depth summary</h2>\n<table class=\"cmp\"><thead><tr><th>setting</th><th>variant"
          "</th><th>layers</th><th>eval ppl</th><th>its change over the last tenth</th>"
          "<th>out_var block L ÷ block 1</th><th>mean Δloss, deepest half</th>"
          "<th>mean Δppl, deepest half</th></tr></thead><tbody>\n", f);
    struct out o;
    if (rp_out_open(&o))
        return -1;
    csv_group_head(c, o.f);
    fputs(",layers,ppl_mean,ppl_sd,n,ppl_change_last_tenth,ppl_change_from_step,"
          "out_var_ratio_last_first,deep_half_delta_loss,deep_half_delta_ppl\n", o.f);
    for (int s = 0; s < c->ns; s++)
        for (int v = 0; v < c->nv; v++) {
            int g = rp_group_of(c, s, v);
            if (g < 0)
                continue;
            struct depth_row r = depth_row(c, g);
            char a[LABEL], b[LABEL];
            rp_setting_label(c, s, a, sizeof a);
            rp_variant_label(c, v, b, sizeof b);
            fputs("<tr>", f);
            rp_element(f, "td", a);
            rp_element(f, "td", b);
            fprintf(f, "<td>%d</td>", r.L);
            table1_cell(c, f, g, -1);
            fputs("<td>", f);
            if (isfinite(r.tail))
                fprintf(f, "%+.1f %% (from step %.0f)", 100 * r.tail, r.tail_from);
            fputs("</td>", f);
            double vals[3] = {r.ratio, r.deep_loss, r.deep_ppl};
            for (int k = 0; k < 3; k++) {
                fputs("<td>", f);
                text_short(f, vals[k]);
                fputs("</td>", f);
            }
            fputs("</tr>\n", f);
            const json_t *p = ppl_of(c, g);
            csv_group(c, o.f, g);
            fprintf(o.f, ",%d,", r.L);
            text_csv_json(o.f, json_object_get(p, "mean"));
            fputc(',', o.f);
            text_csv_json(o.f, json_object_get(p, "sd"));
            fprintf(o.f, ",%ld", count_of(c, g, "n"));
            if (isfinite(r.tail))
                fprintf(o.f, ",%.17g,%.0f", r.tail, r.tail_from);
            else
                fputs(",,", o.f);
            for (int k = 0; k < 3; k++) {
                if (isfinite(vals[k]))
                    fprintf(o.f, ",%.17g", vals[k]);
                else
                    fputc(',', o.f);
            }
            fputc('\n', o.f);
        }
    fputs("</tbody></table>\n<p class=\"note\">Derived here from the series of the figures below: the "
          "relative change of the replicate-mean eval perplexity from the last evaluation at or before "
          "90 % of the training to the last (near 0: trained until it flattened), the ratio "
          "of the replicate-mean layer/out_var of the last block to that of the first block at the last "
          "step (Figure 1: the Curse of Depth is this ratio growing with depth), and the mean performance "
          "drop ΔP(ℓ) when one block of the deepest half (ℓ = L/2+1 … L) is removed (Figure 4: near 0 "
          "means those blocks barely matter).</p>\n", f);
    rp_data_link(f, "depth_summary.csv");
    return rp_out_file(c, &o, "depth_summary.csv", "text/csv");
}

int rp_cells_csv(struct ctx *c)
{
    struct out o;
    if (rp_out_open(&o))
        return -1;
    fputs("experiment,group", o.f);
    for (int k = 0; k < c->n_skeys; k++) {
        fputc(',', o.f);
        text_csv(o.f, c->skeys[k]);
    }
    if (c->vkey) {
        fputc(',', o.f);
        text_csv(o.f, c->vkey);
    }
    fputs(",seed,state,diverged,step,eval_ppl,eval_loss,reason\n", o.f);
    size_t i;
    const json_t *cell;
    json_array_foreach(json_object_get(c->view, "cells"), i, cell) {
        const json_t *params = json_object_get(cell, "params");
        text_csv_json(o.f, json_object_get(cell, "experiment"));
        fputc(',', o.f);
        text_csv_json(o.f, json_object_get(cell, "group"));
        for (int k = 0; k < c->n_skeys; k++) {
            fputc(',', o.f);
            text_csv_json(o.f, json_object_get(params, c->skeys[k]));
        }
        if (c->vkey) {
            fputc(',', o.f);
            text_csv_json(o.f, json_object_get(params, c->vkey));
        }
        static const char *const keys[] = {"seed", "state", "diverged", "step", "eval/ppl", "eval/loss",
                                           "reason"};
        for (int k = 0; k < 7; k++) {
            fputc(',', o.f);
            text_csv_json(o.f, json_object_get(cell, keys[k]));
        }
        fputc('\n', o.f);
    }
    return rp_out_file(c, &o, "cells.csv", "text/csv");
}

