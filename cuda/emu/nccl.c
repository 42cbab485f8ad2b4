/* The emulated NCCL (the emulated CUDA device, cuda/emu/): exactly the NCCL calls cuda/nccl.c
 * makes, between processes on one machine, over POSIX shared memory, so that the "nccl" backend
 * of minitorch.distributed runs in CI without GPUs. Not a model of NCCL's algorithms: results
 * are those of NCCL's definitions (a reduction adds the ranks' values in rank order, the same on
 * every rank), and what the calls check is what NCCL checks (device pointers, types, ranks).
 *
 * ncclGetUniqueId names a shared-memory segment (/dev/shm/mt-nccl-emu-<random>); the ranks of
 * ncclCommInitRank open it, and once all have joined, rank 0 unlinks its name. The segment holds
 * a header (pids, sequence numbers), one slot of SLOT_BYTES per rank and one mailbox per ordered
 * pair of ranks. A collective goes through in steps of at most a slot per rank: each rank writes
 * its part into its slot and publishes the step's number (arrive), waits for every rank's, reads
 * what it needs from the slots, publishes done, and waits for every rank's done before its slot
 * is written again. A send fills the pair's mailbox a part at a time, the recv empties it; the
 * calls of a group (ncclGroupStart/End) are run at ncclGroupEnd, the sends and recvs making
 * progress together (a part each in turn), so that two ranks may exchange large messages.
 *
 * Each call runs on the calling thread once the work queued on its stream before it has run
 * (mt_emu_stream_drain), inside a device-work window (the guard), and is reported as a kernel
 * (ncclDevKernel_<collective>) to the emulated CUPTI. A wait fails with ncclRemoteError when a
 * peer process exited, another rank failed (the segment's abort flag), or the communicator's
 * timeout passed (mt_emu_nccl_set_timeout), where a real NCCL would wait for ever. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuda/emu/emu.h"
#include "cuda/emu/nccl_math.h"
#include "cuda/nccl.h"

#define MAX_RANKS 64              /* ranks of one communicator: the header's arrays */
#define SLOT_BYTES (1u << 20)     /* a rank's part of one collective step */
#define MAILBOX_BYTES (256u << 10) /* a part of a send in flight, per ordered pair of ranks */
#define ID_MAGIC "mt-nccl-emu"    /* the unique id's first bytes */
#define DEFAULT_TIMEOUT_S 1800.0  /* PyTorch's default process-group timeout */

typedef struct mailbox {
    atomic_uint_fast64_t posted, taken; /* parts written and read so far */
    atomic_uint_fast64_t bytes;         /* the size of the part in it */
} mailbox;

typedef struct header {
    atomic_int nranks; /* set by the first to join; the others must agree */
    atomic_int joined;
    atomic_int aborted; /* a rank failed: every wait fails */
    atomic_int pid[MAX_RANKS];
    atomic_uint_fast64_t arrive[MAX_RANKS], done[MAX_RANKS];
} header;

struct ncclComm {
    int rank, nranks, device;
    char name[NCCL_UNIQUE_ID_BYTES + 2]; /* "/" and the unique id's text */
    size_t bytes;
    unsigned char *base; /* the mapping: header, slots, mailboxes */
    uint64_t seq;        /* this rank's collective steps so far */
    double timeout_s;
    ncclResult_t async_error;
    char last_error[256];
};

static _Thread_local char last_global_error[256];

/* ---- the segment's layout ---- */

static size_t
segment_bytes(int n)
{
    return sizeof(header) + (size_t)n * SLOT_BYTES +
           (size_t)n * (size_t)n * (sizeof(mailbox) + MAILBOX_BYTES);
}

static header *
hdr(ncclComm_t c)
{
    return (header *)c->base;
}

static unsigned char *
slot(ncclComm_t c, int r)
{
    return c->base + sizeof(header) + (size_t)r * SLOT_BYTES;
}

static mailbox *
box(ncclComm_t c, int src, int dst)
{
    unsigned char *p = c->base + sizeof(header) + (size_t)c->nranks * SLOT_BYTES;
    return (mailbox *)(p + ((size_t)src * c->nranks + dst) * (sizeof(mailbox) + MAILBOX_BYTES));
}

static unsigned char *
box_data(mailbox *m)
{
    return (unsigned char *)(m + 1);
}

/* ---- errors ---- */

