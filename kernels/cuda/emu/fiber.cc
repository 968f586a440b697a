#include "kernels/cuda/emu/fiber.h"

#include <cstdint>
#include <cstring>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define EMU_ASAN 1
#else
#define EMU_ASAN 0
#endif

#if !defined(__x86_64__)
#error "the emulator's fibers switch stacks the x86-64 way"
#endif

/* emu_ctx_switch(&save_sp, load_sp): pushes the callee-saved registers,
 * MXCSR and the x87 control word, stores the stack pointer, loads the
 * other and pops the same. A new fiber's stack is laid out as if it had
 * switched away, with emu_ctx_start as its return address. */
asm(R"(
    .text
    .globl emu_ctx_switch
    .type emu_ctx_switch, @function
emu_ctx_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_ctx_switch, .-emu_ctx_switch

    .globl emu_ctx_start
    .type emu_ctx_start, @function
emu_ctx_start:
    movq %r13, %rdi
    callq *%r12
    ud2
    .size emu_ctx_start, .-emu_ctx_start
)");

extern "C" void emu_ctx_switch(void **save_sp, void *load_sp);
extern "C" void emu_ctx_start(void);

namespace emu {

static size_t page_size() { return (size_t)sysconf(_SC_PAGESIZE); }

bool fiber_create(Fiber *f, size_t size)
{
    size_t page = page_size();
    size = (size + page - 1) / page * page;
    /* a guard page below: an overflow faults instead of writing elsewhere */
    void *m = mmap(nullptr, size + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return false;
    if (mprotect(m, page, PROT_NONE) != 0) {
        munmap(m, size + page);
        return false;
    }
    *f = Fiber{nullptr, (char *)m + page, size, nullptr};
    return true;
}

/* how deep a fiber's frames reach when it switches away for good: the
 * sanitizer still has them, and a restarted fiber's new frames there would
 * look like overflows into them */
constexpr size_t SWITCH_FRAMES = 64 << 10;

void fiber_start(Fiber *f, void (*entry)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)f->stack_lo + f->stack_size) & ~(uintptr_t)15;
#if EMU_ASAN
    size_t clean = f->stack_size < SWITCH_FRAMES ? f->stack_size : SWITCH_FRAMES;
    __asan_unpoison_memory_region((char *)f->stack_lo + f->stack_size - clean, clean);
#endif
    /* after emu_ctx_switch's ret the stack is 16-aligned, as a call wants */
    uint64_t *ret = (uint64_t *)(top - 24);
    uint64_t *sp = ret - 7;
    uint32_t csr[2] = {0x1f80, 0x037f}; /* MXCSR and x87 control word at their defaults */
    std::memcpy(sp, csr, sizeof csr);
    sp[1] = 0;                   /* r15 */
    sp[2] = 0;                   /* r14 */
    sp[3] = (uint64_t)arg;       /* r13 */
    sp[4] = (uint64_t)entry;     /* r12 */
    sp[5] = 0;                   /* rbx */
    sp[6] = 0;                   /* rbp */
    *ret = (uint64_t)&emu_ctx_start;
    f->sp = sp;
    f->asan_fake = nullptr;
}

void fiber_switch(Fiber *from, Fiber *to, bool finished)
{
#if EMU_ASAN
    __sanitizer_start_switch_fiber(finished ? nullptr : &from->asan_fake, to->stack_lo,
                                   to->stack_size);
#else
    (void)finished;
#endif
    emu_ctx_switch(&from->sp, to->sp);
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(from->asan_fake, nullptr, nullptr);
#endif
}

bool fiber_of_thread(Fiber *f)
{
    pthread_attr_t a;
    void *lo = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return false;
    int e = pthread_attr_getstack(&a, &lo, &size);
    pthread_attr_destroy(&a);
    if (e != 0)
        return false;
    *f = Fiber{nullptr, lo, size, nullptr};
    return true;
}

void fiber_abandon(Fiber *f)
{
#if EMU_ASAN
    __asan_unpoison_memory_region(f->stack_lo, f->stack_size);
#endif
    f->asan_fake = nullptr;
}

void fiber_entered()
{
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}

} /* namespace emu */
