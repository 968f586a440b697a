/* What the job spec's tests (tests/unit/test_spec*.c) share: a spec parsed
 * from a string, a custom model's shape, and a bad spec checked for the
 * field its error names and a piece of its message. */
#ifndef COD_TESTS_SPEC_CHECK_H
#define COD_TESTS_SPEC_CHECK_H

#include <string.h>

#include "spec/spec.h"
#include "tests/check.h"

static inline int parse(const char *text, struct job_spec *s, struct spec_error *e)
{
    return spec_parse(text, strlen(text), s, e);
}

struct bad_case {
    const char *json;
    const char *field;
    const char *needle; /* a piece of the message */
};

#define CUSTOM "\"dim\":64,\"n_layers\":2,\"n_heads\":4,\"ffn_dim\":128"

static inline void check_bad(const char *json, const char *field, const char *needle)
{
    struct job_spec s;
    struct spec_error e;
    int rc = parse(json, &s, &e);
    CHECK(rc == -1, "%s: accepted", json);
    if (rc != -1)
        return;
    CHECK(!strcmp(e.field, field), "%s: field \"%s\", expected \"%s\" (%s)", json, e.field, field,
          e.message);
    CHECK(strstr(e.message, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", json, e.message,
          needle);
}

#endif
