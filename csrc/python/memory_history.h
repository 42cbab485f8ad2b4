/* The CUDA allocators' memory history as Python sees it (python/memory_history.c): the
 * functions behind minitorch.cuda.memory._record_memory_history and _snapshot, and a context's
 * frames as PyTorch's snapshot lists them. */
#ifndef MT_PY_MEMORY_HISTORY_H
#define MT_PY_MEMORY_HISTORY_H

#include "python/pyminitorch.h"

extern PyMethodDef mt_py_memory_history_functions[];

/* A context (alloc/caching.h) as [{"filename", "line", "name"}, ...], innermost frame first;
 * [] for NULL. */
PyObject *mt_py_context_frames(const char *context);

#endif
