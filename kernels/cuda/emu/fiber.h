/* Fibers for the emulator: an execution context with its own stack,
 * switched to and from explicitly on one host thread, so that each thread
 * of an emulated block can stop at a barrier and resume there. The switch
 * saves only what the x86-64 System V ABI says a call preserves; it tells
 * AddressSanitizer about every change of stack. */
#ifndef COD_CUDA_EMU_FIBER_H
#define COD_CUDA_EMU_FIBER_H

#include <cstddef>

namespace emu {

struct Fiber {
    void *sp;          /* saved stack pointer while switched away */
    void *stack_lo;    /* its stack, lowest address (after the guard page) */
    size_t stack_size;
    void *asan_fake;   /* AddressSanitizer's fake stack while switched away */
};

/* a fiber with a fresh stack of `size` bytes, kept for the process's
 * life; false when out of memory */
bool fiber_create(Fiber *f, size_t size);
/* prepare f to call entry(arg) when first switched to; entry never returns
 * (it switches away for good with fiber_switch(..., true)) */
void fiber_start(Fiber *f, void (*entry)(void *), void *arg);
/* from the running fiber `from` to `to`; finished: from is never resumed */
void fiber_switch(Fiber *from, Fiber *to, bool finished);
/* the running host thread as a fiber to switch back to; false if its
 * stack cannot be found */
bool fiber_of_thread(Fiber *f);
/* a fiber abandoned while switched away (its launch faulted): its stack's
 * frames are forgotten, so that the sanitizer sees a fresh stack again */
void fiber_abandon(Fiber *f);
/* the first thing entry does on its new stack */
void fiber_entered();

} /* namespace emu */

#endif
