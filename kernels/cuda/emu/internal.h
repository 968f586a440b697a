/* What the emulator's parts share: exec.cc runs a launch's grid, block by
 * block; runtime.cc keeps the device's memory, errors, streams and
 * captures and decides whether a launch runs now or is recorded. */
#ifndef COD_CUDA_EMU_INTERNAL_H
#define COD_CUDA_EMU_INTERNAL_H

#include <string>
#include <vector>

#include "kernels/cuda/emu/emu.h"

namespace emu {

/* exec.cc: runs every block of k; false with *fault saying what went
 * wrong (a trap, a barrier not every thread reaches, lanes apart at a warp
 * instruction, a race under COD_EMU_RACECHECK=1) */
bool run_kernel(const Kernel &k, std::string *fault);

/* runtime.cc: the live allocations that hold any of these pointers, with
 * a copy of their bytes, to put back or compare with */
struct Snapshot {
    std::vector<std::pair<unsigned char *, std::vector<unsigned char>>> regions;
};
Snapshot snapshot(const std::vector<const void *> &inside);
void restore(const Snapshot &s);
/* the first difference between s and the memory now, or "" */
std::string difference(const Snapshot &s);

} /* namespace emu */

#endif
