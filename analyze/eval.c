#include "analyze/eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "eval/cloze.h"
#include "eval/output.h"
#include "eval/score.h"
#include "eval/tokenizer_of.h"
#include "spec/spec.h"
#include "trainer/hf_load.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };


/* FILE:LAYOUT into its parts, when what follows the last ':' is a layout */
static void split_task(const char *arg, char *file, size_t cap, const char **layout)
{
    const char *colon = strrchr(arg, ':');
    *layout = NULL;
    if (colon && spec_task_layout_known(colon + 1)) {
        snprintf(file, cap, "%.*s", (int)(colon - arg), arg);
        *layout = colon + 1;
    } else {
        snprintf(file, cap, "%s", arg);
    }
}

static int open_tokenizer(const struct analyze_tasks *o, const char *dir, const struct source *src,
                          struct eval_tokenizer *tk, char *err, size_t errlen)
{
    int rc = src->hf ? eval_tokenizer_of_folder(dir, tk, err, errlen)
                     : eval_tokenizer_of_data(src->spec.train_glob, o->tokenizer_dir,
                                              o->tokenizer, tk, err, errlen);
    if (rc)
        return -1;
    if (tokenizer_vocab_size(tk->tok) > (uint32_t)src->mc.vocab) {
        snprintf(err, errlen, "the tokenizer %s has %u tokens, the model %d", tk->what,
                 tokenizer_vocab_size(tk->tok), src->mc.vocab);
        return -1;
    }
    if (o->bos && strcmp(o->bos, "auto"))
        tk->bos = !strcmp(o->bos, "yes");
    return 0;
}

int analyze_tasks_load(const struct analyze_tasks *o, const char *dir, const struct source *src,
                       int max_len, struct eval_task **tasks, int *n, char *err, size_t errlen)
{
    struct eval_tokenizer tk;
    *tasks = NULL;
    *n = 0;
    if (open_tokenizer(o, dir, src, &tk, err, errlen))
        return -1;
    printf("tasks: tokenizer %s, the doc token %u %s every context (--bos %s)\n", tk.what, tk.doc,
           tk.bos ? "before" : "not before", o->bos ? o->bos : "auto");
    struct eval_encoding enc = {tk.tok, tk.bos, tk.doc, max_len};
    *tasks = calloc((size_t)o->n + 1, sizeof **tasks);
    int rc = *tasks ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
    for (int i = 0; !rc && i < o->n; i++) {
        char file[4096];
        const char *layout;
        split_task(o->task[i], file, sizeof file, &layout);
        struct eval_task_opts to = {.file = file, .layout = layout, .fewshot_from = o->fewshot[i],
                                    .shots = o->shots, .limit = o->limit, .seed = o->seed,
                                    .strict = o->strict};
        if (eval_task_load(&(*tasks)[i], &to, &enc, stderr, err, errlen))
            rc = -1;
        else
            (*n)++;
    }
    tokenizer_close(tk.tok);
    return rc;
}

static void print_speed(const char *what, const struct eval_task *tasks, int n,
                        const struct eval_speed *sp)
{
    long items = 0;
    for (int i = 0; i < n; i++)
        items += tasks[i].n;
    double s = sp->seconds > 0 ? sp->seconds : 1e-9;
    printf("%s: %ld items, %lld rows of %lld tokens (%lld with padding) in %lld forward "
           "passes, %.2f s: %.1f items/s, %.0f tokens/s\n",
           what, items, sp->rows, sp->tokens, sp->padded, sp->batches, sp->seconds, items / s,
           sp->tokens / s);
}

