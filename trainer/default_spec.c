#include "trainer/default_spec.h"

const char *default_spec_json(void)
{
    return "{\"name\": \"default-lns\","
           " \"model\": {\"dim\": 128, \"n_layers\": 6, \"n_heads\": 4, \"ffn_dim\": 352},"
           " \"norm\": \"lns\","
           " \"data\": {\"train\": \"var/data/default-bytes/train_*.bin\","
           "          \"val\": \"var/data/default-bytes/val_*.bin\"},"
           " \"train\": {\"steps\": 400, \"seq_len\": 128, \"batch_seqs\": 32, \"micro_batch\": 16,"
           "           \"lr\": 2e-3, \"warmup\": 40},"
           " \"eval\": {\"every\": 100, \"tokens\": 65536},"
           " \"stats\": {\"every\": 50},"
           " \"checkpoint\": {\"every\": 100, \"keep\": 2},"
           " \"resources\": {\"device\": \"cpu\"}}";
}
