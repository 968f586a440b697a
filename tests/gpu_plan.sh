#!/usr/bin/env bash
# tests/run.sh: start first
# A time-boxed GPU machine's 15 minutes hang on tests/gpu/plan.sh, which
# otherwise runs only there, far apart: here its two calls run on the CUDA
# emulator (the programs of make emu-dry, COD_BIN_DRY) with small budgets,
# so that a change that breaks them shows before a GPU is at hand.
#  - check: a one-cell depth study beside two halves of checks, one that
#    passes (test_emu) and one too slow for the budget (test_ops_cuda),
#    which must be stopped and named, the check after it not run, and
#    torch.compile's caches filled at one size (no torch here: said so); the call
#    ends within its budget, exit 1, with its summary, and its archive holds
#    the logs and the study's report;
#  - speed: cod's benchmark too slow for the budget is stopped and named,
#    every later step is said to have had no time, within the budget.
cd "$(dirname "$0")/.." && . tests/lib.sh
if [ ! -x build/emu/bin/cod-worker ]; then
    if cuda_toolkit; then
        echo "FAIL gpu_plan: build/emu/bin/cod-worker is not built (make build-tests)"
        exit 1
    fi
    echo "PASS gpu_plan: no CUDA toolkit on this machine, so no emulated GPU to run the plan on"
    exit 0
fi
need_corpus
t=$(mktemp -d /tmp/cod-plan-XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bin" "$t/data"
ln -s "$PWD"/build/emu/bin/* "$PWD/bin/cod-server" "$PWD/bin/cod" "$PWD/bin/cod-analyze" "$t/bin/"
export OUT=$t/out COD_BIN_DRY=$t/bin COD_DATA=$t/data STUDY_DIR=$t/study STUDY_OUT=$t/report
# a sweep of one cell, 2 updates of 256 tokens, that the emulator ends in
# seconds, its end analyses included
export GRID="train.seed=1 norm=pre model.n_layers=1 train.steps=2 train.warmup=1 train.batch_seqs=2 train.micro_batch=2 eval.every=2 eval.tokens=256"

BUDGET=100 CHECKS_A=test_emu CHECKS_B="test_ops_cuda fault" WARM_TORCH=llama-130m \
    tests/gpu/plan.sh check > "$t/check.log" 2>&1
rc=$?
s=$OUT/check.txt
sed 's/^/  /' "$s"
check "check: exit 1, since a check was stopped" bash -c "[ $rc -eq 1 ] || { tail -20 '$t/check.log'; false; }"
check "check: test_emu passed" grep -qE '^test_emu +[0-9]+ passed +0 failed' "$s"
check "check: test_ops_cuda stopped at the budget, named" grep -q '^FAIL test_ops_cuda (stopped after' "$s"
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

MICRO_BATCH=1 BUDGET=40 tests/gpu/plan.sh speed > "$t/speed.log" 2>&1
rc=$?
s=$OUT/speed.txt
sed 's/^/  /' "$s"
check "speed: exit 1, since a step was cut off" bash -c "[ $rc -eq 1 ] || { tail -20 '$t/speed.log'; false; }"
check "speed: cod at llama-130m cut off, named" grep -qF 'bench llama-130m cod: cut off or failed' "$s"
check "speed: the later steps said to have had no time" \
    bash -c "grep -qF 'bench llama-350m torch-compile: no time left' '$s' && grep -qF 'profile: no time left' '$s'"
check "speed: the attention counters said why not" \
    grep -qE '^attention counters: (no ncu here|no time left)$' "$s"
check "speed: ended within its budget" \
    bash -c "n=\$(sed -n 's/^plan speed: \([0-9]*\) s of 40$/\1/p' '$s'); [ -n \"\$n\" ] && [ \"\$n\" -le 40 ]"
check "speed: the archive written" test -s "$OUT/speed.tgz"
