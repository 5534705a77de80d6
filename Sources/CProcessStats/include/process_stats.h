#ifndef PROCESS_STATS_H
#define PROCESS_STATS_H

#include <stddef.h>

/// Bytes the allocator has handed out and not had back: small blocks plus mmapped ones
/// (glibc's mallinfo2: uordblks + hblkhd).
size_t process_stats_heap_bytes_in_use(void);

/// Returns free heap memory to the system (glibc's malloc_trim), so readings start level.
void process_stats_trim_heap(void);

/// User plus system CPU time of the process, in seconds.
double process_stats_cpu_seconds(void);

/// Keeps freed heap memory in the process (no trimming, large blocks from the heap rather than
/// fresh mmaps), so a benchmark measures steady state instead of the kernel zeroing pages that the
/// previous burst gave back. Returns 0 when the allocator took both settings.
int process_stats_keep_freed_heap(void);

#endif
