#!/usr/bin/env python3
"""One GPU speed measurement as one file, bench/gpu/results/DATE-DEVICE.json
(bench/gpu/results_table.py makes bench/RESULTS.md's GPU table from these
files), made from the logs that bench/gpu/run.sh and bench/gpu/attention.sh
leave in their BENCH_OUT; and the comparison of the attention ceilings.

  results.py write LOG_DIR OUT_DIR [PRESET...] [--command C] [--peak P]
      writes OUT_DIR/DATE-DEVICE.json (the date in UTC) and prints its
      path: the device, driver, CUDA and cuDNN versions, PyTorch's, the
      commit of the programs measured, the peak MFU is against, and for each
      preset (default the four: llama-71m, -130m, -350m, -1b) cod's tokens/s,
      MFU, peak GiB and attention and torch.compile's tokens/s, MFU, peak GiB
      and SDPA backend (RESULT, SDPA and "attention:" lines of
      PRESET-IMPL-accum*.log), and the attention ceilings (ATTENTION lines
      of attention-*.log) with their comparison. What was not measured
      (cut off, skipped, failed) is null, with a note saying why where the
      logs say it.
      Besides the figures: each change to the backend the speed call
      measured on and off (CHANGE and RESULT lines of change-NAME-PRESET.log,
      tests/gpu/plan_speed.sh: cod's tokens/s and peak GiB without it, and
      the defaults' tokens/s over that), the memory plan each size chose
      ("memory:" lines), the matmuls' timed choices ("cuBLASLt:" lines of
      cod's runs), the op-by-op profiles (PROFILE lines of
      profile-PRESET.log) and the GPU's ceilings (CEILING lines of
      ceilings.log).
  results.py compare LOG...
      prints COMPARE lines from the ATTENTION lines of the logs: each
      shape's forward+backward TFLOP/s by implementation, cuDNN's over
      flash's and over cod's own kernels, and whether cuDNN falls short at
      this sequence length: slower than flash at the same shape, or under
      twice cod's own kernels (the gain that issue 40's targets rest on).

Python 3 alone: it runs on the GPU machine beside the measurement, and here.
"""
import argparse
import ctypes
import datetime
import glob
import json
import os
import re
import subprocess
import sys

PRESETS = ["llama-71m", "llama-130m", "llama-350m", "llama-1b"]
# the attention implementations in the order the comparison lists them
IMPLS = ["torch-cudnn", "torch-flash", "torch-efficient", "cod-own", "cod-cudnn"]
FLOPS = ("causal attention, as FlashAttention's benchmarks count it: forward 2·B·H·T²·D "
         "(QKᵀ and PV over the T²/2 unmasked pairs, 2 FLOPs a multiply-add), backward 2.5 times "
         "that (five products, the scores recomputed), forward+backward 7·B·H·T²·D")
PEAK_BASIS = {989: "dense bf16 tensor-core peak of the H100 SXM's datasheet, which the H200 "
                   "shares (the same GH100 tensor cores and clocks)",
              756: "dense bf16 peak of the H100 PCIe's datasheet",
              312: "dense bf16 peak of the A100's datasheet"}
SCHEMA = 1


def number(v):
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def fields(line):
    """key=value words of a RESULT, ATTENTION or SDPA line; the text after
    'unavailable: ' or 'failed: ' as that key"""
    m = re.search(r"\b(unavailable|failed): (.*)$", line)
    head = line[:m.start()] if m else line
    f = {k: number(v) for k, v in re.findall(r"(\w+)=(\S+)", head)}
    if m:
        f[m.group(1)] = m.group(2).strip()
    return f


def lines(path, prefix):
    try:
        with open(path, errors="replace") as fh:
            return [l.rstrip("\n") for l in fh if l.startswith(prefix)]
    except OSError:
        return []


def newest(pattern):
    found = glob.glob(pattern)
    return max(found, key=os.path.getmtime) if found else None


def last_line(path):
    try:
        with open(path, errors="replace") as fh:
            text = [l.strip() for l in fh if l.strip()]
        return text[-1] if text else "its log is empty"
    except OSError:
        return None


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


# ---- the attention ceilings

