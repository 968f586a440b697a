# Sourced by tests/gpu/plan.sh (not run by itself): its speed call, in
# the order that keeps what matters most when the budget cuts the rest:
#  1. what the figures run, checked against the CPU first (seconds):
#     cuDNN's attention (test_ops_cuda attention_cudnn), cuBLASLt's
#     candidates, the timed choice and the second stream (test_matmul_cuda),
#     RMSNorm's kernels (test_ops_cuda rmsnorm);
#  2. cod at the paper's batch at llama-130m, -1b, -71m and -350m, every
#     change on (the defaults): every MFU figure; the first run times the
#     matmuls' candidates into the cache file, which the rest read;
#  3. torch.compile at llama-130m and -1b, the MFU targets' sizes;
#  4. each change's effect at llama-130m: one run with it off (CHANGES
#     below; "swiglu" forces on what the memory plan leaves off), and one
#     with all of them off (the code as it was at 628a1c7);
#  5. where llama-1b's step goes, op by op, at the paper's batch (16
#     micro-batches of 32, one update): no profile of it exists yet;
#  6. each change's effect at llama-1b;
#  7. torch.compile at llama-71m and -350m;
#  8. the GPU's ceilings (bench/gpu/ceilings.py) at the steps' own matmul
#     shapes of llama-130m and -1b (the micro-batch, and the lm_head at the
#     logit rows the cod runs chose), the copy bandwidth and 8192³;
#  9. where llama-130m's step goes, an update a micro-batch;
# 10. cod at llama-130m again: the spread of one version timed twice, for
#     reading the changes' figures;
# then cod's ratio to torch.compile at each size. plan.sh's archive writes
# the results file from the logs (bench/gpu/results.py: the figures, each
# change with and without, the profiles, the ceilings, the matmuls'
# choices), whatever was cut off. The attention's own ceiling
# (bench/gpu/attention.sh) and Nsight Compute's counters are left out (the
# attention is 10 % of the step on the H100 of 2026-11-26); ATTENTION_SHAPES
# (presets or NAME:B:H:T:D) brings the former back, before step 2.
# CHANGE_STEPS: the timed updates of a change's run (default 2; 1 at
# llama-1b, whose update at the paper's batch is over 2 s).

# the changes, each as NAME and the settings that switch it off
CHANGES=(
    "tune COD_CUBLASLT_TUNE=0"
    "norm COD_CUDA_NORM_ROWS=0"
    "memory COD_SPEED_MEMORY=0"
    "wgrad COD_CUDA_WGRAD_STREAM=0"
    "swiglu COD_KEEP_SWIGLU=1"
    "all COD_CUBLASLT_TUNE=0 COD_CUDA_NORM_ROWS=0 COD_SPEED_MEMORY=0 COD_CUDA_WGRAD_STREAM=0"
)

