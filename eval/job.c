#include "eval/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/path.h"
#include "eval/layout.h"
#include "eval/output.h"
#include "eval/rows.h"
#include "eval/score.h"
#include "eval/task.h"
#include "eval/tokenizer_of.h"

static void opts_of(const struct spec_task *st, struct eval_task_opts *o)
{
    *o = (struct eval_task_opts){.file = st->file,
                                 .layout = st->layout[0] ? st->layout : NULL,
                                 .fewshot_from = st->fewshot_from[0] ? st->fewshot_from : NULL,
                                 .shots = st->shots,
                                 .limit = st->limit,
                                 .seed = 1234};
}

/* The first row of a task file, as an item of its layout. */
static int check_file(const char *file, const char *layout, const char *field, char *err,
                      size_t errlen)
{
    char why[512];
    struct eval_rows *r = eval_rows_open(file, why, sizeof why);
    if (!r) {
        snprintf(err, errlen, "%s: %s", field, why);
        return -1;
    }
    json_t *row = NULL;
    long where = 0;
    int got, rc = 0;
    while ((got = eval_rows_next(r, &row, &where, why, sizeof why)) == ROWS_BAD)
        ;
    enum eval_layout l;
    struct eval_doc d;
    if (got != ROWS_ROW) {
        snprintf(err, errlen, "%s: %s: %s", field, file, got == ROWS_END ? "no item" : why);
        rc = -1;
    } else if (layout ? eval_layout_parse(layout, &l) : eval_layout_detect(row, &l)) {
        snprintf(err, errlen, "%s: %s:%ld: the fields match no layout (%s)", field, file, where,
                 eval_layout_names());
        rc = -1;
    } else if (eval_doc_read(l, row, &d, why, sizeof why)) {
        snprintf(err, errlen, "%s: %s:%ld: not an item of layout %s: %s", field, file, where,
                 eval_layout_name(l), why);
        rc = -1;
    } else {
        eval_doc_free(&d);
    }
    json_decref(row);
    eval_rows_close(r);
    return rc;
}

static int job_tokenizer(const struct job_spec *s, const struct eval_text_source *src,
                         struct eval_tokenizer *t, char *err, size_t errlen)
{
    if (src && src->folder)
        return eval_tokenizer_of_folder(src->folder, t, err, errlen);
    return eval_tokenizer_of_data(src && src->data ? src->data : s->train_glob, NULL, NULL, t, err,
                                  errlen);
}

int eval_job_check(const struct job_spec *s, const struct eval_text_source *src, char *err,
                   size_t errlen)
{
    if (!s->n_tasks)
        return 0;
    struct eval_tokenizer t;
    char why[1024];
    if (job_tokenizer(s, src, &t, why, sizeof why)) {
        snprintf(err, errlen, "analysis.tasks: the %s tokenizer: %s",
                 src && (src->data || src->folder) ? "start's" : "data's", why);
        return -1;
    }
    tokenizer_close(t.tok);
    for (int i = 0; i < s->n_tasks; i++) {
        char field[64];
        const struct spec_task *st = &s->tasks[i];
        snprintf(field, sizeof field, "analysis.tasks[%d]", i);
        if (check_file(st->file, st->layout[0] ? st->layout : NULL, field, err, errlen) ||
            (st->fewshot_from[0] &&
             check_file(st->fewshot_from, st->layout[0] ? st->layout : NULL, field, err, errlen)))
            return -1;
    }
    return 0;
}

static int write_all(const struct eval_task *tasks, int n, int prune, const char *dir, char *err,
                     size_t errlen)
{
    if (fio_write_json(eval_results_json(tasks, n), dir, "eval.json", err, errlen))
        return -1;
    for (int i = 0; i < n; i++)
        if (eval_write_samples(&tasks[i], dir, err, errlen))
            return -1;
    return prune ? fio_write_json(eval_prune_json(tasks, n), dir, "prune_tasks.json", err, errlen)
                 : 0;
}

int eval_job_run(struct model *m, const struct job_spec *s, const struct eval_text_source *src,
                 const char *out_dir, long step, const struct train_emit *e, char *err,
                 size_t errlen)
{
    if (!s->n_tasks)
        return 0;
    struct eval_tokenizer tk;
    if (job_tokenizer(s, src, &tk, err, errlen))
        return -1;
    struct eval_encoding enc = {tk.tok, tk.bos, tk.doc, m->cfg.seq_len};
    struct eval_task *tasks = calloc(SPEC_MAX_TASKS, sizeof *tasks);
    char *said = NULL, line[1024];
    size_t said_len = 0;
    FILE *report = open_memstream(&said, &said_len);
    int n = 0, rc = tasks && report ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
    for (; !rc && n < s->n_tasks; n++) {
        struct eval_task_opts o;
        opts_of(&s->tasks[n], &o);
        if (eval_task_load(&tasks[n], &o, &enc, report, err, errlen))
            rc = -1;
    }
    if (report)
        fclose(report);
    /* the bad lines skipped, into the run's log */
    for (char *save = NULL, *l = said ? strtok_r(said, "\n", &save) : NULL; l;
         l = strtok_r(NULL, "\n", &save))
        e->say(e->run, l);
    free(said);
    char dir[4200];
    struct eval_speed sp;
    if (!rc)
        rc = path_fmt(dir, sizeof dir, err, errlen, "%s/analysis", out_dir) ||
             eval_score(m, tasks, n, s->analysis_prune, &sp, err, errlen) ||
             write_all(tasks, n, s->analysis_prune, dir, err, errlen);
    for (int i = 0; !rc && i < n; i++) {
        const struct eval_task *t = &tasks[i];
        struct eval_metrics mt;
        eval_metrics(t, 0, &mt);
        char name[160];
        snprintf(name, sizeof name, "task/%s/acc", t->name);
        e->point(e->run, step, name, -1, mt.acc);
        snprintf(name, sizeof name, "task/%s/acc_norm", t->name);
        e->point(e->run, step, name, -1, mt.acc_norm);
        snprintf(name, sizeof name, "prune/%s/delta_acc", t->name);
        for (int l = 1; l < t->configs; l++)
            e->point(e->run, step, name, l, eval_delta_acc(t, l));
        snprintf(line, sizeof line,
                 "task %s: acc %.4f ± %.4f, acc_norm %.4f over %d items (%s, %d-shot, %ld lines "
                 "skipped)%s",
                 t->name, mt.acc, mt.acc_stderr, mt.acc_norm, mt.n, eval_layout_name(t->layout),
                 t->shots, t->bad, t->configs > 1 ? "; each block removed too" : "");
        e->say(e->run, line);
    }
    if (!rc) {
        snprintf(line, sizeof line, "tasks: %lld rows of %lld tokens in %.1f s (tokenizer %.200s)", sp.rows,
                 sp.tokens, sp.seconds, tk.what);
        e->say(e->run, line);
    }
    eval_tasks_free(tasks, n);
    tokenizer_close(tk.tok);
    return rc ? -1 : 0;
}
