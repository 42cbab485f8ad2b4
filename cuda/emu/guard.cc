/* The emulated device's memory guard: device memory (cudaMalloc's blocks) lives in one reserved
 * arena that is PROT_NONE while no device work runs, so HOST code that reads or writes device
 * memory directly (a dereference of a CUDA tensor's data, a memcpy in place of cudaMemcpy, a host
 * loop over a device buffer) faults here as it would crash or read garbage on a GPU, instead of
 * quietly working on the CPU. Device work (a kernel launch, cudaMemcpy/cudaMemset, a cuBLAS, cuDNN
 * or CUB call) opens a window (mt_emu_device_work_begin/end) during which the arena is readable
 * and writable. A fault inside the arena prints one line naming the block and a backtrace, then
 * aborts; faults elsewhere go to the previous SIGSEGV handler.
 *
 * The window is process-wide: while one thread runs device work, another thread's host code may
 * touch device memory unnoticed. That gives no false alarms, only fewer catches.
 *
 * MINITORCH_EMU_GUARD=0 turns the guard off (device blocks are plain heap memory). It is off under
 * AddressSanitizer too: there device blocks stay on ASan's heap, whose redzones catch a kernel
 * reading past its block (inside the arena, neighbouring blocks are readable during a window), and
 * ASan's own SIGSEGV handler would contend with this one. */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "runtime.h"

#define SLICE_ALIGN ((size_t)2 << 20) /* the arena and each device's slice start on a huge page */

static bool guard_on;
static char *arena;        /* devices x slice bytes, reserved, PROT_NONE outside windows */
static size_t slice_bytes; /* each device's share: its MINITORCH_EMU_MEMORY, rounded up */
static int arena_devices;
static size_t page_bytes;
static std::once_flag guard_once;

/* Free ranges of each device's slice, by start address (first fit, coalesced on free). */
static std::mutex arena_lock;
static std::map<uintptr_t, size_t> free_ranges[64];

/* Open windows across all threads; the arena is RW while it is above 0. */
static std::mutex window_lock;
static long window_depth;

static struct sigaction previous_segv;

/* ---- the fault handler: async-signal-safe (write(2), no malloc, no stdio) ---- */

static void
put_str(char *buf, size_t *n, size_t cap, const char *s)
{
    while (*s && *n < cap) {
        buf[(*n)++] = *s++;
    }
}

static void
put_num(char *buf, size_t *n, size_t cap, uintptr_t v, unsigned base)
{
    char digits[32];
    int k = 0;
    do {
        digits[k++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v && k < (int)sizeof digits);
    if (base == 16) {
        put_str(buf, n, cap, "0x");
    }
    while (k > 0 && *n < cap) {
        buf[(*n)++] = digits[--k];
    }
}

static void
on_segv(int sig, siginfo_t *info, void *ctx)
{
    uintptr_t a = (uintptr_t)info->si_addr, base = (uintptr_t)arena;
    if (!(arena && a >= base && a < base + slice_bytes * (size_t)arena_devices)) {
        if (previous_segv.sa_flags & SA_SIGINFO) {
            previous_segv.sa_sigaction(sig, info, ctx);
        } else if (previous_segv.sa_handler != SIG_DFL && previous_segv.sa_handler != SIG_IGN) {
            previous_segv.sa_handler(sig);
        } else {
            /* Returning re-runs the faulting instruction under the default action. */
            sigaction(SIGSEGV, &previous_segv, NULL);
        }
        return;
    }
    char line[512];
    size_t n = 0, cap = sizeof line - 1;
    put_str(line, &n, cap, "minitorch CUDA emulation: host code touched device memory at ");
    put_num(line, &n, cap, a, 16);
    uintptr_t start;
    size_t size;
    int device = (int)((a - base) / slice_bytes);
    if (mt_emu_block_try_find((const void *)a, &start, &size, &device)) {
        put_str(line, &n, cap, " (block of ");
        put_num(line, &n, cap, size, 10);
        put_str(line, &n, cap, " bytes on cuda:");
        put_num(line, &n, cap, (uintptr_t)device, 10);
        put_str(line, &n, cap, ", offset ");
        put_num(line, &n, cap, a - start, 10);
        put_str(line, &n, cap, ")");
    } else {
        put_str(line, &n, cap, " (no live block: freed or never allocated memory of cuda:");
        put_num(line, &n, cap, (uintptr_t)device, 10);
        put_str(line, &n, cap, ")");
    }
    put_str(line, &n, cap,
            "\n  a GPU would crash or read garbage here: copy it with cudaMemcpy or run a kernel "
            "(MINITORCH_EMU_GUARD=0 turns this check off)\n");
    line[n] = 0;
    ssize_t w = write(2, line, n);
    void *frames[64];
    int depth = backtrace(frames, 64);
    backtrace_symbols_fd(frames, depth, 2);
    (void)w;
    abort();
}

/* ---- set-up, once ---- */

static void
guard_init()
{
    const char *env = getenv("MINITORCH_EMU_GUARD");
    if ((env && strcmp(env, "0") == 0) || dlsym(RTLD_DEFAULT, "__asan_init") != NULL) {
        return;
    }
    size_t per_device;
    mt_emu_memory_config(&arena_devices, &per_device);
    page_bytes = (size_t)sysconf(_SC_PAGESIZE);
    slice_bytes = (per_device + SLICE_ALIGN - 1) / SLICE_ALIGN * SLICE_ALIGN;
    if (arena_devices <= 0 || slice_bytes == 0 || slice_bytes < per_device ||
        slice_bytes > SIZE_MAX / (size_t)arena_devices) {
        return;
    }
    /* One huge page more, to start the arena on one. */
    const size_t bytes = slice_bytes * (size_t)arena_devices;
    void *p = mmap(NULL, bytes + SLICE_ALIGN, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr,
                "minitorch CUDA emulation: cannot reserve %d x %zu bytes of device memory "
                "(%s); the host-access guard is off\n",
                arena_devices, slice_bytes, strerror(errno));
        return;
    }
    arena = (char *)(((uintptr_t)p + SLICE_ALIGN - 1) / SLICE_ALIGN * SLICE_ALIGN);
    /* Each window's mprotect costs a page-table entry per resident page: in huge pages, 512
     * times fewer (4 KiB pages made tests/cuda's kernel launches cost more system time than
     * the kernels' own). Where THP is off, windows just cost more. */
    madvise(arena, bytes, MADV_HUGEPAGE);
    for (int d = 0; d < arena_devices; d++) {
        free_ranges[d][(uintptr_t)arena + (size_t)d * slice_bytes] = slice_bytes;
    }
    /* backtrace() loads libgcc on its first call, which allocates: not in the handler. */
    void *frames[2];
    backtrace(frames, 2);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous_segv);
    guard_on = true;
}

