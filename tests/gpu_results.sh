#!/usr/bin/env bash
# The GPU speed results' files and table (bench/gpu/results.py,
# bench/gpu/results_table.py), without a GPU:
#  - bench/RESULTS.md's GPU table is what bench/gpu/results/*.json make;
#  - the table takes each device's newest file, shows nulls as "—", a
#    stale table is found (--check) and rewritten (--write), a broken file
#    is named with what is wrong;
#  - results.py makes a file from logs as the benchmark leaves them (cod's
#    from bench_train_cuda on the CUDA emulator, where it is built; PyTorch's
#    in torch_ref.py's and attention.py's formats), every figure in its
#    place, nulls where nothing ran, and the attention comparison says where
#    cuDNN falls short and where it holds;
#  - PyTorch's scripts parse, and say SKIP without torch or a GPU for it.
# tests/gpu_plan.sh runs the speed call's own dry run, which writes one.
cd "$(dirname "$0")/.." && . tests/lib.sh
t=$(mktemp -d /tmp/cod-results-XXXXXX)
trap 'rm -rf "$t"' EXIT

check "results_table: bench/RESULTS.md's GPU table is what bench/gpu/results/*.json make" \
    python3 bench/gpu/results_table.py --check

# scripts that only run on a GPU machine, read through here (nothing written)
export PYTHONDONTWRITEBYTECODE=1
for f in bench/gpu/*.py; do
    check "$(basename "$f") compiles" python3 -c 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")' "$f"
done
skips() { # script, args...: without torch, or without a GPU for it, one SKIP line and exit 0
    local out
    # a GPU that torch sees (make test on a GPU machine): make bench-gpu runs them
    python3 -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2>/dev/null && return 0
    out=$(cd bench/gpu && python3 "$@") && grep -qE '^SKIP .*(cannot import torch|sees no CUDA device)' <<< "$out"
}
check "attention.py says SKIP where torch or its GPU is missing" skips attention.py x:1:2:64:64
check "torch_ref.py says SKIP where torch or its GPU is missing" skips torch_ref.py llama-71m 989
check "ceilings.py says SKIP where torch or its GPU is missing" skips ceilings.py

# -- the table
mkdir -p "$t/r"
seed=bench/gpu/results/2026-11-26-h200.json
cp "$seed" "$t/r/"
python3 - "$seed" "$t/r" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
newer = json.loads(json.dumps(doc))
newer["date"] = "2026-12-01"
newer["sizes"][1]["cod"]["tokens_per_s"] = 777777
newer["sizes"][3]["torch_compile"].update(tokens_per_s=None, mfu=None, peak_gib=None, note="cut off")
json.dump(newer, open(f"{sys.argv[2]}/2026-12-01-h200.json", "w"))
other = json.loads(json.dumps(doc))
other["device"] = {"name": "NVIDIA H100 80GB HBM3", "memory_mib": None, "driver": None, "cuda": None}
other["sizes"][1]["cod"]["tokens_per_s"] = 555555
json.dump(other, open(f"{sys.argv[2]}/2026-11-20-h100.json", "w"))
PY
python3 bench/gpu/results_table.py --dir "$t/r" > "$t/table.md" 2> "$t/table.err"
check "table: each device's newest file (the H200's of 2026-12-01, not of 2026-11-26)" \
    bash -c "grep -qF '| llama-130m | 777,777 |' '$t/table.md' && ! grep -qF '| llama-130m | 584,779 |' '$t/table.md'"
check "table: one section per device, named" \
    bash -c "[ \$(grep -c '^\*\*NVIDIA H' '$t/table.md') = 2 ] && grep -q '^\*\*NVIDIA H100 80GB HBM3\*\*' '$t/table.md'"
check "table: a null figure shows as —, without a ratio, and its note is said" \
    bash -c "grep -qE '^\| llama-1b \| 66,735 \| 52.6 % \| 33.04 \| own \| — \| — \| — \| — \| — \|$' '$t/table.md' &&
             grep -qF 'Not measured: llama-1b torch.compile: cut off.' '$t/table.md'"
check "table: cod / torch.compile in bold where it meets 1.2x" \
    bash -c "grep -qF '| **1.35×** |' '$t/table.md' && grep -qE '\| 1.02× \|$' '$t/table.md'"
echo '{"schema": 1, "date": ' > "$t/r/broken.json"
python3 bench/gpu/results_table.py --dir "$t/r" > /dev/null 2> "$t/broken.err"
check "table: a file that is not JSON is named (exit 2)" \
    bash -c "[ $? = 2 ] && grep -qF '$t/r/broken.json: not a results file' '$t/broken.err'"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); del d["sizes"][2]["cod"]["mfu"]; json.dump(d, open(sys.argv[2], "w"))' \
    "$seed" "$t/r/broken.json"
python3 bench/gpu/results_table.py --dir "$t/r" > /dev/null 2> "$t/broken.err"
check "table: a file without a field the table needs names the field (exit 2)" \
    bash -c "[ $? = 2 ] && grep -qF 'broken.json: sizes[2]: no field cod.mfu' '$t/broken.err'"
rm "$t/r/broken.json"
cp bench/RESULTS.md "$t/RESULTS.md"
sed -i 's/| llama-71m | 980,214 |/| llama-71m | 980,215 |/' "$t/RESULTS.md"
python3 bench/gpu/results_table.py --check --md "$t/RESULTS.md" > /dev/null 2> "$t/check.err"
check "table: --check finds a table that is not what the files make (exit 1)" \
    bash -c "[ $? = 1 ] && grep -qF 'run python3 bench/gpu/results_table.py --write' '$t/check.err'"
python3 bench/gpu/results_table.py --write --md "$t/RESULTS.md" > /dev/null &&
    python3 bench/gpu/results_table.py --check --md "$t/RESULTS.md" > /dev/null
check "table: --write puts back what the files make, the rest of the page untouched" \
    bash -c "[ $? = 0 ] && cmp -s '$t/RESULTS.md' bench/RESULTS.md"

# -- a results file from a benchmark's logs
logs=$t/logs
mkdir -p "$logs"
if [ -x build/emu/bin/bench_train_cuda ]; then
    # cod's RESULT as bench_train_cuda prints it: one update at a small shape
    # on the emulated GPU, in the log that bench/gpu/run.sh would name; its
    # matmuls timed (a fresh cache file)
    COD_CUBLASLT_TUNE=1 COD_CUBLASLT_CACHE=$t/cublaslt.txt build/emu/bin/bench_train_cuda '{"name": "llama-71m", "model": {"dim": 64, "n_layers": 1, "n_heads": 2,
        "ffn_dim": 176, "vocab": 257}, "norm": "lns", "train": {"seq_len": 32}}' 989 2 1 1 \
        > "$logs/llama-71m-cod-accum1.log" 2>&1
    cod_tps=$(sed -n 's/^RESULT .*tokens_per_s=\([0-9]*\) .*/\1/p' "$logs/llama-71m-cod-accum1.log")
