/* cudaDeviceGetAttribute of the emulated runtime: the attributes the backend asks for (the SM
 * count that sizes a grid, the warp size), read from the device's properties (runtime.cc). */
#include "runtime.h"

extern "C" cudaError_t
cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)
{
    if (value == NULL) {
        return mt_emu_error(cudaErrorInvalidValue);
    }
    cudaDeviceProp prop;
    const cudaError_t err = cudaGetDeviceProperties(&prop, device);
    if (err != cudaSuccess) {
        return err;
    }
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
        *value = prop.maxThreadsPerBlock;
        return cudaSuccess;
    case cudaDevAttrMaxGridDimX:
        *value = prop.maxGridSize[0];
        return cudaSuccess;
    case cudaDevAttrWarpSize:
        *value = prop.warpSize;
        return cudaSuccess;
    case cudaDevAttrMultiProcessorCount:
        *value = prop.multiProcessorCount;
        return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor:
        *value = prop.major;
        return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
        *value = prop.minor;
        return cudaSuccess;
    }
    return mt_emu_error(cudaErrorInvalidValue);
}
