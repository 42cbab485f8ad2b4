/* Point i of steps from start to end, as linspace computes it on every device (a host and
 * device function under nvcc): PyTorch's RangeFactoriesKernel counts the first half of the
 * points up from start and the second half down from end, so both ends are exact; float32
 * points are float32 sums, as PyTorch's. */
#ifndef MT_OPS_RANGE_POINT_H
#define MT_OPS_RANGE_POINT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/math.h" /* MT_HD */

static inline MT_HD double
mt_range_point(bool f32, double start, double end, int64_t i, int64_t steps)
{
    int64_t halfway = steps / 2;
    if (steps == 1) {
        return start;
    }
    if (f32) {
        float s = (float)start, e = (float)end, step = (e - s) / (float)(steps - 1);
        return i < halfway ? s + step * (float)i : e - step * (float)(steps - i - 1);
    }
    double step = (end - start) / (double)(steps - 1);
    return i < halfway ? start + step * (double)i : end - step * (double)(steps - i - 1);
}

#endif
