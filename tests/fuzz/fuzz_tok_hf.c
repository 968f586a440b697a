/* libFuzzer harness: the Hugging Face tokenizer's loader
 * (text/tokenizer_hf.c), which reads a model's tokenizer.json: the input is
 * the file; after a line "--text--" the rest is text to encode with the
 * loaded tokenizer (a fixed sample without one). A file it accepts must
 * encode any text and decode the ids back: to the text itself, or, where
 * the file normalizes (NFC), to a text that then comes back unchanged. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/tokenizer.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/tok_round_trip.h"

static char dir[300], path[400];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_subdir(dir, sizeof dir, "tokenizer-json");
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char sample[] = "The Curse of Depth: deeper layers contribute less.\n\n  "
                                 "Ünïcödé, Cafe\xcc\x81, 数字 123, \xff\xfe invalid, \xe2\x96\x81 and 'll've.";
    const unsigned char *text;
    size_t text_n, json_n = fuzz_split(data, size, "\n--text--\n", &text, &text_n);
    fuzz_write(path, (const char *)data, json_n);
    char err[1024];
    struct tokenizer *t = tokenizer_open("hf", path, 0, err, sizeof err);
    if (!t)
        return 0;
    if (!text) {
        text = (const unsigned char *)sample;
        text_n = sizeof sample - 1;
    }
    struct tok_text back, again;
    tok_round_trip(t, text, text_n, 0, &back);
    if (back.n != text_n || (text_n && memcmp(back.v, text, text_n))) {
        tok_round_trip(t, back.v, back.n, 0, &again);
        if (again.n != back.n || (back.n && memcmp(again.v, back.v, back.n)))
            fuzz_die("hf: decode(encode(text)) is neither the text nor a fixed point "
                     "(%zu bytes, %zu back, %zu the second time)", text_n, back.n, again.n);
        tok_text_free(&again);
    }
    tok_text_free(&back);
    tokenizer_close(t);
    return 0;
}
