/* SHA-256 through libcrypto: see sha256.h. */
#include "text/sha256.h"

#include <openssl/evp.h>

void sha256_to_hex(const unsigned char md[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = 0;
}

int sha256_hex(const void *data, size_t n, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    hex[0] = 0;
    if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32)
        return -1;
    sha256_to_hex(md, hex);
    return 0;
}

struct sha256_stream *sha256_begin(void)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    if (c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(c);
        c = NULL;
    }
    return (struct sha256_stream *)c;
}

int sha256_update(struct sha256_stream *s, const void *data, size_t n)
{
    return EVP_DigestUpdate((EVP_MD_CTX *)s, data, n) == 1 ? 0 : -1;
}

int sha256_end(struct sha256_stream *s, unsigned char md[32])
{
    unsigned char full[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    int rc = EVP_DigestFinal_ex((EVP_MD_CTX *)s, full, &len) == 1 && len == 32 ? 0 : -1;
    EVP_MD_CTX_free((EVP_MD_CTX *)s);
    for (unsigned i = 0; rc == 0 && i < 32; i++)
        md[i] = full[i];
    return rc;
}
