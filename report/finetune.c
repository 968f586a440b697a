/* The fine-tuning table: see finetune.h. */
#include "report/finetune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/text.h"

/* "norm=lns train.lr=0.001", or "all" for a grid of seeds alone. */
static void row_label(const json_t *params, char *buf, size_t n)
{
    const char *k;
    json_t *v;
    size_t len = 0;
    buf[0] = 0;
    json_object_foreach((json_t *)params, k, v) {
        char val[96];
        text_value(val, sizeof val, v);
        int w = snprintf(buf + len, n - len, "%s%s=%s", len ? " " : "", k, val);
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
    if (!len)
        snprintf(buf, n, "all");
}

/* mean ± sd (n) of a summary in %, or nothing */
static void cell(FILE *f, const json_t *s)
{
    fputs("<td>", f);
    const json_t *mean = json_object_get(s, "mean"), *sd = json_object_get(s, "sd");
    if (json_is_number(mean)) {
        fprintf(f, "%.2f", 100 * json_number_value(mean));
        if (json_is_number(sd))
            fprintf(f, " ± %.2f", 100 * json_number_value(sd));
        fprintf(f, " <span class=\"n\">(n=%lld)</span>",
                (long long)json_integer_value(json_object_get(s, "n")));
    }
    fputs("</td>", f);
}

static void csv_summary(FILE *f, const json_t *s)
{
    static const char *const keys[] = {"mean", "sd", "n"};
    for (int k = 0; k < 3; k++) {
        fputc(',', f);
        text_csv_json(f, json_object_get(s, keys[k]));
    }
}

static int one_table(struct ctx *c, FILE *f, const json_t *t, int number)
{
    const json_t *tasks = json_object_get(t, "tasks"), *rows = json_object_get(t, "rows"), *x;
    long long stage = json_integer_value(json_object_get(t, "stage"));
    char csv[64];
    snprintf(csv, sizeof csv, stage == 1 ? "finetune.csv" : "finetune_stage%lld.csv", stage);
    fprintf(f, "<h2 id=\"finetune%lld\">Table %d. Fine-tuned accuracy on the evaluation tasks "
               "(stage %lld)</h2>\n<table class=\"ft\"><thead><tr><th>variant</th>",
            stage, number, stage);
    size_t i, j;
    json_array_foreach(tasks, i, x) rp_element(f, "th", json_string_value(x));
    fputs("<th>Avg.</th></tr></thead><tbody>\n", f);
    json_t *row;
    json_array_foreach(rows, i, row) {
        char label[LABEL];
        row_label(json_object_get(row, "params"), label, sizeof label);
        fputs("<tr>", f);
        rp_element(f, "th", label);
        json_array_foreach(tasks, j, x) cell(f, json_object_get(json_object_get(json_object_get(
                                                     row, "tasks"), json_string_value(x)), "acc"));
        cell(f, json_object_get(row, "average"));
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n<p class=\"note\">Each cell pretrained, then fine-tuned from its final "
          "checkpoint and scored at the end on each task: accuracy (task/NAME/acc) in %, mean ± "
          "standard deviation over the seeds whose fine-tuning succeeded; n counts them. Avg.: "
          "the mean over the tasks of each seed, then over the seeds. The CSV also holds the "
          "length-normalized accuracy (acc_norm).</p>\n", f);
    rp_data_link(f, csv);
    struct out o;
    if (rp_out_open(&o))
        return -1;
    fputs("stage,variant,n", o.f);
    json_array_foreach(tasks, i, x) {
        static const char *const cols[] = {"acc_mean", "acc_sd", "acc_n",
                                           "acc_norm_mean", "acc_norm_sd", "acc_norm_n"};
        for (int k = 0; k < 6; k++)
            fprintf(o.f, ",%s_%s", json_string_value(x), cols[k]);
    }
    fputs(",average_mean,average_sd,average_n,experiments\n", o.f);
    json_array_foreach(rows, i, row) {
        char label[LABEL];
        row_label(json_object_get(row, "params"), label, sizeof label);
        fprintf(o.f, "%lld,", stage);
        text_csv(o.f, label);
        fprintf(o.f, ",%lld", (long long)json_integer_value(json_object_get(row, "n")));
        json_array_foreach(tasks, j, x) {
            const json_t *m = json_object_get(json_object_get(row, "tasks"), json_string_value(x));
            csv_summary(o.f, json_object_get(m, "acc"));
            csv_summary(o.f, json_object_get(m, "acc_norm"));
        }
        csv_summary(o.f, json_object_get(row, "average"));
        char *ids = json_dumps(json_object_get(row, "experiments"), JSON_COMPACT);
        fputc(',', o.f);
        text_csv(o.f, ids ? ids : "");
        free(ids);
        fputc('\n', o.f);
    }
    return rp_out_file(c, &o, csv, "text/csv");
}

int rp_finetune(struct ctx *c, FILE *f)
{
    size_t i;
    const json_t *t;
    json_array_foreach(json_object_get(c->view, "finetune"), i, t) if (one_table(c, f, t, 2 + (int)i))
        return -1;
    return 0;
}
