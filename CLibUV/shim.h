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

/// libdispatch's hooks for a run loop that drains Dispatch's main queue on the main thread (what
/// Foundation's RunLoop uses on Linux): an eventfd that becomes readable when the main queue has
/// work, and the call that runs that work. Used by LoopExecutorFactory's main loop only.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);
#endif

#endif