def attention(paths):
    """[{model, batch, heads, seq, head, results: {impl: figures}}, ...] in
    the order first seen, and what every shape lacks ({impl: why})"""
    shapes, missing = {}, {}
    for path in paths:
        for line in lines(path, "ATTENTION "):
            f = fields(line)
            impl = f.pop("impl", None)
            if impl is None:
                continue
            if "model" not in f:  # said of every shape it has no figure for
                missing[impl] = f.get("unavailable") or f.get("failed")
                continue
            s = shapes.setdefault(f["model"], {k: f.get(k) for k in ("model", "batch", "heads", "seq", "head")})
            s.setdefault("results", {})[impl] = {k: v for k, v in f.items()
                                                  if k not in ("model", "batch", "heads", "seq", "head")}
    rank = {impl: i for i, impl in enumerate(IMPLS)}
    for s in shapes.values():
        for impl, why in missing.items():
            s["results"].setdefault(impl, {"unavailable": why})
        s["results"] = dict(sorted(s["results"].items(), key=lambda kv: rank.get(kv[0], len(IMPLS))))
    return list(shapes.values())


def tflops(r, impl, key="fwdbwd_tflops"):
    v = r.get(impl, {}).get(key)
    return v if isinstance(v, (int, float)) and v > 0 else None


def compare(shapes):
    out = []
    for s in shapes:
        r = s["results"]
        figures = ", ".join(f"{impl} {tflops(r, impl):.3g}" if tflops(r, impl) else f"{impl} unavailable"
                            for impl in r)
        name = f"{s['model']} ({s['batch']}×{s['heads']}×{s['seq']}×{s['head']})"
        out.append(f"{name}: forward+backward TFLOP/s: {figures}")
        own, flash = tflops(r, "cod-own"), tflops(r, "torch-flash")
        for cudnn in ("torch-cudnn", "cod-cudnn"):
            c = tflops(r, cudnn)
            if not c:
                continue
            said, short = [], False
            if flash:
                said.append(f"{c / flash:.2f}× flash's")
                short |= c < flash
            if own:
                said.append(f"{c / own:.2f}× cod's own kernels'")
                short |= c < 2 * own
            if said:
                verdict = "falls short" if short else "holds"
                out.append(f"{s['model']}: {cudnn} {verdict} at seq {s['seq']}: {', '.join(said)} "
                           f"(forward {tflops(r, cudnn, 'fwd_tflops') or 0:.3g}, backward "
                           f"{tflops(r, cudnn, 'bwd_tflops') or 0:.3g} TFLOP/s)")
        if own and flash and not any(tflops(r, c) for c in ("torch-cudnn", "cod-cudnn")):
            out.append(f"{s['model']}: no cuDNN figure; cod's own kernels at {own / flash:.2f}× flash's")
    return out


# ---- what the speed call measured besides the figures (tests/gpu/plan_speed.sh)

# each change to the backend, by the name plan_speed.sh gives it
CHANGES = {
    "tune": "cuBLASLt's algorithms timed at warm-up, the fastest kept",
    "norm": "RMSNorm's row kernels: one read of x, the gains staged once a block",
    "memory": "the memory plan's larger logit chunks",
    "wgrad": "the weight gradients on a second stream",
    "swiglu": "SwiGLU's output kept for the backward (forced on: off by the plan)",
    "all": "every change off: the code as it was before them",
}


def changes(logs, sizes):
    """[{name, what, settings, sizes: {preset: figures}}] in the order of
    CHANGES; ratio: the defaults' tokens/s over this run's"""
    with_ = {s["model"]: s["cod"] for s in sizes}
    found = {}
    for path in sorted(glob.glob(os.path.join(logs, "change-*.log"))):
        head = lines(path, "CHANGE ")
        if not head:
            continue
        f = fields(head[0])
        name, preset = f.get("name"), f.get("preset")
        c = found.setdefault(name, {"name": name, "what": CHANGES.get(name), "settings":
                                    str(f.get("settings", "")).replace(",", " "), "sizes": {}})
        res = lines(path, "RESULT ")
        r = {"tokens_per_s": None, "mfu": None, "peak_gib": None}
        if res:
            g = fields(res[-1])
            for k in ("tokens_per_s", "mfu", "peak_gib", "logit_rows", "keep_swiglu", "wgrad_beside"):
                r[k] = g.get(k)
        else:
            r["note"] = f"no figure (cut off or failed): {last_line(path)}"
        w = with_.get(preset) or {}
        r["with_tokens_per_s"], r["with_peak_gib"] = w.get("tokens_per_s"), w.get("peak_gib")
        r["ratio"] = (round(w["tokens_per_s"] / r["tokens_per_s"], 4)
                      if w.get("tokens_per_s") and r["tokens_per_s"] else None)
        c["sizes"][preset] = r
    order = {n: i for i, n in enumerate(CHANGES)}
    return sorted(found.values(), key=lambda c: order.get(c["name"], len(order)))


