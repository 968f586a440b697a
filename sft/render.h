/* A record's text as the model sees it: its prompt, and its response
 * after it (the text is the two end to end). Two layouts:
 *   LLM-Adapters' (instruction, input, output): the prompt is its
 *     finetune.py's generate_prompt() template, byte for byte, with and
 *     without an input (an input that is "", null or absent is none, as
 *     Python's `if data_point["input"]` reads it), the response its output;
 *   the generic one (prompt, response): the strings as they are.
 * A record of neither layout, or of both, or whose fields are not strings,
 * is refused saying which field. */
#ifndef COD_SFT_RENDER_H
#define COD_SFT_RENDER_H

#include <stddef.h>

#include <jansson.h>

struct sft_text {
    char *text;          /* prompt then response (malloc'ed, NUL after) */
    size_t prompt_len, len;
};

/* 0, or -1 with why (the field at fault, or out of memory). */
int sft_render(const json_t *record, struct sft_text *out, char *why, size_t whylen);
void sft_text_free(struct sft_text *t);

#endif
