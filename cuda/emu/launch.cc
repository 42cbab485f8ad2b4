/* cudaLaunchKernel and cudaFuncGetName of the emulated runtime: checks a launch as a GPU would
 * (configuration, stream, every pointer argument), then runs the grid on the calling thread (in
 * the asynchronous mode: copies the arguments and queues the grid on the stream's worker), one
 * block at a time, and reports it to the CUPTI emulation.
 *
 * A block's threads run one after the other as plain calls, on a "runner" fiber's stack. The
 * first time a thread reaches __syncthreads, the runner becomes that thread's fiber, the rest
 * of the block runs as fibers switched at each barrier (round-robin: every live thread runs up
 * to its next barrier or its end before any goes past it), and the kernel is marked so that
 * its later blocks and launches start as fibers. So kernels without barriers cost a call per
 * thread, and kernels with barriers keep CUDA's semantics. The fiber switch is a few lines of
 * assembly on x86-64 (ucontext's swapcontext makes a system call per switch: far too slow for a
 * tree reduction's 256 threads x 10 barriers per block), swapcontext elsewhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kernel.h"
#include "runtime.h"

__thread uint3 threadIdx, blockIdx, blockDim, gridDim;

#if defined(__SANITIZE_ADDRESS__)
#define MT_EMU_ASAN 1
extern "C" void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom,
                                               size_t size);
extern "C" void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                                size_t *size_old);
extern "C" void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif

#define STACK_BYTES ((size_t)128 << 10) /* a CUDA thread's stack: reserved, touched as used */
#define GUARD_BYTES ((size_t)4096)      /* an overflow faults instead of corrupting */

#if defined(__x86_64__)
/* mt_emu_fiber_switch(&from_sp, to_sp): saves the callee-saved registers on the current stack,
 * stores its pointer, and resumes the stack to_sp points at. (The FP control words are not
 * switched: every fiber of a launch shares its OS thread's, and no kernel changes them.) */
extern "C" void mt_emu_fiber_switch(void **from_sp, void *to_sp);
__asm__(".text\n"
        ".globl mt_emu_fiber_switch\n"
        ".hidden mt_emu_fiber_switch\n"
        ".type mt_emu_fiber_switch,@function\n"
        "mt_emu_fiber_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size mt_emu_fiber_switch, .-mt_emu_fiber_switch\n");
#else
#include <ucontext.h>
#endif

namespace
{

struct fiber {
#if defined(__x86_64__)
    void *sp = nullptr;
#else
    ucontext_t uc;
#endif
    char *stack = nullptr; /* its mmap'd stack (guard page first); nullptr: the OS thread's */
    const void *bottom = nullptr; /* for ASan: the usable stack's lowest address and size */
    size_t size = 0;
    void *fake = nullptr; /* ASan's fake stack while switched away */
};

/* A thread's state in a block run as fibers: ARRIVED at the barrier that ends the current
 * round, READY to run to the next one, AT_SHFL at a warp shuffle (waiting for its warp's other
 * lanes only). */
enum thread_state : unsigned char { NOT_STARTED, READY, ARRIVED, AT_SHFL, DONE };

#define WARP 32u

/* One OS thread's launch in progress, and its stack cache. */
struct engine {
    fiber sched;  /* the launching code (cudaLaunchKernel's caller's stack) */
    fiber runner; /* runs a block's threads as plain calls */
    std::vector<fiber> fibers;
    std::vector<thread_state> state;
    /* the warp shuffles' exchange: each thread's value, in two slots by the parity of its
     * shuffle count (a lane that went on to its next shuffle never overwrites a value that a
     * slower lane of its warp still has to read) */
    std::vector<unsigned long long> shfl[2];
    std::vector<unsigned char> shfl_count;
    std::vector<char *> free_stacks;
    mt_emu_kernel *k = nullptr;
    void **args = nullptr;
    unsigned nthreads = 0, cur = 0;
    unsigned long long nblocks = 0, block = 0; /* block: the running one's position in the order */
    bool as_fibers = false; /* the current block runs as fibers */
    bool in_use = false; /* a launch is running on this thread */
    bool diverged = false; /* some threads of a block left while others waited at a barrier */
    bool from_sched = false; /* the switch being made leaves the scheduler (for ASan) */
    unsigned ended = 0; /* threads that ended in the current round */
    bool reverse = false; /* MINITORCH_EMU_REVERSE=1: blocks and threads run last first */