static ncclResult_t
fail(ncclComm_t c, ncclResult_t r, const char *fmt, ...)
{
    char *out = c != NULL ? c->last_error : last_global_error;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, sizeof(last_global_error), fmt, ap);
    va_end(ap);
    if (c != NULL && r == ncclRemoteError) {
        c->async_error = r;
        atomic_store(&hdr(c)->aborted, 1); /* the others stop waiting for this rank */
    }
    return r;
}

/* ---- waiting ---- */

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One wait's state: a yield for the first polls (the ranks may share cores), then sleeps
 * growing to 1 ms; the peers' liveness is checked every 256 polls. */
typedef struct waiter {
    double deadline;
    unsigned polls;
    long sleep_ns;
} waiter;

static waiter
wait_start(ncclComm_t c)
{
    waiter w = {now_s() + c->timeout_s, 0, 1000};
    return w;
}

/* Whether process pid has ended: gone, or a zombie its parent has not reaped yet. */
static bool
process_ended(int pid)
{
    if (kill(pid, 0) != 0) {
        return errno == ESRCH;
    }
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return false;
    }
    size_t got = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[got] = 0;
    const char *paren = strrchr(buf, ')'); /* the state follows the command name's ") " */
    return paren != NULL && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* ncclSuccess to poll again, else why the wait failed (waiting for what). */
static ncclResult_t
wait_poll(ncclComm_t c, waiter *w, const char *what)
{
    header *h = hdr(c);
    if (atomic_load(&h->aborted)) {
        return fail(c, ncclRemoteError,
                    "another rank of the communicator failed while rank %d "
                    "waited for %s",
                    c->rank, what);
    }
    if (++w->polls % 256 == 0) {
        for (int q = 0; q < c->nranks; q++) {
            int pid = atomic_load(&h->pid[q]);
            if (q != c->rank && pid > 0 && process_ended(pid)) {
                return fail(c, ncclRemoteError,
                            "rank %d (process %d) exited while rank %d waited "
                            "for %s",
                            q, pid, c->rank, what);
            }
        }
        if (now_s() > w->deadline) {
            return fail(c, ncclRemoteError, "rank %d waited more than %g s for %s", c->rank,
                        c->timeout_s, what);
        }
    }
    if (w->polls < 200) {
        sched_yield();
    } else {
        struct timespec ts = {0, w->sleep_ns};
        nanosleep(&ts, NULL);
        if (w->sleep_ns < 1000000) {
            w->sleep_ns *= 2;
        }
    }
    return ncclSuccess;
}

/* Until every rank's counter (arrive or done) reached seq. */
static ncclResult_t
wait_all(ncclComm_t c, atomic_uint_fast64_t *counters, uint64_t seq, const char *what)
{
    waiter w = wait_start(c);
    for (int q = 0; q < c->nranks; q++) {
        while (atomic_load_explicit(&counters[q], memory_order_acquire) < seq) {
            ncclResult_t r = wait_poll(c, &w, what);
            if (r != ncclSuccess) {
                return r;
            }
        }
    }
    return ncclSuccess;
}

/* ---- the communicator ---- */

static _Thread_local double next_timeout_s = DEFAULT_TIMEOUT_S;

void
mt_emu_nccl_set_timeout(ncclComm_t comm, double seconds)
{
    if (comm != NULL) {
        comm->timeout_s = seconds;
    } else {
        next_timeout_s = seconds;
    }
}

ncclResult_t
ncclGetVersion(int *version)
{
    *version = 22703; /* the NCCL whose calls this emulates: 2.27.3 */
    return ncclSuccess;
}

ncclResult_t
ncclGetUniqueId(ncclUniqueId *id)
{
    unsigned char r[16];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        return fail(NULL, ncclSystemError, "getrandom failed: %s", strerror(errno));
    }
    memset(id, 0, sizeof(*id));
    int k = snprintf(id->internal, sizeof(id->internal), "%s-", ID_MAGIC);
    for (size_t i = 0; i < sizeof(r); i++) {
        k += snprintf(id->internal + k, sizeof(id->internal) - (size_t)k, "%02x", r[i]);
    }
    return ncclSuccess;
}

static void
comm_free(ncclComm_t c)
{
    if (c->base != NULL) {
        munmap(c->base, c->bytes);
    }
    free(c);
}

