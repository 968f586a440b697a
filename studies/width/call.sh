# The width study's calls of the GPU machine, each a preset of run.sh's
# settings; sourced by local.sh and run.sh. CALL names one (default
# seeds); a variable set beforehand wins over the preset.
#   seeds  three seed pairs of Pre-LN and LNS at lr 1e-3 and one pair at
#          2e-3 (RATES, seed 1), each arm one pass over the unique training
#          targets (PASSES=1: no repetition) at 128 sequences an update
#          (BATCH), the held-out loss on 1M targets (EVAL_TOKENS) and the
#          loss on a fixed 1M-target sample of the training rows
#          (TRAIN_EVAL: eval.train_tokens) at every evaluation, no pruning
#          or angles (ANALYSIS=0); folders gpu-RECIPE-seeds/ and
#          gpu-RECIPE-seeds-lr2e-3/, reading gpu-seeds-reading.md
#   half   the same schedule on half the unique pool (WIDTH_POOL=0.5, its
#          shards in var/data/width-pool0.5): about 2 passes (PASSES=2);
#          gpu-RECIPE-half/, gpu-half-reading.md
#   first  the first call (2026-11-26): seed 1, 100M targets an arm at the
#          paper's 512 sequences (3.80 passes), held-out 2M, pruning and
#          angles; gpu-RECIPE/, gpu-reading.md
# TAG names the folders' suffix instead (a later call of the same preset
# and other SEEDS, to pool with read.py A+B).
case ${CALL:-seeds} in
seeds | half)
    : "${SEEDS:=1 2 3}" "${RATES=2e-3}" "${BATCH:=128}" "${TRAIN_EVAL:=1048576}"
    : "${EVAL_TOKENS:=1048576}" "${ANALYSIS:=0}"
    if [ "${CALL:-seeds}" = half ]; then
        : "${WIDTH_POOL:=0.5}" "${PASSES:=2}" "${TAG=-half}"
    else
        : "${WIDTH_POOL:=1}" "${PASSES:=1}" "${TAG=-seeds}"
    fi
    ;;
first)
    : "${SEEDS:=1}" "${RATES=}" "${BATCH:=512}" "${TOKENS:=100000000}" "${TRAIN_EVAL:=0}"
    : "${EVAL_TOKENS:=2097152}" "${ANALYSIS:=1}" "${WIDTH_POOL:=1}" "${TAG=}"
    ;;
*)
    echo "width study: no call '$CALL' (seeds, half or first)" >&2
    exit 2
    ;;
esac
case $WIDTH_POOL in
1) : "${WIDTH_DATA:=var/data/width}" ;;
*) : "${WIDTH_DATA:=var/data/width-pool$WIDTH_POOL}" ;;
esac
export CALL SEEDS RATES BATCH TOKENS PASSES TRAIN_EVAL EVAL_TOKENS ANALYSIS WIDTH_POOL TAG WIDTH_DATA
