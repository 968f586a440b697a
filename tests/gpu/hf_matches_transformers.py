#!/usr/bin/env python3
"""cod-analyze on Hugging Face folders against transformers, for a machine
with torch and transformers (the GPU machine; tests/run.sh does not run
it). Builds tiny random models with transformers itself and saves them as
transformers does (save_pretrained, safetensors):

  llama-gqa     LlamaForCausalLM, grouped-query (8 heads, 2 key/value), untied, bf16
  llama-tied    LlamaForCausalLM, grouped-query, tied embeddings, Llama 3's rope
                scaling, rope_theta 500000, head_dim 32 apart from the width, bf16
  mistral       MistralForCausalLM, grouped-query, a sliding window longer than
                the sequence, fp32
  qwen2         Qwen2ForCausalLM, q/k/v biases, grouped-query, tied, bf16

then compares transformers' fp32 logits (eager attention, TF32 off) on held-out
sequences of random tokens with cod-analyze logits of the same folder:
  --device cpu     (fp32)  largest |difference| / largest |logit| < 1e-4
  --device cuda:0  (bf16)  that ratio < 5e-2, and the same top token at
                           >= 90 % of the positions
(bf16 keeps 8 significant bits: each matmul's inputs move by up to 2^-9 of
themselves, a few layers' worth of which is the bf16 bound; a wrong head
mapping, frequency or bias moves logits by their whole scale). Prints a
PASS/FAIL line per check; exit 1 if any failed.

usage: hf_matches_transformers.py [--no-cuda]
Run from the repository root after make (COD_BIN names the binaries' folder).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from transformers import (LlamaConfig, LlamaForCausalLM, MistralConfig, MistralForCausalLM,
                          Qwen2Config, Qwen2ForCausalLM)

T, SEQS, VOCAB = 64, 4, 512
binaries = os.environ.get("COD_BIN", "bin")
use_cuda = "--no-cuda" not in sys.argv and torch.cuda.is_available()
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

COMMON = dict(vocab_size=VOCAB, hidden_size=128, intermediate_size=344, num_hidden_layers=3,
              num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=256,
              rms_norm_eps=1e-5, hidden_act="silu", initializer_range=0.08)
VARIANTS = {
    "llama-gqa": (LlamaConfig, LlamaForCausalLM,
                  dict(COMMON, tie_word_embeddings=False), torch.bfloat16),
    "llama-tied": (LlamaConfig, LlamaForCausalLM,
                   dict(COMMON, tie_word_embeddings=True, head_dim=32, rope_theta=500000.0,
                        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                      "high_freq_factor": 4.0,
                                      "original_max_position_embeddings": 32}),
                   torch.bfloat16),
    "mistral": (MistralConfig, MistralForCausalLM,
                dict(COMMON, tie_word_embeddings=False, sliding_window=2 * T), torch.float32),
    "qwen2": (Qwen2Config, Qwen2ForCausalLM,
              dict(COMMON, tie_word_embeddings=True, use_sliding_window=False), torch.bfloat16),
}

failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print(("PASS " if ok else "FAIL ") + what, flush=True)


def write_shard(path, tokens):
    """llm.c's shard: 256 int32 of header (magic, version, count), uint16 tokens."""
    header = np.zeros(256, dtype=np.int32)
    header[:3] = [20240520, 1, len(tokens)]
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(np.asarray(tokens, dtype=np.uint16).tobytes())


def build(name, root):
    config_cls, model_cls, kwargs, dtype = VARIANTS[name]
    torch.manual_seed(sum(map(ord, name)))
    model = model_cls(config_cls(**kwargs)).eval()
    with torch.no_grad():
        # norm gains and biases away from their init (ones, zeros), so that
        # a norm or bias read wrong shows
        for pname, p in model.named_parameters():
            if pname.endswith("norm.weight") or pname.endswith(".bias"):
                p.add_(0.2 * torch.randn_like(p))
    folder = os.path.join(root, name)
    model.to(dtype).save_pretrained(folder, safe_serialization=True)
    rng = np.random.default_rng(7)
    tokens = rng.integers(0, VOCAB, size=SEQS * T + 1)
    write_shard(os.path.join(folder, "val_000000.bin"), tokens)
    # the reference: the stored weights, in fp32
    ref = model_cls.from_pretrained(folder, torch_dtype=torch.float32,
                                    attn_implementation="eager").eval()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ref.to(device)
    inputs = torch.tensor(np.stack([tokens[k * T:k * T + T] for k in range(SEQS)]), device=device)
    with torch.no_grad():
        logits = ref(inputs).logits.float().cpu().numpy()
    return folder, logits


def cod_logits(folder, device):
    npy = os.path.join(folder, f"cod-{device.replace(':', '')}.npy")
    run = subprocess.run([os.path.join(binaries, "cod-analyze"), "logits", folder, "--val",
                          os.path.join(folder, "val_*.bin"), "--seq-len", str(T), "--tokens",
                          str(SEQS * T), "--device", device, "--out", npy],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout + run.stderr)
        return None
    return np.load(npy)


def main():
    root = tempfile.mkdtemp(prefix="cod-hf-transformers-")
    for name in VARIANTS:
        folder, ref = build(name, root)
        scale = float(np.abs(ref).max())
        for device, limit in [("cpu", 1e-4)] + ([("cuda:0", 5e-2)] if use_cuda else []):
            got = cod_logits(folder, device)
            if got is None or got.shape != ref.shape:
                check(False, f"{name} on {device}: cod-analyze logits failed or shape "
                             f"{None if got is None else got.shape} != {ref.shape}")
                continue
            ratio = float(np.abs(got - ref).max()) / scale
            top = float((got.argmax(-1) == ref.argmax(-1)).mean())
            print(f"{name} on {device}: largest |cod - transformers| / largest |logit| "
                  f"{ratio:.2e} (limit {limit:g}), same top token at {100 * top:.1f} %")
            ok = ratio < limit and (device == "cpu" or top >= 0.9)
            check(ok, f"{name}: cod's logits on {device} are transformers'")
    print(json.dumps({"folders": root}))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
