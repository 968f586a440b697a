/* What the emulator's parts share: exec.cc runs a launch's grid, block by
 * block; runtime.cc keeps the device's memory, errors, the default stream
 * and captures and decides whether a launch runs now or is recorded;
 * streams.cc keeps the streams a program makes and the events. */
#ifndef COD_CUDA_EMU_INTERNAL_H
#define COD_CUDA_EMU_INTERNAL_H

#include <functional>
#include <string>
#include <vector>

#include "kernels/cuda/emu/emu.h"

namespace emu {

/* an operation on a stream: cudaSuccess, or the fault it caused and why */
typedef std::function<cudaError_t(std::string *)> Work;

/* runtime.cc: runs work now, records it while its stream is captured, or
 * queues it on a stream of the program's own */
cudaError_t issue(cudaStream_t s, Work work);
double now_ms();
/* true (the capture failed, the call must) when a capture is on */
bool forbidden_in_capture();
/* the device's fault, which every call answers once there is one */
cudaError_t sticky_error();

/* streams.cc. A stream the program makes runs its work as late as its
 * ordering allows, so that a missing wait shows: its queue runs, in
 * order, only when the default stream waits for an event recorded on it,
 * or the host does (an event's or the stream's synchronisation, the
 * device's, a free); a queued operation then runs as if issued to the
 * default stream at that point (or is recorded there, so that a stream
 * forked from a capture and joined back is part of its graph). */
bool own_stream(cudaStream_t s);
cudaError_t queue(cudaStream_t s, Work work);
/* every queue run (the device synchronised) */
cudaError_t drain_all();
/* every queue emptied without running: true when one held work (a
 * capture that ended so was never joined back) */
bool discard_queued();

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