/* Every rank joined (rank 0 then unlinks the segment's name: the mappings keep it). */
static ncclResult_t
join(ncclComm_t c)
{
    header *h = hdr(c);
    int expect = 0;
    if (!atomic_compare_exchange_strong(&h->nranks, &expect, c->nranks) && expect != c->nranks) {
        return fail(NULL, ncclInvalidArgument,
                    "ncclCommInitRank: nranks %d, but rank 0's "
                    "communicator has %d",
                    c->nranks, expect);
    }
    int none = 0;
    if (!atomic_compare_exchange_strong(&h->pid[c->rank], &none, (int)getpid())) {
        return fail(NULL, ncclInvalidArgument, "ncclCommInitRank: rank %d joined twice", c->rank);
    }
    atomic_fetch_add(&h->joined, 1);
    waiter w = wait_start(c);
    while (atomic_load(&h->joined) < c->nranks) {
        ncclResult_t r = wait_poll(c, &w, "the other ranks to join the communicator");
        if (r != ncclSuccess) {
            snprintf(last_global_error, sizeof(last_global_error), "%s", c->last_error);
            return r;
        }
    }
    return ncclSuccess;
}

ncclResult_t
ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    if (nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks) {
        return fail(NULL, ncclInvalidArgument,
                    "ncclCommInitRank: rank %d of %d (the emulation "
                    "takes 1 to %d ranks)",
                    rank, nranks, MAX_RANKS);
    }
    if (strncmp(id.internal, ID_MAGIC "-", sizeof(ID_MAGIC)) != 0 ||
        memchr(id.internal, 0, sizeof(id.internal)) == NULL) {
        return fail(NULL, ncclInvalidArgument,
                    "ncclCommInitRank: not a unique id of ncclGetUniqueId");
    }
    ncclComm_t c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return fail(NULL, ncclSystemError, "ncclCommInitRank: out of memory");
    }
    c->rank = rank;
    c->nranks = nranks;
    c->device = mt_emu_current_device();
    c->timeout_s = next_timeout_s;
    c->bytes = segment_bytes(nranks);
    snprintf(c->name, sizeof(c->name), "/%s", id.internal);
    ncclResult_t r = ncclSuccess;
    int fd = -1;
    struct stat st;
    fd = shm_open(c->name, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || fstat(fd, &st) != 0 ||
        ((size_t)st.st_size < c->bytes && ftruncate(fd, (off_t)c->bytes) != 0)) {
        r = fail(NULL, ncclSystemError, "ncclCommInitRank: shared memory %s: %s", c->name,
                 strerror(errno));
        goto out_free;
    }
    void *p = mmap(NULL, c->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        r = fail(NULL, ncclSystemError, "ncclCommInitRank: mmap of %zu bytes: %s", c->bytes,
                 strerror(errno));
        goto out_free;
    }
    c->base = p;
    r = join(c);
    if (rank == 0 || r != ncclSuccess) {
        shm_unlink(c->name); /* all joined (or never will): the name is no longer needed */
    }
    if (r != ncclSuccess) {
        goto out_free;
    }
    close(fd);
    *comm = c;
    return ncclSuccess;
out_free:
    if (fd >= 0) {
        close(fd);
    }
    comm_free(c);
    return r;
}

ncclResult_t
ncclCommDestroy(ncclComm_t comm)
{
    if (comm != NULL) {
        comm_free(comm);
    }
    return ncclSuccess;
}

ncclResult_t
ncclCommAbort(ncclComm_t comm)
{
    if (comm != NULL) {
        atomic_store(&hdr(comm)->aborted, 1); /* the peers' waits fail instead of hanging */
        comm_free(comm);
    }
    return ncclSuccess;
}

ncclResult_t
ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err)
{
    *err = comm->async_error;
    return ncclSuccess;
}

const char *
ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess:
        return "no error";
    case ncclUnhandledCudaError:
        return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
        return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
        return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
        return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
        return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
        return "remote process exited or there was a network error";
    case ncclInProgress:
        return "NCCL operation in progress";
    default:
        return "unknown result code";
    }
}

const char *
ncclGetLastError(ncclComm_t comm)
{
    return comm != NULL && comm->last_error[0] ? comm->last_error : last_global_error;
}

/* ---- the calls ---- */

typedef struct op {
    mt_nccl_kind kind;
    ncclComm_t comm;
    const unsigned char *send;
    unsigned char *recv;
    size_t count;
    ncclDataType_t type;
    ncclRedOp_t red;
    int root; /* or peer */
    cudaStream_t stream;
    size_t moved; /* bytes of a send or recv so far */
} op;

/* the calls of the calling thread's open group (ncclGroupStart), run at ncclGroupEnd */
static _Thread_local int group_depth;
static _Thread_local op *queued;
static _Thread_local size_t n_queued, cap_queued;

