# Sourced by tests/gpu/run.sh and bench/gpu/run.sh (not run by itself).
# gpu_found says whether there is a GPU to run on; gpu_env_setup chooses
# where the GPU programs come from and sets:
#   COD_BIN   directory of cod-train, cod-analyze, cod-server, cod-worker,
#             cod, test_*_cuda, bench_train_cuda, bench_attention_cuda, bench_eval_cuda
#   COD_CUBLASLT_CACHE  the matmuls' timed choices (build/gpu/cublaslt.txt)
#   COD_DATA  directory holding gpu-bytes/ (a slice of the default corpus as bytes;
#             the width bundle's: width/, its text and SentencePiece model)
#   COD_REF   directory of the bundled CPU reference run (empty if none)
# With .gpu/bundle.tar.xz present (tests/gpu/bundle.sh), it is unpacked once
# into .gpu/bundle and used as it is: nothing is built. COD_BUNDLE names
# another bundle to use so (.gpu/width.tar.xz, the width study's,
# unpacked into .gpu/width). With COD_BIN_DRY set
# (a directory of those programs linked against the CUDA emulator, with
# COD_DATA: a dry run of the scripts, tests/gpu/README.md) those are used.
# Otherwise the programs are built here with make (a machine with nvcc and
# the corpus).
# The bundle's programs find the libraries carried with them through their
# rpath (bundle.sh), not LD_LIBRARY_PATH, which every process here inherits:
# the GPU machine's curl and python3 keep their own libcurl and libstdc++.
# Either way LD_LIBRARY_PATH gets the machine's own CUDA libraries, which
# the programs open with dlopen: the toolkit's lib64, else the copies in
# PyTorch's nvidia-* wheels.
# An NVIDIA GPU that the driver lists (nvidia-smi -L), or a dry run's
# programs on the emulated one (COD_BIN_DRY). Without either, make test-gpu
# and make bench-gpu say so and skip.
gpu_found() {
    [ -n "${COD_BIN_DRY:-}" ] || nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}
# Says why nothing ran, for a script to exit 0 after: a machine without a
# GPU skips the GPU's checks and benchmark rather than failing them.
gpu_skip() { # what is skipped
    echo "SKIP $1: no NVIDIA GPU on this machine (nvidia-smi lists none); make test checks what the CUDA kernels compute on the CUDA emulator (tests/gpu/README.md)"
}
gpu_env_setup() { # log directory
    local log_dir=$1
    if [ -n "${COD_BIN_DRY:-}" ]; then
        COD_BIN=$(cd "$COD_BIN_DRY" && pwd) || { echo "FAIL COD_BIN_DRY: no directory $COD_BIN_DRY"; return 1; }
        [ -d "${COD_DATA:-}" ] || { echo "FAIL COD_BIN_DRY: COD_DATA must name the data's directory"; return 1; }
        COD_REF=
        echo "dry run: the programs of $COD_BIN_DRY"
    elif [ -f "${COD_BUNDLE:-.gpu/bundle.tar.xz}" ]; then
        local a=${COD_BUNDLE:-.gpu/bundle.tar.xz}
        local b=${a%.tar.xz}
        if [ ! -f "$b/.unpacked" ] || [ "$a" -nt "$b/.unpacked" ]; then
            rm -rf "$b" && mkdir -p "$b" && tar -C "$b" -xJf "$a" && touch "$b/.unpacked" ||
                { echo "FAIL bundle: cannot unpack $a"; return 1; }
        fi
        b=$(cd "$b" && pwd)
        COD_BIN=$b/bin
        COD_DATA=$b/data
        COD_REF=$b/reference
        [ -d "$COD_REF" ] || COD_REF=
        echo "bundle: built from $(cat "$b/commit" 2>/dev/null || echo '?')$([ -s "$b/dirty" ] && echo ' with uncommitted changes')"
    else
        make -j"$(nproc)" bin/cod-train bin/cod-analyze bin/cod-server bin/cod-worker bin/cod gpu-tests \
            > "$log_dir/build.log" 2>&1 || { echo "FAIL build (see $log_dir/build.log)"; tail -20 "$log_dir/build.log"; return 1; }
        [ -x build/gpu/test_ops_cuda ] || { echo "FAIL build: no nvcc found, so no CUDA backend was built"; return 1; }
        mkdir -p build/gpu/bin
        for p in bin/cod-train bin/cod-analyze bin/cod-server bin/cod-worker bin/cod build/gpu/test_ops_cuda \
                 build/gpu/test_matmul_cuda build/gpu/test_model_cuda build/gpu/test_emu build/gpu/bench_train_cuda \
                 build/gpu/bench_attention_cuda build/gpu/bench_eval_cuda; do ln -sf "$PWD/$p" build/gpu/bin/; done
        COD_BIN=$PWD/build/gpu/bin
        { [ -f var/data/default-bytes/meta.json ] || CORPUS_TOKENIZERS=bytes scripts/corpus.sh >/dev/null; } &&
            tests/gpu/slice_shards.py var/data/default-bytes var/data/gpu-bytes 4000000 >/dev/null ||
            { echo "FAIL corpus: scripts/corpus.sh failed"; return 1; }
        COD_DATA=$PWD/var/data
        COD_REF=
    fi
    local d extra=
    for d in "${CUDA_HOME:-/usr/local/cuda}/lib64" /usr/local/cuda/lib64; do
        [ -e "$d/libcublasLt.so.13" ] && { extra=$d; break; }
    done
    # PyTorch's wheels: nvidia/<lib>/lib under site-packages
    local wheels
    wheels=$(python3 -c 'import nvidia, os; [print(os.path.join(p, q, "lib")) for p in nvidia.__path__ for q in sorted(os.listdir(p)) if os.path.isdir(os.path.join(p, q, "lib"))]' 2>/dev/null || true)
    for d in $wheels; do extra=${extra:+$extra:}$d; done
    [ -n "$extra" ] && export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$extra
    # the matmuls' timed choices, one file for every program of a machine's
    # calls (build/ stays on it between them): the later runs read the
    # choices of the first, so the checks compute with the measured ones
    mkdir -p build/gpu
    export COD_CUBLASLT_CACHE=${COD_CUBLASLT_CACHE-$PWD/build/gpu/cublaslt.txt}
    export COD_BIN COD_DATA COD_REF
    return 0
}