else
    echo "RESULT impl=cod model=llama-71m micro_batch=2 accum=1 params_m=0.1 tokens_per_s=91 tflops=0.0 mfu=0.0000 peak_gib=0.03 loss=5.4300 graph=1" \
        > "$logs/llama-71m-cod-accum1.log"
    cod_tps=91
fi
cat > "$logs/llama-71m-torch-compile-accum1.log" <<'LOG'
RESULT impl=torch-compile model=llama-71m micro_batch=64 accum=1 params_m=71.2 tokens_per_s=726216 tflops=250.2 mfu=0.2530 peak_gib=5.68 loss=10.4000 warmup_s=3.5
SDPA impl=torch-compile model=llama-71m backend=flash enabled=cudnn,flash,efficient,math ops=aten::_scaled_dot_product_flash_attention,aten::_scaled_dot_product_flash_attention_backward
SDPA kernel void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 64, 4> >(Flash_fwd_params)
LOG
echo "SKIP PyTorch reference: python3 cannot import torch (No module named 'torch')" \
    > "$logs/llama-130m-torch-compile-accum8.log"
cat > "$logs/attention-torch.log" <<'LOG'
TORCH version=2.11.0+cu130 cuda=13.0 cudnn=91900 device=NVIDIA_H200 sdpa_enabled=cudnn,flash,efficient,math
ATTENTION impl=torch-cudnn model=llama-130m batch=64 heads=12 seq=256 head=64 reps=20 fwd_ms=0.0500 bwd_ms=0.1400 fwd_tflops=128.8 bwd_tflops=115 fwdbwd_tflops=118.7
ATTENTION impl=torch-flash model=llama-130m batch=64 heads=12 seq=256 head=64 reps=20 fwd_ms=0.0400 bwd_ms=0.1100 fwd_tflops=161 bwd_tflops=146.4 fwdbwd_tflops=150.3
ATTENTION impl=torch-efficient model=llama-130m batch=64 heads=12 seq=256 head=64 unavailable: Memory efficient kernel not used because: ...
SDPA impl=torch-default model=llama-130m backend=flash enabled=cudnn,flash,efficient,math ops=aten::_scaled_dot_product_flash_attention
ATTENTION impl=torch-cudnn model=llama-1b batch=32 heads=32 seq=256 head=64 reps=20 fwd_ms=0.0500 bwd_ms=0.1300 fwd_tflops=171.8 bwd_tflops=165.2 fwdbwd_tflops=167
ATTENTION impl=torch-flash model=llama-1b batch=32 heads=32 seq=256 head=64 reps=20 fwd_ms=0.0600 bwd_ms=0.1500 fwd_tflops=143.2 bwd_tflops=143.2 fwdbwd_tflops=143.2
LOG
cat > "$logs/attention-cod-own.log" <<'LOG'
ATTENTION impl=cod-own model=llama-130m batch=64 heads=12 seq=256 head=64 reps=20 fwd_ms=0.1200 bwd_ms=0.3225 other_ms=0.0300 wall_ms=0.4700 fwd_tflops=53.69 bwd_tflops=49.94 fwdbwd_tflops=50.96
ATTENTION impl=cod-own model=llama-1b batch=32 heads=32 seq=256 head=64 reps=20 fwd_ms=0.1400 bwd_ms=0.3700 other_ms=0.0300 wall_ms=0.5400 fwd_tflops=61.36 bwd_tflops=58.04 fwdbwd_tflops=58.95
LOG
echo "ATTENTION impl=cod-cudnn unavailable: this build of cod has no cuDNN attention" > "$logs/attention-cod-cudnn.log"
# what the speed call measures besides the figures (tests/gpu/plan_speed.sh)
cat > "$logs/change-tune-llama-71m.log" <<'LOG'
CHANGE name=tune preset=llama-71m settings=COD_CUBLASLT_TUNE=0
RESULT impl=cod model=llama-71m micro_batch=2 accum=1 params_m=0.1 tokens_per_s=50 tflops=0.0 mfu=0.0000 peak_gib=0.02 loss=5.4300 graph=1 logit_rows=64 keep_swiglu=0 wgrad_beside=1
LOG
cat > "$logs/change-all-llama-71m.log" <<'LOG'
CHANGE name=all preset=llama-71m settings=COD_CUBLASLT_TUNE=0,COD_CUDA_NORM_ROWS=0,COD_SPEED_MEMORY=0,COD_CUDA_WGRAD_STREAM=0
bench_train_cuda: out of memory
LOG
cat > "$logs/profile-llama-1b.log" <<'LOG'
PROFILE op                                   ms   share launches
PROFILE matmul_bwd (dw)                  201.50   30.1%      384
PROFILE rmsnorm_bwd                       20.25    3.0%      784
PROFILE total                            669.40
RESULT impl=cod model=llama-1b micro_batch=32 accum=16 params_m=1339.1 tokens_per_s=60000 tflops=500.0 mfu=0.5000 peak_gib=34.00 loss=10.4000 graph=0 logit_rows=8192 keep_swiglu=0 wgrad_beside=0
LOG
cat > "$logs/ceilings.log" <<'LOG'
CEILING copy 4.31 TB/s (1 GiB device-to-device, read + write)
CEILING gemm 8192x8192x8192 bf16 788 TFLOP/s
CEILING llama-1b N=8192 gate|up   8192x10928x2048: fwd  701  dgrad  690  wgrad  650 TFLOP/s
LOG
COD_BIN=$t/no-bundle python3 bench/gpu/results.py write "$logs" "$t/out" llama-71m llama-130m \
    --command "bench/gpu/run.sh llama-71m llama-130m" > "$t/write.out" 2>&1
