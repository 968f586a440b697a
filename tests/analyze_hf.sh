#!/usr/bin/env bash
# cod-analyze on Hugging Face model folders. A cod checkpoint exported to a
# folder and read back gives the same losses, statistics and logits as the
# checkpoint itself (bit for bit: the same fp32 weights through the same
# forward). Folders that no cod checkpoint can make (grouped-query
# attention, head_dim apart from the width, Qwen2's biases, tied and untied
# embeddings, Llama 3's RoPE scaling, bf16 / fp16 / fp32 weights, shards
# with an index) against tests/hf_reference.js, an independent float64
# forward in node. Every config cod-analyze refuses names its field.
cd "$(dirname "$0")/.." && . tests/lib.sh
need_corpus
t=$(mktemp -d /tmp/cod-analyze-hf-XXXXXX)
val='var/data/default-bytes/val_*.bin'
cat > "$t/pre.json" <<JSON
{"model": {"dim": 32, "n_layers": 3, "n_heads": 2, "ffn_dim": 60}, "norm": "pre",
 "data": {"train": "var/data/default-bytes/train_*.bin", "val": "$val"},
 "train": {"steps": 5, "seq_len": 32, "batch_seqs": 4, "micro_batch": 4},
 "eval": {"every": 0, "tokens": 512}}
JSON
bin/cod-train "$t/pre.json" --out "$t/pre" > "$t/train.log" 2>&1
ck="$t/pre/checkpoints/step_00000005"
bin/cod-analyze export "$ck" --out "$t/hf" > "$t/out" 2>&1
check "the checkpoint exports" [ -s "$t/hf/config.json" ]
for a in stats prune angular; do
    bin/cod-analyze $a "$ck" --tokens 1024 --out "$t/ck" > "$t/ck-$a.txt" 2>&1
    bin/cod-analyze $a "$t/hf" --val "$val" --seq-len 32 --batch 4 --tokens 1024 \
        --out "$t/hf-out" > "$t/hf-$a.txt" 2>&1
    check "$a of the exported folder equals the checkpoint's" cmp "$t/ck/$a.json" "$t/hf-out/$a.json"
done
check "stats gives a row per layer from the embedding output" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["n_layers"] == 3 and [r["layer"] for r in d["layers"]] == [0, 1, 2, 3]
assert all(r["out_var"] > 0 and r["out_rms"] > 0 for r in d["layers"])
assert all(0 <= r["angular"] <= 1 for r in d["layers"][1:]) and "angular" not in d["layers"][0]
' "$t/ck/stats.json"
bin/cod-analyze logits "$ck" --tokens 64 --out "$t/ck.npy" > /dev/null 2>&1
bin/cod-analyze logits "$t/hf" --val "$val" --seq-len 32 --batch 4 --tokens 64 --out "$t/hf.npy" > /dev/null 2>&1
check "logits of the exported folder equal the checkpoint's" cmp "$t/ck.npy" "$t/hf.npy"
check "the log line says the memory the model takes" grep -qE '^model: .* MiB: weights .* MiB \(fp32\), activations .* MiB for 4 × 32 tokens' "$t/hf-stats.txt"

for v in llama qwen2 mistral; do
    node tests/hf_reference.js build "$t/$v" $v
    bin/cod-analyze logits "$t/$v" --val "$t/$v/val_*.bin" --seq-len 32 --tokens 64 --out "$t/$v.npy" \
        > "$t/$v.txt" 2>&1
    check "$v: cod's logits match the independent reference" node tests/hf_reference.js check "$t/$v" "$t/$v.npy" 32
done
# the CUDA backend (bf16) on the emulator (make build-tests builds it wherever nvcc is):
# the forward-only model's compact fp32 vectors, the act copy of the
# matrices, bias_add and repeat_kv on the device
if cuda_toolkit; then
    for v in llama qwen2 mistral; do
        build/emu/bin/cod-analyze logits "$t/$v" --val "$t/$v/val_*.bin" --seq-len 32 --tokens 64 \
            --device cuda:0 --out "$t/$v-cuda.npy" > "$t/$v-cuda.txt" 2>&1
        check "$v on CUDA (emulated, bf16): the reference's logits within bf16's rounding" \
            node tests/hf_reference.js check "$t/$v" "$t/$v-cuda.npy" 32 5e-2
    done
    check "CUDA keeps the weights in bf16 and says so" grep -q 'on cuda:0 .* MiB (bf16)' "$t/llama-cuda.txt"
