# Shared helpers for the shell tests: each check prints one PASS/FAIL line.
# Not a test itself (tests/run.sh runs tests/*.sh except this file).
check() { # name, then a command that must succeed
    local name=$1; shift
    if "$@"; then echo "PASS $name"; else echo "FAIL $name"; fi
}
# Every wait in the tests is for an event (a state seen, a line logged, a
# file written), never for a guessed duration: CI shares its machine, and a
# loaded one must make the tests slower, not red. WAIT_LIMIT only ends a wait
# that would otherwise hang; no event takes that long on a working build.
WAIT_LIMIT=${WAIT_LIMIT:-300}
# poll COMMAND...: runs COMMAND until it succeeds; status 1 after WAIT_LIMIT s
poll() {
    local end=$((SECONDS + WAIT_LIMIT))
    until "$@"; do
        [ $SECONDS -lt $end ] || return 1
        sleep 0.1
    done
}
# await WHAT COMMAND...: poll, and a FAIL line naming WHAT if it gives up
await() {
    local what=$1; shift
    poll "$@" || { echo "FAIL awaited $what: not seen in $WAIT_LIMIT s"; return 1; }
}
# The CUDA programs' timed matmul choices (kernels/cuda/matmul_tune.cu) go
# to the tests' own file, not the user's cache: a test that wants a fresh
# one names its own.
mkdir -p build/test-logs
export COD_CUBLASLT_CACHE=${COD_CUBLASLT_CACHE-$PWD/build/test-logs/cublaslt.txt}
# whether the Makefile finds nvcc, and so builds the CUDA backend and its
# emulation (its NVCC default)
cuda_toolkit() { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; }
# The CUDA emulator's programs (make build-tests), for a test that runs
# the GPU plan on them: a PASS and exit where there is no CUDA toolkit to
# build them, a FAIL where they are not built.
need_emulator() { # the test's name
    [ -x build/emu/bin/cod-worker ] && return 0
    if cuda_toolkit; then
        echo "FAIL $1: build/emu/bin/cod-worker is not built (make build-tests)"
        exit 1
    fi
    echo "PASS $1: no CUDA toolkit on this machine, so no emulated GPU to run the plan on"
    exit 0
}
# The default corpus, fetched and tokenized once (idempotent).
need_corpus() {
    [ -f var/data/default-bytes/meta.json ] || scripts/corpus.sh >/dev/null || {
        echo "FAIL corpus: scripts/corpus.sh failed"; exit 1; }
}
# the step of a metrics.jsonl's newest point (what a run has trained)
newest_step() { tail -1 "$1" 2>/dev/null | sed 's/{"step": \([0-9]*\),.*/\1/'; }
# metric values of one name from a metrics.jsonl, one per line
values() { grep "\"name\": \"$2\"" "$1" | sed 's/.*"value": \([^}]*\)}/\1/'; }
