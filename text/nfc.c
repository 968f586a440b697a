#include "text/nfc.h"

#include <stdio.h>
#include <stdlib.h>

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "common/utf8.h"

/* One valid run: to UTF-16, normalized, back. */
static int normalize_run(const UNormalizer2 *nfc, const unsigned char *p, size_t n,
                         struct tok_text *out, char *err, size_t errlen)
{
    UErrorCode st = U_ZERO_ERROR;
    int32_t n16 = 0;
    size_t cap = 2 * n + 16;
    UChar *src = malloc(cap * sizeof(UChar)), *dst = malloc(2 * cap * sizeof(UChar));
    char *u8 = malloc(6 * cap);
    int rc = -1;
    if (!src || !dst || !u8 || n > INT32_MAX / 8) {
        snprintf(err, errlen, "out of memory for NFC");
        goto out;
    }
    u_strFromUTF8(src, (int32_t)cap, &n16, (const char *)p, (int32_t)n, &st);
    int32_t nn = U_SUCCESS(st) ? unorm2_normalize(nfc, src, n16, dst, (int32_t)(2 * cap), &st) : 0;
    int32_t n8 = 0;
    if (U_SUCCESS(st))
        u_strToUTF8(u8, (int32_t)(6 * cap), &n8, dst, nn, &st);
    if (U_FAILURE(st)) {
        snprintf(err, errlen, "NFC normalization: %s", u_errorName(st));
        goto out;
    }
    if (tok_text_append(out, u8, (size_t)n8) != 0) {
        snprintf(err, errlen, "out of memory for NFC");
        goto out;
    }
    rc = 0;
out:
    free(src);
    free(dst);
    free(u8);
    return rc;
}

int nfc_normalize(const unsigned char *text, size_t len, struct tok_text *out, char *err,
                  size_t errlen)
{
    out->n = 0;
    UErrorCode st = U_ZERO_ERROR;
    const UNormalizer2 *nfc = unorm2_getNFCInstance(&st);
    if (U_FAILURE(st)) {
        snprintf(err, errlen, "NFC normalization: %s", u_errorName(st));
        return -1;
    }
    size_t i = 0;
    while (i < len) {
        /* ASCII and invalid bytes go through as they are; a run holding
         * other characters goes to ICU */
        size_t j = i;
        int wide = 0;
        size_t k;
        while (j < len && (k = utf8_len(text + j, len - j)) > 0) {
            wide |= k > 1;
            j += k;
        }
        if (j > i && (wide ? normalize_run(nfc, text + i, j - i, out, err, errlen)
                           : tok_text_append(out, text + i, j - i)) != 0) {
            if (!wide)
                snprintf(err, errlen, "out of memory for NFC");
            return -1;
        }
        if (j < len && tok_text_append(out, text + j, 1) != 0) {
            snprintf(err, errlen, "out of memory for NFC");
            return -1;
        }
        i = j < len ? j + 1 : j;
    }
    return 0;
}
