// What the emulated CUB algorithms (cub/device/*.cuh) share: CUB's temporary-storage protocol
// and the strict checks a GPU would enforce (every device range inside a live cudaMalloc block
// of the stream's device, the stream valid and of the current device). Header-only C++17 on the
// host; an emulation for finding bugs in the backend, not a fast path.
#ifndef MT_EMU_CUB_COMMON_CUH
#define MT_EMU_CUB_COMMON_CUH

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "cuda_runtime_api.h"
#include "cuda/emu/emu.h"

namespace cub
{
namespace emu
{

// CUB carves its scratch into 256-byte aligned pieces and asks for the slack to align the block.
constexpr size_t ALIGN = 256;

inline size_t
round_up(size_t bytes)
{
    return (bytes + ALIGN - 1) / ALIGN * ALIGN;
}

// The scope of an algorithm's device work: device memory is open to it (cuda/emu/guard.cc).
struct device_work {
    device_work()
    {
        mt_emu_device_work_begin();
    }
    ~device_work()
    {
        mt_emu_device_work_end();
    }
    device_work(const device_work &) = delete;
    device_work &operator=(const device_work &) = delete;
};

// One failing call: the one-line diagnostic (it means a backend bug) and CUDA's code.
inline cudaError_t
fail(cudaError_t err, const char *algo, const char *what)
{
    fprintf(stderr, "minitorch emulated CUDA: %s: %s (%s)\n", algo, what, cudaGetErrorName(err));
    return err;
}

// The stream's device, which must be the calling thread's current one (a kernel launched into
// another device's stream fails so on a GPU).
inline cudaError_t
stream_device(const char *algo, cudaStream_t stream, int *device)
{
    cudaError_t err = mt_emu_stream_device(stream, device);
    if (err != cudaSuccess) {
        return fail(err, algo, "the stream is not a live stream");
    }
    if (*device != mt_emu_current_device()) {
        return fail(cudaErrorInvalidResourceHandle, algo,
                    "the stream belongs to another device than the current one");
    }
    mt_emu_stream_drain(stream); // the asynchronous mode: the stream's earlier work first
    return cudaSuccess;
}

// A pointer argument touching count elements: inside one live block of the device. Iterators that
// are not pointers (counting or transform iterators) touch no memory of their own: not checked.
template <typename T>
inline cudaError_t
check_range(const char *algo, const char *name, const T *p, int64_t count, int device)
{
    if (count <= 0) {
        return cudaSuccess;
    }
    int owner = -1;
    const size_t bytes = (size_t)count * sizeof(T);
    if (!mt_emu_device_range((const void *)p, bytes, &owner) || owner != device) {
        char what[200];
        snprintf(what, sizeof what, "%s = %p (%zu bytes) is not inside device memory of device %d",
                 name, (const void *)p, bytes, device);
        return fail(cudaErrorIllegalAddress, algo, what);
    }
    return cudaSuccess;
}

template <typename It>
inline typename std::enable_if<!std::is_pointer<It>::value, cudaError_t>::type
check_range(const char *, const char *, It, int64_t, int)
{
    return cudaSuccess;
}

// Whether two pointer ranges share a byte (CUB forbids outputs overlapping other ranges).
template <typename A, typename B>
inline bool
overlap(const A *a, int64_t na, const B *b, int64_t nb)
{
    if (na <= 0 || nb <= 0) {
        return false;
    }
    const uintptr_t a0 = (uintptr_t)a, a1 = a0 + (uintptr_t)na * sizeof(A);
    const uintptr_t b0 = (uintptr_t)b, b1 = b0 + (uintptr_t)nb * sizeof(B);
    return a0 < b1 && b0 < a1;
}

template <typename A, typename B>
inline typename std::enable_if<!std::is_pointer<A>::value || !std::is_pointer<B>::value, bool>::type
overlap(A, int64_t, B, int64_t)
{
    return false;
}

// The key-value sorts' operands: the four ranges of n items on the device, and neither output
// overlapping another range (CUB's pair sorts are not in place).
template <typename K, typename V>
inline cudaError_t
check_pairs(const char *algo, const K *keys_in, K *keys_out, const V *values_in, V *values_out,
            int64_t n, int device)
{
    cudaError_t err = check_range(algo, "d_keys_in", keys_in, n, device);
    if (err == cudaSuccess) {
        err = check_range(algo, "d_keys_out", keys_out, n, device);
    }
    if (err == cudaSuccess) {
        err = check_range(algo, "d_values_in", values_in, n, device);
    }
    if (err == cudaSuccess) {
        err = check_range(algo, "d_values_out", values_out, n, device);
    }
    if (err == cudaSuccess &&
        (overlap(keys_out, n, keys_in, n) || overlap(keys_out, n, values_in, n) ||
         overlap(keys_out, n, values_out, n) || overlap(values_out, n, keys_in, n) ||
         overlap(values_out, n, values_in, n))) {
        err = fail(cudaErrorInvalidValue, algo, "an output overlaps another range");
    }
    return err;
}

// Whether two iterators are the same pointer (an in-place call).
template <typename A, typename B>
inline bool
same(A a, B b)
{
    if constexpr (std::is_pointer<A>::value && std::is_pointer<B>::value) {
        return (const void *)a == (const void *)b;
    } else {
        return false;
    }
}

// The second half of CUB's protocol: d_temp_storage must be device memory of the stream's device
// holding temp_storage_bytes, at least what the query said (CUB returns cudaErrorInvalidValue when
// it is smaller). Its contents are scribbled over, as CUB's passes do, so a backend that reuses
// the scratch for something live sees the damage.
inline cudaError_t
check_temp(const char *algo, void *temp, size_t temp_bytes, size_t needed, int device)
{
    if (temp_bytes < needed) {
        char what[160];
        snprintf(what, sizeof what, "temp_storage_bytes %zu is less than the %zu it needs",
                 temp_bytes, needed);
        return fail(cudaErrorInvalidValue, algo, what);
    }
    cudaError_t err = check_range(algo, "d_temp_storage", (const unsigned char *)temp,
                                  (int64_t)temp_bytes, device);
    if (err == cudaSuccess) {
        memset(temp, 0xA5, temp_bytes);
    }
    return err;
}

// Items [first, first + count) of (keys_in, values_in) stably sorted by order_key(key) into the
// same items of (keys_out, values_out), whole keys written. Inputs are read completely before an
// output is written.
template <typename KeyT, typename ValueT, typename OrderKey>
inline void
stable_sort_pairs(const KeyT *keys_in, KeyT *keys_out, const ValueT *values_in, ValueT *values_out,
                  int64_t first, int64_t count, OrderKey order_key)
{
    std::vector<int64_t> idx((size_t)count);
    for (int64_t i = 0; i < count; i++) {
        idx[(size_t)i] = first + i;
    }
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        return order_key(keys_in[a]) < order_key(keys_in[b]);
    });
    std::vector<KeyT> k((size_t)count);
    std::vector<ValueT> v((size_t)count);
    for (int64_t i = 0; i < count; i++) {
        k[(size_t)i] = keys_in[idx[(size_t)i]];
        v[(size_t)i] = values_in[idx[(size_t)i]];
    }
    for (int64_t i = 0; i < count; i++) {
        keys_out[first + i] = k[(size_t)i];
        values_out[first + i] = v[(size_t)i];
    }
}

// The start of every call with storage: the stream's device into *device, then the scratch
// checked (and scribbled over) as check_temp says.
inline cudaError_t
begin_call(const char *algo, cudaStream_t stream, void *temp, size_t temp_bytes, size_t needed,
           int *device)
{
    cudaError_t err = stream_device(algo, stream, device);
    return err == cudaSuccess ? check_temp(algo, temp, temp_bytes, needed, *device) : err;
}

} // namespace emu
} // namespace cub

#endif
