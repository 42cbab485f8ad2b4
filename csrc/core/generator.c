/* The generators of generator.h: creation, seeds, PyTorch's state layouts, the defaults. No
 * distribution lives here: the kernels (cpu/random.c, cuda/ops_random.c) turn the raw draws
 * into values. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/generator.h"

/* ---- the mt19937 engine (PyTorch's at::mt19937) ---- */

#define MT_M 397

static void
init_genrand(mt_generator *g, uint64_t seed)
{
    g->state[0] = (uint32_t)seed;
    for (uint32_t j = 1; j < MT_MT19937_N; j++) {
        g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + j;
    }
    g->left = 1;
    g->next = 0;
}

static uint32_t
twist(uint32_t u, uint32_t v)
{
    uint32_t mixed = (u & 0x80000000u) | (v & 0x7fffffffu);
    return (mixed >> 1) ^ (v & 1u ? 0x9908b0dfu : 0u);
}

void
mt_generator_twist(mt_generator *g)
{
    uint32_t *s = g->state;
    int k = 0;
    for (; k < MT_MT19937_N - MT_M; k++) {
        s[k] = s[k + MT_M] ^ twist(s[k], s[k + 1]);
    }
    for (; k < MT_MT19937_N - 1; k++) {
        s[k] = s[k + MT_M - MT_MT19937_N] ^ twist(s[k], s[k + 1]);
    }
    s[k] = s[k + MT_M - MT_MT19937_N] ^ twist(s[k], s[0]);
    g->left = MT_MT19937_N;
    g->next = 0;
}

/* ---- seeds ---- */

uint64_t
mt_nondeterministic_seed(void)
{
    uint64_t s = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    bool got = fd >= 0 && read(fd, &s, sizeof(s)) == (ssize_t)sizeof(s);
    if (fd >= 0) {
        close(fd);
    }
    if (!got) { /* no entropy device: the clock, the process and an address */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 32 ^
            (uint64_t)(uintptr_t)&s;
    }
    return s;
}

/* Under g's lock. */
static void
seed_locked(mt_generator *g, uint64_t seed)
{
    g->seed = seed;
    g->has_normal_f32 = g->has_normal_f64 = false;
    g->offset = 0;
    if (g->device.type == MT_CPU) {
        init_genrand(g, seed);
    }
}

void
mt_generator_manual_seed(mt_generator *g, uint64_t seed)
{
    mt_generator_lock(g);
    seed_locked(g, seed);
    mt_generator_unlock(g);
}

uint64_t
mt_generator_seed(mt_generator *g)
{
    uint64_t s = mt_nondeterministic_seed();
    if (g->device.type == MT_CUDA) {
        s &= 0x1FFFFFFFFFFFFFull; /* PyTorch's CUDA seeds: 53 bits, exact as a double */
    }
    mt_generator_manual_seed(g, s);
    return s;
}

uint64_t
mt_generator_initial_seed(mt_generator *g)
{
    mt_generator_lock(g);
    uint64_t s = g->seed;
    mt_generator_unlock(g);
    return s;
}

void
mt_generator_lock(mt_generator *g)
{
    pthread_mutex_lock(&g->lock);
}

void
mt_generator_unlock(mt_generator *g)
{
    pthread_mutex_unlock(&g->lock);
}

/* ---- lifetime and the defaults ---- */

static mt_status
make(mt_device dev, uint64_t seed, mt_generator **out)
{
    mt_generator *g = calloc(1, sizeof(*g));
    if (g == NULL) {
        return mt_fail(MT_ENOMEM, "out of memory allocating a Generator");
    }
    atomic_init(&g->refcount, 1);
    g->device = dev;
    pthread_mutex_init(&g->lock, NULL);
    seed_locked(g, seed);
    *out = g;
    return MT_OK;
}

mt_status
mt_generator_new(mt_device dev, mt_generator **out)
{
    return make(dev, MT_DEFAULT_SEED, out);
}

mt_generator *
mt_generator_retain(mt_generator *g)
{
    atomic_fetch_add_explicit(&g->refcount, 1, memory_order_relaxed);
    return g;
}