bool
mt_emu_guard_on(void)
{
    std::call_once(guard_once, guard_init);
    return guard_on;
}

/* ---- windows ---- */

void
mt_emu_device_work_begin(void)
{
    if (!mt_emu_guard_on()) {
        return;
    }
    std::lock_guard<std::mutex> g(window_lock);
    if (window_depth++ == 0) {
        mprotect(arena, slice_bytes * (size_t)arena_devices, PROT_READ | PROT_WRITE);
    }
}

void
mt_emu_device_work_end(void)
{
    if (!guard_on) {
        return;
    }
    std::lock_guard<std::mutex> g(window_lock);
    if (--window_depth == 0) {
        mprotect(arena, slice_bytes * (size_t)arena_devices, PROT_NONE);
    }
}

/* ---- the allocator: few, large blocks (the caching allocator above keeps and splits them) ---- */

void *
mt_emu_arena_alloc(int device, size_t bytes)
{
    if (device < 0 || device >= arena_devices) {
        return NULL;
    }
    std::lock_guard<std::mutex> g(arena_lock);
    auto &fr = free_ranges[device];
    for (auto it = fr.begin(); it != fr.end(); ++it) {
        if (it->second >= bytes) {
            uintptr_t start = it->first;
            size_t rest = it->second - bytes;
            fr.erase(it);
            if (rest) {
                fr[start + bytes] = rest;
            }
            return (void *)start;
        }
    }
    return NULL;
}

void
mt_emu_arena_free(void *p, size_t bytes)
{
    uintptr_t s = (uintptr_t)p, e = s + bytes;
    int device = (int)((s - (uintptr_t)arena) / slice_bytes);
    std::lock_guard<std::mutex> g(arena_lock);
    auto &fr = free_ranges[device];
    auto next = fr.lower_bound(s);
    uintptr_t fs = s, fe = e;
    if (next != fr.end() && next->first == e) {
        fe = e + next->second;
        next = fr.erase(next);
    }
    if (next != fr.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == s) {
            fs = prev->first;
            fr.erase(prev);
        }
    }
    fr[fs] = fe - fs;
    /* Give back the pages wholly free now, as free() of a large block would. */
    uintptr_t lo = s / page_bytes * page_bytes, hi = (e + page_bytes - 1) / page_bytes * page_bytes;
    lo = lo < fs ? lo + page_bytes : lo;
    hi = hi > fe ? hi - page_bytes : hi;
    if (lo < hi) {
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
    }
}
