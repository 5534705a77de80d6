#include "process_stats.h"

#include <malloc.h>
#include <sys/resource.h>

size_t process_stats_heap_bytes_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
#else
    return 0;
#endif
}

void process_stats_trim_heap(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

double process_stats_cpu_seconds(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) {
        return 0;
    }
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6
        + (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
}

int process_stats_keep_freed_heap(void) {
#if defined(__GLIBC__)
    int trim = mallopt(M_TRIM_THRESHOLD, 1 << 30);
    int mmap = mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    return (trim == 1 && mmap == 1) ? 0 : -1;
#else
    return -1;
#endif
}
