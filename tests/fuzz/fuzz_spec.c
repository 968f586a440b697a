/* libFuzzer harness: the job spec parser (spec/spec.c), which reads every
 * submission cod-server is sent. Beyond the sanitizers it checks spec.h's
 * promise that the JSON form of an accepted spec parses back to the same
 * spec, through text as the queue stores it, and that a refusal names
 * what is wrong. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "spec/spec.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct job_spec s;
    struct spec_error err;
    if (spec_parse((const char *)data, size, &s, &err) != 0) {
        if (!err.message[0])
            fuzz_die("a spec was refused without a message (field \"%s\")", err.field);
        return 0;
    }
    json_t *j = spec_to_json(&s);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    if (!text)
        fuzz_die("out of memory");
    struct job_spec back;
    if (spec_parse(text, strlen(text), &back, &err) != 0)
        fuzz_die("the JSON form of an accepted spec is refused: %s: %s\n%s", err.field,
                 err.message, text);
    json_t *again = spec_to_json(&back);
    if (!again)
        fuzz_die("out of memory");
    if (!json_equal(j, again)) {
        char *other = json_dumps(again, JSON_COMPACT);
        fuzz_die("a spec changes when parsed back:\n%s\n%s", text, other ? other : "?");
    }
    json_decref(again);
    json_decref(j);
    free(text);
    return 0;
}
