#ifndef CLIBUV_SHIM_H
#define CLIBUV_SHIM_H

#include <uv.h>

#ifdef __linux__
#include <sys/prctl.h>
#include <sys/timerfd.h>

/// Names the calling thread (the kernel keeps the first 15 bytes). prctl is variadic, which Swift
/// cannot call, hence this wrapper.
static inline int clibuv_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}
#endif

#endif