f=$(sed -n 's/^results: //p' "$t/write.out")
check "write: one file, DATE-DEVICE.json, its path said" \
    bash -c "[ -f '$f' ] && [[ '$(basename "$f")' =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}-[a-z0-9-]+\.json$ ]]"
check "write: every figure in its place, nulls where nothing ran" python3 - "$f" "$cod_tps" <<'PY'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
s = {x["model"]: x for x in d["sizes"]}
assert [x["model"] for x in d["sizes"]] == ["llama-71m", "llama-130m"], d["sizes"]
c, t = s["llama-71m"]["cod"], s["llama-71m"]["torch_compile"]
assert c["tokens_per_s"] == int(sys.argv[2]) and c["accum"] == 1 and c["graph"] is True, c
assert t["tokens_per_s"] == 726216 and t["mfu"] == 0.253 and t["peak_gib"] == 5.68 and t["warmup_s"] == 3.5, t
assert t["sdpa_backend"] == "flash" and t["sdpa_ops"].startswith("aten::_scaled_dot_product_flash_attention"), t
assert t["sdpa_kernels"][0].startswith("void pytorch_flash::flash_fwd_kernel"), t
c, t = s["llama-130m"]["cod"], s["llama-130m"]["torch_compile"]
assert c["tokens_per_s"] is None and c["mfu"] is None and c["note"] == "not run", c
assert t["tokens_per_s"] is None and t["note"].startswith("SKIP PyTorch reference"), t
assert d["software"]["torch"] == "2.11.0+cu130" and d["software"]["torch_cudnn"] == "91900", d["software"]
assert d["commit"] == subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
assert d["peak_tflops"] == 989 and "H200" in d["peak_basis"], d
a = {x["model"]: x for x in d["attention"]["shapes"]}
r = a["llama-130m"]["results"]
assert r["torch-flash"]["fwd_ms"] == 0.04 and r["cod-own"]["other_ms"] == 0.03, r
assert r["torch-efficient"]["unavailable"].startswith("Memory efficient kernel not used"), r
assert r["cod-cudnn"] == {"unavailable": "this build of cod has no cuDNN attention"}, r
assert a["llama-130m"]["torch_default"] == "flash" and a["llama-1b"]["torch_default"] is None, a
PY
check "write: each change with and without, the profiles, the ceilings, the memory plan, the matmuls' choices" \
    env PYTHONPATH=bench/gpu python3 - "$f" "$cod_tps" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ch = {c["name"]: c for c in d["changes"]}
