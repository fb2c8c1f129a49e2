// The floor of a blocking round trip between two processes of one host through shared
// memory: two counters in a shared page, a FUTEX_WAKE per message when the other side said it
// sleeps, a FUTEX_WAIT when the counter has not moved. No DDS, no protocol, no copies: what
// the kernel's wake-up and context switches cost (docs/hot-path.md, "A round trip on one
// vCPU"). With -DNOP_KIB=K each side also runs K KiB of straight-line code per message (how
// much cold code costs once a switch has evicted it); with -DDATA_KIB=K it writes a byte in
// each 64-byte line of K KiB of data per message; with -DAVX (-DSSE) it leaves a ymm (xmm)
// register in use, for the switch to save ("Code per message, and the kernel's wake-up").
//
//   cc -O2 -o target/bench/futex_floor bench/peers/futex_floor.c
//   taskset -c 0 target/bench/futex_floor 300000        # one vCPU: both processes on it
//   taskset -c 0,1 target/bench/futex_floor 300000 spin # two vCPUs, spinning instead of waiting
#define _GNU_SOURCE
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef NOP_KIB
#define NOP_KIB 0
#endif
#ifndef DATA_KIB
#define DATA_KIB 0
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

typedef struct {
    _Atomic uint32_t seq;
    _Atomic uint32_t waiting;
    char pad[56];
} channel;

static int spin;

static long futex(_Atomic uint32_t *word, int op, uint32_t value) {
    return syscall(SYS_futex, word, op, value, NULL, NULL, 0);
}

static volatile char data[DATA_KIB * 1024 + 64];

__attribute__((noinline)) static void work(void) {
#if DATA_KIB > 0
    for (int i = 0; i < DATA_KIB * 1024; i += 64) data[i]++;
#endif
#ifdef AVX
    __asm__ volatile("vpcmpeqd %%ymm3, %%ymm3, %%ymm3" ::: "xmm3");
#endif
#ifdef SSE
    __asm__ volatile("pcmpeqd %%xmm3, %%xmm3" ::: "xmm3");
#endif
#if NOP_KIB > 0
    __asm__ volatile(".rept " STR(NOP_KIB) " * 256\n nopl 0(%rax)\n .endr");
#endif
}

static void send(channel *c) {
    atomic_fetch_add(&c->seq, 1);
    if (atomic_load(&c->waiting)) futex(&c->seq, FUTEX_WAKE, 1);
}

static void receive(channel *c, uint32_t *last) {
    for (;;) {
        uint32_t s = atomic_load(&c->seq);
        if (s != *last) {
            *last = s;
            return;
        }
        if (spin) continue;
        atomic_store(&c->waiting, 1);
        if (atomic_load(&c->seq) == *last) futex(&c->seq, FUTEX_WAIT, *last);
        atomic_store(&c->waiting, 0);
    }
}

static int by_value(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 300000;
    spin = argc > 2;
    if (n <= 0) return 2;
    channel *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED) return perror("mmap"), 1;
    channel *to_pong = &c[0], *to_ping = &c[1];
    if (fork() == 0) {
        uint32_t last = 0;
        for (int i = 0; i < n; i++) {
            receive(to_pong, &last);
            work();
            send(to_ping);
        }
        _exit(0);
    }
    long *rtt = malloc(n * sizeof *rtt);
    if (!rtt) return 1;
    uint32_t last = 0;
    struct timespec s, e;
    for (int i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &s);
        work();
        send(to_pong);
        receive(to_ping, &last);
        clock_gettime(CLOCK_MONOTONIC, &e);
        rtt[i] = (e.tv_sec - s.tv_sec) * 1000000000L + e.tv_nsec - s.tv_nsec;
    }
    wait(NULL);
    qsort(rtt, n, sizeof *rtt, by_value);
    printf("round trip ns: p50 %ld p99 %ld p99.9 %ld (%d, NOP_KIB %d, DATA_KIB %d, %s)\n",
           rtt[n / 2], rtt[(long)n * 99 / 100], rtt[(long)n * 999 / 1000], n, NOP_KIB, DATA_KIB,
           spin ? "spinning" : "futex");
    return 0;
}
