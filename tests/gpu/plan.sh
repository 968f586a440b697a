#!/usr/bin/env bash
# The GPU checks, the depth and width studies and the benchmark on a bare
# GPU machine held for a fixed time (15 minutes, its start included), as
# prepared calls (tests/gpu/README.md, "A time-boxed plan"), each run under a budget
# of its own so that it always ends, archive written, before the machine's
# limit for a call: every step gets what is left of the budget less the
# archive's margin, and a step cut off counts as failed, not as lost.
#   tests/gpu/plan.sh width    the width study (studies/width/local.sh gpu:
#                              Pre-LN and LNS at the paper's 12 × 512, from
#                              the width bundle, .gpu/width.tar.xz, which
#                              this call carries alone; CALL, its preset:
#                              studies/width/call.sh), cut at its deadline
#                              45 s before the budget with its reports and
#                              reading written; torch.compile's caches
#                              filled beside it only for the sizes
#                              WARM_TORCH names (none by default: the
#                              study's runs fill the GPU)
#   tests/gpu/plan.sh check    every GPU check (tests/gpu/run.sh, in two
#                              halves at once) beside the depth study
#                              (studies/depth/local.sh gpu; DEPTH_STUDY=0
#                              leaves it out), which reports what has ended
#                              when the budget runs out, and torch.compile's
#                              caches filled for the speed call (WARM_TORCH:
#                              its sizes, "" for none)
#   tests/gpu/plan.sh speed    cod against torch.compile at llama-71m to -1b
#                              at the paper's batch, each change to the
#                              backend measured on and off, the profiles of
#                              llama-1b and -130m, the ceilings at the
#                              steps' matmul shapes (tests/gpu/plan_speed.sh
#                              says what, in which order); whatever was cut
#                              off, the measurement's results file
#                              ($OUT/results/DATE-DEVICE.json, for
#                              bench/gpu/results/: bench/gpu/results.py)
# BUDGET: the call's seconds (default 460 for width, 450 for check, 270 for
# speed); give the call a time limit some 30 s above it. What comes back: $OUT/CALL.txt,
# the summary (also printed), and $OUT/CALL.tgz, every log and the study's
# report. Without OUT (a dry run on another machine) they go to
# build/gpu/plan. Runs from the bundle (.gpu/bundle.tar.xz) or, without
# one, from programs built here, as tests/gpu/run.sh does. Exit 0 when
# every step passed (check: every check, and the study wrote its report;
# width: the study wrote its reports and reading, whatever the deadline
# cut; speed: PyTorch's side skipped for want of torch is not a failure).
# For a dry run (tests/gpu_plan.sh, tests/gpu_width.sh): CHECKS_A and
# CHECKS_B name the two halves' checks, STUDY_DIR and STUDY_OUT the study's
# state and report (the width study's: the folder of its reports),
# ATTENTION_SHAPES and ATTENTION_REPS the attention's shapes (presets or
# NAME:B:H:T:D) and timed calls, CHANGE_STEPS a change's timed updates,
# WIDTH_MARGIN the seconds between the width study's deadline and the
# budget (default 45; an emulated dry run's workers take longer to stop and
# report).
set -u
cd "$(dirname "$0")/../.."
call=${1:-}
case $call in
width) budget=${BUDGET:-460} ;;
check) budget=${BUDGET:-450} ;;
speed) budget=${BUDGET:-270} ;;
*) echo "usage: tests/gpu/plan.sh width|check|speed" >&2; exit 2 ;;
esac
case $budget in
'' | *[!0-9]*) echo "tests/gpu/plan.sh: BUDGET must be a number of seconds, not '$budget'" >&2; exit 2 ;;
esac
out=${OUT:-build/gpu/plan}
# the study's report: the committed folder, unless a GRID makes the
# study another sweep (a dry run's, say); the width study's, the folder of
# its reports (gpu-RECIPE/ and gpu-reading.md; studies/width/run.sh names
# those of other SEEDS or DEPTHS)
if [ "$call" = width ]; then
    report=${STUDY_OUT:-studies/width}
    study_dir=${STUDY_DIR:-var/study-width-gpu}
    # its own bundle, which this call carries instead of the checks'
    export COD_BUNDLE=${COD_BUNDLE:-.gpu/width.tar.xz}