speed_call() {
    local p t w
    . bench/gpu/presets.sh
    # a check program's case(s) before any figure: PASS/FAIL/SKIP lines into the summary
    gate() { # label, program, cases...
        local label=$1 prog=$2
        shift 2
        t=$(left 15)
        if [ "$t" -le 20 ]; then
            say "$label: no time left"
            status=1
            return
        fi
        timeout -k 5 "$((t < 90 ? t : 90))" "$COD_BIN/$prog" "$@" > "$logs/gate-$label.log" 2>&1 ||
            { say "$label: failed or cut off (see gate-$label.log)"; status=1; }
        grep -E '^(PASS|FAIL|SKIP) ' "$logs/gate-$label.log" | sed "s/^/$label: /" | tee -a "$summary"
    }
    bench() { # preset, implementation
        t=$(left 15)
        [ "$t" -gt 20 ] || { say "bench $1 $2: no time left"; status=1; return; }
        BENCH_OUT=$logs IMPLS=$2 CEILINGS=0 ATTENTION_SHAPES= RESULTS_DIR= timeout -k 5 "$t" bench/gpu/run.sh "$1" \
            > "$logs/bench-$1-$2.log" 2>&1 ||
            { say "bench $1 $2: cut off or failed (see bench-$1-$2.log)"; status=1; }
        grep -E "^$1 " "$logs/bench-$1-$2.log" | tee -a "$summary"
        grep -h '^memory: ' "$logs/$1-$2-accum"*.log 2>/dev/null | sed "s/^/$1 /" | tee -a "$summary"
        # how long torch.compile's untimed updates took: compiling, or
        # loading what the call before compiled
        w=$(warmup_s "$logs/$1-$2-accum"*.log)
        [ -z "$w" ] || say "$1 $2: warm-up updates $w s"
    }
    # a field of the last RESULT line of a log
    result() { sed -n "s/^RESULT .*\b$2=\([^ ]*\).*/\1/p" "$1" 2>/dev/null | tail -1; }
    # one change off at one size: cod's figures without it, against the run with every change on
    change() { # "NAME SETTINGS...", preset
        local name=${1%% *} settings=${1#* } p=$2 log=$logs/change-${1%% *}-$2.log
        local B=${micro[$p]:-64} steps=${CHANGE_STEPS:-$([ "$p" = llama-1b ] && echo 1 || echo 2)}
        t=$(left 15)
        [ "$t" -gt 20 ] || { say "change $name $p: no time left"; return; }
        echo "CHANGE name=$name preset=$p settings=${settings// /,}" > "$log"
        # shellcheck disable=SC2086 # the settings, as words
        env $settings timeout -k 5 "$t" "$COD_BIN/bench_train_cuda" "$p" 989 "$B" "$steps" \
            $(((512 + B - 1) / B)) >> "$log" 2>&1 ||
            { say "change $name $p: cut off or failed: $(tail -n 1 "$log")"; return; }
        local with without
        with=$(result "$(ls "$logs/$p"-cod-accum*.log 2>/dev/null | head -1)" tokens_per_s)
        without=$(result "$log" tokens_per_s)
        awk -v n="$name" -v p="$p" -v s="$settings" -v a="${with:-0}" -v b="${without:-0}" \
            -v g="$(result "$log" peak_gib)" -v m="$(result "$log" mfu)" \
            'BEGIN { printf "change %-7s %-11s %s: %s tokens/s, MFU %.1f %%, peak %s GiB; with every change %s (%s)\n",
                     n, p, s, b, 100 * m, g, a, (a > 0 && b > 0) ? sprintf("%.3fx", a / b) : "no ratio" }' |
            tee -a "$summary"
    }
    # where a preset's updates go, op by op (an event after every launch),
    # its PROFILE lines into the summary with what the label adds to
    # "profile" after the word; fails where cut off or with too little time
    profile() { # label, seconds needed, preset, micro-batch, updates, micro-batches an update
        local label=$1 need=$2 failed=0
        shift 2
        t=$(left 15)
        [ "$t" -gt "$need" ] || { say "$label: no time left"; return 1; }
        COD_CUDA_PROFILE=1 timeout -k 5 "$t" "$COD_BIN/bench_train_cuda" "$1" 989 "$2" "$3" "$4" \
            > "$logs/profile-$1.log" 2>&1 ||
            { say "$label: cut off or failed: $(tail -n 1 "$logs/profile-$1.log")"; failed=1; }
        sed -n "s/^PROFILE/PROFILE${label#profile}/p" "$logs/profile-$1.log" | tee -a "$summary"
        return "$failed"
    }
    gate attention_cudnn test_ops_cuda attention_cudnn
    gate matmul test_matmul_cuda
    gate kernels test_ops_cuda rmsnorm
    # the attention's ceiling, where asked for
    if [ -n "${ATTENTION_SHAPES:-}" ]; then
        t=$(left 15)
        if [ "$t" -gt 20 ]; then
            # shellcheck disable=SC2086 # presets or shapes, as words
            BENCH_OUT=$logs REPS=${ATTENTION_REPS:-20} timeout -k 5 "$t" bench/gpu/attention.sh \
                $ATTENTION_SHAPES > "$logs/attention.log" 2>&1 ||
                { say "attention: cut off or failed (see attention.log)"; status=1; }
            grep -E '^(SKIP|TORCH|ATTENTION|SDPA impl|COMPARE)' "$logs/attention.log" | tee -a "$summary"
        else
            say "attention: no time left"
        fi
    fi
    for p in llama-130m llama-1b llama-71m llama-350m; do bench "$p" cod; done
    for p in llama-130m llama-1b; do bench "$p" torch-compile; done
    local c
    for c in "${CHANGES[@]}"; do change "$c" llama-130m; done
    profile "profile llama-1b" 30 llama-1b 32 1 16 || status=1
    for c in "${CHANGES[@]}"; do change "$c" llama-1b; done
    for p in llama-71m llama-350m; do bench "$p" torch-compile; done
    # the ceilings at the matmul shapes the cod runs had: the micro-batch,
    # and the lm_head at their logit rows
    t=$(left 15)
    if [ "$t" -gt 25 ]; then
        local shapes=()
        for p in llama-130m llama-1b; do
            shapes+=("$p:${micro[$p]}:$(result "$(ls "$logs/$p"-cod-accum*.log 2>/dev/null | head -1)" logit_rows)")
        done
        timeout -k 5 "$t" python3 bench/gpu/ceilings.py "${shapes[@]%:}" > "$logs/ceilings.log" 2>&1 ||
            say "ceilings: cut off or failed: $(tail -n 1 "$logs/ceilings.log")"
        grep -E '^(CEILING|SKIP)' "$logs/ceilings.log" | tee -a "$summary"
    else
        say "ceilings: no time left"
    fi
    profile profile 20 llama-130m 64 5 1 || status=1
    # the same version timed again: the spread the changes' ratios are read against
    t=$(left 15)
    if [ "$t" -gt 20 ]; then
        BENCH_OUT=$logs/again IMPLS=cod CEILINGS=0 ATTENTION_SHAPES= RESULTS_DIR= timeout -k 5 "$t" \
            bench/gpu/run.sh llama-130m > "$logs/bench-again.log" 2>&1
        local first again
        first=$(result "$(ls "$logs"/llama-130m-cod-accum*.log 2>/dev/null | head -1)" tokens_per_s)
        again=$(result "$(ls "$logs"/again/llama-130m-cod-accum*.log 2>/dev/null | head -1)" tokens_per_s)
        awk -v a="${first:-0}" -v b="${again:-0}" 'BEGIN { if (a > 0 && b > 0)
            printf "again llama-130m cod: %d tokens/s, then %d: %.2f %% apart\n", a, b, 100 * (b > a ? b - a : a - b) / a
            else print "again llama-130m cod: no second figure" }' | tee -a "$summary"
    else
        say "again: no time left"
    fi
    # cod over torch.compile, from the two RESULT lines of one preset
    for p in llama-130m llama-1b llama-71m llama-350m; do
        awk -v p="$p" '/^RESULT/ { for (i = 1; i <= NF; i++) if ($i ~ /^tokens_per_s=/) t[FILENAME] = substr($i, 14) }
            END { for (f in t) if (f ~ /-cod-/) c = t[f]; else o = t[f]
                  if (c && o) printf "%-11s cod / torch-compile %.2fx\n", p, c / o }' \
            "$logs/$p"-cod-accum*.log "$logs/$p"-torch-compile-accum*.log 2>/dev/null | tee -a "$summary"
    done
}