void
mt_generator_release(mt_generator *g)
{
    if (g && atomic_fetch_sub_explicit(&g->refcount, 1, memory_order_acq_rel) == 1) {
        pthread_mutex_destroy(&g->lock);
        free(g);
    }
}

static mt_generator *cpu_default;
static mt_generator *cuda_defaults[MT_MAX_CUDA_GENERATORS];
static uint64_t cuda_seed = MT_DEFAULT_SEED; /* of the CUDA defaults made from now on */
static pthread_mutex_t defaults_lock = PTHREAD_MUTEX_INITIALIZER;

mt_status
mt_generator_default(mt_device dev, mt_generator **out)
{
    if (dev.type == MT_CUDA && (dev.index < 0 || dev.index >= MT_MAX_CUDA_GENERATORS)) {
        return mt_fail(MT_ERUNTIME, "invalid CUDA device %d", dev.index);
    }
    pthread_mutex_lock(&defaults_lock);
    mt_generator **slot = dev.type == MT_CPU ? &cpu_default : &cuda_defaults[dev.index];
    mt_status st = MT_OK;
    if (*slot == NULL) {
        uint64_t seed = dev.type == MT_CPU ? mt_nondeterministic_seed() : cuda_seed;
        st = make(dev.type == MT_CPU ? MT_DEVICE_CPU : dev, seed, slot);
    }
    *out = *slot;
    pthread_mutex_unlock(&defaults_lock);
    return st;
}

void
mt_cuda_seed_all(uint64_t seed)
{
    pthread_mutex_lock(&defaults_lock);
    cuda_seed = seed;
    for (int k = 0; k < MT_MAX_CUDA_GENERATORS; k++) {
        if (cuda_defaults[k]) {
            mt_generator_manual_seed(cuda_defaults[k], seed);
        }
    }
    pthread_mutex_unlock(&defaults_lock);
}

static const char *
type_name(mt_device_type t)
{
    return t == MT_CUDA ? "cuda" : "cpu";
}

mt_status
mt_generator_for(mt_generator *gen, mt_device dev, mt_generator **out)
{
    if (gen == NULL) {
        return mt_generator_default(dev, out);
    }
    if (gen->device.type != dev.type) {
        return mt_fail(MT_ERUNTIME, "Expected a '%s' device type for generator but found '%s'",
                       type_name(dev.type), type_name(gen->device.type));
    }
    *out = gen;
    return MT_OK;
}

/* ---- state ---- */

/* PyTorch's CPUGeneratorImplState: the legacy THGenerator state (the 32-bit engine words
 * widened to 64 bits, the cached double as normal_y), then the cached float. */
enum {
    ST_SEED = 0,
    ST_LEFT = 8,
    ST_SEEDED = 12,
    ST_NEXT = 16,
    ST_WORDS = 24,
    ST_NORMAL_Y = 5024,
    ST_NORMAL_VALID = 5040,
    ST_FLOAT = 5048,
    ST_FLOAT_VALID = 5052,
};

size_t
mt_generator_state_size(const mt_generator *g)
{
    return g->device.type == MT_CPU ? MT_CPU_GENERATOR_STATE_SIZE : MT_CUDA_GENERATOR_STATE_SIZE;
}

static void
put(uint8_t *p, const void *v, size_t n)
{
    memcpy(p, v, n);
}

void
mt_generator_get_state(mt_generator *g, uint8_t *out)
{
    mt_generator_lock(g);
    if (g->device.type == MT_CUDA) {
        put(out, &g->seed, 8);
        put(out + 8, &g->offset, 8);
        mt_generator_unlock(g);
        return;
    }
    memset(out, 0, MT_CPU_GENERATOR_STATE_SIZE);
    int32_t left = g->left, seeded = 1, normal_valid = g->has_normal_f64;
    uint64_t next = g->next;
    put(out + ST_SEED, &g->seed, 8);
    put(out + ST_LEFT, &left, 4);
    put(out + ST_SEEDED, &seeded, 4);
    put(out + ST_NEXT, &next, 8);
    for (int k = 0; k < MT_MT19937_N; k++) {
        uint64_t w = g->state[k];
        put(out + ST_WORDS + 8 * k, &w, 8);
    }
    if (g->has_normal_f64) {
        put(out + ST_NORMAL_Y, &g->normal_f64, 8);
    }
    put(out + ST_NORMAL_VALID, &normal_valid, 4);
    if (g->has_normal_f32) {
        put(out + ST_FLOAT, &g->normal_f32, 4);
        out[ST_FLOAT_VALID] = 1;
    }
    mt_generator_unlock(g);
}

