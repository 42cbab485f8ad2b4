/* NCCL for minitorch.distributed's backend="nccl" (nccl.c): the part of NCCL's ABI that minitorch
 * calls, and the backend's checked wrappers around it. No nccl.h is needed to build: the types
 * below are NCCL's own (nccl.h of NCCL 2.x, values included), and the library is found at run
 * time (dlopen of libnccl.so.2, from the nvidia-nccl-cu13 wheel or the system), so _C_cuda builds
 * and imports without NCCL; only init_process_group("nccl") needs it. The emulated build
 * (MT_CUDA_EMU) takes the same functions from cuda/emu/nccl.c instead, an emulation over shared
 * memory between the processes. */
#ifndef MT_CUDA_NCCL_H
#define MT_CUDA_NCCL_H

#include <stddef.h>

#include "cuda/cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- NCCL's ABI (nccl.h) ---- */
typedef struct ncclComm *ncclComm_t;
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
} ncclResult_t;

typedef enum {
    ncclSum = 0,
    ncclProd = 1,
    ncclMax = 2,
    ncclMin = 3,
    ncclAvg = 4,
    mt_nccl_num_ops = 5, /* not NCCL's: how many of these there are */
} ncclRedOp_t;

typedef enum {
    ncclInt8 = 0,
    ncclUint8 = 1,
    ncclInt32 = 2,
    ncclUint32 = 3,
    ncclInt64 = 4,
    ncclUint64 = 5,
    ncclFloat16 = 6,
    ncclFloat32 = 7,
    ncclFloat64 = 8,
    ncclBfloat16 = 9,
    mt_nccl_num_types = 10, /* not NCCL's: how many of these minitorch uses */
} ncclDataType_t;

/* The emulation's entry points have NCCL's names and signatures (cuda/emu/nccl.c). */
#ifdef MT_CUDA_EMU
ncclResult_t ncclGetVersion(int *version);
ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err);
const char *ncclGetErrorString(ncclResult_t result);
const char *ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream);
ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream);
ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
/* Not NCCL's: how long the emulation waits for its peers before it fails with ncclRemoteError
 * (a real NCCL waits forever; PyTorch's watchdog aborts it). */
void mt_emu_nccl_set_timeout(ncclComm_t comm, double seconds);
#endif

/* ---- the backend's wrappers: each fails through mt_fail(MT_ECUDA, "NCCL error ...") ---- */

/* The collectives (and the two halves of a point-to-point transfer) minitorch issues. */
typedef enum mt_nccl_kind {
    MT_NCCL_ALL_REDUCE = 0,
    MT_NCCL_BROADCAST,
    MT_NCCL_REDUCE,
    MT_NCCL_ALL_GATHER,
    MT_NCCL_REDUCE_SCATTER,
    MT_NCCL_SEND,
    MT_NCCL_RECV,
    MT_NCCL_NUM_KINDS,
} mt_nccl_kind;

/* Loads NCCL once (dlopen of path, else of libnccl.so.2 from the library path; the emulated
 * build has it built in): MT_OK and its version (NCCL_VERSION_CODE: 22703 for 2.27.3), or why it
 * cannot be loaded. A failed load is tried again at the next call (another path may work). */
mt_status mt_nccl_load(const char *path, int *version);
mt_status mt_nccl_unique_id(ncclUniqueId *id);
/* A communicator of nranks over device, this process being rank; timeout_s bounds the
 * emulation's waits (a real NCCL is aborted by the caller's watchdog instead). */
mt_status mt_nccl_comm_init(int device, int nranks, const ncclUniqueId *id, int rank,
                            double timeout_s, ncclComm_t *out);
/* abort: ncclCommAbort (a peer failed: do not wait for in-flight work), else ncclCommDestroy. */
mt_status mt_nccl_comm_free(ncclComm_t comm, bool abort);
/* The communicator's asynchronous error (ncclSuccess while none) and its words. */
mt_status mt_nccl_async_error(ncclComm_t comm, int *code, const char **words);

/* One call of kind on device's calling thread's current stream: send/recv pointers into device
 * memory, count elements of dtype (for all_gather, those sent; for reduce_scatter, those
 * received), op for the reductions, root for broadcast/reduce, the peer for send/recv. */
typedef struct mt_nccl_call {
    mt_nccl_kind kind;
    const void *send;
    void *recv;
    size_t count;
    int dtype; /* an ncclDataType_t */
    int op;    /* an ncclRedOp_t */
    int root;  /* or peer */
} mt_nccl_call;
mt_status mt_nccl_run(ncclComm_t comm, int device, const mt_nccl_call *call);
mt_status mt_nccl_group(bool start);

#ifdef __cplusplus
}
#endif

#endif
