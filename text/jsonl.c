/* JSON lines: see jsonl.h. A scanner of its own rather than jansson's
 * json_loadb: a line is read once, validated whole (RFC 8259: its syntax,
 * its strings' escapes and UTF-8), and only the text at the key path is
 * copied out, so that the one allocation per line is the document's and
 * is checked. jansson builds every value of the line, about three times
 * slower, and under a memory limit (ulimit -v) it crashed in its parser
 * where an allocation failed. */
#include "text/jsonl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NESTING 512
#define MAX_KEY 256

const char *jl_fault_name(enum jl_fault f)
{
    static const char *const names[JL_KINDS] = {"ok", "malformed", "missing key", "not a string",
                                                "invalid UTF-8", "empty text"};
    return f < JL_KINDS ? names[f] : "?";
}

int jl_key_parse(struct jl_key *k, const char *dotted, char *err, size_t errlen)
{
    memset(k, 0, sizeof(*k));
    if (!(k->spec = strdup(dotted))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (const char *p = dotted; rc == 0;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n == 0) {
            snprintf(err, errlen, "text key '%s' has an empty part", dotted);
            rc = -1;
        } else if (n >= MAX_KEY) {
            snprintf(err, errlen, "text key '%s' has a part over %d bytes", dotted, MAX_KEY - 1);
            rc = -1;
        } else if (k->n == JL_MAX_DEPTH) {
            snprintf(err, errlen, "text key '%s' is nested over %d deep", dotted, JL_MAX_DEPTH);
            rc = -1;
        } else if (!(k->parts[k->n++] = strndup(p, n))) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        if (!dot)
            break;
        p = dot + 1;
    }
    if (rc != 0)
        jl_key_free(k);
    return rc;
}

void jl_key_free(struct jl_key *k)
{
    for (int i = 0; i < k->n; i++)
        free(k->parts[i]);
    free(k->spec);
    memset(k, 0, sizeof(*k));
}

/* What the scan of a line found at the key path. */
enum found { NOT_FOUND, FOUND_STRING, FOUND_OTHER, BLOCKED };

struct scan {
    const unsigned char *s, *p, *end;
    const struct jl_key *k;
    enum jl_fault fault; /* JL_OK while the line is well formed */
    char *why;
    size_t whylen;
    enum found found;
    const char *found_type; /* FOUND_OTHER: the value's; BLOCKED: the one in the way */
    int blocked_part;       /* BLOCKED: the part whose value is not an object */
    char *text;
    size_t text_len;
    int oom;
};

static int fail(struct scan *j, enum jl_fault f, const char *what)
{
    if (j->fault == JL_OK) {
        j->fault = f;
        if (f == JL_INVALID_UTF8)
            snprintf(j->why, j->whylen, "invalid UTF-8 at column %zu", (size_t)(j->p - j->s) + 1);
        else
            snprintf(j->why, j->whylen, "malformed JSON: %s at column %zu", what, (size_t)(j->p - j->s) + 1);
    }
    return -1;
}

static void skip_ws(struct scan *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

/* The length of the UTF-8 character at p (2 to 4), or 0 when it is not
 * one: overlong forms, surrogates and code points past U+10FFFF are not. */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (!n || c > 0xF4 || end - p < n)
        return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) || (c == 0xF0 && p[1] < 0x90) ||
        (c == 0xF4 && p[1] > 0x8F))
        return 0;
    return n;
}

