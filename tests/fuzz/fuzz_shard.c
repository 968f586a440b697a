/* libFuzzer harness: token shards (common/shard.c) and the trainer's data
 * loader over them (trainer/dataloader.c): the input is a shard file.
 * shard_check (the server's header-only check) and shard_open (the
 * trainer's map) must agree on it; when it opens, the loader reads
 * samples, chunks and every token as a training run does. */
#include <stdint.h>
#include <string.h>

#include "common/shard.h"
#include "tests/fuzz/fuzz_util.h"
#include "trainer/dataloader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file("train_000000.bin", data, size);
    struct shard_info info;
    struct shard s;
    char err[4200];
    int checked = shard_check(path, &info, err, sizeof err) == 0;
    int opened = shard_open(&s, path, err, sizeof err) == 0;
    if (checked != opened)
        fuzz_die("shard_check says %s, shard_open %s", checked ? "yes" : "no", opened ? "yes" : "no");
    if (!opened)
        return 0;
    if (info.n_tokens != s.n_tokens || info.token_bytes != s.token_bytes)
        fuzz_die("shard_check and shard_open read different headers");
    uint64_t sum = 0;
    for (int64_t i = 0; i < s.n_tokens; i++)
        sum += shard_token(&s, i);
    shard_close(&s);
    /* the first byte picks the sequence length, as a spec's seq_len would */
    int T = 1 + (size ? data[0] % 16 : 0);
    struct loader l;
    if (loader_open(&l, path, T, sum, NULL, err, sizeof err) != 0)
        return 0;
    int32_t tok[16], tgt[16];
    for (int64_t i = 0; i < 8; i++)
        loader_sample(&l, i * 7919, tok, tgt);
    loader_chunk(&l, 0, tok, tgt);
    loader_chunk(&l, l.n_chunks - 1, tok, tgt);
    loader_max_token(&l);
    loader_close(&l);
    return 0;
}
