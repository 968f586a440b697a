/* libFuzzer harness: a multiple-choice task file (eval/task.c and what it
 * calls: the row reader, every layout's fields and templates, HellaSwag's
 * preprocessing and capitalising, LLM-Adapters' answer formats, few-shot
 * sampling, the encoding). The input is the file; its first byte picks
 * the layout (one of them named, or the fields' own) and whether one
 * example precedes each item. Whatever the bytes, the load either fails
 * saying why or gives items that can be scored: two or more tokens of
 * input, one or more of each continuation, none longer than the model, a
 * gold among the choices. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/task.h"
#include "tests/fuzz/fuzz_util.h"
#include "text/tokenizer.h"

static const char *const layouts[] = {NULL,         "mmlu",        "arc_easy",   "hellaswag",
                                      "piqa",       "boolq",       "winogrande", "social_iqa",
                                      "openbookqa", "commonsense", "generic"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tokenizer *bytes;
    char err[1024];
    if (!bytes && !(bytes = tokenizer_open("bytes", NULL, 0, err, sizeof err)))
        fuzz_die("%s", err);
    if (size < 1)
        return 0;
    const char *file = fuzz_input_file("task.jsonl", data + 1, size - 1);
    struct eval_encoding e = {bytes, data[0] & 1, 256, 64};
    struct eval_task_opts o = {.file = file,
                               .layout = layouts[(data[0] >> 1) % (sizeof layouts / sizeof *layouts)],
                               .shots = (data[0] >> 7) & 1,
                               .seed = 1234};
    struct eval_task t;
    if (eval_task_load(&t, &o, &e, NULL, err, sizeof err) != 0) {
        if (!err[0])
            fuzz_die("a failed load says nothing");
        return 0;
    }
    for (int i = 0; i < t.n; i++) {
        const struct eval_item *it = &t.items[i];
        if (it->n < 1 || it->gold < 0 || it->gold >= it->n)
            fuzz_die("item %d: gold %d of %d choices", i, it->gold, it->n);
        for (int k = 0; k < it->n; k++)
            if (it->n_ctx[k] < 1 || it->n_cont[k] < 1 || it->n_cont[k] > e.max_len ||
                !it->context[k] || !it->cont[k] || it->chars[k] < 1)
                fuzz_die("item %d choice %d: context %d, continuation %d tokens", i, k,
                         it->n_ctx[k], it->n_cont[k]);
    }
    eval_task_free(&t);
    return 0;
}
