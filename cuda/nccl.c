/* NCCL, loaded at run time, and the checked calls of minitorch.distributed's "nccl" backend
 * (cuda/nccl.h). Nothing here decides what to communicate: the Python backend
 * (minitorch/distributed/_nccl.py) picks the buffers, types and reductions; this file finds the
 * library, checks each call's status into mt_fail, and runs each call on the calling thread's
 * current stream of the tensor's device, as a Library:: span (NCCL's kernels are recorded under
 * the call, by CUPTI on a GPU, by the emulated CUPTI on the emulated device). */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "cuda/nccl.h"
#include "cuda/profile.h"

typedef ncclResult_t (*coll_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                ncclComm_t, cudaStream_t);
typedef ncclResult_t (*rooted_fn)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int,
                                  ncclComm_t, cudaStream_t);

/* The functions minitorch calls, from the library (or the emulation). */
static struct {
    ncclResult_t (*get_version)(int *);
    ncclResult_t (*get_unique_id)(ncclUniqueId *);
    ncclResult_t (*comm_init_rank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*comm_destroy)(ncclComm_t);
    ncclResult_t (*comm_abort)(ncclComm_t);
    ncclResult_t (*comm_get_async_error)(ncclComm_t, ncclResult_t *);
    const char *(*get_error_string)(ncclResult_t);
    const char *(*get_last_error)(ncclComm_t); /* NCCL >= 2.13; may be missing */
    ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                               ncclComm_t, cudaStream_t);
    ncclResult_t (*broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
                              cudaStream_t);
    ncclResult_t (*reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int,
                           ncclComm_t, cudaStream_t);
    ncclResult_t (*all_gather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                               cudaStream_t);
    ncclResult_t (*reduce_scatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                   ncclComm_t, cudaStream_t);
    ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*group_start)(void);
    ncclResult_t (*group_end)(void);
} nccl;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static bool loaded;
static int loaded_version;

static mt_status
check_at(ncclResult_t r, ncclComm_t comm, const char *call)
{
    if (r == ncclSuccess) {
        return MT_OK;
    }
    const char *last = comm != NULL && nccl.get_last_error != NULL ? nccl.get_last_error(comm)
                                                                   : NULL;
    return mt_fail(MT_ECUDA, "NCCL error in %s: %s%s%s (ncclResult_t %d)", call,
                   nccl.get_error_string != NULL ? nccl.get_error_string(r) : "unknown",
                   last != NULL && last[0] ? ", " : "", last != NULL ? last : "", (int)r);
}

#ifdef MT_CUDA_EMU
static mt_status
fill_table(const char *path)
{
    (void)path;
    nccl.get_version = ncclGetVersion;
    nccl.get_unique_id = ncclGetUniqueId;
    nccl.comm_init_rank = ncclCommInitRank;
    nccl.comm_destroy = ncclCommDestroy;
    nccl.comm_abort = ncclCommAbort;
    nccl.comm_get_async_error = ncclCommGetAsyncError;
    nccl.get_error_string = ncclGetErrorString;
    nccl.get_last_error = ncclGetLastError;
    nccl.all_reduce = ncclAllReduce;
    nccl.broadcast = ncclBroadcast;
    nccl.reduce = ncclReduce;
    nccl.all_gather = ncclAllGather;
    nccl.reduce_scatter = ncclReduceScatter;
    nccl.send = ncclSend;
    nccl.recv = ncclRecv;
    nccl.group_start = ncclGroupStart;
    nccl.group_end = ncclGroupEnd;
    return MT_OK;
}
#else
/* dlsym into *slot; false when the library lacks the symbol. */
static bool
find(void *lib, const char *symbol, void *slot)
{
    void *f = dlsym(lib, symbol);
    memcpy(slot, &f, sizeof(f)); /* a data pointer into a function pointer, as POSIX allows */
    return f != NULL;
}

