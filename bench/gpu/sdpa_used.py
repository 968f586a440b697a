"""Which of scaled_dot_product_attention's backends PyTorch ran, from a
profile of one call: the aten op that SDPA dispatched to (cuDNN's, flash's,
the memory-efficient one's, the math fallback's), which compiled code calls
too, and the names of the GPU kernels that did the work. attention.py asks
it of PyTorch's own choice, torch_ref.py of the model it timed (eager or
torch.compile). Prints
  SDPA impl=IMPL model=NAME backend=B enabled=cudnn,flash,... ops=aten::...
  SDPA kernel NAME          (each attention kernel, at most 6)
"""
import torch
from torch.profiler import ProfilerActivity, profile

# the backend an aten op's or a kernel's name tells, the first found: cuDNN's
# runtime-compiled kernels have "flash" in their names too
OP_NAMES = [("cudnn", "cudnn_attention"), ("flash", "flash_attention"), ("efficient", "efficient_attention"),
            ("math", "attention_math")]
KERNEL_NAMES = [("cudnn", ("cudnn", "sdpa")), ("flash", ("flash",)), ("efficient", ("fmha", "efficient"))]


def enabled():
    b = torch.backends.cuda
    flags = [("cudnn", b.cudnn_sdp_enabled), ("flash", b.flash_sdp_enabled),
             ("efficient", b.mem_efficient_sdp_enabled), ("math", b.math_sdp_enabled)]
    return ",".join(n for n, on in flags if on()) or "none"


def first(names, table):
    for backend, keys in table:
        keys = (keys,) if isinstance(keys, str) else keys
        if any(k in n.lower() for n in names for k in keys):
            return backend
    return None


def report(impl, model, fn):
    """Runs fn (a forward and backward) once under the profiler."""
    try:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        events = prof.events()
    except Exception as e:  # the profile is a record, not the measurement
        print(f"SDPA impl={impl} model={model} backend=unknown profile failed: {e}", flush=True)
        return
    ops = sorted({e.name for e in events if e.name.startswith("aten::") and "attention" in e.name})
    kernels = sorted({e.name for e in events
                      if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA
                      and first([e.name], KERNEL_NAMES)})
    backend = first(ops, OP_NAMES) or first(kernels, KERNEL_NAMES) or "unknown"
    print(f"SDPA impl={impl} model={model} backend={backend} enabled={enabled()} ops={','.join(ops) or '-'}",
          flush=True)
    for k in kernels[:6]:
        print(f"SDPA kernel {k[:200]}", flush=True)