mt_status
mt_generator_set_state(mt_generator *g, const uint8_t *s, size_t n)
{
    if (g->device.type == MT_CUDA) {
        if (n != MT_CUDA_GENERATOR_STATE_SIZE && n != 8) {
            return mt_fail(MT_ERUNTIME, "RNG state is wrong size");
        }
        uint64_t seed, offset = 0;
        memcpy(&seed, s, 8);
        if (n == MT_CUDA_GENERATOR_STATE_SIZE) {
            memcpy(&offset, s + 8, 8);
        }
        mt_generator_lock(g);
        g->seed = seed;
        g->offset = offset;
        mt_generator_unlock(g);
        return MT_OK;
    }
    if (n != MT_CPU_GENERATOR_STATE_SIZE) {
        return mt_fail(MT_ERUNTIME,
                       "Expected a CPUGeneratorImplState of size %d but found the input RNG state "
                       "size to be %zu",
                       MT_CPU_GENERATOR_STATE_SIZE, n);
    }
    int32_t left, seeded, normal_valid;
    uint64_t seed, next;
    memcpy(&seed, s + ST_SEED, 8);
    memcpy(&left, s + ST_LEFT, 4);
    memcpy(&seeded, s + ST_SEEDED, 4);
    memcpy(&next, s + ST_NEXT, 8);
    memcpy(&normal_valid, s + ST_NORMAL_VALID, 4);
    /* at::mt19937's is_valid, on the 32-bit next the engine keeps */
    if (!seeded || left <= 0 || left > MT_MT19937_N || (uint32_t)next > MT_MT19937_N) {
        return mt_fail(MT_ERUNTIME, "Invalid mt19937 state");
    }
    mt_generator_lock(g);
    g->seed = seed;
    g->left = left;
    g->next = (uint32_t)next;
    for (int k = 0; k < MT_MT19937_N; k++) {
        uint64_t w;
        memcpy(&w, s + ST_WORDS + 8 * k, 8);
        g->state[k] = (uint32_t)w;
    }
    g->has_normal_f64 = normal_valid != 0;
    memcpy(&g->normal_f64, s + ST_NORMAL_Y, 8);
    g->has_normal_f32 = s[ST_FLOAT_VALID] != 0;
    memcpy(&g->normal_f32, s + ST_FLOAT, 4);
    mt_generator_unlock(g);
    return MT_OK;
}

mt_status
mt_generator_get_offset(mt_generator *g, uint64_t *out)
{
    if (g->device.type == MT_CPU) {
        return mt_fail(MT_ERUNTIME, "CPU Generator does not use offset");
    }
    mt_generator_lock(g);
    *out = g->offset;
    mt_generator_unlock(g);
    return MT_OK;
}

mt_status
mt_generator_set_offset(mt_generator *g, uint64_t offset)
{
    if (g->device.type == MT_CPU) {
        return mt_fail(MT_ERUNTIME, "CPU Generator does not use offset");
    }
    mt_generator_lock(g);
    g->offset = offset;
    mt_generator_unlock(g);
    return MT_OK;
}

void
mt_generator_philox(mt_generator *g, uint64_t increment, uint64_t *seed, uint64_t *offset)
{
    mt_generator_lock(g);
    *seed = g->seed;
    *offset = g->offset;
    g->offset += increment;
    mt_generator_unlock(g);
}

mt_status
mt_generator_philox_for(mt_generator *gen, mt_device dev, uint64_t increment, uint64_t *seed,
                        uint64_t *offset)
{
    mt_generator *g;
    mt_status st = mt_generator_for(gen, dev, &g); /* checks dev's index */
    if (st == MT_OK) {
        mt_generator_philox(g, increment, seed, offset);
    }
    return st;
}
