/* libFuzzer harness: the JSON-line reader (text/jsonl.c), which parses
 * every line of a JSON-lines input. The input is one line. jansson, a
 * parser of its own, is the reference: when it reads the line as an
 * object, ours must too and find the same text at "text" and at
 * "meta.text" (or find none where jansson has no string there); when ours
 * takes a line as JSON, jansson must too, but for the numbers jansson
 * refuses as out of its range and nesting past our limit. A raw NUL byte
 * is never JSON (not whitespace, and a control character inside a
 * string), so ours must refuse such a line, as malformed or as not UTF-8
 * where that shows first; jansson is not asked there, as it drops a NUL
 * that follows a number. A text found is valid UTF-8 and no longer than
 * the line. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/jsonl.h"
#include "tests/fuzz/fuzz_util.h"

static int valid_utf8(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        size_t k = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xF0 && c < 0xF5 ? 4 : 0;
        if (!k || i + k > n)
            return 0;
        uint32_t cp = k == 1 ? c : c & (0xFF >> (k + 1));
        for (size_t j = 1; j < k; j++) {
            if ((p[i + j] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (p[i + j] & 0x3F);
        }
        if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += k;
    }
    return 1;
}

static void check_key(const char *dotted, const uint8_t *data, size_t size, json_t *root, int raw_nul)
{
    struct jl_key k;
    char err[256], why[512], *text;
    size_t n;
    if (jl_key_parse(&k, dotted, err, sizeof err) != 0)
        fuzz_die("%s", err);
    enum jl_fault f = jl_line_text(&k, (const char *)data, size, &text, &n, why, sizeof why);
    if (f == JL_KINDS)
        fuzz_die("out of memory");
    if (raw_nul && f != JL_MALFORMED && f != JL_INVALID_UTF8)
        fuzz_die("%s: a line with a raw NUL byte is read as %s", dotted, jl_fault_name(f));
    if (f == JL_OK && (!valid_utf8((const unsigned char *)text, n) || n > size || text[n] != 0))
        fuzz_die("text of %zu bytes is not valid UTF-8 ending in a NUL", n);
    /* jansson goes deeper before it stops */
    if (root && f == JL_MALFORMED && strstr(why, "nested too deep"))
        root = NULL;
    else if (root) {
        const json_t *v = root;
        for (int i = 0; i < k.n && v; i++)
            v = json_is_object(v) ? json_object_get(v, k.parts[i]) : NULL;
        int has = json_is_object(root) && v && json_is_string(v) && json_string_length(v) > 0;
        if (has != (f == JL_OK))
            fuzz_die("%s: jansson %s a text, ours says %s (%s)", dotted, has ? "finds" : "finds no",
                     jl_fault_name(f), why);
        if (has && (json_string_length(v) != n || memcmp(json_string_value(v), text, n) != 0))
            fuzz_die("%s: the texts differ", dotted);
    } else if (!raw_nul && (f == JL_OK || f == JL_MISSING_KEY || f == JL_NOT_STRING || f == JL_EMPTY) &&
               !(size && json_loadb((const char *)data, size, JSON_ALLOW_NUL, NULL))) {
        /* ours read the line as a JSON object; jansson refused it: only for its own limits */
        json_error_t je;
        json_t *again = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &je);
        json_decref(again);
        if (!strstr(je.text, "too big") && !strstr(je.text, "overflow") && !strstr(je.text, "maximum parsing depth"))
            fuzz_die("%s: ours reads the line (%s), jansson does not: %s", dotted, jl_fault_name(f), je.text);
    }
    free(text);
    jl_key_free(&k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* one line: a JSON-lines reader never sees a newline inside one */
    if (memchr(data, '\n', size))
        return 0;
    json_error_t je;
    int raw_nul = memchr(data, 0, size) != NULL;
    json_t *root = raw_nul ? NULL : json_loadb((const char *)data, size, JSON_ALLOW_NUL, &je);
    check_key("text", data, size, root, raw_nul);
    check_key("meta.text", data, size, root, raw_nul);
    json_decref(root);
    return 0;
}
