// The C floor's timer workloads at any size, outside the benchmark framework, so that a
// `loopsched bench --n N` run can have its floor measured beside it in the same session:
//   floor-cli churn N fifo|random     timeouts-churn: ns per op, bytes per pending timer
//   floor-cli rearm N fifo|random     rearm-inplace: ns per in-place push-back, bytes per timer
//   floor-cli rearm-uv N fifo|random  rearm-uvtimer: ns per uv_timer_start on a started handle
//   floor-cli rearm-harness N         rearm's harness alone: ring, ring with retain-like atomics, stream
//   floor-cli cancel N fifo|random    timers-cancel: ns per schedule+cancel pair
//   floor-cli fire N                  timers-fire: ns per schedule, seconds until all fired
//   floor-cli lateness N              lateness p50/p99 (µs) of n timers in [0, 2 s]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "floor.h"

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: floor-cli churn|rearm|rearm-uv|rearm-harness|cancel|fire|lateness N [fifo|random]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    int random_order = argc > 3 && strcmp(argv[3], "random") == 0;
    if (n < 1) {
        fprintf(stderr, "floor-cli: N must be positive\n");
        return 2;
    }
    if (strcmp(argv[1], "churn") == 0) {
        double bytes = 0;
        double ns = floor_timeouts_churn(n, 1000000, random_order, &bytes);
        printf("churn n=%d %s ns/op=%.1f bytes/timer=%.1f\n", n, random_order ? "random" : "fifo", ns, bytes);
    } else if (strcmp(argv[1], "rearm") == 0) {
        double bytes = 0;
        double ns = floor_rearm_inplace(n, 1000000, random_order, &bytes);
        printf("rearm n=%d %s ns/op=%.1f bytes/timer=%.1f\n", n, random_order ? "random" : "fifo", ns, bytes);
    } else if (strcmp(argv[1], "rearm-uv") == 0) {
        double ns = floor_rearm_uvtimer(n, 1000000, random_order);
        printf("rearm-uv n=%d %s ns/op=%.1f\n", n, random_order ? "random" : "fifo", ns);
    } else if (strcmp(argv[1], "rearm-harness") == 0) {
        double ring = 0, fenced = 0, stream = 0;
        floor_rearm_harness(n, 1000000, &ring, &fenced, &stream);
        printf("rearm-harness n=%d random ns/op ring=%.1f ring+atomics=%.1f stream+atomics=%.1f\n", n, ring, fenced,
               stream);
    } else if (strcmp(argv[1], "cancel") == 0) {
        long held = 0;
        double ns = floor_timers_cancel(n, random_order, &held);
        printf("cancel n=%d %s ns/pair=%.1f held=%ld\n", n, random_order ? "random" : "fifo", ns, held);
    } else if (strcmp(argv[1], "fire") == 0) {
        double wall = 0;
        int early = 0;
        double ns = floor_timers_fire(n, &wall, &early);
        printf("fire n=%d ns/schedule=%.1f wall s=%.3f early=%d\n", n, ns, wall, early);
    } else if (strcmp(argv[1], "lateness") == 0) {
        double p99 = 0, p999 = 0, max = 0;
        int early = 0;
        double p50 = floor_lateness(n, &p99, &p999, &max, &early);
        printf("lateness n=%d p50 us=%.1f p99 us=%.1f p99.9 us=%.1f max us=%.1f early=%d\n", n, p50 / 1e3,
               p99 / 1e3, p999 / 1e3, max / 1e3, early);
    } else {
        fprintf(stderr, "floor-cli: unknown workload %s\n", argv[1]);
        return 2;
    }
    return 0;
}
