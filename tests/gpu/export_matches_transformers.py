#!/usr/bin/env python3
"""The export's logits check, for a machine with torch and transformers
(tests/run.sh does not run it). It exports a pre checkpoint with
bin/cod-analyze, loads the folder with transformers' LlamaForCausalLM, and
compares the next-token loss on the first held-out sequences with cod's own
evaluation of the checkpoint on the same sequences (the full model's loss
that bin/cod-analyze prune prints). A model that computed something else
(wrong layout, RoPE convention, norm placement) would be off by far more.

usage: tests/gpu/export_matches_transformers.py CHECKPOINT_DIR [VAL_SHARD]
run from the repository root after `make`.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
from transformers import LlamaForCausalLM

SEQS = 8

ckpt = sys.argv[1]
spec = json.load(open(os.path.join(ckpt, "state.json")))["spec"]
T = spec["train"]["seq_len"]
val = sys.argv[2] if len(sys.argv) > 2 else sorted(glob.glob(spec["data"]["val"]))[0]

out = tempfile.mkdtemp(prefix="cod-hf-")
subprocess.run(["bin/cod-analyze", "export", ckpt, "--out", out], check=True)
text = subprocess.run(["bin/cod-analyze", "prune", ckpt, "--val", val, "--tokens", str(SEQS * T)],
                      check=True, capture_output=True, text=True).stdout
cod_loss = float(re.search(r"full model: loss ([0-9.]+)", text).group(1))

# llm.c shard: 256 int32 header (magic, version, token count), then uint16
# tokens (uint32 under the other magic). cod's held-out sequence k is tokens
# k*T … k*T+T, inputs the first T, targets the last T (trainer/dataloader.c).
header = np.fromfile(val, dtype=np.int32, count=256)
dtype = np.uint16 if header[0] == 20240520 else np.uint32
tok = np.fromfile(val, dtype=dtype, count=int(header[2]), offset=1024).astype(np.int64)
chunks = torch.tensor(np.stack([tok[k * T: k * T + T + 1] for k in range(SEQS)]))

model = LlamaForCausalLM.from_pretrained(out, torch_dtype=torch.float32).eval()
with torch.no_grad():
    logits = model(chunks[:, :-1]).logits
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             chunks[:, 1:].reshape(-1)).item()
print(f"transformers loss {loss:.6f}, cod loss {cod_loss:.6f}")
ok = abs(loss - cod_loss) < 1e-3
print(("PASS" if ok else "FAIL") + " export_matches_transformers")
sys.exit(0 if ok else 1)
