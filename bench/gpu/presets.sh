# Sourced by bench/gpu/run.sh and bench/gpu/attention.sh (not run by
# itself): the presets the GPU benchmark measures, each at one micro-batch
# for every implementation (the paper's batch of 512 sequences is 512 /
# micro-batch of them), and their heads (spec/spec.c; head size 64 at each).
# shellcheck disable=SC2034 # used by the scripts that source it
declare -A micro=([llama-71m]=64 [llama-130m]=64 [llama-350m]=64 [llama-1b]=32)
# shellcheck disable=SC2034
declare -A heads=([llama-71m]=8 [llama-130m]=12 [llama-350m]=16 [llama-1b]=32)
