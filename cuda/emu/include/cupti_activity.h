/* The emulated CUPTI activity API (the emulated CUDA device, cuda/emu/; implemented by
 * cuda/emu/cupti.c): the subset of CUPTI's cupti_activity.h that cuda/profile.c uses, with CUPTI's
 * names, enum values and record layouts (CUDA 13.0's CUPTI: kernels as CUpti_ActivityKernel10,
 * copies as CUpti_ActivityMemcpy6, 8-byte packed as CUPTI packs them). Records exist for the
 * kinds the emulation produces: kernels, memory copies and external correlations. */
#ifndef MT_EMU_CUPTI_ACTIVITY_H
#define MT_EMU_CUPTI_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUPTIAPI

typedef struct CUctx_st *CUcontext; /* cuda.h's, which this header stands in for */

typedef enum {
    CUPTI_SUCCESS = 0,
    CUPTI_ERROR_INVALID_PARAMETER = 1,
    CUPTI_ERROR_INVALID_DEVICE = 2,
    CUPTI_ERROR_INVALID_CONTEXT = 3,
    CUPTI_ERROR_INVALID_OPERATION = 7,
    CUPTI_ERROR_OUT_OF_MEMORY = 8,
    CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
    CUPTI_ERROR_NOT_READY = 13,
    CUPTI_ERROR_NOT_COMPATIBLE = 14,
    CUPTI_ERROR_NOT_INITIALIZED = 15,
    CUPTI_ERROR_QUEUE_EMPTY = 18,
    CUPTI_ERROR_INVALID_KIND = 21,
    CUPTI_ERROR_UNKNOWN = 999
} CUptiResult;

typedef enum {
    CUPTI_ACTIVITY_KIND_INVALID = 0,
    CUPTI_ACTIVITY_KIND_MEMCPY = 1,
    CUPTI_ACTIVITY_KIND_MEMSET = 2,
    CUPTI_ACTIVITY_KIND_KERNEL = 3,
    CUPTI_ACTIVITY_KIND_DRIVER = 4,
    CUPTI_ACTIVITY_KIND_RUNTIME = 5,
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION = 39,
    CUPTI_ACTIVITY_KIND_FORCE_INT = 0x7fffffff
} CUpti_ActivityKind;

typedef enum {
    CUPTI_EXTERNAL_CORRELATION_KIND_INVALID = 0,
    CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN = 1,
    CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC = 2,
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 = 3,
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1 = 4,
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 = 5,
    CUPTI_EXTERNAL_CORRELATION_KIND_SIZE,
    CUPTI_EXTERNAL_CORRELATION_KIND_FORCE_INT = 0x7fffffff
} CUpti_ExternalCorrelationKind;

typedef enum {
    CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN = 0,
    CUPTI_ACTIVITY_MEMCPY_KIND_HTOD = 1,
    CUPTI_ACTIVITY_MEMCPY_KIND_DTOH = 2,
    CUPTI_ACTIVITY_MEMCPY_KIND_HTOA = 3,
    CUPTI_ACTIVITY_MEMCPY_KIND_ATOH = 4,
    CUPTI_ACTIVITY_MEMCPY_KIND_ATOA = 5,
    CUPTI_ACTIVITY_MEMCPY_KIND_ATOD = 6,
    CUPTI_ACTIVITY_MEMCPY_KIND_DTOA = 7,
    CUPTI_ACTIVITY_MEMCPY_KIND_DTOD = 8,
    CUPTI_ACTIVITY_MEMCPY_KIND_HTOH = 9,
    CUPTI_ACTIVITY_MEMCPY_KIND_PTOP = 10,
    CUPTI_ACTIVITY_MEMCPY_KIND_FORCE_INT = 0x7fffffff
} CUpti_ActivityMemcpyKind;

typedef enum {
    CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN = 0,
    CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE = 1,
    CUPTI_ACTIVITY_MEMORY_KIND_PINNED = 2,
    CUPTI_ACTIVITY_MEMORY_KIND_DEVICE = 3,
    CUPTI_ACTIVITY_MEMORY_KIND_FORCE_INT = 0x7fffffff
} CUpti_ActivityMemoryKind;

typedef enum {
    CUPTI_ACTIVITY_FLAG_NONE = 0,
    CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1 << 0,
    CUPTI_ACTIVITY_FLAG_FORCE_INT = 0x7fffffff
} CUpti_ActivityFlag;

typedef enum {
    CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_UNKNOWN = 0,
    CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED = 1,
    CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_OFF = 2,
    CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_ON = 3,
    CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_FORCE_INT = 0x7fffffff
} CUpti_ActivityPartitionedGlobalCacheConfig;

typedef enum {
    CUPTI_FUNC_SHMEM_LIMIT_DEFAULT = 0x00,
    CUPTI_FUNC_SHMEM_LIMIT_OPTIN = 0x01,
    CUPTI_FUNC_SHMEM_LIMIT_FORCE_INT = 0x7fffffff
} CUpti_FuncShmemLimitConfig;

