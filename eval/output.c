#include "eval/output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/path.h"

/* JSON has no NaN: a standard error of fewer than 2 items is null. */
static json_t *number(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* MMLU's accuracy by subject, the harness's per-subject tasks */
static json_t *subjects(const struct eval_task *t)
{
    json_t *o = json_object();
    for (int i = 0; o && i < t->n; i++) {
        const struct eval_item *it = &t->items[i];
        json_t *s = json_object_get(o, it->subject);
        if (!s) {
            s = json_pack("{s:i, s:i}", "n", 0, "right", 0);
            if (!s || json_object_set_new(o, it->subject, s)) {
                json_decref(o);
                return NULL;
            }
        }
        int p, pn;
        eval_predict(t->ll + t->choice_at[i], it->chars, it->n, &p, &pn);
        json_object_set_new(s, "n", json_integer(json_integer_value(json_object_get(s, "n")) + 1));
        json_object_set_new(s, "right", json_integer(json_integer_value(json_object_get(s, "right")) +
                                                     (p == it->gold)));
    }
    const char *k;
    json_t *s;
    json_object_foreach(o, k, s)
    {
        double n = (double)json_integer_value(json_object_get(s, "n"));
        json_object_set_new(s, "acc", json_real((double)json_integer_value(json_object_get(s, "right")) / n));
        json_object_del(s, "right");
    }
    return o;
}

json_t *eval_results_json(const struct eval_task *tasks, int n)
{
    json_t *all = json_object(), *root = json_pack("{s:s, s:o}", "harness", EVAL_HARNESS, "tasks", all);
    for (int i = 0; root && i < n; i++) {
        const struct eval_task *t = &tasks[i];
        struct eval_metrics m;
        eval_metrics(t, 0, &m);
        json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:i, s:i, s:s, s:s, s:I, s:s, s:I}", "acc",
                              number(m.acc), "acc_norm", number(m.acc_norm), "acc_stderr",
                              number(m.acc_stderr), "acc_norm_stderr", number(m.acc_norm_stderr),
                              "n", m.n, "shots", t->shots, "layout", eval_layout_name(t->layout),
                              "harness", EVAL_HARNESS, "skipped", (json_int_t)t->bad, "file",
                              t->file, "tokens", (json_int_t)t->tokens);
        if (o && t->layout == LAYOUT_MMLU)
            json_object_set_new(o, "subjects", subjects(t));
        if (!o || json_object_set_new(all, t->name, o)) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}

