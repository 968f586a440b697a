#!/usr/bin/env python3
"""The two ceilings of the GPU, measured (bench/gpu/run.sh prints them before
the training figures): device memory bandwidth (a large device-to-device
copy, bytes read plus bytes written) and bf16 matrix throughput (cuBLAS
through torch.matmul, fp32 accumulation, random data), at 8192^3 and at the
shapes of one training step of each preset at seq 256 (rows N = micro-batch
x 256): the fused QKV, the output projection, the fused gate|up, the down
projection and the lm_head, at the rows of logits cod takes at a time
where LOGIT_ROWS gives them (its memory plan: bench_train_cuda's RESULT
line), else all N. Each figure is the median of 20 timed runs
after 5 warm-ups, timed with CUDA events, rotating over 4 input sets so
that repeated runs do not just measure the L2 cache.

usage: ceilings.py [PRESET:MICRO_BATCH[:LOGIT_ROWS] ...]   (default llama-130m:64 llama-1b:32)
"""
import statistics
import sys

try:
    import torch
except ImportError as e:
    print(f"SKIP the GPU's ceilings: python3 cannot import torch ({e})")
    sys.exit(0)

PRESETS = {  # dim, ffn as cod's matmuls see it (spec/spec.c; 1b's 5461 padded to 5464)
    "llama-71m": (512, 1368),
    "llama-130m": (768, 2048),
    "llama-350m": (1024, 2736),
    "llama-1b": (2048, 5464),
}
VOCAB = 32000


def timed(fn, reps=20, warm=5):
    for _ in range(warm):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return statistics.median(times)


def gemm_tflops(m, n, k):
    sets = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
             torch.randn(k, n, device="cuda", dtype=torch.bfloat16)) for _ in range(4)]
    i = [0]

    def run():
        x, y = sets[i[0] % 4]
        i[0] += 1
        torch.matmul(x, y)

    return 2.0 * m * n * k / timed(run) / 1e12


def main():
    args = sys.argv[1:] or ["llama-130m:64", "llama-1b:32"]
    if not torch.cuda.is_available():
        print(f"SKIP the GPU's ceilings: torch {torch.__version__} sees no CUDA device")
        return
    torch.manual_seed(0)
    n = 1 << 30
    src, dst = torch.empty(n, dtype=torch.uint8, device="cuda"), torch.empty(n, dtype=torch.uint8, device="cuda")
    src.random_(0, 255)
    t = timed(lambda: dst.copy_(src))
    print(f"CEILING copy {2 * n / t / 1e12:.2f} TB/s (1 GiB device-to-device, read + write)")
    print(f"CEILING gemm 8192x8192x8192 bf16 {gemm_tflops(8192, 8192, 8192):.0f} TFLOP/s")
    del src, dst
    for a in args:
        preset, B, *rows = a.split(":")
        d, f = PRESETS[preset]
        N = int(B) * 256
        for name, (out, inp) in {"qkv": (3 * d, d), "o": (d, d), "gate|up": (2 * f, d),
                                 "down": (d, f), "lm_head": (VOCAB, d)}.items():
            n = int(rows[0]) if rows and rows[0] and name == "lm_head" else N
            fwd = gemm_tflops(n, out, inp)
            dgrad = gemm_tflops(n, inp, out)
            wgrad = gemm_tflops(out, inp, n)
            print(f"CEILING {preset} N={n} {name:8s} {n}x{out}x{inp}: fwd {fwd:4.0f}  "
                  f"dgrad {dgrad:4.0f}  wgrad {wgrad:4.0f} TFLOP/s")


if __name__ == "__main__":
    main()
