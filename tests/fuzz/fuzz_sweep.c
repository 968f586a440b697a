/* libFuzzer harness: a submission's body as cod-server checks it
 * (api/submit.c), both as one experiment (submission_from_json) and as a
 * sweep (sweep_expand: the grid's cells, their names, each cell's spec and
 * its data). "@/" in an input names the harness's data directory
 * (fuzz_data_dir), so that specs can reach the file checks. Checks the
 * contract of api/submit.h: every queued spec is one the trainer accepts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/submit.h"
#include "tests/fuzz/fuzz_util.h"

/* What a worker does with a queued spec: it must parse. */
static void check_queued(const struct submission *s)
{
    struct job_spec back;
    struct spec_error err;
    if (!s->spec_json || spec_parse(s->spec_json, strlen(s->spec_json), &back, &err) != 0)
        fuzz_die("a spec was queued that the trainer refuses: %s: %s\n%s", err.field, err.message,
                 s->spec_json ? s->spec_json : "(none)");
    if (!s->row.name || !s->row.model || !s->row.norm || !s->row.device)
        fuzz_die("a queue row lacks a column");
}

/* The checks of one body, off libFuzzer's alarm (fuzz_unalarmed): a
 * server thread has no alarm to cut a blocking open short. The data root
 * is the harness's data directory. */
static void check_body(void *arg)
{
    json_t *body = arg;
    static const char *roots[1];
    roots[0] = fuzz_data_dir();
    const struct submit_rules rules = {.max_gang = 8, .max_cells = 64, .max_axes = 32,
                                       .max_model_gib = 288, .roots = {roots, 1, 1000}};
    struct submission one;
    struct spec_error err;
    if (submission_from_json(body, &rules, &one, &err) == 0)
        check_queued(&one);
    submission_free(&one);
    struct submission *cells;
    int count;
    if (sweep_expand(body, &rules, &cells, &count, &err) == 0) {
        if (count < 1 || count > 64)
            fuzz_die("a sweep of %d cells", count);
        for (int i = 0; i < count; i++)
            check_queued(&cells[i]);
        submissions_free(cells, count);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n;
    char *text = fuzz_expand_data(data, size, &n);
    json_error_t je;
    /* as api/http.c's body_object reads a body */
    json_t *body = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (json_is_object(body))
        fuzz_unalarmed(check_body, body);
    json_decref(body);
    return 0;
}