static const char *const kernel_names[MT_NCCL_NUM_KINDS] = {
    "ncclDevKernel_AllReduce", "ncclDevKernel_Broadcast",     "ncclDevKernel_Reduce",
    "ncclDevKernel_AllGather", "ncclDevKernel_ReduceScatter", "ncclDevKernel_SendRecv",
    "ncclDevKernel_SendRecv",
};
static const char *const call_names[MT_NCCL_NUM_KINDS] = {
    "ncclAllReduce",     "ncclBroadcast", "ncclReduce", "ncclAllGather",
    "ncclReduceScatter", "ncclSend",      "ncclRecv",
};

/* What NCCL checks of a call before it queues it. */
static ncclResult_t
check_call(const op *o)
{
    ncclComm_t c = o->comm;
    const char *fn = call_names[o->kind];
    if (c == NULL) {
        return fail(NULL, ncclInvalidArgument, "%s: comm is NULL", fn);
    }
    size_t es = type_size(o->type);
    if (es == 0 || (unsigned)o->red >= mt_nccl_num_ops) {
        return fail(c, ncclInvalidArgument, "%s: invalid type %d or operation %d", fn, (int)o->type,
                    (int)o->red);
    }
    bool rooted = o->kind == MT_NCCL_BROADCAST || o->kind == MT_NCCL_REDUCE ||
                  o->kind == MT_NCCL_SEND || o->kind == MT_NCCL_RECV;
    if (rooted && (o->root < 0 || o->root >= c->nranks)) {
        return fail(c, ncclInvalidArgument, "%s: root or peer %d is not a rank of %d", fn, o->root,
                    c->nranks);
    }
    int sdev = -1;
    if (mt_emu_stream_device(o->stream, &sdev) != cudaSuccess || sdev != c->device) {
        return fail(c, ncclInvalidArgument, "%s: stream %p is not a live stream of device %d", fn,
                    (void *)o->stream, c->device);
    }
    /* the extents the call reads and writes, in device memory of the communicator's device */
    size_t n = o->count * es, in = n, out = n;
    if (o->kind == MT_NCCL_ALL_GATHER) {
        out = n * (size_t)c->nranks;
    } else if (o->kind == MT_NCCL_REDUCE_SCATTER) {
        in = n * (size_t)c->nranks;
    }
    bool reads = o->kind != MT_NCCL_RECV && !(o->kind == MT_NCCL_BROADCAST && c->rank != o->root);
    bool writes = o->kind != MT_NCCL_SEND && !(o->kind == MT_NCCL_REDUCE && c->rank != o->root);
    int dev = -1;
    if (n > 0 && reads && (!mt_emu_device_range(o->send, in, &dev) || dev != c->device)) {
        return fail(c, ncclInvalidArgument,
                    "%s: sendbuff %p (%zu bytes) is not memory of device %d", fn,
                    (const void *)o->send, in, c->device);
    }
    if (n > 0 && writes && (!mt_emu_device_range(o->recv, out, &dev) || dev != c->device)) {
        return fail(c, ncclInvalidArgument,
                    "%s: recvbuff %p (%zu bytes) is not memory of device %d", fn, (void *)o->recv,
                    out, c->device);
    }
    return ncclSuccess;
}

/* The start of a collective step: once every rank read the previous step's slots, this rank's
 * slot is free; the step's number into *seq. */
static ncclResult_t
step_begin(ncclComm_t c, uint64_t *seq, const char *what)
{
    *seq = ++c->seq;
    return wait_all(c, hdr(c)->done, *seq - 1, what);
}

/* This rank's slot is written: wait until every rank's is. */
static ncclResult_t
step_publish(ncclComm_t c, uint64_t seq, const char *what)
{
    atomic_store_explicit(&hdr(c)->arrive[c->rank], seq, memory_order_release);
    return wait_all(c, hdr(c)->arrive, seq, what);
}

static void
step_end(ncclComm_t c, uint64_t seq)
{
    atomic_store_explicit(&hdr(c)->done[c->rank], seq, memory_order_release);
}