static json_t *strings(char *const *v, int n)
{
    json_t *a = json_array();
    for (int k = 0; a && k < n; k++)
        if (json_array_append_new(a, json_string(v[k]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *sample(const struct eval_task *t, int i)
{
    const struct eval_item *it = &t->items[i];
    const double *ll = t->ll + t->choice_at[i];
    int shared = 1, p, pn;
    for (int k = 1; k < it->n; k++)
        shared &= it->context[k] == it->context[0];
    eval_predict(ll, it->chars, it->n, &p, &pn);
    json_t *lls = json_array(), *toks = json_array();
    for (int k = 0; lls && toks && k < it->n; k++) {
        json_array_append_new(lls, json_real(ll[k]));
        json_array_append_new(toks, json_integer(it->n_cont[k]));
    }
    return json_pack("{s:I, s:o, s:o, s:o, s:o, s:i, s:i, s:i}", "line", (json_int_t)it->where,
                     "context", shared ? json_string(it->context[0]) : strings(it->context, it->n),
                     "continuations", strings(it->cont, it->n), "loglik", lls, "tokens", toks,
                     "pred", p, "pred_norm", pn, "gold", it->gold);
}

int eval_write_samples(const struct eval_task *t, const char *dir, char *err, size_t errlen)
{
    char path[4400], name[128];
    snprintf(name, sizeof name, "samples_%s.jsonl", t->name);
    struct fio_temp f;
    if (fio_mkdir_p(dir, err, errlen) ||
        path_fmt(path, sizeof path, err, errlen, "%s/%s", dir, name) ||
        fio_temp_open(&f, path, err, errlen))
        return -1;
    int rc = 0;
    for (int i = 0; !rc && i < t->n; i++) {
        json_t *s = sample(t, i);
        char *line = s ? json_dumps(s, JSON_COMPACT) : NULL;
        json_decref(s);
        if (!line) {
            errno = ENOMEM;
            rc = -1;
            break;
        }
        size_t len = strlen(line);
        line[len] = '\n';
        rc = fio_write_all(f.fd, line, len + 1);
        free(line);
    }
    return fio_temp_commit(&f, rc, err, errlen);
}

void eval_print_table(FILE *f, const struct eval_task *tasks, int n)
{
    fprintf(f, "%-24s %-11s %5s %7s %8s %8s %8s %8s\n", "task", "layout", "shots", "n", "acc",
            "± stderr", "acc_norm", "± stderr");
    for (int i = 0; i < n; i++) {
        struct eval_metrics m;
        eval_metrics(&tasks[i], 0, &m);
        fprintf(f, "%-24s %-11s %5d %7d %8.4f %8.4f %8.4f %8.4f\n", tasks[i].name,
                eval_layout_name(tasks[i].layout), tasks[i].shots, m.n, m.acc, m.acc_stderr,
                m.acc_norm, m.acc_norm_stderr);
    }
}

double eval_delta_acc(const struct eval_task *t, int l)
{
    struct eval_metrics full, cut;
    eval_metrics(t, 0, &full);
    eval_metrics(t, l, &cut);
    return cut.acc - full.acc;
}

json_t *eval_prune_json(const struct eval_task *tasks, int n)
{
    json_t *root = json_object();
    for (int i = 0; root && i < n; i++) {
        const struct eval_task *t = &tasks[i];
        struct eval_metrics full, cut;
        eval_metrics(t, 0, &full);
        json_t *layers = json_array();
        json_t *o = json_pack("{s:o, s:o, s:i, s:o}", "acc", number(full.acc), "acc_norm",
                              number(full.acc_norm), "n", full.n, "layers", layers);
        for (int l = 1; o && l < t->configs; l++) {
            eval_metrics(t, l, &cut);
            if (json_array_append_new(
                    layers, json_pack("{s:i, s:o, s:o, s:o, s:o}", "layer", l, "acc",
                                      number(cut.acc), "acc_norm", number(cut.acc_norm),
                                      "delta_acc", number(cut.acc - full.acc), "delta_acc_norm",
                                      number(cut.acc_norm - full.acc_norm)))) {
                json_decref(o);
                o = NULL;
            }
        }
        if (!o || json_object_set_new(root, t->name, o)) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}

void eval_print_prune(FILE *f, const struct eval_task *tasks, int n)
{
    for (int i = 0; i < n; i++) {
        const struct eval_task *t = &tasks[i];
        struct eval_metrics full, cut;
        eval_metrics(t, 0, &full);
        fprintf(f, "\n%s (%s, %d items, %d-shot): full model acc %.4f ± %.4f, acc_norm %.4f\n",
                t->name, eval_layout_name(t->layout), full.n, t->shots, full.acc, full.acc_stderr,
                full.acc_norm);
        fprintf(f, "%5s  %8s  %10s  %8s  %10s  %s\n", "layer", "acc w/o", "delta_acc",
                "norm w/o", "delta_norm", "delta_acc");
        for (int l = 1; l < t->configs; l++) {
            eval_metrics(t, l, &cut);
            double d = cut.acc - full.acc;
            int bar = (int)lround(fmin(40, fabs(d) * 100));
            fprintf(f, "%5d  %8.4f  %+10.4f  %8.4f  %+10.4f  ", l, cut.acc, d, cut.acc_norm,
                    cut.acc_norm - full.acc_norm);
            for (int k = 0; k < bar; k++)
                fputc(d < 0 ? '#' : '+', f);
            fputc('\n', f);
        }
    }
}
