/* The report (report.h): the page that puts the tables (tables.c) and the
 * figures (figures.c) of the sweep's view (sweep.c) together with its
 * style, first among the files it returns. */
#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/figures.h"
#include "report/finetune.h"
#include "report/sweep.h"
#include "report/tables.h"
#include "report/text.h"

const char *const report_series[] = {"train/loss",      "eval/ppl",         "layer/out_var",
                                     "layer/grad_norm", "prune/delta_loss", "prune/delta_ppl",
                                     NULL};

long report_every(const char *name, long steps)
{
    return !strcmp(name, "train/loss") && steps > 400 ? (steps + 399) / 400 : 1;
}

static void out_drop(struct out *o)
{
    if (o->f)
        fclose(o->f);
    free(o->buf);
    o->f = NULL;
    o->buf = NULL;
}

static const char style[] =
    "body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1800px}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
    "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ccc;padding:4px 8px;"
    "text-align:right;font-size:13px}th{background:#f3f3f3}td.best{font-weight:bold}"
    "td.tie{background:#f3f7ff}.n{color:#666;font-size:11px}.diverged{color:#c92a2a;font-weight:bold}"
    ".note{font-size:12px;color:#555;max-width:1100px}.data{font-size:12px}"
    ".figs{display:flex;flex-wrap:wrap;gap:10px}svg.figure{border:1px solid #eee}"
    "td.noise{color:#666}td.sig{font-weight:bold}";

static int max_layers_of(const struct ctx *c)
{
    int m = 0;
    for (int g = 0; g < (int)json_array_size(c->groups); g++)
        m = rp_n_layers_of(c, g) > m ? rp_n_layers_of(c, g) : m;
    return m;
}

/* The accuracy ΔP of each task the sweep's specs evaluate (analysis.tasks):
 * a panel per setting of every series prune/NAME/delta_acc that holds
 * points, and their CSV; 0, or -1 with c->err. */
static int accuracy_drops(struct ctx *c, FILE *f)
{
    const char *name;
    json_t *s;
    const char *list[64];
    int n = 0, ret = 0;
    json_t *all = (json_t *)c->series; /* read only: jansson's iteration takes no const */
    json_object_foreach(all, name, s) {
        size_t len = strlen(name);
        if (strncmp(name, "prune/", 6) || len < 16 || strcmp(name + len - 10, "/delta_acc") ||
            !json_array_size(json_object_get(s, "groups")) || n == 63)
            continue;
        char task[128], title[200], ylabel[200], id[160];
        snprintf(task, sizeof task, "%.*s", (int)(len - 16), name + 6);
        snprintf(title, sizeof title, "Accuracy drop ΔP(ℓ) on %s with block ℓ removed", task);
        snprintf(ylabel, sizeof ylabel, "Δ accuracy, %s", task);
        snprintf(id, sizeof id, "prune_acc_%s", task);
        const struct figure fig = {id, name, title, "removed block ℓ", ylabel, AT_LAST_STEP, 1, 0, 1};
        list[n++] = name;
        ret = ret || rp_figure_panels(c, f, &fig);
    }
    list[n] = NULL;
    if (!ret && n) {
        fputs("<p class=\"note\">The same removals scored on the tasks of the specs' "
              "<code>analysis.tasks</code>: the accuracy without block ℓ minus the whole model's "
              "(lm-evaluation-harness's scoring, cod's <code>docs/eval.md</code>), as the paper's "
              "Figures 2 and 4 measure it.</p>\n", f);
        rp_data_link(f, "prune_acc.csv");
        ret = rp_series_csv(c, "prune_acc.csv", list);
    }
    return ret;
}