/* A collective, a step (a slot's worth of each rank's part) at a time. */
static ncclResult_t
run_collective(const op *o)
{
    ncclComm_t c = o->comm;
    const int me = c->rank, n = c->nranks;
    const size_t es = type_size(o->type);
    const char *what = call_names[o->kind];
    const bool scatter = o->kind == MT_NCCL_REDUCE_SCATTER;
    /* elements of the count per step: reduce_scatter puts n blocks of them in a slot */
    const size_t per = SLOT_BYTES / (es * (scatter ? (size_t)n : 1));
    for (size_t off = 0; off < o->count; off += per) {
        size_t m = o->count - off < per ? o->count - off : per, b = m * es;
        uint64_t seq;
        ncclResult_t r = step_begin(c, &seq, what);
        if (r != ncclSuccess) {
            return r;
        }
        unsigned char *mine = slot(c, me);
        if (scatter) {
            for (int k = 0; k < n; k++) {
                memcpy(mine + (size_t)k * b, o->send + ((size_t)k * o->count + off) * es, b);
            }
        } else if (o->kind != MT_NCCL_BROADCAST || me == o->root) {
            memcpy(mine, o->send + off * es, b);
        }
        r = step_publish(c, seq, what);
        if (r != ncclSuccess) {
            return r;
        }
        switch (o->kind) {
        case MT_NCCL_BROADCAST:
            memcpy(o->recv + off * es, slot(c, o->root), b);
            break;
        case MT_NCCL_ALL_GATHER:
            for (int q = 0; q < n; q++) {
                memcpy(o->recv + ((size_t)q * o->count + off) * es, slot(c, q), b);
            }
            break;
        default: /* the reductions: rank 0's part, then each other rank's in order */
            if (o->kind == MT_NCCL_REDUCE && me != o->root) {
                break;
            }
            unsigned char *dst = o->recv + off * es;
            size_t at = scatter ? (size_t)me * b : 0;
            memcpy(dst, slot(c, 0) + at, b);
            for (int q = 1; q < n; q++) {
                reduce_into(dst, slot(c, q) + at, m, o->type, o->red);
            }
            if (o->red == ncclAvg) {
                divide(dst, m, o->type, n);
            }
            break;
        }
        step_end(c, seq);
    }
    return ncclSuccess;
}

/* One part of a send or recv if its mailbox allows: *moved says whether it did. */
static ncclResult_t
p2p_part(op *o, bool *moved)
{
    ncclComm_t c = o->comm;
    size_t total = o->count * type_size(o->type);
    bool is_send = o->kind == MT_NCCL_SEND;
    mailbox *m = is_send ? box(c, c->rank, o->root) : box(c, o->root, c->rank);
    uint64_t posted = atomic_load_explicit(&m->posted, memory_order_acquire);
    uint64_t taken = atomic_load_explicit(&m->taken, memory_order_acquire);
    *moved = false;
    if (is_send && posted == taken) {
        size_t b = total - o->moved < MAILBOX_BYTES ? total - o->moved : MAILBOX_BYTES;
        memcpy(box_data(m), o->send + o->moved, b);
        atomic_store(&m->bytes, b);
        atomic_store_explicit(&m->posted, posted + 1, memory_order_release);
        o->moved += b;
        *moved = true;
    } else if (!is_send && posted > taken) {
        size_t b = atomic_load(&m->bytes);
        if (b > total - o->moved) {
            return fail(c, ncclInvalidUsage,
                        "ncclRecv from rank %d: a message of more than the "
                        "%zu bytes expected",
                        o->root, total);
        }
        memcpy(o->recv + o->moved, box_data(m), b);
        atomic_store_explicit(&m->taken, taken + 1, memory_order_release);
        o->moved += b;
        *moved = true;
    }
    return ncclSuccess;
}

/* The sends and recvs of a group, progressing together; those to one peer in one direction in
 * their order. */
static ncclResult_t
run_p2p(op *ops, size_t n_ops)
{
    waiter w = {0, 0, 1000};
    bool started = false;
    for (;;) {
        bool all_done = true, progress = false;
        for (size_t i = 0; i < n_ops; i++) {
            op *o = &ops[i];
            if (o->kind != MT_NCCL_SEND && o->kind != MT_NCCL_RECV) {
                continue;
            }
            if (o->moved == o->count * type_size(o->type)) {
                continue; /* done (an empty message at once: NCCL sends nothing) */
            }
            all_done = false;
            bool blocked = false; /* an earlier one to the same peer, same way, is not done */
            for (size_t j = 0; j < i && !blocked; j++) {
                blocked = ops[j].kind == o->kind && ops[j].comm == o->comm &&
                          ops[j].root == o->root &&
                          ops[j].moved != ops[j].count * type_size(ops[j].type);
            }
            if (blocked) {
                continue;
            }
            bool moved = false;
            ncclResult_t r = p2p_part(o, &moved);
            if (r != ncclSuccess) {
                return r;
            }
            progress |= moved;
        }
        if (all_done) {
            return ncclSuccess;
        }
        if (!progress) {
            if (!started) {
                w = wait_start(ops[0].comm);
                started = true;
            }
            ncclResult_t r = wait_poll(ops[0].comm, &w, "a send or recv's peer");
            if (r != ncclSuccess) {
                return r;
            }
        }
    }
}

