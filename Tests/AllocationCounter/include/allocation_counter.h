#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H

// The allocation guard's malloc interposer (Tests/AllocationCounter/allocation_counter.c): counts
// of the allocator's calls, per thread and for the whole process. Only executables link it (the
// allocation probes); no library product and no test target depends on it.

#include <stdint.h>

/// Calls into the allocator. `mallocs`: malloc, calloc, the aligned variants, and a realloc that
/// allocates (a null pointer, or a new size: the block may move); `frees`: free of a non-null
/// pointer, and a realloc that frees (a new size: the old block may go; size 0: it goes).
typedef struct {
    uint64_t mallocs;
    uint64_t frees;
} allocation_counts;

/// NULL when the interposer is compiled in; otherwise why it is compiled to nothing ("sanitizer":
/// the address and the thread sanitizer bring their own malloc; "not glibc"), and every count
/// stays 0.
const char *allocation_counter_disabled_reason(void);

/// Slots through which one thread reads another's counters (a probe's own thread, an event
/// loop's thread).
enum { ALLOCATION_COUNTER_SLOTS = 8 };

/// Puts the calling thread's counters in `slot` (0 ..< ALLOCATION_COUNTER_SLOTS), replacing the
/// thread registered there before. The thread must outlive every read of the slot.
void allocation_counter_register(int slot);

/// The counts of the thread registered in `slot` (zeros if none). Exact once the reader has
/// synchronised with that thread (a round trip to it); otherwise a recent value.
allocation_counts allocation_counter_slot(int slot);

/// Empties `slot` (before its thread exits).
void allocation_counter_clear(int slot);

/// Every thread's calls since the process started.
allocation_counts allocation_counter_process(void);

#endif
