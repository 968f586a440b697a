/* The field layouts of the Hugging Face copies of the tasks (docs/eval.md),
 * and a row of each read as the harness's task reads it: the question
 * (doc_to_text), the choices (doc_to_choice), the gold choice
 * (doc_to_target), for lm-evaluation-harness v0.4.12's definitions
 * (lm_eval/tasks/<task>/ YAML and utils.py), written here anew. */
#ifndef COD_EVAL_LAYOUT_H
#define COD_EVAL_LAYOUT_H

#include <stddef.h>

#include <jansson.h>

#define EVAL_HARNESS "lm-evaluation-harness v0.4.12"

enum eval_layout {
    LAYOUT_MMLU,
    LAYOUT_ARC,
    LAYOUT_HELLASWAG,
    LAYOUT_PIQA,
    LAYOUT_BOOLQ,
    LAYOUT_WINOGRANDE,
    LAYOUT_SOCIAL_IQA,
    LAYOUT_OPENBOOKQA,
    LAYOUT_COMMONSENSE, /* LLM-Adapters' commonsense test files */
    LAYOUT_GENERIC,     /* {"context", "choices", "gold"}, or {"contexts",
                           "continuation", "gold"}: the contexts are the choices */
    LAYOUT_COUNT
};

/* One item as its task sees it. */
struct eval_doc {
    char *query;      /* doc_to_text; NULL where the choices are the contexts (WinoGrande) */
    char **choices;   /* doc_to_choice */
    int n_choices;
    char *target;     /* WinoGrande: the continuation every choice shares; else NULL */
    int gold;
    char *subject;    /* MMLU: its subject as given (few-shot examples are of the same) */
    json_t *row;      /* the row it was read from (the few-shot sampler compares rows) */
    long where;       /* its line (row) in the file */
};

/* A layout's name (arc for arc_easy and arc_challenge, which share one). */
const char *eval_layout_name(enum eval_layout l);
/* The layout a name names (arc_easy and arc_challenge are arc): 0, or -1. */
int eval_layout_parse(const char *name, enum eval_layout *l);
/* The names the parse takes, for a usage line. */
const char *eval_layout_names(void);
/* The layout a row's fields say: 0, or -1 when they say none. */
int eval_layout_detect(const json_t *row, enum eval_layout *l);
/* The delimiter between a context and a continuation: " ", the harness's
 * default, but for LLM-Adapters' prompt, which ends in a newline. */
const char *eval_layout_delimiter(enum eval_layout l);

/* A row as an item of the layout. 0, or -1 with why (a missing field, a
 * gold out of range, no choices; the caller adds FILE:LINE); out of
 * memory says so. The doc holds a reference to row. */
int eval_doc_read(enum eval_layout l, json_t *row, struct eval_doc *d, char *why, size_t whylen);
void eval_doc_free(struct eval_doc *d);

#endif
