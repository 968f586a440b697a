#!/usr/bin/env python3
"""PyTorch's fused attention at cod's shapes: the ceiling that
bench/gpu/attention.sh sets beside cod's own attention
(bench_attention_cuda.c). scaled_dot_product_attention, causal, bf16, q, k
and v laid out as in the model ([B, T, H, D] in memory, viewed
[B, H, T, D]: the projections' rows, as bench/gpu/torch_ref.py has them),
timed forward, and forward with backward (torch.autograd.grad, so that no
gradient accumulates), with each of SDPA's backends forced
(torch.nn.attention.sdpa_kernel: cuDNN, flash, memory-efficient) and then
with the one PyTorch chooses itself, which a profile of one call names.
Each time is the median of REPS calls after 5 warm-ups, by CUDA events
(ceilings.py's timing);
the backward's is the difference. FLOPs as bench_attention_cuda.c counts
them: forward 2·B·H·T²·D (causal: QKᵀ and PV over the T²/2 unmasked
pairs), backward 2.5 times that.

Prints
  TORCH version=V cuda=V cudnn=N device=NAME sdpa_enabled=cudnn,flash,...
  ATTENTION impl=torch-cudnn model=NAME batch=B heads=H seq=T head=D reps=N
            fwd_ms=… bwd_ms=… fwd_tflops=… bwd_tflops=… fwdbwd_tflops=…
  ATTENTION impl=torch-flash model=NAME … unavailable: why
  SDPA impl=torch-default model=NAME backend=flash ops=aten::…
  SDPA kernel NAME
and without torch, or with no CUDA device for it, one SKIP line (exit 0).

usage: attention.py [--reps N] NAME:B:H:T:D ...
"""
import argparse
import sys
import warnings

try:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError as e:
    print(f"SKIP attention ceilings (PyTorch): python3 cannot import torch ({e})")
    sys.exit(0)

import ceilings
import sdpa_used

BACKENDS = [("torch-cudnn", SDPBackend.CUDNN_ATTENTION), ("torch-flash", SDPBackend.FLASH_ATTENTION),
            ("torch-efficient", SDPBackend.EFFICIENT_ATTENTION)]


def shape(arg):
    try:
        name, *dims = arg.split(":")
        B, H, T, D = (int(x) for x in dims)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a shape is NAME:B:H:T:D, not '{arg}'")
    return name, B, H, T, D


def timed_ms(fn, reps):
    return 1e3 * ceilings.timed(fn, reps)


def model_layout(B, H, T, D):
    return torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("shapes", type=shape, nargs="+")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print(f"SKIP attention ceilings (PyTorch): torch {torch.__version__} sees no CUDA device")
        return 0
    print(f"TORCH version={torch.__version__} cuda={torch.version.cuda} cudnn={torch.backends.cudnn.version()} "
          f"device={torch.cuda.get_device_name().replace(' ', '_')} sdpa_enabled={sdpa_used.enabled()}")
    torch.manual_seed(0)
    for name, B, H, T, D in a.shapes:
        q, k, v = (model_layout(B, H, T, D).requires_grad_() for _ in range(3))
        dout = model_layout(B, H, T, D)
        fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
        fwd_bwd = lambda: torch.autograd.grad(fwd(), (q, k, v), dout)
        flops = 2.0 * B * H * T * T * D
        where = f"model={name} batch={B} heads={H} seq={T} head={D}"
        for impl, backend in BACKENDS:
            try:
                with warnings.catch_warnings(record=True) as said, sdpa_kernel(backend):
                    warnings.simplefilter("always")
                    f_ms = timed_ms(fwd, a.reps)
                    fb_ms = timed_ms(fwd_bwd, a.reps)
            except RuntimeError as e:
                why = "; ".join(str(w.message).replace("\n", " ") for w in said) or str(e)
                print(f"ATTENTION impl={impl} {where} unavailable: {why}", flush=True)
                continue
            b_ms = fb_ms - f_ms
            print(f"ATTENTION impl={impl} {where} reps={a.reps} fwd_ms={f_ms:.4f} bwd_ms={b_ms:.4f} "
                  f"fwd_tflops={flops / f_ms / 1e9:.4g} bwd_tflops={2.5 * flops / b_ms / 1e9:.4g} "
                  f"fwdbwd_tflops={3.5 * flops / fb_ms / 1e9:.4g}", flush=True)
        sdpa_used.report("torch-default", name, fwd_bwd)
        del q, k, v, dout
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
