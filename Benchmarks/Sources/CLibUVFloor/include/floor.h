#ifndef CLIBUV_FLOOR_H
#define CLIBUV_FLOOR_H

// The floor: the seven workloads written directly against libuv in C, with the same design as
// LoopScheduler (a mutex-protected queue and a uv_async_t for other threads, a local queue on the
// loop, an indexed binary heap of timers keyed by monotonic nanoseconds, driven by a timerfd
// watched by a uv_poll_t). One malloc per task or timer, no closures, no reference counting.
// Every function runs the whole workload and returns its main figure.

/// ns per task; one other thread submits n tasks, until all ran.
double floor_submit_cross(int n);
/// ns per task; a task on the loop submits n tasks, until all ran.
double floor_submit_onloop(int n);
/// ns per schedule; n timers uniform in [0, 1 s] scheduled on the loop; `wall` gets the seconds
/// until the last fired, `early` the number that fired early.
double floor_timers_fire(int n, double *wall, int *early);
/// ns per schedule+cancel pair on the loop, cancelling in FIFO or random order; `held` gets the
/// heap bytes still held afterwards.
double floor_timers_cancel(int n, int random_order, long *held);
/// The last tick's drift in ns of a 10 ms periodic timer after `ticks` ticks; p50/p99 of the
/// per-tick lateness in ns.
double floor_periodic_drift(int ticks, double *p50, double *p99);
/// Lateness p50 in ns of n timers uniform in [0, 2 s] (those due after the burst); the other
/// percentiles and the early count through the pointers.
double floor_lateness(int n, double *p99, double *p999, double *max, int *early);
/// Heap bytes per pending timer with n pending.
double floor_pending_memory(int n);

/// ns per operation of timeouts-churn: n pending 30 s timeouts on the loop; each of `ops` operations
/// cancels one (the oldest, or a random one when `random_order`) and schedules one. Heap bytes per
/// pending timer (the timer and its heap slot) through `bytes_per_timer`.
double floor_timeouts_churn(int n, int ops, int random_order, double *bytes_per_timer);

/// ns per operation of rearm-inplace: the same n pending 30 s timeouts in the floor's heap; each of
/// `ops` operations pushes one (the oldest, or a random one when `random_order`) back to now + 30 s
/// by updating its key in place and sifting it down: no free, no malloc. Heap bytes per pending
/// timer through `bytes_per_timer`.
double floor_rearm_inplace(int n, int ops, int random_order, double *bytes_per_timer);

/// ns per operation of rearm-uvtimer: n uv_timer_t handles started 30 s out on a loop that is not
/// run; each of `ops` operations restarts one (the oldest, or a random one) with uv_timer_start,
/// libuv's own reset (a remove from its heap and an insert).
double floor_rearm_uvtimer(int n, int ops, int random_order);

/// The rearm harness alone, in C, with no store: n 64-byte "timers", `ops` operations each
/// writing one's deadline to now + 30 s, in random order. ns per operation, three ways: found in
/// a ring (a miss on the ring's slot, then one on the timer); the same with an atomic increment
/// and decrement of the timer around the write (what Swift's retain and release of a handle do);
/// and taken from a stream drawn before the clock starts (SchedulingWorkloads' `rearm`).
void floor_rearm_harness(int n, int ops, double *ring, double *ring_fenced, double *stream);

/// Heap bytes in use (glibc mallinfo2), for the Swift benchmarks' memory figures.
long floor_heap_bytes_in_use(void);

#endif