static int html(struct ctx *c, const json_t *doc)
{
    struct out o;
    if (rp_out_open(&o)) {
        snprintf(c->err, c->errlen, "out of memory");
        return -1;
    }
    FILE *f = o.f;
    json_int_t id = json_integer_value(json_object_get(c->view, "id"));
    const char *name = json_string_value(json_object_get(doc, "name"));
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>Sweep %lld", (long long)id);
    if (name) {
        fputs(": ", f);
        text_html(f, name);
    }
    fprintf(f, "</title>\n<style>%s</style></head>\n<body data-sweep=\"%lld\">\n<h1>Sweep %lld", style,
            (long long)id, (long long)id);
    if (name) {
        fputs(": ", f);
        text_html(f, name);
    }
    fputs("</h1>\n<p class=\"note\">", f);
    size_t ncells = json_array_size(json_object_get(c->view, "cells"));
    fprintf(f, "%zu runs in %zu groups", ncells, json_array_size(c->groups));
    const char *rk = json_string_value(json_object_get(c->view, "replicates"));
    if (rk) {
        fputs(" (cells equal but for <code>", f);
        text_html(f, rk);
        fputs("</code> are one group's replicates)", f);
    }
    fputs(". Grid: <code>", f);
    char *grid = json_dumps(json_object_get(c->view, "grid"), JSON_COMPACT);
    text_html(f, grid ? grid : "?");
    free(grid);
    fputs("</code>. Every number here is a value cod-server's API answers "
          "(<code>GET /v1/sweeps/{id}</code> and <code>/v1/sweeps/{id}/series</code>); each table and "
          "figure links the CSV file of its data.</p>\n", f);

    int ret = rp_table1(c, f) || rp_finetune(c, f) || rp_comparisons(c, f) ||
              rp_depth_summary(c, f);
    static const char *const curves[] = {"train/loss", "eval/ppl", NULL};
    static const char *const outvar[] = {"layer/out_var", NULL};
    static const char *const grad[] = {"layer/grad_norm", NULL};
    static const char *const prune[] = {"prune/delta_loss", "prune/delta_ppl", NULL};
    static const struct figure out_var = {
        "out_var", "layer/out_var", "Output variance by layer, last step", "layer",
        "layer/out_var (log)", AT_LAST_STEP, 0, 1, 1};
    static const struct figure out_var_history = {
        "out_var_history", "layer/out_var", "Output variance of the last block over training",
        "step", "layer/out_var of block L (log)", LAST_LAYER_OVER_STEPS, 0, 1, 1};
    static const struct figure grad_norm = {
        "grad_norm", "layer/grad_norm", "Gradient norm by layer, last step", "layer",
        "layer/grad_norm (log)", AT_LAST_STEP, 1, 1, 1};
    static const struct figure train_loss = {
        "train_loss", "train/loss", "Training loss", "step", "train/loss", OVER_STEPS, 0, 0, 0};
    static const struct figure eval_ppl = {
        "eval_ppl", "eval/ppl", "Held-out perplexity", "step", "eval/ppl (log)", OVER_STEPS, 0, 1, 1};
    static const struct figure delta = {
        "prune", "prune/delta_loss", "Performance drop ΔP(ℓ) with block ℓ removed",
        "removed block ℓ", "Δ held-out loss (nats)", AT_LAST_STEP, 1, 0, 1};
    if (!ret) {
        fputs("<h2 id=\"fig1\">Figure 1. Output variance by layer (the Curse of Depth)</h2>\n", f);
        ret = rp_figure_panels(c, f, &out_var) || rp_figure_panels(c, f, &out_var_history);
    }
    if (!ret) {
        fputs("<p class=\"note\">The replicate mean of layer/out_var, the variance of each block's "
              "output on a fixed held-out batch (layer 0: the embedding), ± one standard deviation "
              "over the seeds; above at the last step, below the last block's over training.</p>\n", f);
        rp_data_link(f, "out_var.csv");
        fputs("<h2 id=\"fig2\">Figure 2. Per-layer gradient norm</h2>\n", f);
        ret = rp_figure_panels(c, f, &grad_norm);
    }
    if (!ret) {
        rp_data_link(f, "grad_norm.csv");
        fputs("<h2 id=\"fig3\">Figure 3. Learning curves</h2>\n", f);
        ret = rp_figure_panels(c, f, &train_loss) || rp_figure_panels(c, f, &eval_ppl);
    }
    if (!ret) {
        rp_data_link(f, "curves.csv");
        fputs("<h2 id=\"fig4\">Figure 4. Performance drop per removed layer</h2>\n", f);
        ret = rp_figure_panels(c, f, &delta);
    }
    if (!ret) {
        fputs("<p class=\"note\">Each block removed in turn, no fine-tuning, the variant's scaling kept "
              "on the other blocks; the rise of the held-out loss (the CSV also has the perplexity's).</p>\n", f);
        rp_data_link(f, "prune.csv");
        ret = accuracy_drops(c, f);
    }
    ret = ret || rp_series_csv(c, "out_var.csv", outvar) || rp_series_csv(c, "grad_norm.csv", grad) ||
          rp_series_csv(c, "prune.csv", prune) || rp_series_csv(c, "curves.csv", curves) ||
          rp_heatmaps(c, f, max_layers_of(c)) || rp_angular_csv(c, max_layers_of(c));
    if (!ret) {
        fputs("<p class=\"note\">Made by cod (<code>cod report</code> or the dashboard's Report button) "
              "from cod-server's answers.</p>\n</body></html>\n", f);
        /* the HTML goes first in the list */
        size_t n = json_array_size(c->files);
        ret = rp_out_file(c, &o, "report.html", "text/html; charset=utf-8");
        if (!ret) {
            json_t *h = json_incref(json_array_get(c->files, n));
            ret = json_array_remove(c->files, n) || json_array_insert_new(c->files, 0, h);
        }
        return ret;
    }
    out_drop(&o);
    return ret;
}

int report_render(const json_t *doc, json_t **files, char *err, size_t errlen)
{
    struct ctx c = {0};
    err[0] = 0;
    c.err = err;
    c.errlen = errlen;
    c.files = json_array();
    int ret = -1;
    if (!c.files)
        snprintf(err, errlen, "out of memory");
    else if (rp_sweep_read(&c, doc) == 0 && html(&c, doc) == 0 && rp_cells_csv(&c) == 0)
        ret = 0;
    else if (!err[0])
        snprintf(err, errlen, "cannot write the report: out of memory");
    rp_sweep_free(&c);
    if (ret)
        json_decref(c.files);
    else
        *files = c.files;
    return ret;
}
