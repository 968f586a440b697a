#!/usr/bin/env bash
# bin/cod-analyze as a user meets it, on checkpoints of tiny bin/cod-train
# runs (which also run analysis.prune / analysis.angular at their end): bad
# arguments and a missing checkpoint refused with exit 2; prune and angular
# print and write JSON; export of pre reads back equal, export of lns is
# refused naming the variant.
cd "$(dirname "$0")/.." && . tests/lib.sh
need_corpus
t=$(mktemp -d /tmp/cod-analyze-XXXXXX)
for norm in pre lns; do
    cat > "$t/$norm.json" <<JSON
{"model": {"dim": 32, "n_layers": 3, "n_heads": 2, "ffn_dim": 64}, "norm": "$norm",
 "data": {"train": "var/data/default-bytes/train_*.bin", "val": "var/data/default-bytes/val_*.bin"},
 "train": {"steps": 5, "seq_len": 32, "batch_seqs": 4, "micro_batch": 4},
 "eval": {"every": 0, "tokens": 512}, "analysis": {"prune": true, "angular": true}}
JSON
    bin/cod-train "$t/$norm.json" --out "$t/$norm" > "$t/train-$norm.log" 2>&1
done
ck="$t/pre/checkpoints/step_00000005"
check "end-of-run prune metrics per layer" bash -c "[ \$(grep -c '\"name\": \"prune/delta_loss\"' '$t/pre/metrics.jsonl') -eq 3 ] && [ \$(grep -c '\"name\": \"prune/delta_ppl\"' '$t/pre/metrics.jsonl') -eq 3 ]"
check "end-of-run angular metrics and JSON" bash -c "[ \$(grep -c '\"name\": \"angular/n' '$t/pre/metrics.jsonl') -eq 6 ] && [ -s '$t/pre/analysis/angular.json' ] && [ -s '$t/pre/analysis/prune.json' ]"

bin/cod-analyze > "$t/out" 2>&1
check "usage without arguments" bash -c "[ $? -eq 2 ] && grep -q usage '$t/out'"
bin/cod-analyze shrink "$ck" > "$t/out" 2>&1
check "unknown analysis refused" bash -c "[ $? -eq 2 ] && grep -q shrink '$t/out'"
bin/cod-analyze prune "$ck" --tokens -3 > "$t/out" 2>&1
check "bad --tokens refused" bash -c "[ $? -eq 2 ] && grep -q -- --tokens '$t/out'"
bin/cod-analyze prune /nonexistent/ckpt > "$t/out" 2>&1
check "missing checkpoint refused, naming it" bash -c "[ $? -eq 2 ] && grep -q /nonexistent/ckpt '$t/out'"
bin/cod-analyze prune "$ck" --val '/nonexistent/val_*.bin' > "$t/out" 2>&1
check "missing --val shards named" bash -c "[ $? -eq 1 ] && grep -q /nonexistent/val '$t/out'"

bin/cod-analyze prune "$ck" --tokens 1024 --out "$t/a" > "$t/prune.txt" 2>&1
check "prune prints a row per layer and writes prune.json" bash -c "[ $? -eq 0 ] && grep -qE '^ +3 ' '$t/prune.txt' && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d[\"layers\"])==3 and d[\"tokens\"]==1024' '$t/a/prune.json'"
bin/cod-analyze angular "$ck" --tokens 1024 --out "$t/a" > "$t/angular.txt" 2>&1
check "angular prints the matrix and writes angular.json in [0, 1]" bash -c "[ $? -eq 0 ] && grep -q 'd(l, n)' '$t/angular.txt' && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d[\"distance\"]; assert [len(x) for x in r]==[3,2,1] and all(0<=v<=1 for x in r+d[\"scaled\"] for v in x)' '$t/a/angular.json'"

bin/cod-analyze export "$ck" --out "$t/hf" > "$t/out" 2>&1
check "export of pre writes config.json and model.safetensors" bash -c "[ $? -eq 0 ] && [ -s '$t/hf/config.json' ] && [ -s '$t/hf/model.safetensors' ]"
check "exported tensors read back equal the checkpoint's" python3 - "$ck/model.safetensors" "$t/hf/model.safetensors" <<'PY'
import json, struct, sys
def load(p):
    b = open(p, 'rb').read(); n = struct.unpack('<Q', b[:8])[0]; h = json.loads(b[8:8 + n])
    h.pop('__metadata__', None)
    return {k: b[8 + n + v['data_offsets'][0]: 8 + n + v['data_offsets'][1]] for k, v in h.items()}
a, e = load(sys.argv[1]), load(sys.argv[2])
assert len(e) == 3 + 9 * 3 and all(a[k] == v for k, v in e.items())
PY
bin/cod-analyze export "$t/lns/checkpoints/step_00000005" --out "$t/hf-lns" > "$t/out" 2>&1
check "export of lns refused, naming the variant" bash -c "[ $? -eq 1 ] && grep -q 'norm variant \"lns\" cannot be exported' '$t/out' && [ ! -e '$t/hf-lns/model.safetensors' ]"
bin/cod-analyze export "$ck" > "$t/out" 2>&1
check "export without --out refused" bash -c "[ $? -eq 2 ] && grep -q -- --out '$t/out'"
rm -rf "$t"