int analyze_eval(const char *dir, const struct ops *ops, const char *device, int T, int B,
                 const struct analyze_tasks *o, const char *out)
{
    char err[8192];
    struct source src;
    struct model m;
    memset(&m, 0, sizeof m);
    struct eval_task *tasks = NULL;
    int n = 0, max_B = 0, rc = EXIT_USAGE;
    if (analyze_open_source(dir, &src, NULL, 0, T, B, &max_B, err, sizeof err))
        goto out;
    /* a batch of at least 8192 tokens unless told: rows are packed into it */
    if (!B && max_B * src.mc.seq_len < 8192)
        max_B = (8192 + src.mc.seq_len - 1) / src.mc.seq_len;
    rc = EXIT_FAILED;
    if (analyze_tasks_load(o, dir, &src, src.mc.seq_len, &tasks, &n, err, sizeof err) ||
        model_create(&m, ops, &src.mc, max_B, err, sizeof err))
        goto out;
    analyze_print_memory(&m, device);
    if (hf_load_weights(dir, &m, err, sizeof err))
        goto out;
    printf("eval: %s (%s), %d layers, dim %d, inputs of at most %d tokens\n", dir, src.what,
           src.mc.n_layers, src.mc.dim, src.mc.seq_len);
    fflush(stdout);
    struct eval_speed sp;
    if (eval_score(&m, tasks, n, 0, &sp, err, sizeof err))
        goto out;
    eval_print_table(stdout, tasks, n);
    if (out) {
        if (fio_write_json(eval_results_json(tasks, n), out, "eval.json", err, sizeof err))
            goto out;
        for (int i = 0; i < n; i++)
            if (eval_write_samples(&tasks[i], out, err, sizeof err))
                goto out;
        printf("wrote %s/eval.json and %d samples_TASK.jsonl\n", out, n);
    }
    print_speed("eval", tasks, n, &sp);
    rc = EXIT_OK;
out:
    if (rc != EXIT_OK)
        fprintf(stderr, "cod-analyze: %s\n", err);
    eval_tasks_free(tasks, n);
    if (m.ops)
        model_destroy(&m);
    hf_config_free(&src.h);
    return rc;
}

int analyze_prune_tasks(struct model *m, struct eval_task *tasks, int n, const char *out,
                        char *err, size_t errlen)
{
    struct eval_speed sp;
    if (eval_score(m, tasks, n, 1, &sp, err, errlen))
        return -1;
    eval_print_prune(stdout, tasks, n);
    print_speed("prune --task", tasks, n, &sp);
    if (!out)
        return 0;
    if (fio_write_json(eval_prune_json(tasks, n), out, "prune_tasks.json", err, errlen))
        return -1;
    printf("wrote %s/prune_tasks.json\n", out);
    return 0;
}

int analyze_cloze(int argc, char **argv)
{
    struct cloze_opts o = {.items = 1000, .choices = 4, .seed = 1234, .context_chars = 400,
                           .min_chars = 20, .max_chars = 100};
    const char *out = NULL;
    char **paths = calloc((size_t)argc + 1, sizeof(char *));
    int n = 0;
    if (!paths)
        return EXIT_FAILED;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long long v = 0;
        int more = i + 1 < argc;
        if (!strcmp(a, "--out") && more) {
            out = argv[++i];
        } else if ((!strcmp(a, "--items") || !strcmp(a, "--choices") || !strcmp(a, "--seed") ||
                    !strcmp(a, "--context-chars") || !strcmp(a, "--max-chars")) &&
                   more) {
            if (analyze_positive(a, argv[++i], &v)) {
                free(paths);
                return EXIT_USAGE;
            }
            if (!strcmp(a, "--items"))
                o.items = (int)v;
            else if (!strcmp(a, "--choices"))
                o.choices = (int)v;
            else if (!strcmp(a, "--seed"))
                o.seed = (uint64_t)v;
            else if (!strcmp(a, "--context-chars"))
                o.context_chars = (int)v;
            else
                o.max_chars = (int)v;
        } else if (a[0] != '-') {
            paths[n++] = argv[i];
        } else {
            fprintf(stderr, "cod-analyze cloze: unexpected argument '%s'\n", a);
            free(paths);
            return EXIT_USAGE;
        }
    }
    if (!n || !out || o.choices < 2) {
        fprintf(stderr, "usage: cod-analyze cloze TEXT... --out FILE.jsonl [--items N] "
                        "[--choices K (2 or more)] [--seed S] [--context-chars C] "
                        "[--max-chars M]\n");
        free(paths);
        return EXIT_USAGE;
    }
    char err[4400], tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    FILE *f = fopen(tmp, "w");
    int made = 0, rc = f ? cloze_build(paths, n, &o, f, &made, err, sizeof err) : -1;
    if (!f)
        snprintf(err, sizeof err, "%s: cannot write", tmp);
    if (f && (fclose(f) != 0 || (!rc && rename(tmp, out) != 0))) {
        snprintf(err, sizeof err, "%s: cannot write", out);
        rc = -1;
    }
    free(paths);
    if (rc) {
        unlink(tmp);
        fprintf(stderr, "cod-analyze cloze: %s\n", err);
        return EXIT_FAILED;
    }
    printf("wrote %s: %d items of %d choices (seed %llu)\n", out, made, o.choices,
           (unsigned long long)o.seed);
    return EXIT_OK;
}
