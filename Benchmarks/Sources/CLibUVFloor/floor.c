#define _GNU_SOURCE
#include "floor.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#define CHECK(call) do { if ((call) != 0) abort(); } while (0)

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// ---- tasks and timers -------------------------------------------------------------------------

typedef struct task {
    void (*fn)(void *);
    void *arg;
    struct task *next;
} task_t;

typedef struct timer {
    int64_t deadline;
    uint64_t seq;
    int index;  // slot in the heap, -1 when not in it
    void (*fn)(struct timer *);
    void *arg;
    int64_t aux;
} ftimer_t;

typedef struct {
    uv_loop_t loop;
    uv_async_t async;
    uv_prepare_t prepare;
    uv_poll_t poll;
    int tfd;
    int64_t armed;
    pthread_mutex_t lock;
    task_t *remote_head, *remote_tail;
    int wake_pending;
    task_t *local_head, *local_tail;
    ftimer_t **heap;
    int count, capacity;
    uint64_t seq;
    int stop;
    pthread_t thread;
} floor_loop_t;

static int timer_less(ftimer_t *a, ftimer_t *b) {
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static void heap_swap(floor_loop_t *l, int a, int b) {
    ftimer_t *t = l->heap[a];
    l->heap[a] = l->heap[b];
    l->heap[b] = t;
    l->heap[a]->index = a;
    l->heap[b]->index = b;
}

static void heap_up(floor_loop_t *l, int i) {
    while (i > 0 && timer_less(l->heap[i], l->heap[(i - 1) / 2])) {
        heap_swap(l, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_down(floor_loop_t *l, int i) {
    for (;;) {
        int c = 2 * i + 1, m = i;
        if (c < l->count && timer_less(l->heap[c], l->heap[m])) m = c;
        if (c + 1 < l->count && timer_less(l->heap[c + 1], l->heap[m])) m = c + 1;
        if (m == i) return;
        heap_swap(l, i, m);
        i = m;
    }
}

static void timer_insert(floor_loop_t *l, ftimer_t *t) {
    if (l->count == l->capacity) {
        l->capacity = l->capacity ? l->capacity * 2 : 1024;
        l->heap = realloc(l->heap, sizeof(ftimer_t *) * l->capacity);
    }
    t->seq = l->seq++;
    t->index = l->count;
    l->heap[l->count++] = t;
    heap_up(l, t->index);
}

static void timer_remove(floor_loop_t *l, ftimer_t *t) {
    int i = t->index;
    if (i < 0) return;
    l->count--;
    if (i != l->count) {
        l->heap[i] = l->heap[l->count];
        l->heap[i]->index = i;
        heap_down(l, i);
        heap_up(l, i);
    }
    t->index = -1;
    if (l->count == 0 && l->capacity > 1024) {  // give the slots back, as LoopScheduler does
        free(l->heap);
        l->heap = NULL;
        l->capacity = 0;
    }
}

/// Moves a timer to a new deadline in place: it takes a fresh seq (it orders as if scheduled now)
/// and sifts down when later, up when earlier. No free, no malloc; not in the heap: inserted.
static void timer_rearm(floor_loop_t *l, ftimer_t *t, int64_t deadline) {
    if (t->index < 0) {
        t->deadline = deadline;
        timer_insert(l, t);
        return;
    }
    int later = deadline >= t->deadline;  // with the fresh seq: a strictly greater key
    t->deadline = deadline;
    t->seq = l->seq++;
    if (later) heap_down(l, t->index); else heap_up(l, t->index);
}

// ---- the loop ---------------------------------------------------------------------------------

static void run_local(floor_loop_t *l) {
    while (l->local_head) {
        task_t *t = l->local_head;
        l->local_head = t->next;
        if (!l->local_head) l->local_tail = NULL;
        t->fn(t->arg);
        free(t);
    }
}

static void fire_due(floor_loop_t *l) {
    int64_t now = now_ns();
    uint64_t limit = l->seq;
    while (l->count > 0 && l->heap[0]->deadline <= now && l->heap[0]->seq < limit) {
        ftimer_t *t = l->heap[0];
        timer_remove(l, t);
        t->fn(t);
    }
}

static void drain(floor_loop_t *l) {
    for (;;) {
        pthread_mutex_lock(&l->lock);
        task_t *head = l->remote_head;
        l->remote_head = l->remote_tail = NULL;
        l->wake_pending = 0;
        pthread_mutex_unlock(&l->lock);
        if (head) {
            if (l->local_tail) l->local_tail->next = head; else l->local_head = head;
            while (head->next) head = head->next;
            l->local_tail = head;
        }
        int had = l->local_head != NULL;
        run_local(l);
        fire_due(l);
        if (!had) break;
    }
    if (l->stop) {
        uv_close((uv_handle_t *)&l->async, NULL);
        uv_close((uv_handle_t *)&l->prepare, NULL);
        uv_close((uv_handle_t *)&l->poll, NULL);
    }
}

static void on_async(uv_async_t *h) { drain(h->data); }

static void on_poll(uv_poll_t *h, int status, int events) {
    (void)status; (void)events;
    floor_loop_t *l = h->data;
    uint64_t expirations;
    ssize_t r = read(l->tfd, &expirations, 8);
    (void)r;
    l->armed = INT64_MAX;
    drain(l);
}

static void on_prepare(uv_prepare_t *h) {
    floor_loop_t *l = h->data;
    if (l->count == 0) return;
    int64_t target = l->heap[0]->deadline;
    if (target >= l->armed) return;
    int64_t delay = target - now_ns();
    if (delay < 1) delay = 1;
    struct itimerspec spec = {0};
    spec.it_value.tv_sec = delay / 1000000000;
    spec.it_value.tv_nsec = delay % 1000000000;
    CHECK(timerfd_settime(l->tfd, 0, &spec, NULL));
    l->armed = target;
}

static void *loop_main(void *arg) {
    floor_loop_t *l = arg;
    uv_run(&l->loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&l->loop));
    close(l->tfd);
    return NULL;
}

static floor_loop_t *floor_start(void) {
    floor_loop_t *l = calloc(1, sizeof *l);
    CHECK(uv_loop_init(&l->loop));
    CHECK(pthread_mutex_init(&l->lock, NULL));
    l->armed = INT64_MAX;
    l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    CHECK(uv_async_init(&l->loop, &l->async, on_async));
    CHECK(uv_prepare_init(&l->loop, &l->prepare));
    CHECK(uv_prepare_start(&l->prepare, on_prepare));
    CHECK(uv_poll_init(&l->loop, &l->poll, l->tfd));
    CHECK(uv_poll_start(&l->poll, UV_READABLE, on_poll));
    l->async.data = l->prepare.data = l->poll.data = l;
    CHECK(pthread_create(&l->thread, NULL, loop_main, l));
    return l;
}

/// Submits from any thread; wakes the loop only on empty -> non-empty.
static void floor_submit(floor_loop_t *l, void (*fn)(void *), void *arg) {
    task_t *t = malloc(sizeof *t);
    t->fn = fn;
    t->arg = arg;
    t->next = NULL;
    pthread_mutex_lock(&l->lock);
    if (l->remote_tail) l->remote_tail->next = t; else l->remote_head = t;
    l->remote_tail = t;
    int wake = !l->wake_pending;
    l->wake_pending = 1;
    pthread_mutex_unlock(&l->lock);
    if (wake) CHECK(uv_async_send(&l->async));
}

/// Submits from the loop thread: no lock, no wake-up.
static void floor_submit_local(floor_loop_t *l, void (*fn)(void *), void *arg) {
    task_t *t = malloc(sizeof *t);
    t->fn = fn;
    t->arg = arg;
    t->next = NULL;
    if (l->local_tail) l->local_tail->next = t; else l->local_head = t;
    l->local_tail = t;
}

static void stop_task(void *arg) { ((floor_loop_t *)arg)->stop = 1; }

static void floor_stop(floor_loop_t *l) {
    floor_submit(l, stop_task, l);
    CHECK(pthread_join(l->thread, NULL));
    free(l->heap);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

// ---- completion -------------------------------------------------------------------------------

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    long remaining;
    int64_t finished;
} countdown_t;

static void countdown_init(countdown_t *c, long n) {
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->remaining = n;
    c->finished = 0;
}

/// Called on the loop thread only: the decrement needs no lock until the last one.
static void countdown_tick(countdown_t *c) {
    if (--c->remaining == 0) {
        pthread_mutex_lock(&c->lock);
        c->finished = now_ns();
        pthread_cond_signal(&c->cond);
        pthread_mutex_unlock(&c->lock);
    }
}

static void countdown_wait(countdown_t *c) {
    pthread_mutex_lock(&c->lock);
    while (c->finished == 0) pthread_cond_wait(&c->cond, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

static void tick_task(void *arg) { countdown_tick(arg); }

// ---- workloads --------------------------------------------------------------------------------

double floor_submit_cross(int n) {
    floor_loop_t *l = floor_start();
    countdown_t c;
    countdown_init(&c, n);
    int64_t start = now_ns();
    for (int i = 0; i < n; i++) floor_submit(l, tick_task, &c);
    countdown_wait(&c);
    double result = (double)(c.finished - start) / n;
    floor_stop(l);
    return result;
}

typedef struct {
    floor_loop_t *l;
    countdown_t c;
    int n;
    int64_t start;
} onloop_t;

static void onloop_task(void *arg) {
    onloop_t *o = arg;
    o->start = now_ns();
    for (int i = 0; i < o->n; i++) floor_submit_local(o->l, tick_task, &o->c);
}

double floor_submit_onloop(int n) {
    onloop_t o = {.l = floor_start(), .n = n};
    countdown_init(&o.c, n);
    floor_submit(o.l, onloop_task, &o);
    countdown_wait(&o.c);
    double result = (double)(o.c.finished - o.start) / n;
    floor_stop(o.l);
    return result;
}

static uint64_t splitmix(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef struct {
    floor_loop_t *l;
    countdown_t c;
    int n;
    int64_t spread;
    int64_t start, scheduled, burst_end;
    int early;
    int64_t *due, *fired;
} timers_t;

static void fire_timer(ftimer_t *t) {
    timers_t *w = t->arg;
    int64_t now = now_ns();
    if (now < t->deadline) w->early++;
    if (w->fired) w->fired[t->aux] = now;
    countdown_tick(&w->c);
    free(t);
}

static void schedule_timers(void *arg) {
    timers_t *w = arg;
    uint64_t seed = 1;
    w->start = now_ns();
    for (int i = 0; i < w->n; i++) {
        ftimer_t *t = malloc(sizeof *t);
        int64_t now = now_ns();
        t->deadline = now + (int64_t)(splitmix(&seed) % (uint64_t)w->spread);
        t->fn = fire_timer;
        t->arg = w;
        t->aux = i;
        if (w->due) w->due[i] = t->deadline;
        timer_insert(w->l, t);
    }
    w->scheduled = now_ns();
    w->burst_end = w->scheduled;
}

double floor_timers_fire(int n, double *wall, int *early) {
    timers_t w = {.l = floor_start(), .n = n, .spread = 1000000000};
    countdown_init(&w.c, n);
    floor_submit(w.l, schedule_timers, &w);
    countdown_wait(&w.c);
    *wall = (double)(w.c.finished - w.start) / 1e9;
    *early = w.early;
    double result = (double)(w.scheduled - w.start) / n;
    floor_stop(w.l);
    return result;
}

static int compare_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

double floor_lateness(int n, double *p99, double *p999, double *max, int *early) {
    timers_t w = {.l = floor_start(), .n = n, .spread = 2000000000};
    w.due = calloc(n, sizeof(int64_t));
    w.fired = calloc(n, sizeof(int64_t));
    countdown_init(&w.c, n);
    floor_submit(w.l, schedule_timers, &w);
    countdown_wait(&w.c);
    int64_t *lateness = calloc(n, sizeof(int64_t));
    int m = 0;
    for (int i = 0; i < n; i++)
        if (w.due[i] > w.burst_end) lateness[m++] = w.fired[i] - w.due[i];
    qsort(lateness, m, sizeof(int64_t), compare_i64);
    double p50 = m ? (double)lateness[m / 2] : 0;
    *p99 = m ? (double)lateness[(int)(m * 0.99)] : 0;
    *p999 = m ? (double)lateness[(int)(m * 0.999)] : 0;
    *max = m ? (double)lateness[m - 1] : 0;
    *early = w.early;
    free(lateness);
    free(w.due);
    free(w.fired);
    floor_stop(w.l);
    return p50;
}

typedef struct {
    floor_loop_t *l;
    int n, random_order;
    double per_pair;
    countdown_t c;
} cancel_t;

static void never_fires(ftimer_t *t) { (void)t; abort(); }

static void cancel_work(void *arg) {
    cancel_t *w = arg;
    ftimer_t **timers = malloc(sizeof(ftimer_t *) * w->n);
    int *order = malloc(sizeof(int) * w->n);
    uint64_t seed = 7;
    for (int i = 0; i < w->n; i++) order[i] = i;
    if (w->random_order)
        for (int i = w->n - 1; i > 0; i--) {
            int j = (int)(splitmix(&seed) % (uint64_t)(i + 1));
            int x = order[i]; order[i] = order[j]; order[j] = x;
        }
    int64_t start = now_ns();
    for (int i = 0; i < w->n; i++) {
        ftimer_t *t = malloc(sizeof *t);
        t->deadline = now_ns() + 30000000000ll;
        t->fn = never_fires;
        timer_insert(w->l, t);
        timers[i] = t;
    }
    for (int i = 0; i < w->n; i++) {
        timer_remove(w->l, timers[order[i]]);
        free(timers[order[i]]);
    }
    w->per_pair = (double)(now_ns() - start) / w->n;
    free(timers);
    free(order);
    countdown_tick(&w->c);
}

double floor_timers_cancel(int n, int random_order, long *held) {
    malloc_trim(0);
    struct mallinfo2 before = mallinfo2();
    cancel_t w = {.l = floor_start(), .n = n, .random_order = random_order};
    countdown_init(&w.c, 1);
    floor_submit(w.l, cancel_work, &w);
    countdown_wait(&w.c);
    struct mallinfo2 after = mallinfo2();
    *held = (long)(after.uordblks + after.hblkhd) - (long)(before.uordblks + before.hblkhd);
    floor_stop(w.l);
    return w.per_pair;
}

typedef struct {
    floor_loop_t *l;
    countdown_t c;
    int ticks, count;
    int64_t origin, interval;
    int64_t *times;
} periodic_t;

static void periodic_tick(ftimer_t *t) {
    periodic_t *p = t->arg;
    int64_t now = now_ns();
    p->times[p->count++] = now;
    if (p->count == p->ticks) {
        free(t);
        countdown_tick(&p->c);
        return;
    }
    // Fixed rate: the next grid point after now, skipping missed ones.
    int64_t k = (now - p->origin) / p->interval + 1;
    t->deadline = p->origin + k * p->interval;
    timer_insert(p->l, t);
}

static void start_periodic(void *arg) {
    periodic_t *p = arg;
    ftimer_t *t = malloc(sizeof *t);
    p->origin = now_ns() + p->interval;
    t->deadline = p->origin;
    t->fn = periodic_tick;
    t->arg = p;
    timer_insert(p->l, t);
}

double floor_periodic_drift(int ticks, double *p50, double *p99) {
    periodic_t p = {.l = floor_start(), .ticks = ticks, .interval = 10000000};
    p.times = calloc(ticks, sizeof(int64_t));
    countdown_init(&p.c, 1);
    floor_submit(p.l, start_periodic, &p);
    countdown_wait(&p.c);
    int64_t *lateness = calloc(ticks, sizeof(int64_t));
    for (int i = 0; i < ticks; i++) lateness[i] = p.times[i] - (p.origin + (int64_t)i * p.interval);
    double drift = (double)lateness[ticks - 1];
    qsort(lateness, ticks, sizeof(int64_t), compare_i64);
    *p50 = (double)lateness[ticks / 2];
    *p99 = (double)lateness[(int)(ticks * 0.99)];
    free(lateness);
    free(p.times);
    floor_stop(p.l);
    return drift;
}

typedef struct {
    floor_loop_t *l;
    int n;
    ftimer_t **timers;
    countdown_t c;
} pending_t;

static void pending_schedule(void *arg) {
    pending_t *w = arg;
    for (int i = 0; i < w->n; i++) {
        ftimer_t *t = malloc(sizeof *t);
        t->deadline = now_ns() + 3600000000000ll;
        t->fn = never_fires;
        timer_insert(w->l, t);
        w->timers[i] = t;
    }
    countdown_tick(&w->c);
}

static void pending_cancel(void *arg) {
    pending_t *w = arg;
    for (int i = 0; i < w->n; i++) {
        timer_remove(w->l, w->timers[i]);
        free(w->timers[i]);
    }
    countdown_tick(&w->c);
}

double floor_pending_memory(int n) {
    pending_t w = {.l = floor_start(), .n = n};
    w.timers = malloc(sizeof(ftimer_t *) * n);
    malloc_trim(0);
    struct mallinfo2 before = mallinfo2();
    countdown_init(&w.c, 1);
    floor_submit(w.l, pending_schedule, &w);
    countdown_wait(&w.c);
    struct mallinfo2 after = mallinfo2();
    countdown_init(&w.c, 1);
    floor_submit(w.l, pending_cancel, &w);
    countdown_wait(&w.c);
    free(w.timers);
    floor_stop(w.l);
    return (double)((long)(after.uordblks + after.hblkhd) - (long)(before.uordblks + before.hblkhd)) / n;
}

// timeouts-churn: a steady state of n pending 30 s timeouts; each operation cancels one (the
// oldest, or a random one) and schedules one, on the loop, as a server does per request.
typedef struct {
    floor_loop_t *l;
    countdown_t c;
    int n, ops, random_order;
    double per_op, bytes_per_timer;
} churn_t;

static ftimer_t *churn_timer(floor_loop_t *l) {
    ftimer_t *t = malloc(sizeof *t);
    t->deadline = now_ns() + 30000000000ll;
    t->fn = never_fires;
    timer_insert(l, t);
    return t;
}

/// The timers' order of operations in churn and re-arm: the oldest (cycling through the ring,
/// which holds them in scheduling order) or a random one, seeded.
static int churn_pick(churn_t *w, uint64_t *seed, int *next) {
    if (w->random_order) return (int)(splitmix(seed) % (uint64_t)w->n);
    int index = *next;
    *next = index + 1 == w->n ? 0 : index + 1;
    return index;
}

/// Fills the ring with n pending 30 s timers; heap bytes per timer (the timer and its heap slot).
static void churn_fill(churn_t *w, ftimer_t **ring) {
    struct mallinfo2 before = mallinfo2();
    for (int i = 0; i < w->n; i++) ring[i] = churn_timer(w->l);
    struct mallinfo2 after = mallinfo2();
    w->bytes_per_timer =
        (double)((long)(after.uordblks + after.hblkhd) - (long)(before.uordblks + before.hblkhd)) / w->n;
}

static void churn_drain(churn_t *w, ftimer_t **ring) {
    for (int i = 0; i < w->n; i++) {
        timer_remove(w->l, ring[i]);
        free(ring[i]);
    }
    free(ring);
}

static void churn_work(void *arg) {
    churn_t *w = arg;
    ftimer_t **ring = malloc(sizeof(ftimer_t *) * w->n);
    churn_fill(w, ring);
    uint64_t seed = 7;
    int next = 0;
    int64_t start = now_ns();
    for (int op = 0; op < w->ops; op++) {
        int index = churn_pick(w, &seed, &next);
        timer_remove(w->l, ring[index]);
        free(ring[index]);
        ring[index] = churn_timer(w->l);
    }
    w->per_op = (double)(now_ns() - start) / w->ops;
    churn_drain(w, ring);
    countdown_tick(&w->c);
}

// Runs one churn-shaped workload (the steady state of n timers, then ops operations) on a loop
// of its own; returns ns per operation.
static double run_churn_shaped(void (*work)(void *), int n, int ops, int random_order, double *bytes_per_timer) {
    malloc_trim(0);
    churn_t w = {.l = floor_start(), .n = n, .ops = ops, .random_order = random_order};
    countdown_init(&w.c, 1);
    floor_submit(w.l, work, &w);
    countdown_wait(&w.c);
    floor_stop(w.l);
    *bytes_per_timer = w.bytes_per_timer;
    return w.per_op;
}

double floor_timeouts_churn(int n, int ops, int random_order, double *bytes_per_timer) {
    return run_churn_shaped(churn_work, n, ops, random_order, bytes_per_timer);
}

// rearm-inplace: the churn's steady state, but each operation pushes one timeout (the oldest, or a
// random one) back to now + 30 s by updating its key in the heap and sifting it: the timer stays,
// nothing is freed or allocated. As SchedulingWorkloads' `rearm` does, the timer each operation
// pushes back is drawn before the clock starts (a stream of handles in operation order: the
// request's connection at hand), so an operation's misses are the timer's and the store's.
static void rearm_work(void *arg) {
    churn_t *w = arg;
    ftimer_t **ring = malloc(sizeof(ftimer_t *) * w->n);
    ftimer_t **stream = malloc(sizeof(ftimer_t *) * w->ops);
    if (!ring || !stream) abort();
    churn_fill(w, ring);
    uint64_t seed = 7;
    int next = 0;
    for (int op = 0; op < w->ops; op++) stream[op] = ring[churn_pick(w, &seed, &next)];
    int64_t start = now_ns();
    for (int op = 0; op < w->ops; op++) {
        timer_rearm(w->l, stream[op], now_ns() + 30000000000ll);
    }
    w->per_op = (double)(now_ns() - start) / w->ops;
    free(stream);
    churn_drain(w, ring);
    countdown_tick(&w->c);
}

double floor_rearm_inplace(int n, int ops, int random_order, double *bytes_per_timer) {
    return run_churn_shaped(rearm_work, n, ops, random_order, bytes_per_timer);
}

// rearm-uvtimer: the same with libuv's own timers: n uv_timer_t handles started 30 s out on a loop
// that is not run (the handles only sit in its heap), then each operation restarts one with
// uv_timer_start, which removes it from libuv's heap and inserts it again.
static void uv_never_fires(uv_timer_t *h) { (void)h; abort(); }

double floor_rearm_uvtimer(int n, int ops, int random_order) {
    uv_loop_t loop;
    CHECK(uv_loop_init(&loop));
    uv_timer_t *handles = malloc(sizeof(uv_timer_t) * n);
    for (int i = 0; i < n; i++) {
        CHECK(uv_timer_init(&loop, &handles[i]));
        CHECK(uv_timer_start(&handles[i], uv_never_fires, 30000, 0));
    }
    churn_t w = {.n = n, .random_order = random_order};  // for churn_pick's order only
    uint64_t seed = 7;
    int next = 0;
    uv_timer_t **stream = malloc(sizeof(uv_timer_t *) * ops);  // drawn first, as rearm-inplace's
    if (!stream) abort();
    for (int op = 0; op < ops; op++) stream[op] = &handles[churn_pick(&w, &seed, &next)];
    int64_t start = now_ns();
    for (int op = 0; op < ops; op++) {
        CHECK(uv_timer_start(stream[op], uv_never_fires, 30000, 0));
    }
    double result = (double)(now_ns() - start) / ops;
    free(stream);
    for (int i = 0; i < n; i++) uv_close((uv_handle_t *)&handles[i], NULL);
    CHECK(uv_run(&loop, UV_RUN_ONCE));  // runs the closes; 0: nothing left alive
    CHECK(uv_loop_close(&loop));
    free(handles);
    return result;
}

// The rearm harness alone (see floor.h): why a Swift ring harness costs twice the C one. The
// write of the deadline is a store, which does not hold up the clock read of the next operation;
// an atomic read-modify-write on the timer (a retain) does, so the ring slot's miss and the
// timer's can no longer overlap with the neighbouring operations'.
typedef struct {
    int64_t references;
    int64_t deadline;
    char rest[48];
} harness_timer_t;

__attribute__((noinline)) static void harness_write(harness_timer_t *t) { t->deadline = now_ns() + 30000000000ll; }

// The write between an atomic increment and decrement of the timer: a Swift handle's retain and
// release around the call.
static void harness_fenced_write(harness_timer_t *t) {
    __atomic_fetch_add(&t->references, 1, __ATOMIC_RELAXED);
    harness_write(t);
    __atomic_fetch_sub(&t->references, 1, __ATOMIC_RELEASE);
}

void floor_rearm_harness(int n, int ops, double *ring_ns, double *fenced_ns, double *stream_ns) {
    harness_timer_t **ring = malloc(sizeof(harness_timer_t *) * n);
    harness_timer_t **stream = malloc(sizeof(harness_timer_t *) * ops);
    if (!ring || !stream) abort();
    for (int i = 0; i < n; i++) {
        ring[i] = calloc(1, sizeof(harness_timer_t));
        if (!ring[i]) abort();
    }
    uint64_t seed = 7;
    int64_t start = now_ns();
    for (int op = 0; op < ops; op++) harness_write(ring[splitmix(&seed) % (uint64_t)n]);
    *ring_ns = (double)(now_ns() - start) / ops;
    seed = 7;
    start = now_ns();
    for (int op = 0; op < ops; op++) harness_fenced_write(ring[splitmix(&seed) % (uint64_t)n]);
    *fenced_ns = (double)(now_ns() - start) / ops;
    seed = 7;
    for (int op = 0; op < ops; op++) stream[op] = ring[splitmix(&seed) % (uint64_t)n];
    start = now_ns();
    for (int op = 0; op < ops; op++) harness_fenced_write(stream[op]);
    *stream_ns = (double)(now_ns() - start) / ops;
    for (int i = 0; i < n; i++) free(ring[i]);
    free(ring);
    free(stream);
}

long floor_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (long)(info.uordblks + info.hblkhd);
}
