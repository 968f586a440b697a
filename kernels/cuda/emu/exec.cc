/* Running a launch: every block in turn, its threads scheduled round by
 * round in thread order (or the reverse). A thread runs until it waits: at
 * __syncthreads for the block's live threads, at a warp instruction for the
 * lanes its mask names. The last to arrive at a warp instruction computes
 * it for all of them, from what each put in. A thread gets a fiber of its
 * own when it starts, unless the thread before it has just ended on one:
 * then it runs there, so a kernel without barriers runs a block's threads
 * one after another on one stack, without switching. */
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "kernels/cuda/emu/fiber.h"
#include "kernels/cuda/emu/internal.h"
#include "kernels/cuda/emu/ptx.h"

namespace emu {

uint3 thread_idx, block_idx;
dim3 block_dim, grid_dim;
uint64_t block_serial;

namespace {

enum class At { run, barrier, warp, done };
enum class Op { shfl_xor, shfl_idx, syncwarp, ldsm, ldsm_t, mma };
const char *const OP_NAMES[] = {"__shfl_xor_sync", "__shfl_sync", "__syncwarp",
                                "ldmatrix", "ldmatrix.trans", "mma.sync"};

struct Copy {
    void *dst;
    const void *src;
    int bytes;
};

struct Thread {
    Fiber *fiber;
    uint3 idx;
    int lane, warp;
    At at;
    uint64_t gen; /* the barrier's or warp's generation it waits to end */
    std::vector<Copy> pending;
};

/* what a lane brings to a warp instruction */
struct LaneIn {
    uint64_t v[10];
    const void *p;
};

struct Warp {
    uint32_t live_mask;
    int arrived;
    uint32_t arrived_mask, mask;
    Op op;
    int width;
    uint64_t gen;
    LaneIn in[32];
    uint64_t out[32][4];
};

struct Block {
    std::vector<Thread> threads;
    std::vector<Warp> warps;
    int live, arrived;
    uint64_t gen;
    unsigned char *smem;
    size_t smem_bytes;
    std::string fault;
    const std::function<void()> *body;
};

/* a fiber's stack: kernels keep their register tiles there, and the
 * sanitizers' frames are larger than a GPU's */
constexpr size_t STACK_BYTES = 512 << 10;

Fiber host;
Block blk;
Thread *cur;
std::vector<Fiber> stacks; /* every fiber made so far */
std::vector<Fiber *> idle; /* those no thread of the running block holds */

/* How a launch's threads take turns, and when its copies land. Round-robin
 * keeps a block's warps in step (each warp instruction waits for the
 * others' turns); greedy lets the first warp in order run ahead until a
 * barrier stops it, as a GPU may, so that a read a barrier should have
 * guarded finds the other warps' writes not yet done. */
struct Schedule {
    bool reverse, greedy;
    /* cp.async lands at issue, not at its wait: the other end of what a GPU
     * may do, so that a tile overwritten while still read shows as a race */
    bool eager_copies;
} sched; /* the running launch's */

/* where the running block's round-robin stands */
struct Round {
    int n, k;
    bool ran;
    bool woke; /* a barrier or warp instruction has just let its threads go on */
} round;

/* The next thread able to go on, in thread order round after round (or,
 * greedy, from the first thread again whenever a wait has ended), or null
 * when every thread is done, or when a whole round found none able to (a
 * deadlock), or on a fault. */
Thread *pick()
{
    if (!blk.fault.empty())
        return nullptr;
    if (sched.greedy && round.woke) {
        round.k = 0;
        round.ran = false;
        round.woke = false;
    }
    for (;;) {
        if (blk.live == 0)
            return nullptr;
        if (round.k == round.n) {
            if (!round.ran)
                return nullptr;
            round.k = 0;
            round.ran = false;
        }
        Thread &t = blk.threads[sched.reverse ? round.n - 1 - round.k : round.k];
        round.k++;
        if ((t.at == At::barrier && t.gen != blk.gen) ||
            (t.at == At::warp && t.gen != blk.warps[t.warp].gen))
            t.at = At::run;
        if (t.at != At::run)
            continue;
        round.ran = true;
        return &t;
    }
}

void thread_main(void *arg);

/* the next thread to run: on the fiber it holds, or on an idle one */
void make_current(Thread *t)
{
    if (!t->fiber) {
        t->fiber = idle.back();
        idle.pop_back();
        fiber_start(t->fiber, thread_main, t);
    }
    cur = t;
    thread_idx = t->idx;
}

/* the running thread hands over to next, straight from fiber to fiber;
 * back to the host when there is none. finished: it will not run again,
 * and its fiber is free. */
void hand_over(Thread *next, bool finished)
{
    Thread *me = cur;
    if (next == me)
        return;
    Fiber *from = me->fiber;
    if (finished) {
        me->fiber = nullptr;
        idle.push_back(from);
    }
    if (next)
        make_current(next);
    fiber_switch(from, next ? next->fiber : &host, finished);
}

void leave(bool finished) { hand_over(pick(), finished); }

void yield() { leave(false); }

/* ends the launch: the running thread stops here for good */
[[noreturn]] void fault(const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (blk.fault.empty()) {
        char where[120];
        snprintf(where, sizeof where, "block (%u,%u,%u), thread (%u,%u,%u): ", block_idx.x,
                 block_idx.y, block_idx.z, cur->idx.x, cur->idx.y, cur->idx.z);
        blk.fault = std::string(where) + what;
    }
    cur->at = At::done;
    leave(true);
    abort(); /* never resumed */
}

/* a float's bits and back, as registers hold them */
uint32_t bits_of(float f)
{
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}
float float_of(uint32_t b)
{
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

/* whether [p, p + 16) leaves the block's dynamic shared memory (when it has some) */
bool outside_smem(const void *p)
{
    const unsigned char *c = static_cast<const unsigned char *>(p);
    return blk.smem && (c < blk.smem || c + 16 > blk.smem + blk.smem_bytes);
}

void copy16(const Copy &c)
{
    if (c.bytes)
        std::memcpy(c.dst, c.src, (size_t)c.bytes);
    std::memset((char *)c.dst + c.bytes, 0, 16 - (size_t)c.bytes);
}

void land(Thread *t)
{
    for (const Copy &c : t->pending)
        copy16(c);
    t->pending.clear();
}

void thread_main(void *arg)
{
    Thread *t = static_cast<Thread *>(arg);
    fiber_entered();
    for (;;) {
        (*blk.body)();
        land(t); /* a copy never waited for still lands */
        t->at = At::done;
        blk.live--;
        if (blk.arrived > 0 && blk.arrived == blk.live) {
            blk.gen++;
            blk.arrived = 0;
            round.woke = true;
        }
        blk.warps[t->warp].live_mask &= ~(1u << t->lane);
        Thread *next = pick();
        if (!next || next->fiber) {
            hand_over(next, true);
            abort(); /* never resumed */
        }
        /* not started yet: it runs here, on the stack this one left */
        next->fiber = t->fiber;
        t->fiber = nullptr;
        t = next;
        cur = t;
        thread_idx = t->idx;
    }
}

const char *state_name(const Thread &t)
{
    switch (t.at) {
    case At::barrier:
        return "__syncthreads";
    case At::warp:
        return OP_NAMES[(int)blk.warps[t.warp].op];
    default:
        return "running";
    }
}

/* nobody can go on: say where the threads wait */
void deadlock()
{
    int waiting_bar = 0, done = 0;
    const Thread *first_warp = nullptr;
    for (const Thread &t : blk.threads) {
        if (t.at == At::barrier)
            waiting_bar++;
        else if (t.at == At::warp && !first_warp)
            first_warp = &t;
        else if (t.at == At::done)
            done++;
    }
    char what[400];
    if (first_warp) {
        const Warp &w = blk.warps[first_warp->warp];
        snprintf(what, sizeof what,
                 "block (%u,%u,%u): deadlock: warp %d waits at %s for lanes %#x of mask %#x, "
                 "which never come (%d threads at __syncthreads, %d exited)",
                 block_idx.x, block_idx.y, block_idx.z, first_warp->warp, state_name(*first_warp),
                 w.mask & ~w.arrived_mask, w.mask, waiting_bar, done);
    } else {
        snprintf(what, sizeof what,
                 "block (%u,%u,%u): deadlock: %d threads wait at __syncthreads that the other %d "
                 "passed by",
                 block_idx.x, block_idx.y, block_idx.z, waiting_bar,
                 (int)blk.threads.size() - waiting_bar);
    }
    blk.fault = what;
}

void run_block()
{
    const int n = (int)blk.threads.size();
    blk.live = n;
    blk.arrived = 0;
    blk.gen = 0;
    for (int w = 0; w < (int)blk.warps.size(); w++) {
        int lanes = n - 32 * w < 32 ? n - 32 * w : 32;
        blk.warps[w] = Warp{};
        blk.warps[w].live_mask = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
    }
    idle.clear();
    for (Fiber &f : stacks)
        idle.push_back(&f);
    for (int i = 0; i < n; i++) {
        Thread &t = blk.threads[i];
        t.fiber = nullptr;
        t.idx = uint3{i % block_dim.x, (i / block_dim.x) % block_dim.y,
                      i / (block_dim.x * block_dim.y)};
        t.lane = i % 32;
        t.warp = i / 32;
        t.at = At::run;
        t.gen = 0;
        t.pending.clear();
    }
    block_serial++; /* the block's static shared arrays start over */
    if (blk.smem)
        std::memset(blk.smem, 0xff, blk.smem_bytes); /* NaN in bf16 and fp32 */
    round = Round{n, 0, false, false};
    if (Thread *first = pick()) {
        make_current(first);
        fiber_switch(&host, first->fiber, false);
    }
    if (blk.fault.empty() && blk.live > 0)
        deadlock();
}

bool run_grid(const Kernel &k, Schedule how, std::string *why)
{
    const dim3 g = k.cfg.grid, b = k.cfg.block;
    const size_t n = (size_t)b.x * b.y * b.z;
    if (!host.stack_lo && !fiber_of_thread(&host)) {
        *why = "cannot find the host thread's stack";
        return false;
    }
    while (stacks.size() < n) {
        stacks.emplace_back();
        if (!fiber_create(&stacks.back(), STACK_BYTES)) {
            stacks.pop_back();
            *why = "out of host memory for the threads' stacks";
            return false;
        }
    }
    blk.threads.assign(n, Thread{});
    blk.warps.assign((n + 31) / 32, Warp{});
    blk.smem_bytes = k.cfg.smem;
    blk.smem = k.cfg.smem ? static_cast<unsigned char *>(malloc(k.cfg.smem)) : nullptr;
    if (k.cfg.smem && !blk.smem) {
        *why = "out of host memory for the block's shared memory";
        return false;
    }
    blk.body = &k.thread;
    blk.fault.clear();
    sched = how;
    grid_dim = g;
    block_dim = b;
    for (unsigned z = 0; z < g.z && blk.fault.empty(); z++)
        for (unsigned y = 0; y < g.y && blk.fault.empty(); y++)
            for (unsigned x = 0; x < g.x && blk.fault.empty(); x++) {
                block_idx = uint3{x, y, z};
                run_block();
            }
    free(blk.smem);
    blk.smem = nullptr;
    if (!blk.fault.empty()) {
        for (size_t i = 0; i < n; i++)
            fiber_abandon(&stacks[i]);
        *why = blk.fault;
        return false;
    }
    return true;
}

int env_flag(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && strcmp(v, value) == 0;
}

Warp &arrive(Op op, uint32_t mask, int width, const LaneIn &in)
{
    Thread *t = cur;
    Warp &w = blk.warps[t->warp];
    if (!(mask >> t->lane & 1))
        fault("%s with mask %#x, which leaves out lane %d that calls it", OP_NAMES[(int)op], mask,
              t->lane);
    if (w.arrived == 0) {
        w.op = op;
        w.mask = mask;
        w.width = width;
    } else if (w.op != op || w.mask != mask || w.width != width) {
        fault("lanes of warp %d apart: %s (mask %#x) and %s (mask %#x)", t->warp,
              OP_NAMES[(int)w.op], w.mask, OP_NAMES[(int)op], mask);
    }
    w.in[t->lane] = in;
    w.arrived++;
    w.arrived_mask |= 1u << t->lane;
    t->gen = w.gen;
    t->at = At::warp;
    return w;
}

/* 16-byte rows in the block's shared memory, as ldmatrix reads them */
void check_row(const void *p, const char *what)
{
    if ((uintptr_t)p % 16)
        fault("%s: row address %p not 16-byte aligned", what, p);
    if (outside_smem(p))
        fault("%s: row address %p outside the block's %zu bytes of shared memory", what, p,
              blk.smem_bytes);
}

/* a bf16 is the top half of the fp32 of the same value */
float bf16_lo(uint32_t v) { return float_of(v << 16); }
float bf16_hi(uint32_t v) { return float_of(v & 0xffff0000u); }

/* the hot loop of the emulator, left uninstrumented: its reads of shared
 * memory are checked against the block's above */
__attribute__((no_sanitize("address", "undefined"))) void compute(Warp &w)
{
    switch (w.op) {
    case Op::shfl_xor:
    case Op::shfl_idx:
        for (int l = 0; l < 32; l++) {
            if (!(w.mask >> l & 1))
                continue;
            const int s = (int)w.in[l].v[1], base = l & ~(w.width - 1);
            int src = w.op == Op::shfl_xor ? l ^ s : base + (s & (w.width - 1));
            if (src < base || src >= base + w.width)
                src = l;
            if (!(w.mask >> src & 1))
                fault("%s: lane %d reads lane %d, which mask %#x leaves out", OP_NAMES[(int)w.op],
                      l, src, w.mask);
            w.out[l][0] = w.in[src].v[0];
        }
        break;
    case Op::syncwarp:
        break;
    case Op::ldsm:
    case Op::ldsm_t:
        for (int l = 0; l < 32; l++)
            check_row(w.in[l].p, OP_NAMES[(int)w.op]);
        for (int l = 0; l < 32; l++)
            for (int i = 0; i < 4; i++) {
                const unsigned char *rows[8];
                for (int r = 0; r < 8; r++)
                    rows[r] = (const unsigned char *)w.in[8 * i + r].p;
                uint32_t v;
                if (w.op == Op::ldsm) {
                    std::memcpy(&v, rows[l / 4] + 4 * (l % 4), 4);
                } else {
                    uint16_t lo, hi;
                    std::memcpy(&lo, rows[2 * (l % 4)] + 2 * (l / 4), 2);
                    std::memcpy(&hi, rows[2 * (l % 4) + 1] + 2 * (l / 4), 2);
                    v = (uint32_t)lo | (uint32_t)hi << 16;
                }
                w.out[l][i] = v;
            }
        break;
    case Op::mma: {
        /* the PTX ISA's m16n8k16 layouts, g = lane/4, t = lane%4 */
        float A[16][16], B[16][8], C[16][8];
        for (int l = 0; l < 32; l++) {
            const int g = l / 4, t = l % 4;
            const uint64_t *v = w.in[l].v;
            const int ar[4] = {g, g + 8, g, g + 8}, ac[4] = {2 * t, 2 * t, 2 * t + 8, 2 * t + 8};
            for (int r = 0; r < 4; r++) {
                A[ar[r]][ac[r]] = bf16_lo((uint32_t)v[r]);
                A[ar[r]][ac[r] + 1] = bf16_hi((uint32_t)v[r]);
            }
            for (int r = 0; r < 2; r++) {
                B[2 * t + 8 * r][g] = bf16_lo((uint32_t)v[4 + r]);
                B[2 * t + 8 * r + 1][g] = bf16_hi((uint32_t)v[4 + r]);
            }
            for (int r = 0; r < 4; r++)
                C[g + 8 * (r / 2)][2 * t + r % 2] = float_of((uint32_t)v[6 + r]);
        }
        for (int l = 0; l < 32; l++) {
            const int g = l / 4, t = l % 4;
            for (int r = 0; r < 4; r++) {
                const int row = g + 8 * (r / 2), col = 2 * t + r % 2;
                /* the products are exact; one rounding of their sum */
                double s = C[row][col];
                for (int k = 0; k < 16; k++)
                    s += (double)A[row][k] * B[k][col];
                w.out[l][r] = bits_of((float)s);
            }
        }
        break;
    }
    }
}

/* arrive, compute when last, wait for the warp; the lane's outputs */
const uint64_t *warp_op(Op op, uint32_t mask, int width, const LaneIn &in)
{
    Warp &w = arrive(op, mask, width, in);
    if (w.arrived == __builtin_popcount(mask)) {
        compute(w);
        w.gen++;
        w.arrived = 0;
        w.arrived_mask = 0;
        round.woke = true;
    }
    yield();
    return w.out[cur->lane];
}

} /* namespace */

void syncthreads()
{
    blk.arrived++;
    cur->gen = blk.gen;
    cur->at = At::barrier;
    if (blk.arrived == blk.live) {
        blk.gen++;
        blk.arrived = 0;
        round.woke = true;
    }
    yield();
}

void syncwarp(unsigned mask) { warp_op(Op::syncwarp, mask, 32, LaneIn{}); }

void trap() { fault("trap (__trap)"); }

uint64_t shfl(unsigned mask, uint64_t bits, int src, int width, bool xor_mode)
{
    if (width < 1 || width > 32 || (width & (width - 1)))
        fault("shuffle width %d: not a power of two up to 32", width);
    LaneIn in{};
    in.v[0] = bits;
    in.v[1] = (uint64_t)(uint32_t)src;
    return warp_op(xor_mode ? Op::shfl_xor : Op::shfl_idx, mask, width, in)[0];
}

void *dynamic_smem() { return blk.smem; }

void ldmatrix_x4(uint32_t r[4], const void *row_address, bool trans)
{
    LaneIn in{};
    in.p = row_address;
    const uint64_t *out = warp_op(trans ? Op::ldsm_t : Op::ldsm, 0xffffffffu, 32, in);
    for (int i = 0; i < 4; i++)
        r[i] = (uint32_t)out[i];
}

void mma_bf16_16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    LaneIn in{};
    for (int i = 0; i < 4; i++)
        in.v[i] = a[i];
    in.v[4] = b0;
    in.v[5] = b1;
    for (int i = 0; i < 4; i++)
        in.v[6 + i] = bits_of(c[i]);
    const uint64_t *out = warp_op(Op::mma, 0xffffffffu, 32, in);
    for (int i = 0; i < 4; i++)
        c[i] = float_of((uint32_t)out[i]);
}

void cp_async16(void *dst, const void *src, int src_bytes)
{
    if (src_bytes < 0 || src_bytes > 16)
        fault("cp.async of 16 bytes reading %d", src_bytes);
    if ((uintptr_t)dst % 16 || (uintptr_t)src % 16)
        fault("cp.async of 16 bytes from %p to %p: not 16-byte aligned", src, dst);
    if (outside_smem(dst))
        fault("cp.async to %p, outside the block's %zu bytes of shared memory", dst, blk.smem_bytes);
    const Copy c{dst, src, src_bytes};
    if (sched.eager_copies)
        copy16(c);
    else
        cur->pending.push_back(c);
}

void cp_async_wait_all() { land(cur); }

bool run_kernel(const Kernel &k, std::string *why)
{
    const bool reverse = env_flag("COD_EMU_ORDER", "reverse");
    if (!env_flag("COD_EMU_RACECHECK", "1"))
        return run_grid(k, Schedule{reverse, false, false}, why);
    /* twice from the same memory: round-robin, the copies landing as late
     * as a GPU may land them; then the threads in the opposite order, the
     * first warp running ahead, the copies landing as early as they may */
    Snapshot before = snapshot(k.pointers);
    if (!run_grid(k, Schedule{reverse, false, false}, why))
        return false;
    Snapshot first = snapshot(k.pointers);
    restore(before);
    if (!run_grid(k, Schedule{!reverse, true, true}, why))
        return false;
    std::string d = difference(first);
    if (!d.empty()) {
        *why = "its result depends on the order of its threads (a race): " + d;
        return false;
    }
    return true;
}

} /* namespace emu */