static mt_status
fill_table(const char *path)
{
    const char *name = path != NULL && path[0] ? path : "libnccl.so.2";
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *why = dlerror();
        return mt_fail(MT_ERUNTIME,
                       "NCCL could not be loaded (%s): pip install nvidia-nccl-cu13, or put "
                       "libnccl.so.2 on the library path",
                       why != NULL ? why : name);
    }
    const char *missing = NULL;
    /* each required symbol; the first missing one is named */
    struct {
        const char *symbol;
        void *slot;
    } need[] = {
        {"ncclGetVersion", &nccl.get_version},
        {"ncclGetUniqueId", &nccl.get_unique_id},
        {"ncclCommInitRank", &nccl.comm_init_rank},
        {"ncclCommDestroy", &nccl.comm_destroy},
        {"ncclCommAbort", &nccl.comm_abort},
        {"ncclCommGetAsyncError", &nccl.comm_get_async_error},
        {"ncclGetErrorString", &nccl.get_error_string},
        {"ncclAllReduce", &nccl.all_reduce},
        {"ncclBroadcast", &nccl.broadcast},
        {"ncclReduce", &nccl.reduce},
        {"ncclAllGather", &nccl.all_gather},
        {"ncclReduceScatter", &nccl.reduce_scatter},
        {"ncclSend", &nccl.send},
        {"ncclRecv", &nccl.recv},
        {"ncclGroupStart", &nccl.group_start},
        {"ncclGroupEnd", &nccl.group_end},
    };
    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]) && missing == NULL; i++) {
        if (!find(lib, need[i].symbol, need[i].slot)) {
            missing = need[i].symbol;
        }
    }
    if (missing != NULL) {
        dlclose(lib);
        memset(&nccl, 0, sizeof(nccl));
        return mt_fail(MT_ERUNTIME, "NCCL at %s has no %s (NCCL 2.12 or newer is needed)", name,
                       missing);
    }
    find(lib, "ncclGetLastError", &nccl.get_last_error); /* optional */
    return MT_OK; /* the library stays loaded for the process's life, as cuBLAS does */
}
#endif

mt_status
mt_nccl_load(const char *path, int *version)
{
    mt_status st = MT_OK;
    pthread_mutex_lock(&load_lock);
    if (!loaded) {
        st = fill_table(path);
        if (st == MT_OK) {
            st = check_at(nccl.get_version(&loaded_version), NULL, "ncclGetVersion");
        }
        loaded = st == MT_OK;
    }
    pthread_mutex_unlock(&load_lock);
    if (st == MT_OK && version != NULL) {
        *version = loaded_version;
    }
    return st;
}

static mt_status
need_loaded(void)
{
    return loaded ? MT_OK : mt_nccl_load(NULL, NULL);
}

mt_status
mt_nccl_unique_id(ncclUniqueId *id)
{
    mt_status st = need_loaded();
    return st ? st : check_at(nccl.get_unique_id(id), NULL, "ncclGetUniqueId");
}

mt_status
mt_nccl_comm_init(int device, int nranks, const ncclUniqueId *id, int rank, double timeout_s,
                  ncclComm_t *out)
{
    mt_status st = need_loaded();
    if (st == MT_OK) {
        st = mt_cuda_use_device((mt_device){MT_CUDA, device});
    }
#ifdef MT_CUDA_EMU
    mt_emu_nccl_set_timeout(NULL, timeout_s); /* for the communicator made next, and its join */
#else
    (void)timeout_s;
#endif
    if (st == MT_OK) {
        st = check_at(nccl.comm_init_rank(out, nranks, *id, rank), NULL, "ncclCommInitRank");
    }
    return st;
}

mt_status
mt_nccl_comm_free(ncclComm_t comm, bool abort)
{
    mt_status st = need_loaded();
    if (st) {
        return st;
    }
    return abort ? check_at(nccl.comm_abort(comm), NULL, "ncclCommAbort")
                 : check_at(nccl.comm_destroy(comm), NULL, "ncclCommDestroy");
}

