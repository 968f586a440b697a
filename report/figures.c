/* The report's figures (figures.h): a panel per setting with a line per
 * variant, each with its title, axes and legend in the SVG (plot.c draws),
 * and the angular-distance heat maps, one per group. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/plot.h"
#include "report/figures.h"

static const char *const palette[] = {"#1f5fbf", "#d9480f", "#2b8a3e", "#9c36b5", "#e67700",
                                      "#0c8599", "#c2255c", "#5c940d", "#364fc7", "#862e9c"};

/* ---- figures: one panel per setting, one line per variant ---- */


int rp_figure_panels(struct ctx *c, FILE *f, const struct figure *fig)
{
    int ret = 0;
    fprintf(f, "<div class=\"figs\">\n");
    for (int s = 0; s < c->ns && !ret; s++) {
        struct plot_series *ps = calloc((size_t)c->nv + 1, sizeof *ps);
        double **bufs = calloc((size_t)c->nv * 3 + 1, sizeof *bufs);
        int n = 0;
        if (!ps || !bufs)
            ret = -1;
        for (int v = 0; v < c->nv && !ret; v++) {
            int g = rp_group_of(c, s, v);
            struct col o;
            if (g < 0 || rp_col_of(c, fig->metric, g, &o) != 0)
                continue;
            double *x = malloc((o.len + 1) * sizeof *x), *y = malloc((o.len + 1) * sizeof *y),
                   *e = malloc((o.len + 1) * sizeof *e);
            char *label = malloc(LABEL);
            if (!x || !y || !e || !label) {
                free(x);
                free(y);
                free(e);
                free(label);
                ret = -1;
                break;
            }
            bufs[3 * n] = x;
            bufs[3 * n + 1] = y;
            bufs[3 * n + 2] = e;
            int m = fig->how == AT_LAST_STEP ? rp_by_layer(&o, fig->from_layer, x, y, e)
                    : fig->how == OVER_STEPS ? rp_over_steps(&o, -1, x, y, e)
                                             : rp_over_steps(&o, rp_n_layers_of(c, g), x, y, e);
            rp_variant_label(c, v, label, LABEL);
            ps[n] = (struct plot_series){label, palette[v % 10], m, x, y, fig->error_bars ? e : NULL};
            n++;
        }
        char setting[LABEL], title[2 * LABEL], id[LABEL];
        rp_setting_label(c, s, setting, sizeof setting);
        snprintf(title, sizeof title, "%s — %s", fig->title, setting);
        snprintf(id, sizeof id, "%.40s:%.110s", fig->id, setting);
        struct plot p = {id, title, fig->xlabel, fig->ylabel, fig->log_y, n, ps};
        if (!ret)
            ret = plot_lines(f, &p);
        for (int i = 0; i < n; i++)
            free((char *)ps[i].label);
        for (int i = 0; bufs && i < 3 * n; i++)
            free(bufs[i]);
        free(bufs);
        free(ps);
    }
    fprintf(f, "</div>\n");
    if (ret)
        snprintf(c->err, c->errlen, "cannot draw %s: out of memory", fig->id);
    return ret;
}



/* ---- angular distance heat maps: one per group ---- */

int rp_heatmaps(struct ctx *c, FILE *f, int max_layers)
{
    fputs("<h2 id=\"angular\">Figure 5. Angular distance between layers</h2>\n<div class=\"figs\">\n", f);
    for (int s = 0; s < c->ns; s++)
        for (int v = 0; v < c->nv; v++) {
            int g = rp_group_of(c, s, v);
            if (g < 0)
                continue;
            int L = rp_n_layers_of(c, g);
            if (L < 1 || L > max_layers)
                continue;
            double *m = malloc((size_t)L * L * sizeof *m);
            if (!m) {
                snprintf(c->err, c->errlen, "out of memory");
                return -1;
            }
            for (int i = 0; i < L * L; i++)
                m[i] = NAN;
            int any = 0;
            for (int k = 1; k <= L; k++) {
                char name[32];
                struct col o;
                snprintf(name, sizeof name, "angular/n%d", k);
                if (rp_col_of(c, name, g, &o) != 0)
                    continue;
                double last = rp_last_step(&o);
                for (int l = 1; l + k - 1 <= L; l++) {
                    double x = rp_value_at(&o, last, l);
                    m[(size_t)(l - 1) * L + (k - 1)] = x;
                    any |= isfinite(x);
                }
            }
            if (any) {
                char a[LABEL], b[LABEL], title[3 * LABEL], id[3 * LABEL];
                rp_setting_label(c, s, a, sizeof a);
                rp_variant_label(c, v, b, sizeof b);
                snprintf(title, sizeof title, "Angular distance d(ℓ, n) — %s %s", b, a);
                snprintf(id, sizeof id, "angular:%s:%s", a, b);
                struct heatmap h = {id, title, "n (blocks spanned)", "layer ℓ", L, L, m, 1, 1,
                                    "row-scaled d(ℓ, n)"};
                if (plot_heatmap(f, &h)) {
                    free(m);
                    snprintf(c->err, c->errlen, "cannot draw the angular distances");
                    return -1;
                }
            }
            free(m);
        }
    fputs("</div>\n<p class=\"note\">d(ℓ, n) = arccos(cos(x<sub>ℓ</sub>, x<sub>ℓ+n</sub>))/π between the "
          "input of block ℓ and the output of block ℓ+n−1, averaged over the held-out tokens and the "
          "replicates; each row scaled to its own range as in the paper (dark: small, the blocks barely "
          "turn the stream).</p>\n", f);
    rp_data_link(f, "angular.csv");
    return 0;
}