fi
bin/cod-analyze stats "$t/llama" --val "$t/llama/val_*.bin" --seq-len 32 --tokens 128 > "$t/out" 2>&1
check "stats on a grouped-query Llama folder" bash -c "[ $? -eq 0 ] && grep -qE '^ +2 ' '$t/out'"

# refused: the config edited one field at a time (python3: JSON only)
refused() { # name, variant, python statement on the dict c, the text the error must hold
    local name=$1 v=$2 edit=$3 want=$4 d="$t/bad-$1"
    rm -rf "$d" && cp -r "$t/$v" "$d"
    python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); $edit; json.dump(c, open(p,'w'))" "$d/config.json"
    bin/cod-analyze stats "$d" --val "$d/val_*.bin" --seq-len 32 --tokens 64 > "$t/out" 2>&1
    local rc=$?
    check "refused, naming it: $name" bash -c "[ $rc -ne 0 ] && grep -qF -- '$want' '$t/out'"
}
refused arch llama 'c["architectures"]=["GPTNeoXForCausalLM"]' 'config.json: architectures: "GPTNeoXForCausalLM" is not read'
refused moe mistral 'c["num_local_experts"]=8' 'config.json: num_local_experts: a mixture of experts'
refused act llama 'c["hidden_act"]="gelu"' 'config.json: hidden_act: "gelu" is not computed'
refused rope-type llama 'c["rope_scaling"]={"rope_type":"yarn","factor":4.0}' 'config.json: rope_scaling.rope_type: "yarn" is not computed'
refused rope-factor llama 'del c["rope_scaling"]["factor"]' 'config.json: rope_scaling: factor: missing'
refused window mistral 'c["sliding_window"]=16' 'config.json: sliding_window: 16 is shorter than the sequence of 32 tokens'
refused qwen-window qwen2 'c["use_sliding_window"]=True' 'config.json: sliding_window: 8 is shorter'
refused kv-heads llama 'c["num_key_value_heads"]=3' 'config.json: num_key_value_heads: 3 does not divide num_attention_heads 4'
refused attention-bias llama 'c["attention_bias"]=True' 'config.json: attention_bias: true'
refused mlp-bias mistral 'c["mlp_bias"]=True' 'config.json: mlp_bias: true'
refused quantized llama 'c["quantization_config"]={"quant_method":"gptq"}' 'config.json: quantization_config: a quantized model'
refused missing-width llama 'del c["hidden_size"]' 'config.json: hidden_size: missing'
refused odd-head llama 'c["head_dim"]=15' 'config.json: head_dim: 15 is odd'
refused layer-types qwen2 'c["layer_types"]=["full_attention","chunked_attention","full_attention"]' 'config.json: layer_types: entry 1'
refused partial-rope llama 'c["partial_rotary_factor"]=0.5' 'config.json: partial_rotary_factor'
refused shape mistral 'c["intermediate_size"]=44' 'tensor model.layers.0.mlp.gate_proj.weight: shape [40,32], config.json makes it [44,32]'
refused extra-tensor llama 'c["num_hidden_layers"]=1' 'tensor model.layers.1.'
bin/cod-analyze stats "$t/llama" --seq-len 32 > "$t/out" 2>&1
check "a folder without --val refused (exit 2), saying why" bash -c "[ $? -eq 2 ] && grep -q -- '--val names its held-out shards' '$t/out'"
bin/cod-analyze stats "$t" --val "$val" > "$t/out" 2>&1
check "a folder of neither kind refused (exit 2), naming it" bash -c "[ $? -eq 2 ] && grep -qF '$t: neither a cod checkpoint' '$t/out'"
bin/cod-analyze stats "$t/llama" --val "var/data/default/val_*.bin" --seq-len 32 --tokens 64 > "$t/out" 2>&1
check "held-out tokens outside the vocabulary named" bash -c "[ $? -eq 1 ] && grep -q 'outside the model.s vocabulary of 300' '$t/out'"
rm -rf "$t"
