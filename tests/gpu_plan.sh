#!/usr/bin/env bash
# tests/run.sh: start first
# A time-boxed GPU machine's 15 minutes hang on tests/gpu/plan.sh, which
# otherwise runs only there, far apart: here its two calls run on the CUDA
# emulator (the programs of make emu-dry, COD_BIN_DRY) with small budgets,
# so that a change that breaks them shows before a GPU is at hand.
#  - check: a one-cell depth study beside two halves of checks, one that
#    passes (test_emu) and one too slow for the budget (test_model_cuda,
#    every preset on the emulator: test_ops_cuda, which an idle machine
#    ends in under a minute, is not always), which must be stopped and
#    named, the check after it not run, and torch.compile's caches filled
#    at one size (no torch here: said so); the call
#    ends within its budget, exit 1, with its summary, and its archive holds
#    the logs and the study's report;
#  - check as the checks still owed run it (DEPTH_STUDY=0): two halves of
#    checks alone, passing, within the budget;
#  - speed: cuDNN's attention check first (test_ops_cuda attention_cudnn:
#    a SKIP here, where cuDNN is absent, said why), cuBLASLt's candidates,
#    the timed choice and the second stream (test_matmul_cuda), RMSNorm's
#    kernels; then the attention's ceiling, asked for at a small shape:
#    PyTorch's side skipped, said why (no torch here), cod's own attention
#    timed forward and backward on the emulator, cod's cuDNN attention said
#    unavailable, with why; then cod's benchmark too slow for the budget is
#    stopped and named, every later step (each change's runs, the
#    profiles, the ceilings, the second timing) is said to have had no
#    time, within the budget; and the results file is written all the
#    same: valid JSON, every size's figures null, no change measured, the
#    attention's figure in it, and bench/gpu/results_table.py reads it.
cd "$(dirname "$0")/.." && . tests/lib.sh
need_emulator gpu_plan
need_corpus
t=$(mktemp -d /tmp/cod-plan-XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bin" "$t/data"
ln -s "$PWD"/build/emu/bin/* "$PWD/bin/cod-server" "$PWD/bin/cod" "$t/bin/"
export OUT=$t/out COD_BIN_DRY=$t/bin COD_DATA=$t/data STUDY_DIR=$t/study STUDY_OUT=$t/report
# a sweep of one cell, 2 updates of 256 tokens, that the emulator ends in
# seconds, its end analyses included
export GRID="train.seed=1 norm=pre model.n_layers=1 train.steps=2 train.warmup=1 train.batch_seqs=2 train.micro_batch=2 eval.every=2 eval.tokens=256"

BUDGET=100 CHECKS_A=test_emu CHECKS_B="test_model_cuda fault" WARM_TORCH=llama-130m \
    tests/gpu/plan.sh check > "$t/check.log" 2>&1
rc=$?
s=$OUT/check.txt
sed 's/^/  /' "$s"
check "check: exit 1, since a check was stopped" bash -c "[ $rc -eq 1 ] || { tail -20 '$t/check.log'; false; }"
check "check: test_emu passed" grep -qE '^test_emu +[0-9]+ passed +0 failed' "$s"
check "check: test_model_cuda stopped at the budget, named" grep -q '^FAIL test_model_cuda (stopped after' "$s"
check "check: the check after it not run, named" grep -qF 'FAIL fault (not run: CHECKS_UNTIL had passed)' "$s"
check "check: torch.compile's cache at llama-130m, said how it went, not counted as a check" \
    grep -qE '^torch.compile cache llama-130m: (filled|failed)' "$s"
check "check: the study ended with its report" grep -qF "depth study: report in $STUDY_OUT/report.html" "$s"
check "check: its one cell succeeded" grep -q ',pre,1,succeeded,' "$STUDY_OUT/cells.csv"
check "check: ended within its budget" \
    bash -c "n=\$(sed -n 's/^plan check: \([0-9]*\) s of 100$/\1/p' '$s'); [ -n \"\$n\" ] && [ \"\$n\" -le 100 ]"
tar -tzf "$OUT/check.tgz" > "$t/check.list" 2>&1
check "check: the archive holds the checks' logs" grep -q 'build/gpu/plan-check/a/test_emu.log$' "$t/check.list"
check "check: the archive holds the study's report" grep -q 'report/report.html$' "$t/check.list"
none_left() { ! pgrep -f "$STUDY_DIR" >/dev/null; }
check "check: no server, worker or daemon of the study left" none_left

# the check call as the checks still owed run it: the checks alone, no
# depth study, no caches filled
DEPTH_STUDY=0 WARM_TORCH= BUDGET=60 CHECKS_A=test_matmul_cuda CHECKS_B=test_emu \
    tests/gpu/plan.sh check > "$t/owed.log" 2>&1
rc=$?
s=$OUT/check.txt
sed 's/^/  /' "$s"
check "check without the study: both halves passed, exit 0" \
    bash -c "[ $rc -eq 0 ] && grep -qE '^test_matmul_cuda +[0-9]+ passed +0 failed' '$s' &&
             grep -qE '^test_emu +[0-9]+ passed +0 failed' '$s' || { tail -20 '$t/owed.log'; false; }"
check "check without the study: no study started, within its budget" \
    bash -c "! grep -q 'depth study' '$s' && n=\$(sed -n 's/^plan check: \([0-9]*\) s of 60$/\1/p' '$s') &&
             [ -n \"\$n\" ] && [ \"\$n\" -le 60 ]"
check "check without the study: its archive holds the checks' logs, no study's report" \
    bash -c "tar -tzf '$OUT/check.tgz' > '$t/owed.list' && grep -q 'plan-check/a/test_matmul_cuda.log$' '$t/owed.list' &&
             ! grep -q 'report.html$' '$t/owed.list'"

# the speed call, the attention's ceiling asked for
ATTENTION_SHAPES=dry:1:2:64:64 ATTENTION_REPS=2 MICRO_BATCH=1 BUDGET=120 \
    tests/gpu/plan.sh speed > "$t/speed.log" 2>&1
rc=$?
s=$OUT/speed.txt
sed 's/^/  /' "$s"
check "speed: exit 1, since a step was cut off" bash -c "[ $rc -eq 1 ] || { tail -20 '$t/speed.log'; false; }"
check "speed: cuDNN's attention checked first, a SKIP on the emulator, said why" \
    bash -c "grep -qE '^attention_cudnn: SKIP attention_cudnn: .*cuDNN' '$s' &&
             [ \$(grep -n '^attention_cudnn: SKIP' '$s' | cut -d: -f1) -lt \$(grep -n '^matmul: ' '$s' | head -1 | cut -d: -f1) ]"
check "speed: cuBLASLt's candidates, the timed choice and the second stream checked before any figure" \
    bash -c "grep -qx 'matmul: PASS candidates' '$s' && grep -qx 'matmul: PASS tuned' '$s' &&
             grep -qx 'matmul: PASS beside' '$s'"
check "speed: RMSNorm's kernels checked, or their cut said" \
    grep -qE '^kernels: (PASS rmsnorm|failed or cut off)' "$s"
check "speed: PyTorch's attention ceilings skipped, said why" \
    grep -qE '^SKIP attention ceilings \(PyTorch\): .*(cannot import torch|sees no CUDA device)' "$s"
check "speed: cod's own attention timed, forward and backward, before cod's figures" \
    bash -c "grep -qE '^ATTENTION impl=cod-own model=dry batch=1 heads=2 seq=64 head=64 reps=2 fwd_ms=[0-9.]+ bwd_ms=[0-9.]+ .*fwdbwd_tflops=' '$s' &&
             [ \$(grep -n '^ATTENTION impl=cod-own' '$s' | cut -d: -f1) -lt \$(grep -n '^bench llama-130m cod' '$s' | cut -d: -f1) ]"
check "speed: cod's cuDNN attention unavailable on the emulator, said why" \
    grep -qE '^ATTENTION impl=cod-cudnn unavailable: .+' "$s"
check "speed: cod at llama-130m cut off, named" grep -qF 'bench llama-130m cod: cut off or failed' "$s"
check "speed: the later steps said to have had no time, each change's among them" \
    bash -c "grep -qF 'bench llama-350m torch-compile: no time left' '$s' &&
             grep -qF 'change tune llama-130m: no time left' '$s' && grep -qF 'change all llama-1b: no time left' '$s' &&
             grep -qF 'profile llama-1b: no time left' '$s' && grep -qF 'ceilings: no time left' '$s' &&
             grep -qF 'again: no time left' '$s'"
check "speed: ended within its budget" \
    bash -c "n=\$(sed -n 's/^plan speed: \([0-9]*\) s of 120$/\1/p' '$s'); [ -n \"\$n\" ] && [ \"\$n\" -le 120 ]"
check "speed: the archive written" test -s "$OUT/speed.tgz"
results=$(sed -n 's/^results: //p' "$s")
check "speed: the results file written, its path said" \
    bash -c "[ -f '$results' ] && [ '$(dirname "$results")' = '$OUT/results' ]"
check "speed: the results file is JSON, every size null with why, the attention's figure in it" python3 - "$results" <<'PY'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
assert [s["model"] for s in d["sizes"]] == ["llama-71m", "llama-130m", "llama-350m", "llama-1b"], d["sizes"]
for s in d["sizes"]:
    for side in ("cod", "torch_compile"):
        assert s[side]["tokens_per_s"] is None and s[side]["mfu"] is None and s[side]["note"], s
assert d["sizes"][1]["cod"]["note"].startswith("no figure (cut off or failed): "), d["sizes"][1]
assert d["device"]["name"] == "cod's CUDA emulator (as an H100)", d["device"]
assert d["command"] == "tests/gpu/plan.sh speed" and d["peak_tflops"] == 989, d
assert d["commit"] == subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
assert d["settings"] == {}, d["settings"]
r = d["attention"]["shapes"][0]["results"]
assert r["cod-own"]["fwd_ms"] > 0 and r["cod-own"]["bwd_ms"] > 0, r
assert r["cod-cudnn"]["unavailable"], r
assert "torch-cudnn" not in r and d["attention"]["note"].startswith("SKIP attention ceilings (PyTorch)"), d["attention"]
assert d["changes"] == [] and d["again"] is None and d["profiles"] == {}, d
assert d["ceilings"] == {"copy_tb_s": None, "gemm_8192_tflops": None, "shapes": []}, d["ceilings"]
PY
check "speed: bench/gpu/results_table.py reads the results file" \
    bash -c "python3 bench/gpu/results_table.py --dir '$OUT/results' > '$t/table.md' &&
             grep -qF \"**cod's CUDA emulator (as an H100)**\" '$t/table.md' &&
             grep -qF '| llama-130m | — | — | — | — | — | — | — | — | — |' '$t/table.md' &&
             grep -qE '^\| dry 1×2×64×64 \| cod-own \| [0-9.]+ \|' '$t/table.md'"