typedef enum {
    CUPTI_CHANNEL_TYPE_INVALID = 0,
    CUPTI_CHANNEL_TYPE_COMPUTE = 1,
    CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY = 2,
    CUPTI_CHANNEL_TYPE_FORCE_INT = 0x7fffffff
} CUpti_ChannelType;

#define CUPTI_TIMESTAMP_UNKNOWN ((uint64_t)0)

#define CUPTI_PACKED __attribute__((__packed__)) __attribute__((aligned(8)))

/* The common head of every record: its kind says which record it is. */
typedef struct CUPTI_PACKED {
    CUpti_ActivityKind kind;
} CUpti_Activity;

/* CUPTI_ACTIVITY_KIND_KERNEL and CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL. */
typedef struct CUPTI_PACKED {
    CUpti_ActivityKind kind;
    union {
        uint8_t both;
        struct {
            uint8_t requested : 4;
            uint8_t executed : 4;
        } config;
    } cacheConfig;
    uint8_t sharedMemoryConfig;
    uint16_t registersPerThread;
    CUpti_ActivityPartitionedGlobalCacheConfig partitionedGlobalCacheRequested;
    CUpti_ActivityPartitionedGlobalCacheConfig partitionedGlobalCacheExecuted;
    uint64_t start;
    uint64_t end;
    uint64_t completed;
    uint32_t deviceId;
    uint32_t contextId;
    uint32_t streamId;
    int32_t gridX, gridY, gridZ;
    int32_t blockX, blockY, blockZ;
    int32_t staticSharedMemory;
    int32_t dynamicSharedMemory;
    uint32_t localMemoryPerThread;
    uint32_t localMemoryTotal;
    uint32_t correlationId;
    int64_t gridId;
    const char *name;
    void *reserved0;
    uint64_t queued;
    uint64_t submitted;
    uint8_t launchType;
    uint8_t isSharedMemoryCarveoutRequested;
    uint8_t sharedMemoryCarveoutRequested;
    uint8_t padding;
    uint32_t sharedMemoryExecuted;
    uint64_t graphNodeId;
    CUpti_FuncShmemLimitConfig shmemLimitConfig;
    uint32_t graphId;
    void *pAccessPolicyWindow; /* CUaccessPolicyWindow * in CUPTI; never set here */
    uint32_t channelID;
    CUpti_ChannelType channelType;
    uint32_t clusterX, clusterY, clusterZ;
    uint32_t clusterSchedulingPolicy;
    uint64_t localMemoryTotal_v2;
    uint32_t maxPotentialClusterSize;
    uint32_t maxActiveClusters;
    uint8_t isDeviceLaunched;
    uint8_t padding3[7];
} CUpti_ActivityKernel10;

/* CUPTI_ACTIVITY_KIND_MEMCPY. */
typedef struct CUPTI_PACKED {
    CUpti_ActivityKind kind;
    uint8_t copyKind; /* a CUpti_ActivityMemcpyKind */
    uint8_t srcKind;  /* a CUpti_ActivityMemoryKind */
    uint8_t dstKind;
    uint8_t flags;
    uint64_t bytes;
    uint64_t start;
    uint64_t end;
    uint32_t deviceId;
    uint32_t contextId;
    uint32_t streamId;
    uint32_t correlationId;
    uint32_t runtimeCorrelationId;
    uint32_t pad;
    void *reserved0;
    uint64_t graphNodeId;
    uint32_t graphId;
    uint32_t channelID;
    CUpti_ChannelType channelType;
    uint32_t pad2;
    uint64_t copyCount;
} CUpti_ActivityMemcpy6;

/* CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: CUPTI's correlationId of an API call (and of the
 * kernels and copies it started) and the external id the calling thread had pushed on top of the
 * externalKind stack when it made the call. */
typedef struct CUPTI_PACKED {
    CUpti_ActivityKind kind;
    CUpti_ExternalCorrelationKind externalKind;
    uint64_t externalId;
    uint32_t correlationId;
    uint32_t reserved;
} CUpti_ActivityExternalCorrelation;

typedef void(CUPTIAPI *CUpti_BuffersCallbackRequestFunc)(uint8_t **buffer, size_t *size,
                                                         size_t *maxNumRecords);
typedef void(CUPTIAPI *CUpti_BuffersCallbackCompleteFunc)(CUcontext context, uint32_t streamId,
                                                          uint8_t *buffer, size_t size,
                                                          size_t validSize);

CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                               CUpti_BuffersCallbackCompleteFunc funcBufferCompleted);
CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind);
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind);
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag);
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
                                                CUpti_Activity **record);
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                       size_t *dropped);
CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                            uint64_t id);
CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                           uint64_t *lastId);
CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp);

#ifdef __cplusplus
}
#endif

#endif
