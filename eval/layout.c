#include "eval/layout.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/pystr.h"

static const char *const names[LAYOUT_COUNT] = {
    "mmlu",       "arc",        "hellaswag",  "piqa",        "boolq",
    "winogrande", "social_iqa", "openbookqa", "commonsense", "generic"};

const char *eval_layout_name(enum eval_layout l) { return names[l]; }

int eval_layout_parse(const char *name, enum eval_layout *l)
{
    if (!strcmp(name, "arc_easy") || !strcmp(name, "arc_challenge")) {
        *l = LAYOUT_ARC;
        return 0;
    }
    for (int k = 0; k < LAYOUT_COUNT; k++)
        if (!strcmp(name, names[k])) {
            *l = (enum eval_layout)k;
            return 0;
        }
    return -1;
}

const char *eval_layout_names(void)
{
    return "mmlu, arc_easy, arc_challenge, hellaswag, piqa, boolq, winogrande, social_iqa, "
           "openbookqa, commonsense, generic";
}

const char *eval_layout_delimiter(enum eval_layout l) { return l == LAYOUT_COMMONSENSE ? "" : " "; }

static int has(const json_t *row, const char *key) { return json_object_get(row, key) != NULL; }

int eval_layout_detect(const json_t *row, enum eval_layout *l)
{
    /* the most particular fields first: social_iqa has a context, as the
     * generic layout does; openbookqa and arc differ in their question */
    static const struct {
        enum eval_layout l;
        const char *key[3];
    } by[] = {
        {LAYOUT_WINOGRANDE, {"sentence", "option1", "option2"}},
        {LAYOUT_HELLASWAG, {"ctx_a", "ctx_b", "endings"}},
        {LAYOUT_PIQA, {"goal", "sol1", "sol2"}},
        {LAYOUT_SOCIAL_IQA, {"answerA", "answerB", "answerC"}},
        {LAYOUT_OPENBOOKQA, {"question_stem", "choices", "answerKey"}},
        {LAYOUT_BOOLQ, {"passage", "question", NULL}},
        {LAYOUT_COMMONSENSE, {"instruction", "answer", NULL}},
        {LAYOUT_MMLU, {"question", "subject", "choices"}},
        {LAYOUT_ARC, {"question", "choices", "answerKey"}},
        {LAYOUT_GENERIC, {"context", "choices", "gold"}},
        {LAYOUT_GENERIC, {"contexts", "continuation", "gold"}},
    };
    for (size_t i = 0; i < sizeof by / sizeof by[0]; i++) {
        int all = 1;
        for (int k = 0; k < 3 && by[i].key[k]; k++)
            all &= has(row, by[i].key[k]);
        if (all) {
            *l = by[i].l;
            return 0;
        }
    }
    return -1;
}

static int fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

#define OOM(why, n) fail(why, n, "out of memory")

static const char *str_field(const json_t *o, const char *key, char *why, size_t n)
{
    const json_t *v = json_object_get(o, key);
    if (!v)
        fail(why, n, "no field \"%s\"", key);
    else if (!json_is_string(v))
        fail(why, n, "\"%s\" is not a string", key);
    else
        return json_string_value(v);
    return NULL;
}

/* An index: an integer, or a string of one (HellaSwag's and SocialIQA's labels). */
static int int_field(const json_t *o, const char *key, long *out, char *why, size_t n)
{
    const json_t *v = json_object_get(o, key);
    char *end;
    if (!v)
        return fail(why, n, "no field \"%s\"", key);
    if (json_is_integer(v)) {
        *out = (long)json_integer_value(v);
        return 0;
    }
    if (json_is_string(v) && *json_string_value(v)) {
        *out = strtol(json_string_value(v), &end, 10);
        if (!*end)
            return 0;
    }
    return fail(why, n, "\"%s\" is not an integer", key);
}

static char *dup(const char *s) { return strdup(s); }

/* printf into a new string */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

static int set_choices(struct eval_doc *d, int n)
{
    d->choices = calloc((size_t)n + 1, sizeof(char *));
    d->n_choices = n;
    return d->choices ? 0 : -1;
}

