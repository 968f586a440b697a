/* libFuzzer harness: cod-server's request path in-process (http_driver.h):
 * method, path, query, headers and body through libmicrohttpd, the router,
 * auth and every handler, against a real store holding the fixture. An
 * input is up to 8 requests, separated by a line "=====", each written as
 *
 *     METHOD /path?query
 *     Header: value
 *     ...
 *     (empty line)
 *     body
 *
 * so that the fuzzer can chain them (submit, lease, report, finish) while
 * the driver keeps the framing right; "@/" in a body names the data
 * directory. The tokens are http_driver.h's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/http_driver.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    http_start();
    return 0;
}

/* Sends one request written as above. */
static void one(const unsigned char *p, size_t n)
{
    const unsigned char *rest;
    size_t rest_n;
    size_t line = fuzz_split(p, n, "\n", &rest, &rest_n);
    const char *first = (const char *)p;
    const char *sp = memchr(first, ' ', line);
    size_t mlen = sp ? (size_t)(sp - first) : line;
    const char *target = sp ? sp + 1 : first + line;
    size_t tlen = sp ? line - mlen - 1 : 0;
    if (tlen && target[tlen - 1] == '\r')
        tlen--;
    const unsigned char *body = NULL;
    size_t body_n = 0, hlen = rest ? fuzz_split(rest, rest_n, "\n\n", &body, &body_n) : 0;
    size_t expanded_n;
    char *expanded = fuzz_expand_data(body ? body : (const unsigned char *)"", body_n, &expanded_n);
    http_request(first, mlen, target, tlen, (const char *)rest, hlen, expanded, expanded_n);
    free(expanded);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    http_reset();
    for (int i = 0; i < 8 && size; i++) {
        const unsigned char *next;
        size_t next_n, n = fuzz_split(data, size, "\n=====\n", &next, &next_n);
        one(data, n);
        if (!next)
            break;
        data = next;
        size = next_n;
    }
    return 0;
}