static void put_utf8(unsigned char *o, size_t *n, unsigned cp)
{
    if (cp < 0x80)
        o[(*n)++] = (unsigned char)cp;
    else if (cp < 0x800) {
        o[(*n)++] = (unsigned char)(0xC0 | cp >> 6);
        o[(*n)++] = (unsigned char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        o[(*n)++] = (unsigned char)(0xE0 | cp >> 12);
        o[(*n)++] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        o[(*n)++] = (unsigned char)(0x80 | (cp & 0x3F));
    } else {
        o[(*n)++] = (unsigned char)(0xF0 | cp >> 18);
        o[(*n)++] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        o[(*n)++] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        o[(*n)++] = (unsigned char)(0x80 | (cp & 0x3F));
    }
}

static int hex4(const unsigned char *p, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i] | 0x20, d;
        if (p[i] >= '0' && p[i] <= '9')
            d = p[i] - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

/* A string at j->p (on its opening quote), decoded into out (room for as
 * many bytes as the raw string has; NULL: only checked) with its length
 * in *n. Escaped characters decode to no more bytes than their escapes. */
static int string(struct scan *j, unsigned char *out, size_t cap, size_t *n)
{
    size_t o = 0;
    j->p++;
    for (;;) {
        const unsigned char *run = j->p;
        while (j->p < j->end && *j->p >= 0x20 && *j->p < 0x80 && *j->p != '"' && *j->p != '\\')
            j->p++;
        if (out) {
            size_t k = (size_t)(j->p - run);
            if (o + k <= cap)
                memcpy(out + o, run, k);
            o += k;
        }
        if (j->p == j->end)
            return fail(j, JL_MALFORMED, "unterminated string");
        unsigned char c = *j->p;
        if (c == '"') {
            j->p++;
            *n = o;
            return 0;
        }
        if (c < 0x20)
            return fail(j, JL_MALFORMED, "control character in a string");
        if (c >= 0x80) {
            int len = utf8_len(j->p, j->end);
            if (!len)
                return fail(j, JL_INVALID_UTF8, NULL);
            if (out && o + (size_t)len <= cap)
                memcpy(out + o, j->p, (size_t)len);
            o += (size_t)len;
            j->p += len;
            continue;
        }
        /* an escape */
        if (j->end - j->p < 2)
            return fail(j, JL_MALFORMED, "unterminated string");
        unsigned e = j->p[1], cp;
        static const char simple[] = "\"\\/bfnrt", value[] = "\"\\/\b\f\n\r\t";
        const char *at = e ? strchr(simple, (int)e) : NULL;
        if (at) {
            cp = (unsigned char)value[at - simple];
            j->p += 2;
        } else if (e == 'u') {
            if (j->end - j->p < 6 || hex4(j->p + 2, &cp) != 0)
                return fail(j, JL_MALFORMED, "bad \\u escape");
            j->p += 6;
            if (cp >= 0xDC00 && cp <= 0xDFFF)
                return fail(j, JL_MALFORMED, "a low surrogate without its high one");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' || hex4(j->p + 2, &lo) != 0 ||
                    lo < 0xDC00 || lo > 0xDFFF)
                    return fail(j, JL_MALFORMED, "a high surrogate without its low one");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                j->p += 6;
            }
        } else
            return fail(j, JL_MALFORMED, "bad escape");
        if (out) {
            unsigned char tmp[4];
            size_t k = 0;
            put_utf8(tmp, &k, cp);
            if (o + k <= cap)
                memcpy(out + o, tmp, k);
            o += k;
        } else
            o++;
    }
}

static int number(struct scan *j)
{
    const unsigned char *p = j->p, *e = j->end;
#define DIGIT(q) ((q) < e && *(q) >= '0' && *(q) <= '9')
    if (p < e && *p == '-')
        p++;
    if (!DIGIT(p))
        return fail(j, JL_MALFORMED, "bad number");
    if (*p == '0')
        p++;
    else
        while (DIGIT(p))
            p++;
    if (p < e && *p == '.') {
        p++;
        if (!DIGIT(p))
            return fail(j, JL_MALFORMED, "bad number");
        while (DIGIT(p))
            p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-'))
            p++;
        if (!DIGIT(p))
            return fail(j, JL_MALFORMED, "bad number");
        while (DIGIT(p))
            p++;
    }
#undef DIGIT
    j->p = p;
    return 0;
}

static const char *type_of(unsigned char c)
{
    switch (c) {
    case '{':
        return "an object";
    case '[':
        return "an array";
    case '"':
        return "a string";
    case 't':
    case 'f':
        return "a boolean";
    case 'n':
        return "null";
    default:
        return "a number";
    }
}

static int value(struct scan *j, int depth, int part);

/* After a member or an element: 1 when a ',' says another follows, 0 at
 * the closing bracket, -1 for anything else. */
static int more(struct scan *j, char close, const char *expected)
{
    skip_ws(j);
    if (j->p < j->end && *j->p == ',') {
        j->p++;
        return 1;
    }
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 0;
    }
    return fail(j, JL_MALFORMED, expected);
}

/* An object whose members are matched against the key path when part >= 0
 * (part: the index of the key part its members are compared with). */
