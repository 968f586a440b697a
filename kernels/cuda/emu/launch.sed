# The two CUDA constructs a host compiler cannot read, turned into what the
# emulator (kernels/cuda/emu/emu.h) gives them: a launch
#   kernel<T><<<grid, block, smem>>>(args)
# becomes emu::launch("kernel<T>", kernel<T>, grid, block, smem)(args), and a
# block's dynamic shared memory
#   extern __shared__ __align__(16) float slice[];
# a pointer to the running block's.
s/([A-Za-z_][A-Za-z0-9_]*(<[^<>]*>)?)<<<(.*)>>>\(/::emu::launch("\1", \1, \3)(/
s/extern __shared__ (__align__\([0-9]+\) )?([A-Za-z_][A-Za-z0-9_ ]*[A-Za-z0-9_]) ([A-Za-z_][A-Za-z0-9_]*)\[\];/\2 *\3 = reinterpret_cast<\2 *>(::emu::dynamic_smem());/
# A static shared array (one declarator a line)
#   __shared__ float tot[ROWS][COLS];
# becomes a reference to storage that the emulator fills with NaN when a
# block first reaches it, as a GPU's starts undefined for every block:
#   float (&tot)[ROWS][COLS] = ::emu::shared<float [ROWS][COLS]>([] {});
s/__shared__ (__align__\([0-9]+\) )?([A-Za-z_]([A-Za-z0-9_: ]*[A-Za-z0-9_])?) ([A-Za-z_][A-Za-z0-9_]*)((\[[^];]+\])+);/\2 (\&\4)\5 = ::emu::shared<\2 \5>([] {});/
