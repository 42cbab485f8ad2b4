// Emulated cub::DeviceScan (the emulated CUDA device, cuda/emu/): InclusiveSum as CUB documents
// it, run on the host over the emulated device memory, with CUB's temporary-storage protocol and
// the emulation's strict checks (cub/emu_common.cuh).
#ifndef MT_EMU_CUB_DEVICE_SCAN_CUH
#define MT_EMU_CUB_DEVICE_SCAN_CUH

#include <iterator>
#include <type_traits>
#include <utility>

#include "cub/emu_common.cuh"

namespace cub
{

struct DeviceScan {
    // out[i] = in[0] + ... + in[i] for i < num_items. d_in == d_out scans in place; any other
    // overlap of the two ranges is refused (CUB leaves it undefined). The sum is accumulated in
    // the type of in + in (bool adds as int), integers wrapping as on the GPU, and each partial sum
    // is converted to the output's type.
    template <typename InputIteratorT, typename OutputIteratorT, typename NumItemsT>
    static cudaError_t InclusiveSum(void *d_temp_storage, size_t &temp_storage_bytes,
                                    InputIteratorT d_in, OutputIteratorT d_out, NumItemsT num_items,
                                    cudaStream_t stream = 0)
    {
        static const char algo[] = "cub::DeviceScan::InclusiveSum";
        const int64_t n = (int64_t)num_items;
        // CUB's decoupled look-back keeps a status word pair per tile (of about 4K items) plus
        // a warp's worth of padding.
        const size_t needed = emu::round_up((size_t)((n > 0 ? (n + 4095) / 4096 : 1) + 32) * 16) +
                              emu::ALIGN;
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
        if (err == cudaSuccess) {
            err = emu::check_range(algo, "d_in", d_in, n, dev);
        }
        if (err == cudaSuccess) {
            err = emu::check_range(algo, "d_out", d_out, n, dev);
        }
        if (err != cudaSuccess) {
            return err;
        }
        if (emu::overlap(d_in, n, d_out, n) && !emu::same(d_in, d_out)) {
            return emu::fail(cudaErrorInvalidValue, algo,
                             "d_out overlaps d_in without being equal to it");
        }
        const uint64_t t0 = mt_emu_now_ns();
        scan(d_in, d_out, n);
        mt_emu_kernel_ran("emu_cub_inclusive_sum", dev, stream, t0, mt_emu_now_ns());
        return cudaSuccess;
    }

  private:
    template <typename T> static T add(T a, T b)
    {
        if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
            typedef typename std::make_unsigned<T>::type U;
            return (T)(U)((U)a + (U)b); // two's complement wrap, as the GPU's adders
        } else {
            return a + b;
        }
    }

    template <typename InputIteratorT, typename OutputIteratorT>
    static void scan(InputIteratorT in, OutputIteratorT out, int64_t n)
    {
        typedef typename std::iterator_traits<InputIteratorT>::value_type InputT;
        typedef typename std::decay<decltype(std::declval<InputT>() + std::declval<InputT>())>::type
            AccumT;
        AccumT acc{};
        // Each input is read before its output is written, so d_in == d_out works.
        for (int64_t i = 0; i < n; i++) {
            const AccumT v = (AccumT)in[i];
            acc = i == 0 ? v : add<AccumT>(acc, v);
            out[i] = acc;
        }
    }
};

} // namespace cub

#endif