static int object(struct scan *j, int depth, int part)
{
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        skip_ws(j);
        if (j->p == j->end || *j->p != '"')
            return fail(j, JL_MALFORMED, "expected a key");
        unsigned char key[MAX_KEY];
        size_t kn = 0;
        /* a key too long for key[] matches no part, which is shorter */
        if (string(j, part >= 0 ? key : NULL, sizeof(key), &kn) != 0)
            return -1;
        int match = part >= 0 && kn < sizeof(key) && strlen(j->k->parts[part]) == kn &&
                    memcmp(key, j->k->parts[part], kn) == 0;
        skip_ws(j);
        if (j->p == j->end || *j->p != ':')
            return fail(j, JL_MALFORMED, "expected ':'");
        j->p++;
        skip_ws(j);
        if (j->p == j->end)
            return fail(j, JL_MALFORMED, "expected a value");
        int next = -1;
        if (match) {
            /* the last member of a name wins when it is there twice, as in
             * jansson and Python: what an earlier one held, the text or
             * an object on the way to it, no longer counts */
            free(j->text);
            j->text = NULL;
            j->found = NOT_FOUND;
        }
        if (match && part + 1 == j->k->n) {
            if (*j->p == '"') {
                /* the rest of the line holds the string, and decoded it is no longer */
                size_t cap = (size_t)(j->end - j->p);
                if (!(j->text = malloc(cap + 1))) {
                    j->oom = 1;
                    return -1;
                }
                if (string(j, (unsigned char *)j->text, cap, &j->text_len) != 0)
                    return -1;
                j->text[j->text_len] = 0;
                j->found = FOUND_STRING;
                goto member_done;
            }
            j->found = FOUND_OTHER;
            j->found_type = type_of(*j->p);
        } else if (match) {
            if (*j->p == '{')
                next = part + 1;
            else {
                j->found = BLOCKED;
                j->found_type = type_of(*j->p);
                j->blocked_part = part;
            }
        }
        if (value(j, depth + 1, next) != 0)
            return -1;
    member_done:;
        int m = more(j, '}', "expected ',' or '}'");
        if (m <= 0)
            return m;
    }
}

static int array(struct scan *j, int depth)
{
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == ']') {
        j->p++;
        return 0;
    }
    for (;;) {
        skip_ws(j);
        if (value(j, depth + 1, -1) != 0)
            return -1;
        int m = more(j, ']', "expected ',' or ']'");
        if (m <= 0)
            return m;
    }
}

static int literal(struct scan *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
        return fail(j, JL_MALFORMED, "unexpected character");
    j->p += n;
    return 0;
}

static int value(struct scan *j, int depth, int part)
{
    if (depth > MAX_NESTING)
        return fail(j, JL_MALFORMED, "nested too deep");
    if (j->p == j->end)
        return fail(j, JL_MALFORMED, "expected a value");
    size_t n;
    switch (*j->p) {
    case '{':
        return object(j, depth, part);
    case '[':
        return array(j, depth);
    case '"':
        return string(j, NULL, 0, &n);
    case 't':
        return literal(j, "true");
    case 'f':
        return literal(j, "false");
    case 'n':
        return literal(j, "null");
    default:
        if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
            return number(j);
        if (*j->p >= 0x80 && !utf8_len(j->p, j->end))
            return fail(j, JL_INVALID_UTF8, NULL);
        return fail(j, JL_MALFORMED, "unexpected character");
    }
}

enum jl_fault jl_line_text(const struct jl_key *k, const char *line, size_t len, char **text, size_t *text_len,
                           char *why, size_t whylen)
{
    struct scan j = {.s = (const unsigned char *)line, .p = (const unsigned char *)line,
                     .end = (const unsigned char *)line + len, .k = k, .why = why, .whylen = whylen};
    *text = NULL;
    *text_len = 0;
    why[0] = 0;
    skip_ws(&j);
    if (j.p == j.end) {
        snprintf(why, whylen, "malformed: a blank line, not a JSON object");
        return JL_MALFORMED;
    }
    char first = (char)*j.p;
    if (value(&j, 0, first == '{' ? 0 : -1) == 0) {
        skip_ws(&j);
        if (j.p != j.end)
            fail(&j, JL_MALFORMED, "more after the value");
    }
    if (j.oom) {
        snprintf(why, whylen, "out of memory");
        return JL_KINDS;
    }
    enum jl_fault f = j.fault;
    if (f == JL_OK && first != '{') {
        snprintf(why, whylen, "malformed: %s, not a JSON object", type_of((unsigned char)first));
        f = JL_MALFORMED;
    } else if (f == JL_OK && j.found == NOT_FOUND) {
        snprintf(why, whylen, "no \"%s\" key", k->spec);
        f = JL_MISSING_KEY;
    } else if (f == JL_OK && j.found == BLOCKED) {
        snprintf(why, whylen, "no \"%s\" key (\"%s\" is %s)", k->spec, k->parts[j.blocked_part], j.found_type);
        f = JL_MISSING_KEY;
    } else if (f == JL_OK && j.found == FOUND_OTHER) {
        snprintf(why, whylen, "\"%s\" is %s, not a string", k->spec, j.found_type);
        f = JL_NOT_STRING;
    } else if (f == JL_OK && j.text_len == 0) {
        snprintf(why, whylen, "\"%s\" is empty", k->spec);
        f = JL_EMPTY;
    }
    if (f != JL_OK) {
        free(j.text);
        return f;
    }
    *text = j.text;
    *text_len = j.text_len;
    return JL_OK;
}
