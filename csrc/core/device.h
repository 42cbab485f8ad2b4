/* A device: a type (CPU, CUDA) and an index. */
#ifndef MT_DEVICE_H
#define MT_DEVICE_H

#include <stdbool.h>

typedef enum mt_device_type { MT_CPU = 0, MT_CUDA = 1, MT_NUM_DEVICE_TYPES } mt_device_type;

typedef struct mt_device {
    mt_device_type type;
    int index; /* 0 for the CPU */
} mt_device;

static inline bool
mt_device_eq(mt_device a, mt_device b)
{
    return a.type == b.type && a.index == b.index;
}

static const mt_device MT_DEVICE_CPU = {MT_CPU, 0};

#endif
