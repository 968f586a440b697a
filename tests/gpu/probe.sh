#!/usr/bin/env bash
# What the GPU machine has, for the record (tests/gpu/README.md): the GPU,
# driver, toolkit, the CUDA libraries the programs open and where they were
# found, PyTorch, the profilers, the CPU and glibc. Prints; never fails.
cd "$(dirname "$0")/../.."
. tests/gpu/bundle_env.sh
gpu_env_setup "${GPU_LOGS:-build/gpu/logs}" >/dev/null 2>&1
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
else
    echo "gpu: no nvidia-smi here (no NVIDIA driver; a dry run's GPU is the emulator's)"
fi
echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
echo "glibc: $(ldd --version 2>/dev/null | head -1)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $(nproc)"
for lib in libcublasLt.so.13 libcudnn.so.9 libnvrtc.so.13 libnccl.so.2; do
    found=
    for d in ${LD_LIBRARY_PATH//:/ }; do [ -e "$d/$lib" ] && { found=$d/$lib; break; }; done
    echo "$lib: ${found:-not found on LD_LIBRARY_PATH}"
done
python3 -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "transformers", transformers.__version__)' 2>&1
for t in compute-sanitizer ncu; do echo "$t: $(command -v $t || ls /usr/local/cuda/bin/$t 2>/dev/null || echo missing)"; done
