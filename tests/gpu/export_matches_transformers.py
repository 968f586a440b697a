#!/usr/bin/env python3
"""The Hugging Face export against transformers, for a machine with torch and
transformers (the GPU machine; tests/run.sh does not run it). It exports a
Pre-LN checkpoint with cod-analyze, loads the folder with transformers'
LlamaForCausalLM in fp32, and compares its logits on the first held-out
sequences with cod's own (cod-analyze logits, the CPU backend in fp32):
the largest difference over the largest logit must be under 1e-4, far
below what any difference of layout, RoPE convention or norm placement
would leave. Prints PASS/FAIL lines.

usage: export_matches_transformers.py [CHECKPOINT_DIR]
default: the final checkpoint of tests/gpu/loss_curve.sh's CUDA run.
Run from the repository root, by tests/gpu/run.sh (COD_BIN, GPU_LOGS).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from transformers import LlamaForCausalLM

SEQS = 4
binaries = os.environ.get("COD_BIN", "bin")
logs = os.environ.get("GPU_LOGS", "build/gpu/logs")
ckpts = sorted(glob.glob(os.path.join(logs, "loss_curve", "cuda", "checkpoints", "step_*")))
ckpt = sys.argv[1] if len(sys.argv) > 1 else (ckpts[-1] if ckpts else None)
if not ckpt:
    print("FAIL export: no checkpoint (run tests/gpu/loss_curve.sh first, or name one)")
    sys.exit(1)
spec = json.load(open(os.path.join(ckpt, "state.json")))["spec"]
T = spec["train"]["seq_len"]
val = sorted(glob.glob(spec["data"]["val"]))[0]

out = tempfile.mkdtemp(prefix="cod-hf-")
subprocess.run([os.path.join(binaries, "cod-analyze"), "export", ckpt, "--out", out], check=True)
npy = os.path.join(out, "cod-logits.npy")
subprocess.run([os.path.join(binaries, "cod-analyze"), "logits", ckpt, "--val", val, "--tokens",
                str(SEQS * T), "--out", npy], check=True)
cod = np.load(npy)

# llm.c shard: 256 int32 header (magic, version, token count), then uint16
# tokens (uint32 under the other magic). cod's held-out sequence k is tokens
# k*T … k*T+T-1 (trainer/dataloader.c).
header = np.fromfile(val, dtype=np.int32, count=256)
dtype = np.uint16 if header[0] == 20240520 else np.uint32
tok = np.fromfile(val, dtype=dtype, count=int(header[2]), offset=1024).astype(np.int64)
inputs = torch.tensor(np.stack([tok[k * T: k * T + T] for k in range(SEQS)]))

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cuda.matmul.allow_tf32 = False
model = LlamaForCausalLM.from_pretrained(out).float().to(device).eval()
with torch.no_grad():
    hf = model(inputs.to(device)).logits.float().cpu().numpy()
scale = float(np.abs(hf).max())
diff = float(np.abs(hf - cod).max())
print(f"logits {hf.shape}: largest |transformers - cod| {diff:.3e}, largest |logit| {scale:.3f}, "
      f"ratio {diff / scale:.3e} (limit 1e-4); transformers on {device}")
ok = cod.shape == hf.shape and diff / scale < 1e-4
print(("PASS" if ok else "FAIL") + " export: transformers' logits are cod's")
sys.exit(0 if ok else 1)