def again(logs, sizes):
    """llama-130m's cod timed a second time at the end of the call: the
    spread against which a change's ratio is read"""
    first = next((s["cod"]["tokens_per_s"] for s in sizes if s["model"] == "llama-130m"), None)
    res = lines(newest(os.path.join(logs, "again", "llama-130m-cod-accum*.log")) or "", "RESULT ")
    second = fields(res[-1]).get("tokens_per_s") if res else None
    if not first or not second:
        return None
    return {"model": "llama-130m", "tokens_per_s": [first, second],
            "apart": round(abs(second - first) / first, 4)}


def profiles(logs):
    """{preset: {run, ops: [{op, ms, share, launches}], total_ms}} of profile-PRESET.log"""
    out = {}
    for path in sorted(glob.glob(os.path.join(logs, "profile-*.log"))):
        preset = os.path.basename(path)[len("profile-"):-len(".log")]
        ops, total = [], None
        for line in lines(path, "PROFILE "):
            m = re.match(r"PROFILE (.+?)\s+([\d.]+)\s+([\d.]+)%\s+(\d+)$", line)
            t = re.match(r"PROFILE total\s+([\d.]+)$", line)
            if m:
                ops.append({"op": m.group(1), "ms": float(m.group(2)), "share": float(m.group(3)) / 100,
                            "launches": int(m.group(4))})
            elif t:
                total = float(t.group(1))
        res = lines(path, "RESULT ")
        run = {k: v for k, v in fields(res[-1]).items()
               if k in ("micro_batch", "accum", "tokens_per_s", "mfu")} if res else None
        out[preset] = {"run": run, "ops": ops, "total_ms": total,
                       "note": None if ops else f"no profile: {last_line(path)}"}
    return out


def ceilings(logs):
    """the CEILING lines of ceilings.log: the copy, 8192³ and each shape"""
    c = {"copy_tb_s": None, "gemm_8192_tflops": None, "shapes": []}
    for line in lines(os.path.join(logs, "ceilings.log"), "CEILING "):
        m = re.match(r"CEILING copy ([\d.]+) TB/s", line)
        g = re.match(r"CEILING gemm 8192x8192x8192 bf16 ([\d.]+) TFLOP/s", line)
        sh = re.match(r"CEILING (\S+) N=(\d+) (\S+) +(\d+)x(\d+)x(\d+): fwd +([\d.]+) +dgrad +([\d.]+) +wgrad +([\d.]+)", line)
        if m:
            c["copy_tb_s"] = float(m.group(1))
        elif g:
            c["gemm_8192_tflops"] = float(g.group(1))
        elif sh:
            c["shapes"].append({"model": sh.group(1), "rows": int(sh.group(2)), "product": sh.group(3),
                                "m": int(sh.group(4)), "n": int(sh.group(5)), "k": int(sh.group(6)),
                                "fwd_tflops": float(sh.group(7)), "dgrad_tflops": float(sh.group(8)),
                                "wgrad_tflops": float(sh.group(9))})
    return c


def matmul_choices(log):
    """the choices a cod run logged: [{op, shape, candidate, algo, and where
    timed, of, ms, tflops, first_ms; where read from the cache file, from}]"""
    out = []
    for line in lines(log, "cuBLASLt: ") if log else []:
        m = re.match(r"cuBLASLt: (.+?) (m=\d+ n=\d+ k=\d+)[^:]*: candidate (\d+) of (\d+) timed "
                     r"\(([^)]*)\): ([\d.]+) ms, ([\d.]+) TFLOP/s; the heuristic's first ([\d.]+) ms", line)
        c = re.match(r"cuBLASLt: (.+?) (m=\d+ n=\d+ k=\d+)[^:]*: candidate (\d+) \(([^)]*)\), from (.+)$", line)
        if m:
            out.append({"op": m.group(1), "shape": m.group(2), "candidate": int(m.group(3)),
                        "of": int(m.group(4)), "algo": m.group(5), "ms": float(m.group(6)),
                        "tflops": float(m.group(7)), "first_ms": float(m.group(8))})
        elif c:
            out.append({"op": c.group(1), "shape": c.group(2), "candidate": int(c.group(3)),
                        "algo": c.group(4), "from": c.group(5)})
    return out


# ---- the machine and the code

