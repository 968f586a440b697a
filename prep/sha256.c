/* SHA-256 through libcrypto: see sha256.h. */
#include "prep/sha256.h"

#include <openssl/evp.h>

int sha256_hex(const void *data, size_t n, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    hex[0] = 0;
    if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32)
        return -1;
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < len; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = 0;
    return 0;
}
