// Emulated cub::DeviceRadixSort (the emulated CUDA device, cuda/emu/): SortPairs as CUB documents
// it, run on the host over the emulated device memory, with CUB's temporary-storage protocol and
// the emulation's strict checks (cub/emu_common.cuh).
#ifndef MT_EMU_CUB_DEVICE_RADIX_SORT_CUH
#define MT_EMU_CUB_DEVICE_RADIX_SORT_CUH

#include <type_traits>

#include "cub/emu_common.cuh"

namespace cub
{

struct DeviceRadixSort {
    // Sorts num_items pairs ascending by the key bits [begin_bit, end_bit) read as an unsigned
    // integer, stably (a radix sort is), into (d_keys_out, d_values_out), the whole keys written.
    // The outputs must not overlap any input or each other (CUB: "shall not overlap in any way").
    // Only unsigned integer keys are emulated (the backend maps its values to such keys itself;
    // CUB's bit twiddling of signed and floating keys is not needed), so anything else fails to
    // compile rather than sort differently from CUB.
    template <typename KeyT, typename ValueT, typename NumItemsT>
    static cudaError_t SortPairs(void *d_temp_storage, size_t &temp_storage_bytes,
                                 const KeyT *d_keys_in, KeyT *d_keys_out, const ValueT *d_values_in,
                                 ValueT *d_values_out, NumItemsT num_items, int begin_bit = 0,
                                 int end_bit = (int)sizeof(KeyT) * 8, cudaStream_t stream = 0)
    {
        static_assert(std::is_integral<KeyT>::value && std::is_unsigned<KeyT>::value &&
                          !std::is_same<KeyT, bool>::value,
                      "the emulated DeviceRadixSort sorts unsigned integer keys only");
        static const char algo[] = "cub::DeviceRadixSort::SortPairs";
        const int64_t n = (int64_t)num_items;
        const size_t items = n > 0 ? (size_t)n : 0;
        // The alternate key and value buffers of the ping-pong passes, and the digit histograms
        // (256 bins of 4 bytes per 8-bit pass).
        const size_t needed = emu::round_up(items * sizeof(KeyT)) +
                              emu::round_up(items * sizeof(ValueT)) +
                              emu::round_up(sizeof(KeyT) * 256 * 4) + emu::ALIGN;
        if (d_temp_storage == nullptr) {
            temp_storage_bytes = needed;
            return cudaSuccess;
        }
        emu::device_work window; // check_temp scribbles over the scratch, then the algorithm runs
        int dev = 0;
        cudaError_t err = emu::begin_call(algo, stream, d_temp_storage, temp_storage_bytes, needed,
                                          &dev);
        if (err == cudaSuccess && n < 0) {
            err = emu::fail(cudaErrorInvalidValue, algo, "num_items is negative");
        }
        if (err == cudaSuccess &&
            (begin_bit < 0 || end_bit < begin_bit || end_bit > (int)sizeof(KeyT) * 8)) {
            err = emu::fail(cudaErrorInvalidValue, algo,
                            "the bit range [begin_bit, end_bit) is not within the key");
        }
        if (err == cudaSuccess) {
            err = emu::check_pairs(algo, d_keys_in, d_keys_out, d_values_in, d_values_out, n, dev);
        }
        if (err != cudaSuccess) {
            return err;
        }
        const uint64_t t0 = mt_emu_now_ns();
        const int width = end_bit - begin_bit;
        const KeyT mask = width == (int)sizeof(KeyT) * 8 ? (KeyT) ~(KeyT)0
                                                         : (KeyT)(((KeyT)1 << width) - 1);
        emu::stable_sort_pairs(d_keys_in, d_keys_out, d_values_in, d_values_out, 0, n, [&](KeyT k) {
            return width == 0 ? (KeyT)0 : (KeyT)((k >> begin_bit) & mask);
        });
        mt_emu_kernel_ran("emu_cub_radix_sort_pairs", dev, stream, t0, mt_emu_now_ns());
        return cudaSuccess;
    }
};

} // namespace cub

#endif
