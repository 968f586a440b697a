/* Real English text for the trainer's tests without the corpus: the GPL's
 * text, which every Debian machine has, as byte tokens in DIR/train_000.bin
 * (the first nine tenths) and DIR/val_000.bin. 0, or -1. */
#ifndef COD_TESTS_TEXT_SHARDS_H
#define COD_TESTS_TEXT_SHARDS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/shard.h"

static int write_text_shards(const char *dir)
{
    FILE *f = fopen("/usr/share/common-licenses/GPL-3", "rb");
    if (!f)
        return -1;
    static unsigned char text[40000];
    size_t n = fread(text, 1, sizeof(text), f);
    fclose(f);
    uint32_t *tok = malloc(n * sizeof(uint32_t));
    if (!tok)
        return -1;
    for (size_t i = 0; i < n; i++)
        tok[i] = text[i];
    char path[512], err[256];
    size_t split = n * 9 / 10;
    snprintf(path, sizeof(path), "%s/train_000.bin", dir);
    int rc = shard_write(path, tok, (int64_t)split, 2, err, sizeof(err));
    snprintf(path, sizeof(path), "%s/val_000.bin", dir);
    rc |= shard_write(path, tok + split, (int64_t)(n - split), 2, err, sizeof(err));
    free(tok);
    return rc;
}

#endif
