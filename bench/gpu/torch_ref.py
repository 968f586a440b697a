#!/usr/bin/env python3
"""The PyTorch reference for bench/gpu/run.sh: the LLaMA of spec/spec.c's
presets with LayerNorm Scaling (Pre-LN RMSNorm whose output block l scales
by 1/sqrt(l), as cod's bench trains; RoPE, SwiGLU, untied lm_head, no
biases) at seq 256 and vocab 32000, trained in plain PyTorch as one would
write it: fp32 master weights, bf16 autocast, scaled_dot_product_attention
(causal), AdamW without the fused kernel (torch's default multi-tensor
AdamW), so that the optimizer's arithmetic matches cod's; eager and
torch.compile. Prints one RESULT line per mode with tokens/s, MFU
against the given dense bf16 peak, the peak device memory and the seconds
of the three untimed warm-up updates (torch.compile's compiling among
them), with the largest micro-batch that fits (halving from 128) unless
one is given; then, from a profile of one more micro-batch, which of
SDPA's backends the model ran (sdpa_used.py: SDPA lines). Without torch, or
with no CUDA device for it, one SKIP line (exit 0).
FLOPs per token are cod's (model_flops_per_token): 6 per matmul weight,
lm_head included, plus 12·L·d·T for attention. --accum K micro-batches
make one update (default 1), their gradients summed as cod's trainer sums
them; --steps counts updates.

usage: torch_ref.py PRESET PEAK_TFLOPS [--mode eager|compile] [--micro-batch B] [--steps N]
                    [--accum K]
"""
import argparse
import math
import sys
import time

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ImportError as e:
    print(f"SKIP PyTorch reference: python3 cannot import torch ({e})")
    sys.exit(0)

import sdpa_used

# name: (dim, ffn_dim, n_heads, n_layers), as spec/spec.c
PRESETS = {
    "llama-71m": (512, 1368, 8, 12),
    "llama-130m": (768, 2048, 12, 12),
    "llama-350m": (1024, 2736, 16, 24),
    "llama-1b": (2048, 5461, 32, 24),
}
SEQ, VOCAB = 256, 32000


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6, scale=1.0):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps
        self.scale = scale

    def forward(self, x):
        x32 = x.float()
        y = (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight
        return y * self.scale if self.scale != 1.0 else y


def rope_tables(T, hd, theta=10000.0, device="cuda"):
    inv = theta ** (-torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd)
    ang = torch.outer(torch.arange(T, device=device, dtype=torch.float32), inv)
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos(), ang.sin()


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], dim=-1)


class Block(nn.Module):
    def __init__(self, d, f, nh, layer):
        super().__init__()
        self.nh = nh
        s = 1.0 / math.sqrt(layer)
        self.attn_norm, self.ffn_norm = RMSNorm(d, scale=s), RMSNorm(d, scale=s)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(d, f, bias=False), nn.Linear(d, f, bias=False)
        self.down = nn.Linear(f, d, bias=False)

    def forward(self, x, cos, sin):
        B, T, d = x.shape
        hd = d // self.nh
        h = self.attn_norm(x)
        q, k, v = (p(h).view(B, T, self.nh, hd).transpose(1, 2) for p in (self.q, self.k, self.v))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, d))
        h = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self, d, f, nh, L):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        self.blocks = nn.ModuleList(Block(d, f, nh, l + 1) for l in range(L))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, VOCAB, bias=False)
        cos, sin = rope_tables(SEQ, d // nh)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, tok, tgt):
        x = self.embed(tok)
        for b in self.blocks:
            x = b(x, self.cos, self.sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, VOCAB), tgt.view(-1))


def flops_per_token(d, f, L):
    matmul = L * (4 * d * d + 3 * d * f) + d * VOCAB
    return 6.0 * matmul + 12.0 * L * d * SEQ


def run(preset, mode, B, steps, accum):
    d, f, nh, L = PRESETS[preset]
    torch.manual_seed(0)
    model = Llama(d, f, nh, L).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0, fused=False)
    fwd = torch.compile(model) if mode == "compile" else model
    tok = torch.randint(0, VOCAB, (B, SEQ), device="cuda")
    tgt = torch.randint(0, VOCAB, (B, SEQ), device="cuda")

    def micro_batch():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = fwd(tok, tgt) / accum
        loss.backward()
        return loss.detach()

    def step():
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for _ in range(accum):
            total = total + micro_batch()
        opt.step()
        return total

    t0 = time.perf_counter()
    for _ in range(3):  # compilation, autotuning, allocator warm-up
        step()
    torch.cuda.synchronize()
    warmup = time.perf_counter() - t0
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
    loss = loss.item()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    n_params = sum(p.numel() for p in model.parameters())
    return B * SEQ * steps * accum / dt, n_params, loss, torch.cuda.max_memory_allocated(), warmup, micro_batch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("preset", choices=sorted(PRESETS))
    ap.add_argument("peak_tflops", type=float)
    ap.add_argument("--mode", choices=["eager", "compile"], default="eager")
    ap.add_argument("--micro-batch", type=int, default=0)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--accum", type=int, default=1)
    a = ap.parse_args()
    if a.steps < 1 or a.accum < 1:
        ap.error("--steps and --accum must be positive")
    if not torch.cuda.is_available():
        print(f"SKIP PyTorch reference: torch {torch.__version__} sees no CUDA device")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = True
    B = a.micro_batch or 128
    while True:
        try:
            tps, n_params, loss, peak_mem, warmup, micro_batch = run(a.preset, a.mode, B, a.steps, a.accum)
            break
        except torch.cuda.OutOfMemoryError:
            torch._dynamo.reset()
            torch.cuda.empty_cache()
            if a.micro_batch or B == 1:
                print(f"torch_ref: {a.preset} does not fit at micro-batch {B}", file=sys.stderr)
                return 1
            B //= 2
    d, f, _, L = PRESETS[a.preset]
    fl = tps * flops_per_token(d, f, L)
    mfu = fl / (a.peak_tflops * 1e12)
    assert math.isfinite(loss), "non-finite loss"
    print(f"RESULT impl=torch-{a.mode} model={a.preset} micro_batch={B} accum={a.accum} params_m={n_params / 1e6:.1f} "
          f"tokens_per_s={tps:.0f} tflops={fl / 1e12:.1f} mfu={mfu:.4f} "
          f"peak_gib={peak_mem / 2**30:.2f} loss={loss:.4f} warmup_s={warmup:.1f}", flush=True)
    sdpa_used.report(f"torch-{a.mode}", a.preset, micro_batch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
