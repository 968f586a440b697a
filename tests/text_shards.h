/* Real English text for the trainer's tests without the corpus: the GPL's
 * text, which every Debian machine has, as byte tokens in DIR/train_000.bin
 * (the first nine tenths) and DIR/val_000.bin. 0, or -1. */
#ifndef COD_TESTS_TEXT_SHARDS_H
#define COD_TESTS_TEXT_SHARDS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/shard.h"

/* The text's first 40,000 bytes (a static buffer); 0 when it is missing. */
static size_t gpl_text(unsigned char **text)
{
    static unsigned char buf[40000];
    FILE *f = fopen("/usr/share/common-licenses/GPL-3", "rb");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    *text = buf;
    return n;
}

static int write_text_shards(const char *dir)
{
    unsigned char *text;
    size_t n = gpl_text(&text);
    if (!n)
        return -1;
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

/* The same text cut into documents at blank lines (its paragraphs), each
 * after the doc token 256, as cod-prep writes bytes, with a meta.json
 * that says so (vocab 257): documents packing's shards. The train set is
 * two shards, its cut inside a paragraph (a document across shards). */
static int write_doc_shards(const char *dir)
{
    unsigned char *text;
    size_t n = gpl_text(&text);
    if (!n)
        return -1;
    uint32_t *tok = malloc(2 * n * sizeof(uint32_t) + 4);
    if (!tok)
        return -1;
    size_t k = 0, split = 0, cut = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || (text[i - 1] == '\n' && i >= 2 && text[i - 2] == '\n'))
            tok[k++] = 256;
        if (!split && i >= n * 9 / 10 && tok[k - 1] == 256)
            split = k - 1;
        if (!cut && i >= n / 3 && tok[k - 1] != 256)
            cut = k;
        tok[k++] = text[i];
    }
    char path[512], err[256];
    snprintf(path, sizeof(path), "%s/train_000.bin", dir);
    int rc = shard_write(path, tok, (int64_t)cut, 2, err, sizeof(err));
    snprintf(path, sizeof(path), "%s/train_001.bin", dir);
    rc |= shard_write(path, tok + cut, (int64_t)(split - cut), 2, err, sizeof(err));
    snprintf(path, sizeof(path), "%s/val_000.bin", dir);
    rc |= shard_write(path, tok + split, (int64_t)(k - split), 2, err, sizeof(err));
    free(tok);
    snprintf(path, sizeof(path), "%s/meta.json", dir);
    FILE *m = fopen(path, "w");
    rc |= !m || fputs("{\"vocab_size\": 257, \"doc_token\": 256}\n", m) < 0;
    if (m)
        rc |= fclose(m) != 0;
    return rc ? -1 : 0;
}

#endif