assert [c["name"] for c in d["changes"]] == ["tune", "all"], d["changes"]
r = ch["tune"]["sizes"]["llama-71m"]
assert ch["tune"]["settings"] == "COD_CUBLASLT_TUNE=0" and ch["tune"]["what"].startswith("cuBLASLt's"), ch
assert r["tokens_per_s"] == 50 and r["with_tokens_per_s"] == int(sys.argv[2]), r
assert r["ratio"] == round(int(sys.argv[2]) / 50, 4) and r["logit_rows"] == 64, r
a = ch["all"]["sizes"]["llama-71m"]
assert a["tokens_per_s"] is None and a["ratio"] is None and "out of memory" in a["note"], a
p = d["profiles"]["llama-1b"]
assert p["total_ms"] == 669.4 and p["run"]["accum"] == 16, p
assert p["ops"][0] == {"op": "matmul_bwd (dw)", "ms": 201.5, "share": 0.301, "launches": 384}, p["ops"]
c = d["ceilings"]
assert c["copy_tb_s"] == 4.31 and c["gemm_8192_tflops"] == 788, c
assert c["shapes"] == [{"model": "llama-1b", "rows": 8192, "product": "gate|up", "m": 8192, "n": 10928,
                        "k": 2048, "fwd_tflops": 701, "dgrad_tflops": 690, "wgrad_tflops": 650}], c
cod = {x["model"]: x for x in d["sizes"]}["llama-71m"]["cod"]
if cod["memory_plan"] is not None:  # the emulator's run (else a RESULT line written here)
    assert cod["memory_plan"].startswith("logits "), cod
    assert cod["matmuls"] and all(m["ms"] > 0 and m["of"] >= m["candidate"] for m in cod["matmuls"]), cod
import results
said = "cuBLASLt: matmul_fwd m=64 n=64 k=176 op(A)=T op(B)=N ld 176 176 64, bf16 output, aligned 256 256 256: candidate 3 (algo 2, tile 22, stages 0, split-k 4), from /x/cublaslt.txt\n"
open(sys.argv[1] + ".log", "w").write(said)
assert results.matmul_choices(sys.argv[1] + ".log") == [{"op": "matmul_fwd", "shape": "m=64 n=64 k=176", "candidate": 3,
    "algo": "algo 2, tile 22, stages 0, split-k 4", "from": "/x/cublaslt.txt"}], results.matmul_choices(sys.argv[1] + ".log")
