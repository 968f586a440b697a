#!/usr/bin/env bash
# A full disk while checkpointing, for cod-train and for cod-worker with a
# real cod-server: the checkpoint that cannot be written leaves nothing of
# itself, the previous one stays whole, the run says which file and which
# operation failed, and once the disk has room a resume goes on from the
# newest good checkpoint to the exact curve of an uninterrupted run. The
# disk fills up by RLIMIT_FSIZE (`ulimit -f` with SIGXFSZ ignored, so a
# write past the limit fails with EFBIG, "File too large"), the one way a
# test without root makes the kernel refuse a write; the trainer handles
# it as it handles ENOSPC. The limit lies between metrics.jsonl and a
# checkpoint's model file, so only checkpoints hit it (and metrics.jsonl,
# in the case that gives it a smaller limit).
cd "$(dirname "$0")/.."
. tests/worker_helpers.bash
make_data
export STEPS=200 CKPT=20
wspec full > "$t/spec.json"
bin/cod-train "$t/spec.json" --out "$t/ref" --threads 1 >/dev/null 2>&1
REF="$t/ref/metrics.jsonl"
# full KIB COMMAND...: runs the command on a disk that takes no file past KIB KiB
full() { (trap '' XFSZ; ulimit -f "$1"; shift; exec "$@"); }
size() { stat -c %s "$1"; }
metrics_size=$(size "$REF") model_size=$(size "$t/ref/checkpoints/step_00000200/model.safetensors")
limit=$(((metrics_size + model_size) / 2 / 1024))
check "the limit ($limit KiB) takes metrics.jsonl ($metrics_size B), not a checkpoint's model ($model_size B)" \
    [ "$metrics_size" -lt $((limit * 1024)) ] && [ $((limit * 1024)) -lt "$model_size" ]
newest() { ls "$1/checkpoints" | tail -1; }
# every checkpoint's files with their checksums
sums() { (cd "$1/checkpoints" && find . -type f | LC_ALL=C sort | xargs md5sum); }
curve_of() { values "$1" train/loss | paste -sd' '; }

# --- cod-train: a checkpoint, then the disk is full at the next one
bin/cod-train "$t/spec.json" --out "$t/run" --threads 1 > "$t/a.log" 2>&1 &
a=$!
first() { grep -q "checkpoint at step 20" "$t/a.log" 2>/dev/null; }
await "the first checkpoint" first
kill -TERM $a
wait $a; rc=$?
is "cod-train: stopped at a checkpoint (exit 3)" "$rc" 3
good=$(newest "$t/run")
good_step=$((10#${good#step_}))
sums "$t/run" > "$t/before.sums"
full "$limit" bin/cod-train "$t/spec.json" --out "$t/run" --resume --threads 1 > "$t/b.log" 2>&1
is "cod-train on a full disk: fails (exit 1)" "$?" 1
next=$(((good_step / CKPT + 1) * CKPT))
want="cod-train: failed: the checkpoint of step $next was not written: $t/run/checkpoints/step_$(printf %08d $next).tmp/model.safetensors: write failed: File too large; a resume starts from $t/run/checkpoints/$good"
is "cod-train on a full disk: says which checkpoint, file and operation failed, and where a resume starts" \
    "$(grep "cod-train: failed" "$t/b.log")" "$want"
is "cod-train on a full disk: the previous checkpoint is untouched, nothing else is there" \
    "$(sums "$t/run")" "$(cat "$t/before.sums")"
# what a kill -9 in the middle of a checkpoint leaves: a .tmp, half-written
cp -r "$t/run/checkpoints/$good" "$t/run/checkpoints/step_00000199.tmp"
truncate -s 1000 "$t/run/checkpoints/step_00000199.tmp/model.safetensors"
bin/cod-train "$t/spec.json" --out "$t/run" --resume --threads 1 > "$t/c.log" 2>&1
is "room again: the resume succeeds" "$?" 0
check "room again: it resumed from the newest good checkpoint, not the half-written one" \
    grep -q "resumed at step $good_step\$" "$t/c.log"
is "room again: the loss curve is an uninterrupted run's" "$(curve_of "$t/run/metrics.jsonl")" "$(curve_of "$REF")"
is "room again: eval/ppl too" "$(values "$t/run/metrics.jsonl" eval/ppl | paste -sd' ')" "$(values "$REF" eval/ppl | paste -sd' ')"

# --- cod-train: metrics.jsonl itself cannot grow (a full disk before any checkpoint)
full 2 bin/cod-train "$t/spec.json" --out "$t/small" --threads 1 > "$t/d.log" 2>&1
is "metrics.jsonl on a full disk: fails (exit 1)" "$?" 1
check "metrics.jsonl on a full disk: says which file failed" \
    grep -q "cod-train: failed: $t/small/metrics.jsonl: write failed at step [0-9]*: File too large" "$t/d.log"
bin/cod-train "$t/spec.json" --out "$t/small" --resume --threads 1 > "$t/e.log" 2>&1
is "room again: a new start completes" "$?" 0
is "room again: the curve is whole, the torn line gone" "$(curve_of "$t/small/metrics.jsonl")" "$(curve_of "$REF")"

# --- cod-worker with a real cod-server: the run fails as the machine's fault
# (retry), the experiment waits in the queue, a worker with room resumes it
start_server --lease-seconds 60
e=$(submit "$(wspec full)")
work="$t/work/experiments/$e"
start_worker a
has_checkpoint() { ls -d "$work"/checkpoints/step_* >/dev/null 2>&1; }
await "worker a's first checkpoint" has_checkpoint
kill -TERM "${WPID[a]}"
wait "${WPID[a]}"
is "worker a: stopped, the lease given back" "$(field "$e" state)" queued
good=$(newest "$work")
good_step=$((10#${good#step_}))
sums "$work" > "$t/before.sums"
full "$limit" bin/cod-worker --server "$B" --work-dir "$t/work" --threads 1 --name b --wait 5 \
    --max-jobs 1 >> "$t/worker-b.log" 2>&1
is "worker b on a full disk: exits after its job" "$?" 0
next=$(((good_step / CKPT + 1) * CKPT))
why="the checkpoint of step $next was not written: $work/checkpoints/step_$(printf %08d $next).tmp/model.safetensors: write failed: File too large; a resume starts from $work/checkpoints/$good"
check "worker b on a full disk: its log says what failed" grep -qF "failed: $why" "$t/worker-b.log"
is "worker b on a full disk: the machine's fault: the experiment is queued again" "$(field "$e" state)" queued
is "worker b on a full disk: an attempt spent" "$(field "$e" attempts)" 1
is "worker b on a full disk: the experiment's reason says what failed" "$(field "$e" reason)" \
    "rank 0 of 1 failed on attempt 1 of 3: $why"
is "worker b on a full disk: the previous checkpoint is untouched, nothing else is there" \
    "$(sums "$work")" "$(cat "$t/before.sums")"
start_worker c
await "the experiment succeeded" state_is "$e" succeeded
is "worker c with room: the experiment succeeded" "$(field "$e" state)" succeeded
check "worker c with room: resumed from the newest good checkpoint" \
    grep -q "resuming from $work/checkpoints/$good " "$t/worker-c.log"
is "worker c with room: the loss curve is an uninterrupted run's" "$(curve "$e")" "$(ref_curve "$REF")"
is "worker c with room: every point of the run is stored" "$(server_points "$e" "$work/metrics.jsonl" | md5sum)" \
    "$(file_points "$work/metrics.jsonl" | md5sum)"