/* The calls of a group (or one call outside any): each after its stream's earlier work, the
 * sends and recvs together, then the collectives in their order. */
static ncclResult_t
run_ops(op *ops, size_t n_ops)
{
    for (size_t i = 0; i < n_ops; i++) {
        mt_emu_stream_drain(ops[i].stream);
    }
    MT_EMU_DEVICE_WORK_SCOPE(); /* the buffers are device memory */
    uint64_t t0 = mt_emu_now_ns();
    ncclResult_t r = run_p2p(ops, n_ops);
    for (size_t i = 0; i < n_ops && r == ncclSuccess; i++) {
        if (ops[i].kind != MT_NCCL_SEND && ops[i].kind != MT_NCCL_RECV) {
            r = run_collective(&ops[i]);
        }
    }
    uint64_t t1 = mt_emu_now_ns();
    for (size_t i = 0; i < n_ops && r == ncclSuccess; i++) {
        mt_emu_kernel_ran(kernel_names[ops[i].kind], ops[i].comm->device, ops[i].stream, t0, t1);
    }
    return r;
}

static ncclResult_t
submit(op o)
{
    ncclResult_t r = check_call(&o);
    if (r != ncclSuccess) {
        return r;
    }
    if (group_depth == 0) {
        return run_ops(&o, 1);
    }
    if (n_queued == cap_queued) {
        size_t cap = cap_queued ? 2 * cap_queued : 16;
        op *grown = realloc(queued, cap * sizeof(op));
        if (grown == NULL) {
            return fail(o.comm, ncclSystemError, "ncclGroupStart: out of memory for the group");
        }
        queued = grown;
        cap_queued = cap;
    }
    queued[n_queued++] = o;
    return ncclSuccess;
}

ncclResult_t
ncclGroupStart(void)
{
    group_depth++;
    return ncclSuccess;
}

ncclResult_t
ncclGroupEnd(void)
{
    if (group_depth == 0) {
        return fail(NULL, ncclInvalidUsage, "ncclGroupEnd: not in a group call");
    }
    if (--group_depth > 0) {
        return ncclSuccess;
    }
    ncclResult_t r = n_queued > 0 ? run_ops(queued, n_queued) : ncclSuccess;
    free(queued); /* a thread's queue lives for its group only: nothing is left at its exit */
    queued = NULL;
    n_queued = cap_queued = 0;
    return r;
}

ncclResult_t
ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
              ncclRedOp_t op_, ncclComm_t comm, cudaStream_t stream)
{
    return submit(
        (op){MT_NCCL_ALL_REDUCE, comm, sendbuff, recvbuff, count, datatype, op_, 0, stream, 0});
}

ncclResult_t
ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
              ncclComm_t comm, cudaStream_t stream)
{
    return submit((op){MT_NCCL_BROADCAST, comm, sendbuff, recvbuff, count, datatype, ncclSum, root,
                       stream, 0});
}

ncclResult_t
ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
           ncclRedOp_t op_, int root, ncclComm_t comm, cudaStream_t stream)
{
    return submit(
        (op){MT_NCCL_REDUCE, comm, sendbuff, recvbuff, count, datatype, op_, root, stream, 0});
}

ncclResult_t
ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
              ncclComm_t comm, cudaStream_t stream)
{
    return submit((op){MT_NCCL_ALL_GATHER, comm, sendbuff, recvbuff, sendcount, datatype, ncclSum,
                       0, stream, 0});
}

ncclResult_t
ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
                  ncclRedOp_t op_, ncclComm_t comm, cudaStream_t stream)
{
    return submit((op){MT_NCCL_REDUCE_SCATTER, comm, sendbuff, recvbuff, recvcount, datatype, op_,
                       0, stream, 0});
}

ncclResult_t
ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
         cudaStream_t stream)
{
    return submit(
        (op){MT_NCCL_SEND, comm, sendbuff, NULL, count, datatype, ncclSum, peer, stream, 0});
}

ncclResult_t
ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
         cudaStream_t stream)
{
    return submit(
        (op){MT_NCCL_RECV, comm, NULL, recvbuff, count, datatype, ncclSum, peer, stream, 0});
}