    ~engine()
    {
        for (char *s : free_stacks) {
            munmap(s, STACK_BYTES + GUARD_BYTES);
        }
    }
};

thread_local engine eng;

/* Fills the stack cache up to n stacks, so that a launch never runs out midway. */
bool
ensure_stacks(engine &e, size_t n)
{
    while (e.free_stacks.size() < n) {
        void *m = mmap(nullptr, STACK_BYTES + GUARD_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (m == MAP_FAILED) {
            return false;
        }
        mprotect(m, GUARD_BYTES, PROT_NONE);
        e.free_stacks.push_back((char *)m);
    }
    return true;
}

void
take_stack(engine &e, fiber &f)
{
    f.stack = e.free_stacks.back();
    e.free_stacks.pop_back();
#ifdef MT_EMU_ASAN
    /* a fiber that ended left its frames' redzones poisoned: they never returned */
    __asan_unpoison_memory_region(f.stack + GUARD_BYTES, STACK_BYTES);
#endif
}

void
give_stack(engine &e, fiber &f)
{
    if (f.stack) {
        e.free_stacks.push_back(f.stack);
        f.stack = nullptr;
    }
}

/* Prepares f (its stack already taken) to start in entry at the next switch to it. */
void
fiber_init(fiber &f, void (*entry)(void))
{
    f.bottom = f.stack + GUARD_BYTES;
    f.size = STACK_BYTES;
#if defined(__x86_64__)
    uintptr_t top = ((uintptr_t)f.stack + GUARD_BYTES + STACK_BYTES) & ~(uintptr_t)15;
    void **sp = (void **)top;
    *--sp = nullptr; /* entry's return address: it never returns */
    *--sp = (void *)entry; /* where mt_emu_fiber_switch's ret goes, rsp then 8 mod 16 */
    for (int r = 0; r < 6; r++) {
        *--sp = nullptr; /* rbp, rbx, r12-r15 */
    }
    f.sp = sp;
#else
    getcontext(&f.uc);
    f.uc.uc_stack.ss_sp = f.stack + GUARD_BYTES;
    f.uc.uc_stack.ss_size = STACK_BYTES;
    f.uc.uc_link = nullptr;
    makecontext(&f.uc, entry, 0);
#endif
}

/* Leaves from for to; from_ends: from will never be resumed. */
void
fiber_switch(fiber &from, fiber &to, bool from_ends)
{
#ifdef MT_EMU_ASAN
    __sanitizer_start_switch_fiber(from_ends ? nullptr : &from.fake, to.bottom, to.size);
#else
    (void)from_ends;
#endif
#if defined(__x86_64__)
    mt_emu_fiber_switch(&from.sp, to.sp);
#else
    swapcontext(&from.uc, &to.uc);
#endif
#ifdef MT_EMU_ASAN
    __sanitizer_finish_switch_fiber(from.fake, nullptr, nullptr);
#endif
}

} // namespace

namespace
{

void
set_thread(unsigned t)
{
    if (blockDim.y == 1 && blockDim.z == 1) {
        threadIdx.x = t; /* every kernel of ours: no divisions per fiber switch */
        return;
    }
    threadIdx.x = t % blockDim.x;
    threadIdx.y = t / blockDim.x % blockDim.y;
    threadIdx.z = t / (blockDim.x * blockDim.y);
}

/* The thread run at position i of a block (the same map takes a thread to its position). */
unsigned
at(const engine &e, unsigned i)
{
    return e.reverse ? e.nthreads - 1 - i : i;
}

void
set_block(unsigned long long pos)
{
    const engine &e = eng;
    const unsigned long long b = e.reverse ? e.nblocks - 1 - pos : pos;
    blockIdx.x = (unsigned)(b % gridDim.x);
    blockIdx.y = (unsigned)(b / gridDim.x % gridDim.y);
    blockIdx.z = (unsigned)(b / ((unsigned long long)gridDim.x * gridDim.y));
}

/* A fiber's first moments (ASan learns the stack it came from: the scheduler's, once). */
void
fiber_started(engine &e)
{
#ifdef MT_EMU_ASAN
    const void *bottom;
    size_t size;
    __sanitizer_finish_switch_fiber(nullptr, &bottom, &size);
    if (e.from_sched) {
        e.sched.bottom = bottom;
        e.sched.size = size;
    }
#else
    (void)e;
#endif
}

void thread_entry(void);

/* Leaves the scheduler for thread u's fiber (started if new). */
void
enter(engine &e, fiber &from, unsigned u, bool from_ends)
{
    e.cur = u;
    set_thread(u);
    if (e.state[u] == NOT_STARTED) {
        take_stack(e, e.fibers[u]);
        fiber_init(e.fibers[u], thread_entry);
    }
    e.from_sched = &from == &e.sched;
    fiber_switch(from, e.fibers[u], from_ends);
}

/* Thread t has arrived at the round's barrier or ended: its fiber hands over straight to the
 * next thread of the round still to run (one switch per thread and barrier, not two), or to
 * the scheduler when the round is complete. */
void
pass_on(engine &e, unsigned t, bool ends)
{
    for (unsigned i = at(e, t) + 1; i < e.nthreads; i++) {
        const unsigned u = at(e, i);
        if (e.state[u] == NOT_STARTED || e.state[u] == READY) {
            enter(e, e.fibers[t], u, ends);
            return;
        }
    }
    e.from_sched = false;
    fiber_switch(e.fibers[t], e.sched, ends);
}

/* A thread of a block that runs as fibers. */
void
thread_entry(void)
{
    engine &e = eng;
    fiber_started(e);
    e.k->run(e.args);
    e.state[e.cur] = DONE;
    e.ended++;
    pass_on(e, e.cur, true);
}

/* The plain calls: every thread of every block from e.block on, until a thread reaches a
 * barrier (mt_emu_syncthreads turns this stack into that thread's fiber). */
void
runner_entry(void)
{
    engine &e = eng;
    fiber_started(e);
    for (; e.block < e.nblocks; e.block++) {
        set_block(e.block);
        for (unsigned i = 0; i < e.nthreads; i++) {
            const unsigned t = at(e, i);
            e.cur = t;
            set_thread(t);
            e.k->run(e.args);
            if (e.as_fibers) {
                /* thread t met a barrier and has now ended as a fiber; the rest is the
                 * scheduler's */
                e.state[t] = DONE;
                e.ended++;
                pass_on(e, t, true);
            }
        }
    }
    fiber_switch(e.runner, e.sched, true);
}

/* After a round: every warp whose live lanes all wait at a shuffle is made READY (its lanes
 * have exchanged their values); whether any was. */
bool
release_warps(engine &e)
{
    bool any = false;
    for (unsigned w = 0; w < e.nthreads; w += WARP) {
        const unsigned end = w + WARP < e.nthreads ? w + WARP : e.nthreads;
        bool waiting = false, all = true;
        for (unsigned t = w; t < end; t++) {
            waiting |= e.state[t] == AT_SHFL;
            all &= e.state[t] == AT_SHFL || e.state[t] == DONE;
        }
        if (waiting && all) {
            for (unsigned t = w; t < end; t++) {
                e.state[t] = e.state[t] == AT_SHFL ? READY : e.state[t];
            }
            any = true;
        }
    }
    return any;
}

/* Runs the current block's threads that have not ended as fibers, round by round: a round
 * runs every thread that has not arrived at the round's barrier up to it (or to its end), so
 * no thread passes a barrier before all have reached it. */
void
run_block_fibers(engine &e)
{
    for (;;) {
        for (unsigned i = 0; i < e.nthreads; i++) {
            const unsigned u = at(e, i);
            if (e.state[u] == NOT_STARTED || e.state[u] == READY) {
                enter(e, e.sched, u, false); /* back when the round is complete */
                break;
            }
        }
        if (release_warps(e)) {
            continue; /* warps at a shuffle go on before the block's barrier */
        }
        bool arrived = false;
        for (unsigned t = 0; t < e.nthreads; t++) {
            if (e.state[t] == DONE) {
                give_stack(e, e.fibers[t]);
            } else if (e.state[t] == ARRIVED) {
                e.state[t] = READY;
                arrived = true;
            }
        }
        e.diverged |= arrived && e.ended > 0;
        e.ended = 0;
        if (!arrived) {
            return; /* every thread has ended */
        }
    }
}

void
run_grid(engine &e)
{
    e.block = 0;
    while (e.block < e.nblocks) {
        e.as_fibers = false;
        e.ended = 0;
        if (!(__atomic_load_n(&e.k->barrier, __ATOMIC_ACQUIRE) & 1)) {
            take_stack(e, e.runner);
            fiber_init(e.runner, runner_entry);
            e.from_sched = true;
            fiber_switch(e.sched, e.runner, false);
            if (!e.as_fibers) {
                give_stack(e, e.runner); /* it ran every remaining block */
                continue;
            }
        } else {
            set_block(e.block);
            e.state.assign(e.nthreads, NOT_STARTED);
            e.shfl_count.assign(e.nthreads, 0);
            e.as_fibers = true;
        }
        run_block_fibers(e);
        e.block++;
    }
}

/* "void name<args>(param types)", as the demangled name of nvcc's kernel */
const char *
kernel_name(mt_emu_kernel *k)
{
    const char *name = __atomic_load_n(&k->name, __ATOMIC_ACQUIRE);
    if (name) {
        return name;
    }
    std::string fn = k->pretty_name(), sig = k->pretty_sig();
    size_t a = fn.find("F = "), b = sig.find("A = {");
    fn = a == std::string::npos ? "kernel" : fn.substr(a + 4, fn.size() - a - 5);
    if (!fn.empty() && fn[0] == '&') {
        fn.erase(0, 1);
    }
    for (size_t at; (at = fn.find("{anonymous}")) != std::string::npos;) {
        fn.replace(at, 11, "(anonymous namespace)");
    }
    sig = b == std::string::npos ? "" : sig.substr(b + 5, sig.size() - b - 7);
    char *made = strdup(("void " + fn + "(" + sig + ")").c_str());
    if (made == NULL) {
        return "kernel";
    }
    const char *expected = nullptr;
    if (!__atomic_compare_exchange_n(&k->name, &expected, made, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        free(made); /* another thread named it first */
        return expected;
    }
    return made;
}

/* The kernel behind a kernel pointer, or NULL when it is none of MT_KERNEL_PTR's. */
mt_emu_kernel *
kernel_of(const void *func)
{
    mt_emu_kernel *k = (mt_emu_kernel *)func;
    return k && k->magic == MT_EMU_KERNEL_MAGIC ? k : nullptr;
}

} // namespace

/* The first barrier or shuffle of a block run as plain calls: the threads run before t have
 * ended without reaching it, thread t keeps the runner's stack as its fiber, the rest start as
 * fibers. */
static void
become_fibers(engine &e, unsigned t)
{
    __atomic_fetch_or(&e.k->barrier, 1, __ATOMIC_ACQ_REL);
    e.fibers[t].stack = e.runner.stack;
    e.fibers[t].bottom = e.runner.bottom;
    e.fibers[t].size = e.runner.size;
    e.runner.stack = nullptr;
    e.state.assign(e.nthreads, NOT_STARTED);
    e.shfl_count.assign(e.nthreads, 0);
    for (unsigned i = 0; i < at(e, t); i++) {
        e.state[at(e, i)] = DONE;
    }
    e.as_fibers = true;
}

extern "C" void
mt_emu_syncthreads(void)
{
    engine &e = eng;
    if (!e.in_use) {
        return; /* not in a kernel: nothing to wait for */
    }
    const unsigned t = e.cur;
    if (!e.as_fibers) {
        e.diverged |= at(e, t) > 0;
        become_fibers(e, t);
    }
    e.state[t] = ARRIVED;
    pass_on(e, t, false);
}

/* A warp shuffle (kernel.h): publishes v, waits until every live lane of the warp has reached
 * its shuffle (a warp-scoped barrier: the other warps keep their place), and returns the value
 * lane src of the warp published, v itself when src is out of the warp or the block. */
extern "C" unsigned long long
mt_emu_warp_exchange(unsigned long long v, int src)
{
    engine &e = eng;
    if (!e.in_use) {
        return v;
    }
    const unsigned t = e.cur;
    if (!e.as_fibers) {
        become_fibers(e, t);
    }
    const unsigned parity = e.shfl_count[t]++ & 1u;
    e.shfl[parity][t] = v;
    e.state[t] = AT_SHFL;
    pass_on(e, t, false);
    const unsigned from = t / WARP * WARP + (unsigned)src;
    return src < 0 || src >= (int)WARP || from >= e.nthreads ? v : e.shfl[parity][from];
}

extern "C" cudaError_t
cudaFuncGetName(const char **name, const void *func)
{
    if (name == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    mt_emu_kernel *k = kernel_of(func);
    if (k == NULL) {
        return mt_emu_error(cudaErrorInvalidDeviceFunction);
    }
    *name = kernel_name(k);
    return cudaSuccess;
}

/* MINITORCH_EMU_REVERSE=1 runs blocks and threads in the reverse order: a kernel whose result
 * depends on the order (a race, or a block counting on another's work) then differs. */
static bool
reverse_order()
{
    static const bool reverse = [] {
        const char *v = getenv("MINITORCH_EMU_REVERSE");
        return v != NULL && strcmp(v, "1") == 0;
    }();
    return reverse;
}

static cudaError_t run_launch(mt_emu_kernel *k, dim3 grid, dim3 block, void **args, int device,
                              cudaStream_t stream);

/* Whether every pointer argument is NULL, inside a live block of device or inside a pinned host
 * block (mapped: device-side assertions write one); prints the first that is not (it means a bug
 * in the launching code). */
static bool
pointers_ok(mt_emu_kernel *k, void **args, int device)
{
    for (int i = 0; i < k->nargs; i++) {
        if (!k->is_ptr[i]) {
            continue;
        }
        const void *p = *(const void *const *)args[i];
        int d = -1;
        if (p != NULL && !(mt_emu_device_range(p, 1, &d) && d == device) &&
            !mt_emu_pinned_range(p, 1)) {
            fprintf(stderr,
                    "mt_emu: %s: argument %d (%p) is not in device %d's memory (%s): "
                    "cudaErrorIllegalAddress\n",
                    kernel_name(k), i, p, device,
                    d >= 0 ? "it is another device's" : "a host pointer, freed or never allocated");
            return false;
        }
    }
    return true;
}

extern "C" cudaError_t
cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t sharedMem,
                 cudaStream_t stream)
{
    int device;
    cudaError_t err = mt_emu_stream_for_work(stream, &device);
    if (err != cudaSuccess) {
        return mt_emu_error(err);
    }
    mt_emu_kernel *k = kernel_of(func);
    if (k == NULL) {
        return mt_emu_error(cudaErrorInvalidDeviceFunction);
    }
    const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (block.x == 0 || block.y == 0 || block.z == 0 || block.x > 1024 || block.y > 1024 ||
        block.z > 64 || threads > 1024 || grid.x == 0 || grid.y == 0 || grid.z == 0 ||
        grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535 || sharedMem > (48 << 10)) {
        return mt_emu_error(cudaErrorInvalidConfiguration);
    }
    if (k->nargs > 0 && args == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    if (!pointers_ok(k, args, device)) {
        return mt_emu_error(cudaErrorIllegalAddress);
    }
    if (eng.in_use) {
        return mt_emu_error(cudaErrorLaunchFailure); /* a launch from inside a kernel */
    }
    if (!mt_emu_async()) {
        return mt_emu_error(run_launch(k, grid, block, args, device, stream));
    }
    cudaError_t late = mt_emu_async_error(device);
    if (late != cudaSuccess) {
        return mt_emu_error(late); /* an earlier work's failure, as CUDA reports it */
    }
    /* CUDA copies the arguments at the launch: the caller may reuse them when it returns. */
    size_t offsets[64], bytes = 0;
    if (k->nargs > 64) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    for (int i = 0; i < k->nargs; i++) {
        bytes = (bytes + k->arg_align[i] - 1) / k->arg_align[i] * k->arg_align[i];
        offsets[i] = bytes;
        bytes += k->arg_size[i];
    }
    auto copied = std::make_shared<std::vector<std::max_align_t>>(
        (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t) + 1);
    auto pointers = std::make_shared<std::vector<void *>>((size_t)k->nargs + 1);
    for (int i = 0; i < k->nargs; i++) {
        unsigned char *at = (unsigned char *)copied->data() + offsets[i];
        memcpy(at, args[i], k->arg_size[i]);
        (*pointers)[(size_t)i] = at;
    }
    mt_emu_submit(stream, [k, grid, block, device, stream, copied, pointers] {
        return run_launch(k, grid, block, pointers->data(), device, stream);
    });
    return cudaSuccess;
}

/* Runs a checked launch on the calling thread (the launching one, or the stream's worker). */
static cudaError_t
run_launch(mt_emu_kernel *k, dim3 grid, dim3 block, void **args, int device, cudaStream_t stream)
{
    const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    engine &e = eng;
    if (!ensure_stacks(e, threads + 1)) {
        return cudaErrorLaunchOutOfResources;
    }
    e.fibers.resize(threads > e.fibers.size() ? threads : e.fibers.size());
    e.state.assign(threads, NOT_STARTED);
    e.shfl_count.assign(threads, 0);
    for (auto &slots : e.shfl) {
        slots.resize(threads > slots.size() ? threads : slots.size());
    }
    gridDim = uint3{grid.x, grid.y, grid.z};
    blockDim = uint3{block.x, block.y, block.z};
    threadIdx = uint3{0, 0, 0}; /* set_thread leaves .y and .z alone in 1-D blocks */
    e.k = k;
    e.args = args;
    e.nthreads = (unsigned)threads;
    e.nblocks = (unsigned long long)grid.x * grid.y * grid.z;
    e.diverged = false;
    e.reverse = reverse_order();
    e.in_use = true;
    const uint64_t start = mt_emu_now_ns();
    mt_emu_device_work_begin();
    run_grid(e);
    mt_emu_device_work_end();
    const uint64_t end = mt_emu_now_ns();
    e.in_use = false;
    e.k = nullptr;
    if (e.diverged && !(__atomic_fetch_or(&k->barrier, 2, __ATOMIC_ACQ_REL) & 2)) {
        fprintf(stderr,
                "mt_emu: %s: some threads of a block ended while others waited at "
                "__syncthreads() (undefined behaviour on a GPU)\n",
                kernel_name(k));
    }
    mt_emu_kernel_ran(kernel_name(k), device, stream, start, end);
    return cudaSuccess;
}