/* choices from an array of strings */
static int string_choices(struct eval_doc *d, const json_t *a, const char *what, char *why,
                          size_t n)
{
    if (!json_is_array(a))
        return fail(why, n, "\"%s\" is not a list", what);
    if (json_array_size(a) == 0)
        return fail(why, n, "\"%s\" is an empty list", what);
    if (set_choices(d, (int)json_array_size(a)))
        return OOM(why, n);
    for (int k = 0; k < d->n_choices; k++) {
        const json_t *c = json_array_get(a, (size_t)k);
        if (!json_is_string(c))
            return fail(why, n, "\"%s\"[%d] is not a string", what, k);
        if (!(d->choices[k] = dup(json_string_value(c))))
            return OOM(why, n);
    }
    return 0;
}

/* ARC's and OpenBookQA's {text: [...], label: [...]} and answerKey: the
 * gold is the answer key's place among the labels */
static int keyed_choices(struct eval_doc *d, const json_t *row, int lstrip_key, char *why,
                         size_t n)
{
    const json_t *c = json_object_get(row, "choices");
    if (!json_is_object(c))
        return fail(why, n, "\"choices\" is not an object of \"text\" and \"label\"");
    if (string_choices(d, json_object_get(c, "text"), "choices.text", why, n))
        return -1;
    const json_t *labels = json_object_get(c, "label");
    const char *key = str_field(row, "answerKey", why, n);
    if (!key)
        return -1;
    if (lstrip_key)
        key += py_lstrip_at(key, strlen(key));
    if (!json_is_array(labels) || json_array_size(labels) != (size_t)d->n_choices)
        return fail(why, n, "\"choices.label\" is not a list as long as \"choices.text\"");
    for (int k = 0; k < d->n_choices; k++) {
        const json_t *lab = json_array_get(labels, (size_t)k);
        if (!json_is_string(lab))
            return fail(why, n, "\"choices.label\"[%d] is not a string", k);
        if (!strcmp(json_string_value(lab), key)) {
            d->gold = k;
            return 0;
        }
    }
    return fail(why, n, "answerKey \"%s\" is none of the choices' labels", key);
}

/* LLM-Adapters' evaluation prompt (commonsense_evaluate.py's
 * generate_prompt, its indentation kept), the choices being the labels its
 * instruction's "Answer format: a/b/..." lists, each as the answer its
 * fine-tuning data writes ("the correct answer is a") */
