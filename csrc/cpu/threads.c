/* One thread pool for the CPU: minitorch's OpenMP loops and OpenBLAS's parallel sections.
 *
 * OpenBLAS (scipy-openblas32, built with its own pthreads server) would otherwise keep a second
 * pool: after a gemm its idle workers spin while ours work, and after our loops ours spin while
 * the gemm runs, so a second core made mixed work slower. OpenBLAS lets the caller run its
 * parallel sections (openblas_set_threads_callback_function): here they run as one OpenMP
 * region of our pool. The thread count is one number for both (torch.set_num_threads): our loops
 * read it in mt_parallel_parts and OpenBLAS splits its work into that many jobs.
 *
 * OpenBLAS's jobs wait on one another (a gemm's threads share packed panels), so all of them
 * must run at once: the region asks for exactly numjobs threads. Inside one of our own regions
 * a nested region gets one thread, so there a plain gemm's jobs would wait on each other
 * forever: a gemm called there goes as a batch of one (blas.c's mt_cpu_gemm_raw), one job, which
 * runs on the calling thread; the thread count the rest of the program sees stays. */
#include <omp.h>
#include <stdatomic.h>
#include <stddef.h>

#include <cblas.h>

#include "cpu/iter.h"

static atomic_int num_threads = 1;
static atomic_int num_interop_threads = 0; /* 0: not set yet, the default */

/* OpenBLAS's job i of numjobs is dojob(i, jobs + i * size, data); every job on its own thread. */
static void
run_blas_jobs(int sync, openblas_dojob_callback dojob, int numjobs, size_t size, void *jobs,
              int data)
{
    (void)sync; /* OpenBLAS always waits for its jobs */
    if (numjobs == 1) { /* one job (a gemm of a batch called inside our region): here */
        dojob(0, jobs, data);
        return;
    }
#pragma omp parallel for num_threads(numjobs) schedule(static, 1)
    for (int i = 0; i < numjobs; i++) {
        dojob(i, (char *)jobs + (size_t)i * size, data);
    }
}

void
mt_cpu_threads_init(void)
{
    scipy_openblas_set_threads_callback_function(run_blas_jobs);
    mt_set_num_threads(omp_get_max_threads()); /* OMP_NUM_THREADS, or the cores */
}

void
mt_set_num_threads(int n)
{
    atomic_store(&num_threads, n);
    omp_set_num_threads(n);
    scipy_openblas_set_num_threads(n);
}

int
mt_get_num_threads(void)
{
    return atomic_load(&num_threads);
}

/* OpenBLAS's LAPACK routines (getrf's parallel panel factorisation, under inv and solve) run on
 * its own thread server, not through the callback above, so at two threads its workers and our
 * OpenMP pool's spun against each other on two cores: inv of a 256 x 256 float32 matrix took
 * 15.8 ms at two threads against 0.64 ms at one (PyTorch 0.73), 1024 x 1024 87 ms against 32
 * (PyTorch 32 at two threads). So a LAPACK call runs with OpenBLAS at one thread; a batch of
 * matrices is split among the threads by the kernels themselves. Global, as OpenBLAS's count is:
 * two Python threads in LAPACK at once could leave it at one until the next call restores it. */
int
mt_cpu_lapack_begin(void)
{
    int n = atomic_load(&num_threads);
    if (n > 1) {
        scipy_openblas_set_num_threads(1);
    }
    return n;
}

void
mt_cpu_lapack_end(int threads)
{
    if (threads > 1) {
        scipy_openblas_set_num_threads(threads);
    }
}

bool
mt_set_num_interop_threads(int n)
{
    int unset = 0;
    return atomic_compare_exchange_strong(&num_interop_threads, &unset, n);
}

int
mt_get_num_interop_threads(void)
{
    int n = atomic_load(&num_interop_threads);
    return n > 0 ? n : omp_get_num_procs();
}
