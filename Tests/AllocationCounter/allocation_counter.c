// The allocation guard's malloc interposer: defines the allocator's entry points in the executable
// that links it, so that every call in the process — the Swift runtime's, Foundation's,
// libdispatch's, glibc's own — comes here first, is counted, and goes on to glibc's allocator
// through its `__libc_*` entry points (glibc 2.34 removed the malloc hooks). Counts are kept per
// thread (initial-exec TLS: no allocation to reach it, also inside malloc) and for the process.
//
// Compiled to nothing under the address and the thread sanitizer (their runtimes replace the
// allocator themselves: two definitions would fight) and off glibc;
// `allocation_counter_disabled_reason` then says which, and the probes report "skipped" rather than
// counts.

#include "allocation_counter.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define ALLOCATION_COUNTER_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOCATION_COUNTER_SANITIZED 1
#endif

#if defined(__linux__) && defined(__GLIBC__) && !defined(ALLOCATION_COUNTER_SANITIZED)

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

// Written only by their own thread; read by others (after a round trip) with relaxed loads, so a
// plain load and store per call suffice (no read-modify-write on the owner's side).
static __thread allocation_counts thread_counts __attribute__((tls_model("initial-exec")));
static uint64_t process_mallocs;
static uint64_t process_frees;

static inline void bump(uint64_t *thread_count, uint64_t *process_count) {
    __atomic_store_n(thread_count, __atomic_load_n(thread_count, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(process_count, 1, __ATOMIC_RELAXED);
}

static inline void count_malloc(void) { bump(&thread_counts.mallocs, &process_mallocs); }
static inline void count_free(void) { bump(&thread_counts.frees, &process_frees); }

void *malloc(size_t size) {
    count_malloc();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_malloc();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (pointer == NULL) {
        count_malloc();
    } else if (size == 0) {
        count_free();
    } else {
        count_malloc();
        count_free();
    }
    return __libc_realloc(pointer, size);
}

void *reallocarray(void *pointer, size_t count, size_t size) {
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(pointer, bytes);
}

void free(void *pointer) {
    if (pointer == NULL) return;
    count_free();
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    count_malloc();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_malloc();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // glibc's own checks: a power of two, a multiple of the pointer size.
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
    count_malloc();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

void *valloc(size_t size) {
    count_malloc();
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    count_malloc();
    return __libc_pvalloc(size);
}

const char *allocation_counter_disabled_reason(void) { return NULL; }

static allocation_counts *slots[ALLOCATION_COUNTER_SLOTS];

void allocation_counter_register(int slot) {
    if (slot < 0 || slot >= ALLOCATION_COUNTER_SLOTS) return;
    __atomic_store_n(&slots[slot], &thread_counts, __ATOMIC_RELEASE);
}

allocation_counts allocation_counter_slot(int slot) {
    allocation_counts result = {0, 0};
    if (slot < 0 || slot >= ALLOCATION_COUNTER_SLOTS) return result;
    allocation_counts *counts = __atomic_load_n(&slots[slot], __ATOMIC_ACQUIRE);
    if (counts == NULL) return result;
    result.mallocs = __atomic_load_n(&counts->mallocs, __ATOMIC_RELAXED);
    result.frees = __atomic_load_n(&counts->frees, __ATOMIC_RELAXED);
    return result;
}

void allocation_counter_clear(int slot) {
    if (slot < 0 || slot >= ALLOCATION_COUNTER_SLOTS) return;
    __atomic_store_n(&slots[slot], NULL, __ATOMIC_RELEASE);
}

allocation_counts allocation_counter_process(void) {
    allocation_counts result = {
        __atomic_load_n(&process_mallocs, __ATOMIC_RELAXED),
        __atomic_load_n(&process_frees, __ATOMIC_RELAXED),
    };
    return result;
}

#else

#include <stddef.h>

static const allocation_counts nothing = {0, 0};

const char *allocation_counter_disabled_reason(void) {
#if defined(ALLOCATION_COUNTER_SANITIZED)
    return "sanitizer";
#else
    return "not glibc";
#endif
}

void allocation_counter_register(int slot) { (void)slot; }

allocation_counts allocation_counter_slot(int slot) {
    (void)slot;
    return nothing;
}

void allocation_counter_clear(int slot) { (void)slot; }

allocation_counts allocation_counter_process(void) { return nothing; }

#endif