PY
check "write: the table shows each change, the run without it and the ratio" \
    bash -c "python3 bench/gpu/results_table.py --dir '$t/out' > '$t/changes.md' &&
             grep -qE \"^\\| cuBLASLt's algorithms timed .* \\| \\\`COD_CUBLASLT_TUNE=0\\\` \\| [0-9.]+× \\(50 tokens/s; \" '$t/changes.md' &&
             grep -qE '^\\| every change off.* \\| no figure \\|$' '$t/changes.md'"
check "write: cuDNN slower than flash is said to fall short at seq 256" \
    grep -qF 'llama-130m: torch-cudnn falls short at seq 256: 0.79× flash' "$f"
check "write: cuDNN faster than flash and twice cod's own holds" \
    grep -qF "llama-1b: torch-cudnn holds at seq 256: 1.17× flash's, 2.83× cod's own kernels'" "$f"
python3 bench/gpu/results.py compare "$logs"/attention-*.log > "$t/compare.out"
check "compare: the same comparison printed, COMPARE lines" \
    bash -c "[ \$(grep -c '^COMPARE ' '$t/compare.out') = 4 ] && grep -qF 'COMPARE llama-130m (64×12×256×64): forward+backward TFLOP/s: torch-cudnn 119, torch-flash 150, torch-efficient unavailable, cod-own 51, cod-cudnn unavailable' '$t/compare.out'"
check "write: the table reads the file" \
    bash -c "python3 bench/gpu/results_table.py --dir '$t/out' | grep -qF '| llama-71m | $cod_tps |'"
# cod's attention: as its log says it, else as the build and COD_ATTENTION make it
mkdir -p "$t/chooses" "$t/own-only"
echo "a build that reads COD_ATTENTION" > "$t/chooses/bench_train_cuda"
echo "a build with its own attention only" > "$t/own-only/bench_train_cuda"
check "write: cod's attention as its log says it, else as the build and COD_ATTENTION make it" \
    env PYTHONPATH=bench/gpu python3 - "$t" <<'PY'
import os, sys
import results
t = sys.argv[1]
def side(said, bin_dir, env=None):
    log = f"{t}/att.log"
    with open(log, "w") as fh:
        fh.write(said + "RESULT impl=cod model=m micro_batch=64 accum=8 tokens_per_s=1 mfu=0.1 peak_gib=1 graph=1\n")
    os.environ["COD_BIN"] = bin_dir
    os.environ.pop("COD_ATTENTION", None)
    os.environ.update(env or {})
    r = results.cod_side(log, results.build_chooses_attention())
    return r["attention"], r["attention_said"]
assert side("attention: cuDNN 9.19.0's fused flash attention\n", f"{t}/chooses")[0] == "cudnn"
assert side("[step 1] attention: cod's tensor-core kernels (cuDNN not used: cannot load libcudnn.so.9)\n",
            f"{t}/chooses")[0] == "own"
assert side("", f"{t}/own-only") == ("own", "this build has cod's own attention only")
assert side("", f"{t}/chooses", {"COD_ATTENTION": "cudnn"}) == ("cudnn", "COD_ATTENTION=cudnn")
a, said = side("", f"{t}/chooses")
assert a is None and said.startswith("not said"), (a, said)
PY
mkdir -p "$t/empty"
python3 bench/gpu/results.py write "$t/empty" "$t/out2" > /dev/null 2>&1
check "write: from no logs at all, the four sizes all null, still read by the table" \
    bash -c "python3 -c 'import json, glob; d = json.load(open(glob.glob(\"$t/out2/*.json\")[0])); assert [s[\"model\"] for s in d[\"sizes\"]] == [\"llama-71m\", \"llama-130m\", \"llama-350m\", \"llama-1b\"] and all(s[k][\"tokens_per_s\"] is None for s in d[\"sizes\"] for k in (\"cod\", \"torch_compile\")) and d[\"attention\"][\"shapes\"] == []' &&
             python3 bench/gpu/results_table.py --dir '$t/out2' | grep -qF '| llama-350m | — | — | — | — | — | — | — | — | — |'"