else
    report=${STUDY_OUT:-studies/depth/gpu}
    study_dir=${STUDY_DIR:-var/study-depth-gpu}
fi
status=0
logs=build/gpu/plan-$call
rm -rf "$logs"
mkdir -p "$out" "$logs"
# what this call writes is newer: the width call archives and prints its
# own reports, not those of earlier calls that the tree holds
touch "$logs/.started"
written_here() { # the report folder's entries named so that this call wrote
    find "$report" -maxdepth 1 -name "$1" -newer "$logs/.started"
}
summary=$out/$call.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
# seconds left for a step that must end `margin` seconds before the budget
left() { echo $((budget - SECONDS - ${1:-20})); }
# the speed call's presets, in the order the results file lists them
sizes=(llama-71m llama-130m llama-350m llama-1b)
archive() {
    local extra=()
    [ "$call" = check ] && [ "${DEPTH_STUDY:-1}" = 1 ] && extra=("$report" "$study_dir"/*.log "$study_dir/mps")
    [ "$call" = width ] && mapfile -t extra < <(written_here 'gpu-*'
                                                 printf '%s\n' "$study_dir"/*.log "$study_dir/mps")
    # whatever was measured, null where nothing was (the summary says why)
    [ "$call" = speed ] && timeout -k 2 15 python3 bench/gpu/results.py write "$logs" "$out/results" \
        "${sizes[@]}" --command "tests/gpu/plan.sh speed" --peak 989 2>&1 | tee -a "$summary"
    say "plan $call: $SECONDS s of $budget"
    # the checks' checkpoints would pass the 16 MiB a file that comes back
    tar -czf "$out/$call.tgz" --ignore-failed-read --exclude='*.safetensors' "$logs" "${extra[@]}" 2>/dev/null
}
trap archive EXIT
# torch.compile's compiled graphs and Triton kernels, kept on the machine
# between calls (build/ is not sent, and not cleared): what the check call
# compiles, the speed call loads
export TORCHINDUCTOR_CACHE_DIR=$PWD/build/gpu/torch-cache TORCHINDUCTOR_FX_GRAPH_CACHE=1 \
    TORCHINDUCTOR_AUTOGRAD_CACHE=1
. tests/gpu/bundle_env.sh
# once here, before the steps that run at once would each unpack the bundle
gpu_env_setup "$logs" > "$logs/setup.log" 2>&1
setup=$?
tee -a "$summary" < "$logs/setup.log"
[ "$setup" -eq 0 ] || exit 1
GPU_LOGS=$logs bash tests/gpu/probe.sh > "$logs/probe.log" 2>&1
sed -n 's/^gpu: /GPU: /p' "$logs/probe.log" | tee -a "$summary"

# the seconds of torch_ref.py's untimed warm-up updates in its RESULT line
warmup_s() { sed -n 's/^RESULT .*warmup_s=\([^ ]*\).*/\1/p' "$@" 2>/dev/null; }

# torch.compile of each size at the speed call's shapes (one update, for
# the compiled graphs, not the time), on 4 of the 16 cores and after the
# study and the checks in the CPU's queue (nice): a size takes a minute or
# more to compile cold, which the speed call, on the same machine, then
# spends in seconds
warm_torch() {
    local p t
    for p in ${WARM_TORCH-llama-130m llama-1b llama-71m llama-350m}; do
        t=$(left 40)
        if [ "$t" -le 30 ]; then
            echo "torch.compile cache $p: no time left"
            continue
        fi
        BENCH_OUT=$logs/torch-warm IMPLS=torch-compile ACCUM=1 STEPS=1 CEILINGS=0 ATTENTION_SHAPES= \
            RESULTS_DIR= TORCHINDUCTOR_COMPILE_THREADS=4 timeout -k 5 "$t" nice -n 10 bench/gpu/run.sh "$p" \
            > "$logs/torch-warm-$p.log" 2>&1
        local w
        w=$(warmup_s "$logs/torch-warm/$p"-torch-compile-accum1.log)
        if [ -n "$w" ]; then
            echo "torch.compile cache $p: filled (warm-up updates $w s)"
        else
            # no torch here says SKIP; else what went wrong, or nothing (cut off)
            echo "torch.compile cache $p: failed or cut off: $(tail -n 1 "$logs/torch-warm-$p.log")"
        fi
    done
}

# A study's local.sh from the start of the call, its DEADLINE MARGIN
# seconds before the budget (OUT, the folder that comes back from the GPU
# machine, is also its report folder), and beside it torch.compile's
# caches filled for the speed call; sets study and warm, their pids.
study_start() { # local.sh, margin
    DEADLINE=$(left "$2") STUDY_DIR=$study_dir OUT=$report "$1" gpu > "$logs/study.log" 2>&1 &
    study=$!
    warm_torch > "$logs/torch-warm.log" 2>&1 &
    warm=$!
}

# The filling of the caches waited for (not a check: the speed call
# compiles cold where it failed); then the study, which ends at its
# deadline; past the budget it is stopped (its runs back in the queue, no
# report), which the summary says. The study's exit status.
study_end() {
    local t
    wait "$warm"
    tee -a "$summary" < "$logs/torch-warm.log"
    t=$(left 10)
    if [ "$t" -gt 0 ]; then
        timeout -s TERM -k 5 "$t" tail --pid="$study" -f /dev/null
    fi
    if [ -e "/proc/$study" ] && ! grep -q '^State:.*Z' "/proc/$study/status" 2>/dev/null; then
        kill -TERM "$study" && say "study: stopped at the budget, before its report"
    fi
    wait "$study"
}

check_call() {
    # the study from the start: the longest step, and the only one that ends
    # on its own at a deadline (with its report) rather than being cut off;
    # DEPTH_STUDY=0: the checks alone (and the caches, unless WARM_TORCH="")
    local study warm depth=${DEPTH_STUDY:-1}
    if [ "$depth" = 1 ]; then
        study_start studies/depth/local.sh 60
    else
        warm_torch > "$logs/torch-warm.log" 2>&1 &
        warm=$!
    fi
    # the checks in two halves of about equal length, each check stopped
    # (and failed) where it would run into the archive's margin; export
    # reads the checkpoint that loss_curve leaves in its half's GPU_LOGS
    export CHECKS_UNTIL=$(($(date +%s) + $(left 40)))
    # shellcheck disable=SC2086 # check names, as words
    GPU_LOGS=$logs/a tests/gpu/run.sh ${CHECKS_A:-test_emu test_ops_cuda test_matmul_cuda test_model_cuda gang} \
        > "$logs/checks-a.log" 2>&1 &
    local a=$!
    # shellcheck disable=SC2086
    GPU_LOGS=$logs/b tests/gpu/run.sh ${CHECKS_B:-loss_curve export hf sanitize fault moves} > "$logs/checks-b.log" 2>&1 ||
        status=1
    wait "$a" || status=1
    grep -hE '^(FAIL|[a-z_]+ +[0-9]+ passed)' "$logs/checks-a.log" "$logs/checks-b.log" | tee -a "$summary"
    if [ "$depth" != 1 ]; then
        wait "$warm"
        tee -a "$summary" < "$logs/torch-warm.log"
        return
    fi
    study_end
    grep -E '^(study|depth study|cod |\[)' "$logs/study.log" | tail -n 8 | tee -a "$summary"
    grep -q '^depth study: report in' "$logs/study.log" || status=1
}

width_call() {
    # the study from the start, its deadline 45 s before the budget: its
    # runs are then stopped at once, each pair at the same point, and it
    # writes its reports and reading with what they reached
    local study warm
    : "${WARM_TORCH=}"
    study_start studies/width/local.sh "${WIDTH_MARGIN:-45}"
    study_end || status=1
    grep -E '^(study|width (study|data)|gpu-[A-Za-z0-9-]*: )' "$logs/study.log" | tail -n 30 | tee -a "$summary"
    # the reading this call wrote (gpu-reading.md, or gpu-seeds2-reading.md for SEEDS=2),
    # not one the tree holds from an earlier call
    local reading
    reading=$(written_here 'gpu-*reading.md' | head -1)
    if [ -n "$reading" ]; then tee -a "$summary" < "$reading"; else status=1; fi
    grep -q 'width study: report in' "$logs/study.log" || status=1
}

# the speed call: tests/gpu/plan_speed.sh
. tests/gpu/plan_speed.sh

"${call}_call"
exit $status
