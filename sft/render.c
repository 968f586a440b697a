/* A record's prompt and response: see render.h. */
#include "sft/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LLM-Adapters' generate_prompt() (finetune.py, its f-strings' indentation
 * and trailing spaces included), cut around its three fields. */
static const char intro_input[] =
    "Below is an instruction that describes a task, paired with an input that provides further "
    "context. Write a response that appropriately completes the request. \n\n"
    "                ### Instruction:\n                ";
static const char intro_plain[] =
    "Below is an instruction that describes a task. Write a response that appropriately "
    "completes the request.  \n\n"
    "                ### Instruction:\n                ";
static const char before_input[] =
    "\n                \n                ### Input:\n                ";
static const char before_response[] =
    "\n                \n                ### Response:\n                ";

struct piece {
    const char *p;
    size_t n;
};

/* A string field: 1 and its bytes, 0 when absent or null, -1 when of another type. */
static int string_of(const json_t *o, const char *key, struct piece *out)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return -1;
    *out = (struct piece){json_string_value(v), json_string_length(v)};
    return 1;
}

static int join(struct sft_text *t, const struct piece *p, int n, int prompt_pieces, char *why,
                size_t whylen)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += p[i].n;
    if (!(t->text = malloc(len + 1))) {
        snprintf(why, whylen, "out of memory for a record of %zu bytes", len);
        return -1;
    }
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (i == prompt_pieces)
            t->prompt_len = at;
        memcpy(t->text + at, p[i].p, p[i].n);
        at += p[i].n;
    }
    t->text[at] = 0;
    t->len = at;
    return 0;
}

static int need(int got, const char *key, const char *layout, char *why, size_t whylen)
{
    if (got == 1)
        return 0;
    snprintf(why, whylen, "\"%s\" %s (%s)", key, got ? "is not a string" : "is missing", layout);
    return -1;
}

int sft_render(const json_t *record, struct sft_text *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    int adapters = json_object_get(record, "instruction") != NULL;
    int generic = json_object_get(record, "prompt") != NULL;
    if (adapters == generic) {
        snprintf(why, whylen, adapters ? "holds both \"instruction\" and \"prompt\": which layout it is "
                                         "is not clear"
                                       : "is in neither layout: LLM-Adapters' (instruction, input, "
                                         "output) or the generic one (prompt, response)");
        return -1;
    }
    struct piece a = {0}, b = {0}, in = {0};
    if (generic) {
        const char *layout = "the generic layout: prompt, response";
        if (need(string_of(record, "prompt", &a), "prompt", layout, why, whylen) ||
            need(string_of(record, "response", &b), "response", layout, why, whylen))
            return -1;
        struct piece p[] = {a, b};
        return join(out, p, 2, 1, why, whylen);
    }
    const char *layout = "LLM-Adapters' layout: instruction, input, output";
    int has_input = string_of(record, "input", &in);
    if (need(string_of(record, "instruction", &a), "instruction", layout, why, whylen) ||
        need(string_of(record, "output", &b), "output", layout, why, whylen))
        return -1;
    if (has_input < 0) {
        snprintf(why, whylen, "\"input\" is not a string (%s)", layout);
        return -1;
    }
    struct piece lead = {intro_plain, sizeof intro_plain - 1},
                 mid = {before_input, sizeof before_input - 1},
                 tail = {before_response, sizeof before_response - 1};
    if (has_input && in.n) {
        struct piece p[] = {{intro_input, sizeof intro_input - 1}, a, mid, in, tail, b};
        return join(out, p, 6, 5, why, whylen);
    }
    struct piece p[] = {lead, a, tail, b};
    return join(out, p, 4, 3, why, whylen);
}

void sft_text_free(struct sft_text *t)
{
    free(t->text);
    t->text = NULL;
}