static int commonsense(struct eval_doc *d, const json_t *row, char *why, size_t n)
{
    const char *ins = str_field(row, "instruction", why, n), *ans = str_field(row, "answer", why, n);
    const json_t *in = json_object_get(row, "input");
    if (!ins || !ans)
        return -1;
    const char *input = json_is_string(in) ? json_string_value(in) : "";
    static const char ind[] = "                ";
    if (*input)
        d->query = fmt("Below is an instruction that describes a task, paired with an input that "
                       "provides further context. Write a response that appropriately completes "
                       "the request.\n\n%s### Instruction:\n%s%s\n\n%s### Input:\n%s%s\n\n%s### "
                       "Response:\n%s",
                       ind, ind, ins, ind, ind, input, ind, ind);
    else
        d->query = fmt("Below is an instruction that describes a task. Write a response that "
                       "appropriately completes the request. \n\n%s### Instruction:\n%s%s\n\n%s### "
                       "Response:\n%s",
                       ind, ind, ins, ind, ind);
    const char *fmt_at = NULL;
    for (const char *p = strstr(ins, "Answer format:"); p; p = strstr(p + 1, "Answer format:"))
        fmt_at = p;
    if (!d->query)
        return OOM(why, n);
    if (!fmt_at)
        return fail(why, n, "the instruction has no \"Answer format: a/b/...\" to take the choices from");
    char *list = py_strip(fmt_at + strlen("Answer format:"));
    if (!list)
        return OOM(why, n);
    int count = 1;
    for (char *p = list; *p; p++)
        count += *p == '/';
    int rc = set_choices(d, count);
    d->gold = -1;
    char *save = NULL, *a = py_strip(ans);
    int k = 0;
    for (char *tok = rc ? NULL : strtok_r(list, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        char *label = py_strip(tok);
        if (!label || !a || !(d->choices[k] = fmt("the correct answer is %s", label)))
            rc = -1;
        else if (!strcmp(label, a))
            d->gold = k;
        free(label);
        k++;
    }
    d->n_choices = k;
    free(list);
    if (rc) {
        free(a);
        return OOM(why, n);
    }
    if (d->n_choices == 0)
        rc = fail(why, n, "the instruction's answer format lists no choices");
    else if (d->gold < 0)
        rc = fail(why, n, "answer \"%s\" is not one of its answer format's choices", a);
    free(a);
    return rc;
}

static int winogrande(struct eval_doc *d, const json_t *row, char *why, size_t n)
{
    const char *s = str_field(row, "sentence", why, n), *o1 = str_field(row, "option1", why, n),
               *o2 = str_field(row, "option2", why, n);
    long answer;
    if (!s || !o1 || !o2 || int_field(row, "answer", &answer, why, n))
        return -1;
    const char *blank = strchr(s, '_');
    if (!blank)
        return fail(why, n, "the sentence has no \"_\" to fill");
    if (answer != 1 && answer != 2)
        return fail(why, n, "\"answer\" is %ld, not 1 or 2", answer);
    d->gold = (int)answer - 1;
    int at = (int)(blank - s);
    if (set_choices(d, 2) || !(d->choices[0] = fmt("%.*s%s", at, s, o1)) ||
        !(d->choices[1] = fmt("%.*s%s", at, s, o2)) || !(d->target = py_strip(blank + 1)))
        return OOM(why, n);
    return 0;
}

static int read_layout(enum eval_layout l, const json_t *row, struct eval_doc *d, char *why,
                       size_t n)
{
    long gold = 0;
    const char *a, *b, *c;
    switch (l) {
    case LAYOUT_MMLU:
        if (!(a = str_field(row, "question", why, n)) ||
            !(b = str_field(row, "subject", why, n)) ||
            string_choices(d, json_object_get(row, "choices"), "choices", why, n) ||
            int_field(row, "answer", &gold, why, n))
            return -1;
        if (d->n_choices != 4)
            return fail(why, n, "MMLU's template has 4 choices (A-D), this item %d", d->n_choices);
        {
            char *q = py_strip(a);
            d->query = q ? fmt("%s\nA. %s\nB. %s\nC. %s\nD. %s\nAnswer:", q, d->choices[0],
                               d->choices[1], d->choices[2], d->choices[3])
                         : NULL;
            free(q);
        }
        if (!d->query || !(d->subject = dup(b)))
            return OOM(why, n);
        for (int k = 0; k < 4; k++) {
            free(d->choices[k]);
            if (!(d->choices[k] = fmt("%c", 'A' + k)))
                return OOM(why, n);
        }
        d->gold = (int)gold;
        return 0;
    case LAYOUT_ARC:
    case LAYOUT_OPENBOOKQA:
        if (!(a = str_field(row, l == LAYOUT_ARC ? "question" : "question_stem", why, n)) ||
            keyed_choices(d, row, l == LAYOUT_OPENBOOKQA, why, n))
            return -1;
        d->query = l == LAYOUT_ARC ? fmt("Question: %s\nAnswer:", a) : dup(a);
        return d->query ? 0 : OOM(why, n);
    case LAYOUT_HELLASWAG: {
        if (!(a = str_field(row, "activity_label", why, n)) ||
            !(b = str_field(row, "ctx_a", why, n)) || !(c = str_field(row, "ctx_b", why, n)) ||
            string_choices(d, json_object_get(row, "endings"), "endings", why, n) ||
            int_field(row, "label", &gold, why, n))
            return -1;
        char *cap = py_capitalize(c), *raw = cap ? fmt("%s: %s %s", a, b, cap) : NULL;
        d->query = raw ? hellaswag_preprocess(raw) : NULL;
        free(cap);
        free(raw);
        for (int k = 0; d->query && k < d->n_choices; k++) {
            char *p = hellaswag_preprocess(d->choices[k]);
            free(d->choices[k]);
            if (!(d->choices[k] = p))
                return OOM(why, n);
        }
        if (!d->query)
            return OOM(why, n);
        d->gold = (int)gold;
        return 0;
    }
    case LAYOUT_PIQA:
        if (!(a = str_field(row, "goal", why, n)) || !(b = str_field(row, "sol1", why, n)) ||
            !(c = str_field(row, "sol2", why, n)) || int_field(row, "label", &gold, why, n))
            return -1;
        if (set_choices(d, 2) || !(d->choices[0] = dup(b)) || !(d->choices[1] = dup(c)) ||
            !(d->query = fmt("Question: %s\nAnswer:", a)))
            return OOM(why, n);
        d->gold = (int)gold;
        return 0;
    case LAYOUT_BOOLQ: {
        if (!(a = str_field(row, "passage", why, n)) || !(b = str_field(row, "question", why, n)))
            return -1;
        const json_t *ans = json_object_get(row, "answer");
        if (json_object_get(row, "label")) {
            if (int_field(row, "label", &gold, why, n))
                return -1;
        } else if (json_is_boolean(ans)) {
            gold = json_is_true(ans);
        } else {
            return fail(why, n, "no field \"label\" (super_glue) or boolean \"answer\"");
        }
        if (set_choices(d, 2) || !(d->choices[0] = dup("no")) || !(d->choices[1] = dup("yes")) ||
            !(d->query = fmt("%s\nQuestion: %s?\nAnswer:", a, b)))
            return OOM(why, n);
        d->gold = (int)gold;
        return 0;
    }
    case LAYOUT_WINOGRANDE:
        return winogrande(d, row, why, n);
    case LAYOUT_SOCIAL_IQA: {
        const char *ab[3];
        if (!(a = str_field(row, "context", why, n)) || !(b = str_field(row, "question", why, n)) ||
            !(ab[0] = str_field(row, "answerA", why, n)) ||
            !(ab[1] = str_field(row, "answerB", why, n)) ||
            !(ab[2] = str_field(row, "answerC", why, n)) || int_field(row, "label", &gold, why, n))
            return -1;
        if (set_choices(d, 3) || !(d->query = fmt("Q: %s %s\nA:", a, b)))
            return OOM(why, n);
        for (int k = 0; k < 3; k++)
            if (!(d->choices[k] = dup(ab[k])))
                return OOM(why, n);
        d->gold = (int)gold - 1; /* labels "1"-"3" */
        return 0;
    }
    case LAYOUT_COMMONSENSE:
        return commonsense(d, row, why, n);
    case LAYOUT_GENERIC:
        if (json_object_get(row, "contexts")) {
            /* the contexts are the choices, one continuation shared, as
             * WinoGrande is scored */
            if (!(b = str_field(row, "continuation", why, n)) ||
                string_choices(d, json_object_get(row, "contexts"), "contexts", why, n) ||
                int_field(row, "gold", &gold, why, n))
                return -1;
            d->gold = (int)gold;
            return (d->target = dup(b)) ? 0 : OOM(why, n);
        }
        if (!(a = str_field(row, "context", why, n)) ||
            string_choices(d, json_object_get(row, "choices"), "choices", why, n) ||
            int_field(row, "gold", &gold, why, n))
            return -1;
        d->gold = (int)gold;
        return (d->query = dup(a)) ? 0 : OOM(why, n);
    case LAYOUT_COUNT:
        break;
    }
    return fail(why, n, "unknown layout");
}

int eval_doc_read(enum eval_layout l, json_t *row, struct eval_doc *d, char *why, size_t whylen)
{
    memset(d, 0, sizeof *d);
    if (!json_is_object(row)) {
        fail(why, whylen, "not a JSON object");
    } else if (read_layout(l, row, d, why, whylen) == 0) {
        if (d->gold < 0 || d->gold >= d->n_choices) {
            fail(why, whylen, "the gold choice %d is out of range (%d choices)",
                 l == LAYOUT_SOCIAL_IQA ? d->gold + 1 : d->gold, d->n_choices);
        } else {
            d->row = json_incref(row);
            return 0;
        }
    }
    eval_doc_free(d);
    return -1;
}

void eval_doc_free(struct eval_doc *d)
{
    for (int k = 0; d->choices && k < d->n_choices; k++)
        free(d->choices[k]);
    free(d->choices);
    free(d->query);
    free(d->target);
    free(d->subject);
    json_decref(d->row);
    memset(d, 0, sizeof *d);
}
