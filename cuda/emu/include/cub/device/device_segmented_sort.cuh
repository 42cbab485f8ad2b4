// Emulated cub::DeviceSegmentedSort (the emulated CUDA device, cuda/emu/): StableSortPairs as CUB
// documents it, run on the host over the emulated device memory, with CUB's temporary-storage
// protocol and the emulation's strict checks (cub/emu_common.cuh).
#ifndef MT_EMU_CUB_DEVICE_SEGMENTED_SORT_CUH
#define MT_EMU_CUB_DEVICE_SEGMENTED_SORT_CUH

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "cub/emu_common.cuh"

namespace cub
{

struct DeviceSegmentedSort {
    // Sorts each segment i, items [d_begin_offsets[i], d_end_offsets[i]) (empty when end <=
    // begin), ascending and stably, into the same items of (d_keys_out, d_values_out). Segments
    // must not overlap (CUB sorts "non-overlapping sequences") and must lie in [0, num_items) (a
    // GPU would read outside the arrays); outputs must not overlap any input or each other.
    // Items in no segment are left unspecified by CUB: here they are poisoned (0xEE bytes), so a
    // backend that reads them sees garbage. Only unsigned integer keys are emulated.
    template <typename KeyT, typename ValueT, typename BeginOffsetIteratorT,
              typename EndOffsetIteratorT>
    static cudaError_t
    StableSortPairs(void *d_temp_storage, size_t &temp_storage_bytes, const KeyT *d_keys_in,
                    KeyT *d_keys_out, const ValueT *d_values_in, ValueT *d_values_out,
                    int64_t num_items, int64_t num_segments, BeginOffsetIteratorT d_begin_offsets,
                    EndOffsetIteratorT d_end_offsets, cudaStream_t stream = 0)
    {
        static_assert(std::is_integral<KeyT>::value && std::is_unsigned<KeyT>::value &&
                          !std::is_same<KeyT, bool>::value,
                      "the emulated DeviceSegmentedSort sorts unsigned integer keys only");
        static const char algo[] = "cub::DeviceSegmentedSort::StableSortPairs";
        const int64_t n = num_items, segs = num_segments;
        const size_t items = n > 0 ? (size_t)n : 0, nseg = segs > 0 ? (size_t)segs : 0;
        // The alternate key and value buffers, and the segments' partition into size groups.
        const size_t needed = emu::round_up(items * sizeof(KeyT)) +
                              emu::round_up(items * sizeof(ValueT)) +
                              2 * emu::round_up(nseg * sizeof(int32_t) + 1) + emu::ALIGN;
        if (d_temp_storage == nullptr) {
            temp_storage_bytes = needed;
            return cudaSuccess;
        }
        emu::device_work window; // check_temp scribbles over the scratch, then the algorithm runs
        int dev = 0;
        cudaError_t err = emu::begin_call(algo, stream, d_temp_storage, temp_storage_bytes, needed,
                                          &dev);
        if (err == cudaSuccess && (n < 0 || segs < 0)) {
            err = emu::fail(cudaErrorInvalidValue, algo, "num_items or num_segments is negative");
        }
        if (err == cudaSuccess) {
            err = emu::check_pairs(algo, d_keys_in, d_keys_out, d_values_in, d_values_out, n, dev);
        }
        if (err == cudaSuccess) {
            err = emu::check_range(algo, "d_begin_offsets", d_begin_offsets, segs, dev);
        }
        if (err == cudaSuccess) {
            err = emu::check_range(algo, "d_end_offsets", d_end_offsets, segs, dev);
        }
        if (err != cudaSuccess) {
            return err;
        }
        if (emu::overlap(d_keys_out, n, d_begin_offsets, segs) ||
            emu::overlap(d_keys_out, n, d_end_offsets, segs) ||
            emu::overlap(d_values_out, n, d_begin_offsets, segs) ||
            emu::overlap(d_values_out, n, d_end_offsets, segs)) {
            return emu::fail(cudaErrorInvalidValue, algo, "an output overlaps another range");
        }
        std::vector<std::pair<int64_t, int64_t>> seg;
        for (int64_t i = 0; i < segs; i++) {
            const int64_t b = (int64_t)d_begin_offsets[i], e = (int64_t)d_end_offsets[i];
            if (e <= b) {
                continue;
            }
            if (b < 0 || e > n) {
                char what[160];
                snprintf(what, sizeof what, "segment %lld [%lld, %lld) is outside [0, %lld)",
                         (long long)i, (long long)b, (long long)e, (long long)n);
                return emu::fail(cudaErrorIllegalAddress, algo, what);
            }
            seg.emplace_back(b, e);
        }
        std::sort(seg.begin(), seg.end());
        for (size_t i = 1; i < seg.size(); i++) {
            if (seg[i].first < seg[i - 1].second) {
                return emu::fail(cudaErrorInvalidValue, algo, "two segments overlap");
            }
        }
        const uint64_t t0 = mt_emu_now_ns();
        int64_t covered = 0;
        for (const auto &s : seg) {
            poison(d_keys_out, d_values_out, covered, s.first);
            emu::stable_sort_pairs(d_keys_in, d_keys_out, d_values_in, d_values_out, s.first,
                                   s.second - s.first, [](KeyT k) { return k; });
            covered = s.second;
        }
        poison(d_keys_out, d_values_out, covered, n);
        mt_emu_kernel_ran("emu_cub_segmented_sort_pairs", dev, stream, t0, mt_emu_now_ns());
        return cudaSuccess;
    }

  private:
    template <typename KeyT, typename ValueT>
    static void poison(KeyT *keys, ValueT *values, int64_t from, int64_t to)
    {
        if (to > from) {
            memset((void *)(keys + from), 0xEE, (size_t)(to - from) * sizeof(KeyT));
            memset((void *)(values + from), 0xEE, (size_t)(to - from) * sizeof(ValueT));
        }
    }
};

} // namespace cub

#endif