mt_status
mt_nccl_async_error(ncclComm_t comm, int *code, const char **words)
{
    ncclResult_t err = ncclSuccess;
    mt_status st = need_loaded();
    if (st == MT_OK) {
        st = check_at(nccl.comm_get_async_error(comm, &err), comm, "ncclCommGetAsyncError");
    }
    *code = (int)err;
    *words = err == ncclSuccess || st ? "" : nccl.get_error_string(err);
    return st;
}

/* Each kind's call and the name its kernels go by (literals, for the profiler's records). */
static const char *const call_names[MT_NCCL_NUM_KINDS] = {
    "ncclAllReduce",     "ncclBroadcast", "ncclReduce", "ncclAllGather",
    "ncclReduceScatter", "ncclSend",      "ncclRecv",
};
static const char *const kernel_names[MT_NCCL_NUM_KINDS] = {
    "ncclDevKernel_AllReduce", "ncclDevKernel_Broadcast",     "ncclDevKernel_Reduce",
    "ncclDevKernel_AllGather", "ncclDevKernel_ReduceScatter", "ncclDevKernel_SendRecv",
    "ncclDevKernel_SendRecv",
};

static ncclResult_t
issue(ncclComm_t comm, const mt_nccl_call *c, cudaStream_t s)
{
    ncclDataType_t t = (ncclDataType_t)c->dtype;
    ncclRedOp_t op = (ncclRedOp_t)c->op;
    switch (c->kind) {
    case MT_NCCL_ALL_REDUCE:
        return nccl.all_reduce(c->send, c->recv, c->count, t, op, comm, s);
    case MT_NCCL_BROADCAST:
        return nccl.broadcast(c->send, c->recv, c->count, t, c->root, comm, s);
    case MT_NCCL_REDUCE:
        return nccl.reduce(c->send, c->recv, c->count, t, op, c->root, comm, s);
    case MT_NCCL_ALL_GATHER:
        return nccl.all_gather(c->send, c->recv, c->count, t, comm, s);
    case MT_NCCL_REDUCE_SCATTER:
        return nccl.reduce_scatter(c->send, c->recv, c->count, t, op, comm, s);
    case MT_NCCL_SEND:
        return nccl.send(c->send, c->count, t, c->root, comm, s);
    case MT_NCCL_RECV:
        return nccl.recv(c->recv, c->count, t, c->root, comm, s);
    default:
        return ncclInvalidArgument;
    }
}

mt_status
mt_nccl_run(ncclComm_t comm, int device, const mt_nccl_call *call)
{
    if ((unsigned)call->kind >= MT_NCCL_NUM_KINDS) {
        return mt_fail(MT_EVALUE, "NCCL: no collective of kind %d", (int)call->kind);
    }
    if ((unsigned)call->dtype >= mt_nccl_num_types || (unsigned)call->op >= mt_nccl_num_ops) {
        return mt_fail(MT_EVALUE, "NCCL: data type %d or reduction %d is not NCCL's", call->dtype,
                       call->op);
    }
    mt_status st = need_loaded();
    if (st == MT_OK) {
        st = mt_cuda_use_device((mt_device){MT_CUDA, device});
    }
    if (st) {
        return st;
    }
    mt_cuda_span span = mt_cuda_span_begin(call_names[call->kind], MT_LAYER_LIBRARY, "NCCL",
                                           MT_GPU_KERNEL, kernel_names[call->kind]);
    ncclResult_t r = issue(comm, call, mt_cuda_current_stream(device));
    mt_cuda_span_end(&span);
    return check_at(r, comm, call_names[call->kind]);
}

mt_status
mt_nccl_group(bool start)
{
    mt_status st = need_loaded();
    if (st) {
        return st;
    }
    return start ? check_at(nccl.group_start(), NULL, "ncclGroupStart")
                 : check_at(nccl.group_end(), NULL, "ncclGroupEnd");
}
