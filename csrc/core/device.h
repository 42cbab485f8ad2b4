/* A device: a type (CPU, CUDA, meta) and an index. The meta device (PyTorch's) holds tensors
 * with sizes, strides and a dtype but no data: its storages own no memory. */
#ifndef MT_DEVICE_H
#define MT_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum mt_device_type {
    MT_CPU = 0,
    MT_CUDA = 1,
    MT_META = 2,
    MT_NUM_DEVICE_TYPES
} mt_device_type;

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
static const mt_device MT_DEVICE_META = {MT_META, 0};

/* Writes d as PyTorch prints it in messages ("cpu", "cuda:0", "meta"); returns buf. */
char *mt_device_format(char *buf, size_t n, mt_device d);

#endif