def cudnn_version():
    """the libcudnn.so.9 that cod's programs open here (LD_LIBRARY_PATH)"""
    try:
        lib = ctypes.CDLL("libcudnn.so.9")
        lib.cudnnGetVersion.restype = ctypes.c_size_t
        v = lib.cudnnGetVersion()
    except (OSError, AttributeError):
        return None
    major, rest = (v // 10000, v % 10000) if v >= 90000 else (v // 1000, v % 1000)
    return f"{major}.{rest // 100}.{rest % 100}"


def device(logs):
    d = {"name": None, "memory_mib": None, "driver": None, "cuda": None}
    q = run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits"])
    first = q.strip().splitlines()[0].split(", ") if q.strip() else []
    if len(first) == 3:
        d["name"], d["memory_mib"], d["driver"] = first[0], number(first[1]), first[2]
        m = re.search(r"CUDA Version: *([\d.]+)", run(["nvidia-smi"]))
        d["cuda"] = m.group(1) if m else None
    else:  # no driver to ask: the device cod's programs found
        for path in sorted(glob.glob(os.path.join(logs, "*.log"))):
            for line in lines(path, "cuda:0 is "):
                m = re.match(r"cuda:0 is (.*) \(sm_\d+, [\d.]+ GiB\)$", line)
                if m:
                    d["name"] = m.group(1)
                    break
            if d["name"]:
                break
    return d


def software(logs):
    s = {"cudnn": cudnn_version(), "cuda_toolkit": None, "torch": None, "torch_cuda": None, "torch_cudnn": None}
    m = re.search(r"release ([\d.]+)", run(["nvcc", "--version"]) or run(["/usr/local/cuda/bin/nvcc", "--version"]))
    s["cuda_toolkit"] = m.group(1) if m else None
    for line in lines(os.path.join(logs, "attention-torch.log"), "TORCH "):
        f = fields(line)
        s["torch"], s["torch_cuda"], s["torch_cudnn"] = f.get("version"), f.get("cuda"), f.get("cudnn")
    if s["torch"] is None:  # tests/gpu/probe.sh's line
        for line in lines(os.path.join(logs, "probe.log"), "torch "):
            m = re.match(r"torch (\S+) cuda (\S+) cudnn (\S+)", line)
            if m:
                s["torch"], s["torch_cuda"], s["torch_cudnn"] = m.group(1), m.group(2), number(m.group(3))
    for k in ("torch_cuda", "torch_cudnn"):
        if s[k] is not None:
            s[k] = str(s[k])
    return s


def commit():
    """the bundle's commit where the programs came from it, else this tree's"""
    bin_dir = os.environ.get("COD_BIN", "")
    try:
        with open(os.path.join(bin_dir, "..", "commit")) as fh:
            c = fh.read().strip()
        dirty = os.path.getsize(os.path.join(bin_dir, "..", "dirty")) > 0
        return c or None, dirty
    except OSError:
        pass
    c = run(["git", "rev-parse", "HEAD"]).strip()
    return c or None, bool(run(["git", "status", "--porcelain", "--untracked-files=no"]).strip())


def build_chooses_attention():
    """whether cod's backend reads COD_ATTENTION (a build with cuDNN's attention)"""
    prog = os.path.join(os.environ.get("COD_BIN", ""), "bench_train_cuda")
    try:
        with open(prog, "rb") as fh:
            return b"COD_ATTENTION" in fh.read()
    except OSError:
        return None


# ---- each preset

def cod_side(log, chooses):
    r = {"tokens_per_s": None, "mfu": None, "peak_gib": None, "micro_batch": None, "accum": None,
         "graph": None, "attention": None, "attention_said": None}
    if log is None:
        r["note"] = "not run"
        return r
    res = lines(log, "RESULT ")
    if not res:
        r["note"] = f"no figure (cut off or failed): {last_line(log)}"
        return r
    f = fields(res[-1])
    for k in ("tokens_per_s", "mfu", "peak_gib", "micro_batch", "accum"):
        r[k] = f.get(k)
    r["graph"] = bool(f["graph"]) if "graph" in f else None
    plan = [l[len("memory: "):] for l in lines(log, "memory: ")]
    r["memory_plan"] = plan[-1] if plan else None
    r["matmuls"] = matmul_choices(log)
    said = [m.group(1) for l in lines(log, "") for m in [re.search(r"(?:^|\] )attention: (.*)$", l)] if m]
    if said:
        r["attention_said"] = said[0]
        r["attention"] = "cudnn" if "cuDNN" in said[0] and "not used" not in said[0] else "own"
    elif chooses is False:
        r["attention"] = "own"
        r["attention_said"] = "this build has cod's own attention only"
    elif chooses and os.environ.get("COD_ATTENTION") in ("own", "cudnn"):
        # forced: a call the forced attention cannot run is an error, never a fallback
        r["attention"] = os.environ["COD_ATTENTION"]
        r["attention_said"] = f"COD_ATTENTION={r['attention']}"
    elif chooses:
        r["attention_said"] = "not said: this build chooses at run time, and its log does not say which ran"
    return r


def torch_side(log):
    r = {"tokens_per_s": None, "mfu": None, "peak_gib": None, "micro_batch": None, "warmup_s": None,
         "sdpa_backend": None, "sdpa_ops": None}
    if log is None:
        r["note"] = "not run"
        return r
    res, skip = lines(log, "RESULT "), lines(log, "SKIP ")
    if res:
        f = fields(res[-1])
        for k in ("tokens_per_s", "mfu", "peak_gib", "micro_batch", "warmup_s"):
            r[k] = f.get(k)
    else:
        r["note"] = skip[0] if skip else f"no figure (cut off or failed): {last_line(log)}"
    for line in lines(log, "SDPA impl="):
        f = fields(line)
        r["sdpa_backend"] = f.get("backend")
        r["sdpa_ops"] = f.get("ops")
    kernels = [l[len("SDPA kernel "):] for l in lines(log, "SDPA kernel ")]
    if kernels:
        r["sdpa_kernels"] = kernels
    return r


def write(a):
    chooses = build_chooses_attention()
    sizes = []
    for p in a.presets or PRESETS:
        sizes.append({"model": p,
                      "cod": cod_side(newest(os.path.join(a.logs, f"{p}-cod-accum*.log")), chooses),
                      "torch_compile": torch_side(newest(os.path.join(a.logs, f"{p}-torch-compile-accum*.log")))})
    att_logs = sorted(glob.glob(os.path.join(a.logs, "attention-*.log")))
    shapes = attention(att_logs)
    default = {}
    for path in att_logs:
        for line in lines(path, "SDPA impl=torch-default"):
            f = fields(line)
            default[f.get("model")] = f.get("backend")
    for s in shapes:
        s["torch_default"] = default.get(s["model"])
    skipped = [l for path in att_logs for l in lines(path, "SKIP ")]
    dev = device(a.logs)
    c, dirty = commit()
    now = datetime.datetime.now(datetime.timezone.utc)
    doc = {
        "schema": SCHEMA,
        "date": now.strftime("%Y-%m-%d"),
        "command": a.command,
        "commit": c,
        "commit_dirty": dirty,
        "device": dev,
        "software": software(a.logs),
        "peak_tflops": a.peak,
        "peak_basis": PEAK_BASIS.get(a.peak),
        "shape": {"seq": 256, "vocab": 32000, "batch_seqs": 512,
                  "note": "the paper's batch: 512 sequences an update, 512 / micro-batch micro-batches"},
        "settings": {k: os.environ[k] for k in ("COD_CUDA_GRAPHS", "COD_ATTENTION", "COD_CUDA_ATTENTION",
                                                "COD_CUBLASLT_TUNE", "COD_CUDA_NORM_ROWS", "COD_SPEED_MEMORY",
                                                "COD_CUDA_WGRAD_STREAM", "COD_LOGIT_ROWS", "COD_KEEP_SWIGLU")
                     if k in os.environ},
        "sizes": sizes,
        "attention": {"flops": FLOPS, "shapes": shapes, "comparison": compare(shapes),
                      "note": "; ".join(skipped) or None},
        "changes": changes(a.logs, sizes),
        "again": again(a.logs, sizes),
        "profiles": profiles(a.logs),
        "ceilings": ceilings(a.logs),
    }
    slug = re.sub(r"[^a-z0-9]+", "-", re.sub(r"^nvidia ", "", (dev["name"] or "unknown").lower()).replace("'", ""))
    path = os.path.join(a.out, f"{doc['date']}-{slug.strip('-')}.json")
    os.makedirs(a.out, exist_ok=True)
    with open(path + ".tmp", "w") as fh:
        json.dump(doc, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    os.replace(path + ".tmp", path)
    print(f"results: {path}")


def main():
    ap = argparse.ArgumentParser(description="a GPU speed measurement's results file")
    sub = ap.add_subparsers(dest="what", required=True)
    w = sub.add_parser("write")
    w.add_argument("logs")
    w.add_argument("out")
    w.add_argument("--command", default="bench/gpu/run.sh")
    w.add_argument("--peak", type=float, default=989)
    w.add_argument("presets", nargs="*")
    c = sub.add_parser("compare")
    c.add_argument("logs", nargs="+")
    a = ap.parse_args()
    if a.what == "compare":
        for line in compare(attention(a.logs)):
            print(f"COMPARE {line}")
    else:
        if a.peak == int(a.peak):
            a.peak = int(a.peak)
        write(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
