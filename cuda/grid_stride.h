// The grid-stride loop of the kernels that take one element (or one item) per thread: thread t
// of the grid takes i = t, t + the grid's thread count, ... while i < n, so any grid covers any
// n, with int64 indices. Used as a for statement: MT_CUDA_GRID_STRIDE(i, n) { ... }.
#ifndef MT_CUDA_GRID_STRIDE_H
#define MT_CUDA_GRID_STRIDE_H

#define MT_CUDA_GRID_STRIDE(i, n)                                             \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (int64_t)gridDim.x * blockDim.x)

#endif
