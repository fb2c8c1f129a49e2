// cyclone_ping: the Cyclone DDS side of the benchmark harness's latency runs, on Cyclone DDS's C
// API (Debian cyclonedds-dev 0.10.2). `ddsperf ping` prints per-second p50/p90/p99 only; this
// program keeps every round trip, so Cyclone's p99.9, p99.99 and max compare with Tachyon's.
//
//   cyclone_ping ping|pong [options]          (cyclone_ping --help lists them)
//
// The options are `tachyon perf`'s (docs/perf.md) as far as ping and pong use them, and the
// result is the same `tachyon-perf/1` JSON record (bench/SCHEMA.md, "implementation": "cyclone").
// On the wire it behaves as ddsperf does (docs/perf.md, "What compatible with ddsperf takes"), so
// it pings `ddsperf pong`, `tachyon perf pong` or `cyclone_ping pong`, and its pong answers
// `ddsperf ping` and `tachyon perf ping` as well.
//
// Built by bench/build-peers.sh into target/bench/cyclone_ping; the types come from
// cyclone_ping_types.idl through idlc.

#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "dds/dds.h"
#include "dds/version.h"
#include "cyclone_ping_types.h"

// Exit statuses, as `tachyon perf`'s.
enum { EXIT_NO_PEER = 1, EXIT_USAGE = 2, EXIT_DDS = 3 };

// Pings remembered for matching their pongs: more than can be in flight at any rate.
#define RING (1u << 14)
// Samples taken per call.
#define MAX_TAKE 64
// Benchmark participants answered at once, and ping writers remembered (several per participant
// only when participants come and go).
#define MAX_PEERS 64
#define MAX_ROUTES 256

#define NS_PER_S 1000000000LL

// ---------------------------------------------------------------------------------------------
// Options

enum mode { MODE_PING, MODE_PONG };
enum type_kind { TYPE_SIMPLE, TYPE_COMPLEX };

struct options {
  enum mode mode;
  uint32_t domain;
  uint32_t size;
  enum type_kind type;
  bool reliable;
  bool keep_all;
  uint32_t depth;        // 0: not given (1, as ddsperf's ping and pong)
  bool transient_local;
  uint32_t keys;         // accepted for the harness's sake: pings, like tachyon's, use key 0
  bool waitset;
  double rate;           // 0: unlimited, the next ping when every pong is in
  uint32_t burst;        // accepted, as `tachyon perf ping` does, and not used
  double duration;
  uint64_t count;        // 0: no limit
  double warmup;
  uint32_t subscribers;
  double match_timeout;
  bool unicast;
  int cpu;               // -1: not pinned
  int rt_priority;       // 0: not asked for
  const char *json;
  bool quiet;
};

static const char USAGE[] =
  "usage: cyclone_ping ping|pong [options]   (Cyclone DDS " DDS_VERSION ")\n"
  "  --domain N                             DDS domain (0)\n"
  "  --size N                               payload octets, seq and key's 12 included (0 or >= 12)\n"
  "  --type simple|complex                  KeyedSeq (ddsperf's) or PerfComplex (simple)\n"
  "  --reliability reliable|best-effort     (reliable)\n"
  "  --history keep-last|keep-all           of the ping and pong endpoints (keep-last)\n"
  "  --depth N                              keep-last depth (1)\n"
  "  --durability volatile|transient-local  (volatile)\n"
  "  --keys N                               accepted; pings use key 0\n"
  "  --delivery listener|waitset            pongs/pings taken in a listener or by a waitset thread\n"
  "  --rate HZ                              pings/s (unlimited: ping again when all pongs are in)\n"
  "  --burst N                              accepted; not used by ping/pong\n"
  "  --duration S                           measured seconds (pong: seconds to run) (10)\n"
  "  --count N                              stop after N measured round trips\n"
  "  --warmup S                             seconds not counted (1)\n"
  "  --subscribers N                        pongs to wait for and expect per ping (1)\n"
  "  --match-timeout S                      seconds to wait for them; exit status 1 after (10)\n"
  "  --unicast                              no multicast: discovery to localhost's ports\n"
  "  --cpu C                                pin every thread of the process to CPU C\n"
  "  --rt-priority P                        SCHED_FIFO priority P (1-99) for every thread\n"
  "  --transport udp                        the only one\n"
  "  --json PATH|-                          write the tachyon-perf/1 record\n"
  "  --quiet                                no line per second\n"
  "exit status: 0 done, 1 peers missing, 2 bad option, 3 DDS error\n";

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("cyclone_ping: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs(" (--help lists the options)\n", stderr);
  va_end(ap);
  exit(EXIT_USAGE);
}

static uint64_t parse_uint(const char *name, const char *text, uint64_t min, uint64_t max)
{
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || v < min || v > max)
    usage_error("%s %s: expected an integer from %" PRIu64 " to %" PRIu64, name, text, min, max);
  return v;
}

static double parse_double(const char *name, const char *text)
{
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !isfinite(v))
    usage_error("%s %s: expected a number", name, text);
  return v;
}

static int parse_choice(const char *name, const char *text, const char *const *choices)
{
  for (int i = 0; choices[i]; i++)
    if (strcmp(text, choices[i]) == 0)
      return i;
  usage_error("%s %s: not one of the choices", name, text);
}

static void set_option(struct options *o, const char *name, const char *v)
{
  static const char *const reliabilities[] = {"reliable", "best-effort", NULL};
  static const char *const histories[] = {"keep-last", "keep-all", NULL};
  static const char *const durabilities[] = {"volatile", "transient-local", NULL};
  static const char *const deliveries[] = {"listener", "waitset", NULL};
  static const char *const transports[] = {"udp", NULL};
  if (strcmp(name, "domain") == 0) o->domain = (uint32_t) parse_uint("--domain", v, 0, 232);
  else if (strcmp(name, "size") == 0) o->size = (uint32_t) parse_uint("--size", v, 0, UINT32_MAX);
  else if (strcmp(name, "type") == 0) {
    if (strcmp(v, "unkeyed") == 0)
      usage_error("--type unkeyed: not supported by cyclone_ping (simple, complex)");
    o->type = (enum type_kind) parse_choice("--type", v, (const char *const[]){"simple", "complex", NULL});
  }
  else if (strcmp(name, "reliability") == 0) o->reliable = parse_choice("--reliability", v, reliabilities) == 0;
  else if (strcmp(name, "history") == 0) o->keep_all = parse_choice("--history", v, histories) == 1;
  else if (strcmp(name, "depth") == 0) o->depth = (uint32_t) parse_uint("--depth", v, 1, INT32_MAX);
  else if (strcmp(name, "durability") == 0) o->transient_local = parse_choice("--durability", v, durabilities) == 1;
  else if (strcmp(name, "keys") == 0) o->keys = (uint32_t) parse_uint("--keys", v, 1, UINT32_MAX);
  else if (strcmp(name, "delivery") == 0) o->waitset = parse_choice("--delivery", v, deliveries) == 1;
  else if (strcmp(name, "rate") == 0) {
    if (!((o->rate = parse_double("--rate", v)) > 0))
      usage_error("--rate %s: must be above 0 (omit it for unlimited)", v);
  }
  else if (strcmp(name, "burst") == 0) o->burst = (uint32_t) parse_uint("--burst", v, 1, UINT32_MAX);
  else if (strcmp(name, "duration") == 0) o->duration = parse_double("--duration", v);
  else if (strcmp(name, "count") == 0) o->count = parse_uint("--count", v, 1, UINT64_MAX);
  else if (strcmp(name, "warmup") == 0) o->warmup = parse_double("--warmup", v);
  else if (strcmp(name, "subscribers") == 0) o->subscribers = (uint32_t) parse_uint("--subscribers", v, 1, MAX_PEERS);
  else if (strcmp(name, "match-timeout") == 0) o->match_timeout = parse_double("--match-timeout", v);
  else if (strcmp(name, "cpu") == 0) o->cpu = (int) parse_uint("--cpu", v, 0, CPU_SETSIZE - 1);
  else if (strcmp(name, "rt-priority") == 0) o->rt_priority = (int) parse_uint("--rt-priority", v, 1, 99);
  else if (strcmp(name, "transport") == 0) (void) parse_choice("--transport", v, transports);
  else if (strcmp(name, "json") == 0) o->json = v;
}

// What the parser cannot check alone (tachyon perf's rules).
static void validate(const struct options *o, bool depth_given)
{
  if (!(o->duration > 0))
    usage_error("--duration %g: must be above 0", o->duration);
  if (!(o->warmup >= 0))
    usage_error("--warmup %g: must be 0 or more", o->warmup);
  if (o->size > 0 && o->size < 12)
    usage_error("--size %" PRIu32 ": too small for the sequence number and key (0, or 12 and more)", o->size);
  if (o->keep_all && depth_given)
    usage_error("--depth applies to --history keep-last only");
  if (!(o->match_timeout > 0))
    usage_error("--match-timeout %g: must be above 0", o->match_timeout);
}

static struct options parse_options(int argc, char **argv)
{
  static const struct option longopts[] = {
    {"domain", required_argument, NULL, 0}, {"size", required_argument, NULL, 0},
    {"type", required_argument, NULL, 0}, {"reliability", required_argument, NULL, 0},
    {"history", required_argument, NULL, 0}, {"depth", required_argument, NULL, 0},
    {"durability", required_argument, NULL, 0}, {"keys", required_argument, NULL, 0},
    {"delivery", required_argument, NULL, 0}, {"rate", required_argument, NULL, 0},
    {"burst", required_argument, NULL, 0}, {"duration", required_argument, NULL, 0},
    {"count", required_argument, NULL, 0}, {"warmup", required_argument, NULL, 0},
    {"subscribers", required_argument, NULL, 0}, {"match-timeout", required_argument, NULL, 0},
    {"cpu", required_argument, NULL, 0}, {"rt-priority", required_argument, NULL, 0},
    {"transport", required_argument, NULL, 0}, {"json", required_argument, NULL, 0},
    {"unicast", no_argument, NULL, 'u'}, {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  struct options o = {.reliable = true, .keys = 1, .burst = 1, .duration = 10.0, .warmup = 1.0,
                      .subscribers = 1, .match_timeout = 10.0, .cpu = -1};
  bool depth_given = false;
  int c, index;
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    fputs(USAGE, stdout);
    exit(0);
  }
  if (argc < 2 || argv[1][0] == '-')
    usage_error("expected a mode first: ping or pong");
  o.mode = (enum mode) parse_choice("mode", argv[1], (const char *const[]){"ping", "pong", NULL});
  // The options follow the mode (getopt takes argv[1], the mode, for the program's name).
  argc--;
  argv++;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "+", longopts, &index)) != -1) {
    switch (c) {
      case 0:
        depth_given |= strcmp(longopts[index].name, "depth") == 0;
        set_option(&o, longopts[index].name, optarg);
        break;
      case 'u': o.unicast = true; break;
      case 'q': o.quiet = true; break;
      case 'h': fputs(USAGE, stdout); exit(0);
      default: usage_error("unknown or incomplete option %s", argv[optind - 1]);
    }
  }
  if (optind != argc)
    usage_error("unexpected argument %s", argv[optind]);
  validate(&o, depth_given);
  return o;
}

// ---------------------------------------------------------------------------------------------
// Clocks, signals, errors

static int64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
  if (ns <= 0)
    return;
  struct timespec ts = {.tv_sec = ns / NS_PER_S, .tv_nsec = ns % NS_PER_S};
  nanosleep(&ts, NULL);
}

// SIGINT/SIGTERM end a run early (a pong stopped by the harness leaves its peers cleanly).
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
  (void) sig;
  stop_requested = 1;
}

static void catch_signals(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

static dds_entity_t check(dds_entity_t e, const char *what)
{
  if (e < 0) {
    fprintf(stderr, "cyclone_ping: %s: %s\n", what, dds_strretcode(e));
    exit(EXIT_DDS);
  }
  return e;
}

// Pins the process (the threads Cyclone starts later inherit it) before the participant exists.
static void pin_process(const struct options *o)
{
  if (o->cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o->cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
      fprintf(stderr, "cyclone_ping: cannot pin to CPU %d: %s\n", o->cpu, strerror(errno));
  }
  if (o->rt_priority > 0) {
    struct sched_param p = {.sched_priority = o->rt_priority};
    if (sched_setscheduler(0, SCHED_FIFO, &p) != 0)
      fprintf(stderr, "cyclone_ping: cannot set SCHED_FIFO %d: %s\n", o->rt_priority, strerror(errno));
  }
}

// ---------------------------------------------------------------------------------------------
// Samples

// Both types begin with the sequence number: pongs are matched to pings by it whatever the type.
_Static_assert(offsetof(KeyedSeq, seq) == 0 && offsetof(PerfComplex, seq) == 0, "seq first");

// PerfItems in a PerfComplex of --size `size`: as many as `tachyon perf` puts in (its rule counts
// 28 octets an item), so both send the same samples.
static uint32_t complex_items(uint32_t size)
{
  return size > 16 ? (size - 16 + 27) / 28 : 0;
}

// Payload octets of a sample of --size `size`, as written, encapsulation header excluded:
// ddsperf's count for KeyedSeq (12 + baggage, the same in XCDR1 and XCDR2); for PerfComplex the
// XCDR1 size, which Cyclone 0.10.2 writes for a @final type by default (seq, keyval and the
// sequence's length, then 32 octets an item: name length 4, 12 characters with the NUL, 4 of
// padding to align the int64 to 8, value 8, flags 4; measured: an item more, 32 octets more
// in the datagram).
static uint64_t payload_bytes(const struct options *o)
{
  if (o->type == TYPE_COMPLEX)
    return 12 + 32 * (uint64_t) complex_items(o->size);
  return o->size > 12 ? o->size : 12;
}

// xorshift64: the random part of payloads, so that no layer can compress them.
static uint8_t next_random(uint64_t *x)
{
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return (uint8_t) *x;
}

static void *make_keyed_seq(uint32_t size)
{
  KeyedSeq *s = calloc(1, sizeof *s);
  uint32_t n = size > 12 ? size - 12 : 0;
  uint64_t x = 0x9e3779b97f4a7c15u;
  s->baggage._buffer = malloc(n ? n : 1);
  s->baggage._length = s->baggage._maximum = n;
  // First half 0xee as ddsperf fills it, second half random.
  for (uint32_t i = 0; i < n; i++)
    s->baggage._buffer[i] = i < n / 2 ? 0xee : next_random(&x);
  return s;
}

static void *make_perf_complex(uint32_t size)
{
  PerfComplex *s = calloc(1, sizeof *s);
  uint32_t n = complex_items(size);
  uint64_t x = 0x2545f4914f6cdd1du;
  s->items._buffer = calloc(n ? n : 1, sizeof(PerfItem));
  s->items._length = s->items._maximum = n;
  for (uint32_t i = 0; i < n; i++) {
    PerfItem *it = &s->items._buffer[i];
    it->name = malloc(12);
    snprintf(it->name, 12, "item-%06" PRIu32, i % 1000000);
    it->value = (int64_t) ((uint64_t) next_random(&x) << 40 | i);
    it->flags = next_random(&x);
  }
  return s;
}

static void *make_sample(const struct options *o)
{
  return o->type == TYPE_COMPLEX ? make_perf_complex(o->size) : make_keyed_seq(o->size);
}

static void free_sample(const struct options *o, void *sample)
{
  if (o->type == TYPE_COMPLEX) {
    PerfComplex *s = sample;
    for (uint32_t i = 0; i < s->items._length; i++)
      free(s->items._buffer[i].name);
    free(s->items._buffer);
  } else {
    free(((KeyedSeq *) sample)->baggage._buffer);
  }
  free(sample);
}

// ---------------------------------------------------------------------------------------------
// Latencies: every measured round trip kept in arrival order, sorted at the end (exact
// percentiles, as exact as the clock); running sums for the mean, stddev and PDV.

struct recorder {
  // Round trips in ns, saturated at UINT32_MAX (4.29 s, far beyond where percentiles matter
  // here; the exact maximum is kept apart): 4 octets a round trip, half of what ns in 64 bits
  // would add to the peak RSS the report compares.
  uint32_t *v;
  size_t n, cap;
  size_t interval_from;  // index of the current second's first round trip
  uint64_t min, max;     // exact
  double mean, m2;       // Welford
  uint64_t previous, pdv_sum;
  uint64_t lost;
};

static void rec_init(struct recorder *r, size_t cap)
{
  memset(r, 0, sizeof *r);
  r->cap = cap;
  // Untouched pages cost no memory: only what a run records becomes resident.
  if ((r->v = malloc(cap * sizeof *r->v)) == NULL) {
    fprintf(stderr, "cyclone_ping: cannot allocate room for %zu round trips\n", cap);
    exit(EXIT_DDS);
  }
}

static void rec_add(struct recorder *r, uint64_t ns)
{
  if (r->n == r->cap) {
    uint32_t *v = realloc(r->v, 2 * r->cap * sizeof *v);
    if (v == NULL) {
      fprintf(stderr, "cyclone_ping: out of memory after %zu round trips\n", r->n);
      exit(EXIT_DDS);
    }
    r->v = v;
    r->cap *= 2;
  }
  r->v[r->n++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t) ns;
  if (r->n == 1 || ns < r->min)
    r->min = ns;
  if (ns > r->max)
    r->max = ns;
  double delta = (double) ns - r->mean;
  r->mean += delta / (double) r->n;
  r->m2 += delta * ((double) ns - r->mean);
  if (r->n > 1)
    r->pdv_sum += ns > r->previous ? ns - r->previous : r->previous - ns;
  r->previous = ns;
}

static int cmp_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  return (x > y) - (x < y);
}

// The value at quantile q of `sorted` (nearest rank: the smallest value with at least q of
// them at or below it, as an HDR histogram reports it), at most the exact maximum.
static uint64_t quantile(const uint32_t *sorted, size_t n, double q, uint64_t max)
{
  size_t rank = (size_t) ceil(q * (double) n);
  uint64_t v = sorted[(rank < 1 ? 1 : rank) - 1];
  return v > max ? max : v;
}

struct summary {
  uint64_t count, lost, min, mean, p50, p90, p99, p99_9, p99_99, max, stddev, pdv;
};

// Sorts the recorded round trips in place (their order is gone afterwards).
static struct summary rec_summary(struct recorder *r)
{
  struct summary s = {.count = r->n, .lost = r->lost};
  if (r->n == 0)
    return s;
  qsort(r->v, r->n, sizeof *r->v, cmp_u32);
  s.min = r->min;
  s.max = r->max;
  s.mean = (uint64_t) llround(r->mean);
  s.p50 = quantile(r->v, r->n, 0.5, r->max);
  s.p90 = quantile(r->v, r->n, 0.9, r->max);
  s.p99 = quantile(r->v, r->n, 0.99, r->max);
  s.p99_9 = quantile(r->v, r->n, 0.999, r->max);
  s.p99_99 = quantile(r->v, r->n, 0.9999, r->max);
  s.stddev = r->n > 1 ? (uint64_t) llround(sqrt(r->m2 / (double) (r->n - 1))) : 0;
  s.pdv = r->n > 1 ? r->pdv_sum / (r->n - 1) : 0;
  return s;
}

// One second of the measured part: its round trips are v[from..to) until the final sort.
struct interval {
  double t, seconds;
  size_t from, to;
  uint64_t p50, max;
};

struct timeline {
  struct interval *e;
  size_t n, cap;
};

static struct interval *timeline_add(struct timeline *tl)
{
  if (tl->n == tl->cap) {
    tl->cap = tl->cap ? 2 * tl->cap : 64;
    if ((tl->e = realloc(tl->e, tl->cap * sizeof *tl->e)) == NULL) {
      fputs("cyclone_ping: out of memory\n", stderr);
      exit(EXIT_DDS);
    }
  }
  return &tl->e[tl->n++];
}

// p50 and max of v[from..to), through a sorted copy in `scratch` (grown as needed).
static void slice_stats(const uint32_t *v, struct interval *iv, uint32_t **scratch, size_t *cap)
{
  size_t n = iv->to - iv->from;
  iv->p50 = iv->max = 0;
  if (n == 0)
    return;
  if (n > *cap) {
    free(*scratch);
    *cap = n;
    if ((*scratch = malloc(n * sizeof **scratch)) == NULL) {
      fputs("cyclone_ping: out of memory\n", stderr);
      exit(EXIT_DDS);
    }
  }
  memcpy(*scratch, v + iv->from, n * sizeof *v);
  qsort(*scratch, n, sizeof **scratch, cmp_u32);
  iv->p50 = quantile(*scratch, n, 0.5, UINT64_MAX);
  iv->max = (*scratch)[n - 1];
}

// ---------------------------------------------------------------------------------------------
// CPU time and peak memory of this process over the measured part

struct usage {
  int64_t at;
  double user_s, sys_s;
};

static struct usage usage_now(void)
{
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (struct usage){
    .at = mono_ns(),
    .user_s = (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec / 1e6,
    .sys_s = (double) ru.ru_stime.tv_sec + (double) ru.ru_stime.tv_usec / 1e6};
}

// VmHWM of /proc/self/status (getrusage's ru_maxrss would count what the exec'ing process had).
static long peak_rss_kib(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
      break;
  fclose(f);
  return kib;
}

// ---------------------------------------------------------------------------------------------
// The participant: every endpoint ddsperf expects of a peer, and a pong writer per benchmark
// participant discovered, in a publisher whose partition is that participant's GUID (ddsperf
// answers only participants whose USER_DATA says "DDSPerf:", and reports those that lack one).

struct peer {
  dds_instance_handle_t participant;
  dds_entity_t publisher, writer;
};

// Which pong writer answers the pings of a ping writer (found once per ping writer).
struct route {
  dds_instance_handle_t publication;
  dds_entity_t writer;
};

struct node {
  const struct options *o;
  int64_t created;  // monotonic, before the participant was created (for discovery_ns)
  dds_entity_t dp, tp_pong;
  dds_entity_t wr_ping, rd_ping, rd_pong, wr_data;
  dds_instance_handle_t self;
  dds_qos_t *pong_qos;

  pthread_mutex_t lock;  // guards peers and routes
  struct peer peers[MAX_PEERS];
  size_t npeers;
  struct route routes[MAX_ROUTES];
  size_t nroutes;

  dds_entity_t rd_participants, disc_waitset, disc_stop;
  atomic_bool disc_stopping;
  pthread_t disc_thread;
};

static const char UDATA_MAGIC[] = "DDSPerf:";

// ddsperf's USER_DATA: DDSPerf:<has data reader>:<pid>:<hostname>.
static bool is_benchmark_user_data(const char *u, size_t len)
{
  size_t i = sizeof UDATA_MAGIC - 1;
  if (len < i || memcmp(u, UDATA_MAGIC, i) != 0)
    return false;
  for (int field = 0; field < 2; field++) {
    size_t start = i;
    while (i < len && isdigit((unsigned char) u[i]))
      i++;
    if (i == start || i >= len || u[i] != ':')
      return false;
    i++;
  }
  return true;
}

static void set_user_data(dds_qos_t *q)
{
  char udata[300], host[256];
  if (gethostname(host, sizeof host) != 0)
    strcpy(host, "?");
  host[sizeof host - 1] = '\0';
  // No data reader: ping and pong only.
  int n = snprintf(udata, sizeof udata, "%s0:%ld:%s", UDATA_MAGIC, (long) getpid(), host);
  dds_qset_userdata(q, udata, n < (int) sizeof udata ? (size_t) n : sizeof udata - 1);
}

// A participant's GUID as ddsperf writes it for partition names: xxxxxxxx_xxxxxxxx_xxxxxxxx_xxxxxxxx.
static void guid_partition(const dds_guid_t *g, char out[36])
{
  const uint8_t *v = g->v;
  snprintf(out, 36, "%02x%02x%02x%02x_%02x%02x%02x%02x_%02x%02x%02x%02x_%02x%02x%02x%02x",
           v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7],
           v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15]);
}

// Reliability, durability and history from the command line, and no matching within the
// participant (ddsperf's ignorelocal).
static dds_qos_t *endpoint_qos(const struct options *o, bool keep_all, int32_t depth)
{
  dds_qos_t *q = dds_create_qos();
  dds_qset_reliability(q, o->reliable ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT, DDS_SECS(10));
  dds_qset_durability(q, o->transient_local ? DDS_DURABILITY_TRANSIENT_LOCAL : DDS_DURABILITY_VOLATILE);
  dds_qset_history(q, keep_all ? DDS_HISTORY_KEEP_ALL : DDS_HISTORY_KEEP_LAST, keep_all ? 0 : depth);
  dds_qset_ignorelocal(q, DDS_IGNORELOCAL_PARTICIPANT);
  return q;
}

static int32_t ping_depth(const struct options *o)
{
  return o->depth ? (int32_t) o->depth : 1;
}

static void pongs_add(struct node *n, dds_instance_handle_t participant, const dds_guid_t *guid)
{
  char partition[36];
  guid_partition(guid, partition);
  dds_qos_t *q = dds_create_qos();
  dds_qset_partition1(q, partition);
  dds_entity_t pub = check(dds_create_publisher(n->dp, q, NULL), "create the pong publisher");
  dds_delete_qos(q);
  dds_entity_t wr = check(dds_create_writer(pub, n->tp_pong, n->pong_qos, NULL), "create a pong writer");
  pthread_mutex_lock(&n->lock);
  if (n->npeers < MAX_PEERS) {
    n->peers[n->npeers++] = (struct peer){participant, pub, wr};
    pub = 0;
  }
  pthread_mutex_unlock(&n->lock);
  if (pub != 0) {
    fprintf(stderr, "cyclone_ping: more than %d benchmark participants: not answering more\n", MAX_PEERS);
    dds_delete(pub);
  }
}

static void pongs_remove(struct node *n, dds_instance_handle_t participant)
{
  dds_entity_t pub = 0;
  pthread_mutex_lock(&n->lock);
  for (size_t i = 0; i < n->npeers; i++) {
    if (n->peers[i].participant != participant)
      continue;
    pub = n->peers[i].publisher;
    for (size_t j = 0; j < n->nroutes;)
      if (n->routes[j].writer == n->peers[i].writer)
        n->routes[j] = n->routes[--n->nroutes];
      else
        j++;
    n->peers[i] = n->peers[--n->npeers];
    break;
  }
  pthread_mutex_unlock(&n->lock);
  if (pub != 0)
    dds_delete(pub);  // and its writer
}

static bool pongs_known(struct node *n, dds_instance_handle_t participant)
{
  bool known = false;
  pthread_mutex_lock(&n->lock);
  for (size_t i = 0; i < n->npeers && !known; i++)
    known = n->peers[i].participant == participant;
  pthread_mutex_unlock(&n->lock);
  return known;
}

static dds_entity_t route_lookup(struct node *n, dds_instance_handle_t publication)
{
  dds_entity_t wr = 0;
  pthread_mutex_lock(&n->lock);
  for (size_t i = 0; i < n->nroutes && wr == 0; i++)
    if (n->routes[i].publication == publication)
      wr = n->routes[i].writer;
  pthread_mutex_unlock(&n->lock);
  return wr;
}

// The pong writer for pings of writer `publication` (0 when its participant has none yet: that
// ping goes unanswered, and its sender pings again after a while).
static dds_entity_t pong_writer_for(struct node *n, dds_instance_handle_t publication)
{
  dds_entity_t wr = route_lookup(n, publication);
  if (wr != 0)
    return wr;
  dds_builtintopic_endpoint_t *ep = dds_get_matched_publication_data(n->rd_ping, publication);
  if (ep == NULL)
    return 0;
  pthread_mutex_lock(&n->lock);
  for (size_t i = 0; i < n->npeers && wr == 0; i++)
    if (n->peers[i].participant == ep->participant_instance_handle)
      wr = n->peers[i].writer;
  if (wr != 0 && n->nroutes < MAX_ROUTES)
    n->routes[n->nroutes++] = (struct route){publication, wr};
  pthread_mutex_unlock(&n->lock);
  dds_builtintopic_free_endpoint(ep);
  return wr;
}

static void on_participant(struct node *n, const dds_builtintopic_participant_t *p, const dds_sample_info_t *info)
{
  if (info->instance_handle == n->self)
    return;
  if (info->instance_state != DDS_IST_ALIVE) {
    pongs_remove(n, info->instance_handle);
    return;
  }
  void *udata;
  size_t len;
  if (!info->valid_data || !dds_qget_userdata(p->qos, &udata, &len))
    return;
  if (len > 0 && is_benchmark_user_data(udata, len) && !pongs_known(n, info->instance_handle))
    pongs_add(n, info->instance_handle, &p->key);
  dds_free(udata);
}

// The discovery thread: pong writers are created here rather than in a listener, which runs on
// one of Cyclone's own threads and should not block (ddsperf, too, hands this to a thread of its
// own). It sleeps in a waitset until a participant appears or leaves.
static void *discovery_main(void *arg)
{
  struct node *n = arg;
  while (!atomic_load(&n->disc_stopping)) {
    void *buf[1] = {NULL};
    dds_sample_info_t info;
    while (dds_take_wl(n->rd_participants, buf, &info, 1) > 0) {
      on_participant(n, buf[0], &info);
      dds_return_loan(n->rd_participants, buf, 1);
      buf[0] = NULL;
    }
    dds_waitset_wait(n->disc_waitset, NULL, 0, DDS_SECS(1));
  }
  return NULL;
}

static void start_discovery(struct node *n)
{
  n->rd_participants = check(dds_create_reader(n->dp, DDS_BUILTIN_TOPIC_DCPSPARTICIPANT, NULL, NULL),
                             "create the participant reader");
  n->disc_waitset = check(dds_create_waitset(n->dp), "create the discovery waitset");
  n->disc_stop = check(dds_create_guardcondition(n->dp), "create a guard condition");
  dds_entity_t rc = check(dds_create_readcondition(n->rd_participants, DDS_ANY_STATE), "create a read condition");
  check(dds_waitset_attach(n->disc_waitset, rc, 0), "attach the participant reader");
  check(dds_waitset_attach(n->disc_waitset, n->disc_stop, 0), "attach the stop condition");
  atomic_init(&n->disc_stopping, false);
  if (pthread_create(&n->disc_thread, NULL, discovery_main, n) != 0) {
    fputs("cyclone_ping: cannot start the discovery thread\n", stderr);
    exit(EXIT_DDS);
  }
}

// The domain's configuration: CYCLONEDDS_URI's, and with --unicast no multicast at all
// (discovery by unicast to this host's participant ports, as the harness configures ddsperf).
static void create_domain(const struct options *o)
{
  if (!o->unicast)
    return;
  const char *uri = getenv("CYCLONEDDS_URI");
  char config[1024];
  snprintf(config, sizeof config,
           "%s%s<CycloneDDS><Domain id=\"any\"><General><AllowMulticast>false</AllowMulticast></General>"
           "<Discovery><ParticipantIndex>auto</ParticipantIndex>"
           "<MaxAutoParticipantIndex>%" PRIu32 "</MaxAutoParticipantIndex>"
           "<Peers><Peer address=\"localhost\"/></Peers></Discovery></Domain></CycloneDDS>",
           uri ? uri : "", uri && *uri ? "," : "", o->subscribers + 10);
  check(dds_create_domain(o->domain, config), "create the domain");
}

static void topic_name(char *out, size_t size, const struct options *o, const char *kind)
{
  if (o->type == TYPE_COMPLEX)
    snprintf(out, size, "TachyonPerf%c%sCX", o->reliable ? 'R' : 'U', kind);
  else
    snprintf(out, size, "DDSPerf%c%sKS", o->reliable ? 'R' : 'U', kind);
}

static dds_entity_t create_topic(struct node *n, const char *kind)
{
  char name[64];
  topic_name(name, sizeof name, n->o, kind);
  const dds_topic_descriptor_t *desc = n->o->type == TYPE_COMPLEX ? &PerfComplex_desc : &KeyedSeq_desc;
  return check(dds_create_topic(n->dp, desc, name, NULL, NULL), name);
}

// The pong reader, in a subscriber whose partition is this participant's GUID. Every pong of a
// ping is the same instance (key 0): with several peers answering, a keep-last history must hold
// one per peer, or one pong replaces another before it is taken.
static dds_entity_t create_pong_reader(struct node *n)
{
  dds_guid_t guid;
  char partition[36];
  check(dds_get_guid(n->dp, &guid), "get the participant's GUID");
  guid_partition(&guid, partition);
  dds_qos_t *q = dds_create_qos();
  dds_qset_partition1(q, partition);
  dds_entity_t sub = check(dds_create_subscriber(n->dp, q, NULL), "create the pong subscriber");
  dds_delete_qos(q);
  q = endpoint_qos(n->o, n->o->keep_all, ping_depth(n->o) * (int32_t) n->o->subscribers);
  dds_entity_t rd = check(dds_create_reader(sub, n->tp_pong, q, NULL), "create the pong reader");
  dds_delete_qos(q);
  return rd;
}

static void node_init(struct node *n, const struct options *o)
{
  memset(n, 0, sizeof *n);
  n->o = o;
  pthread_mutex_init(&n->lock, NULL);
  n->created = mono_ns();
  create_domain(o);
  dds_qos_t *q = dds_create_qos();
  set_user_data(q);
  n->dp = check(dds_create_participant(o->domain, q, NULL), "create the participant");
  dds_delete_qos(q);
  check(dds_get_instance_handle(n->dp, &n->self), "get the participant's handle");
  dds_entity_t tp_ping = create_topic(n, "Ping");
  dds_entity_t tp_data = create_topic(n, "Data");
  n->tp_pong = create_topic(n, "Pong");
  dds_entity_t pub = check(dds_create_publisher(n->dp, NULL, NULL), "create the publisher");
  dds_entity_t sub = check(dds_create_subscriber(n->dp, NULL, NULL), "create the subscriber");
  n->pong_qos = endpoint_qos(o, o->keep_all, ping_depth(o));
  n->rd_ping = check(dds_create_reader(sub, tp_ping, n->pong_qos, NULL), "create the ping reader");
  n->wr_ping = check(dds_create_writer(pub, tp_ping, n->pong_qos, NULL), "create the ping writer");
  // Never written: ddsperf expects every peer to have one (its data readers check for it).
  q = endpoint_qos(o, true, 0);
  n->wr_data = check(dds_create_writer(pub, tp_data, q, NULL), "create the data writer");
  dds_delete_qos(q);
  n->rd_pong = create_pong_reader(n);
  start_discovery(n);
}

static void node_fini(struct node *n)
{
  atomic_store(&n->disc_stopping, true);
  dds_set_guardcondition(n->disc_stop, true);
  pthread_join(n->disc_thread, NULL);
  dds_delete(n->dp);
  dds_delete_qos(n->pong_qos);
  pthread_mutex_destroy(&n->lock);
}

// ---------------------------------------------------------------------------------------------
// pong: answer every ping with the same sample and the ping's source timestamp, lowest bit set
// (ddsperf's mark of a pong of a ping), to the participant that sent it.

static void answer_pings(struct node *n, dds_entity_t from)
{
  void *buf[MAX_TAKE] = {NULL};
  dds_sample_info_t info[MAX_TAKE];
  int32_t k = dds_take_wl(from, buf, info, MAX_TAKE);
  for (int32_t i = 0; i < k; i++) {
    if (!info[i].valid_data)
      continue;
    dds_entity_t wr = pong_writer_for(n, info[i].publication_handle);
    // A failed write (the peer left meanwhile) is a lost pong: its sender pings again.
    if (wr != 0)
      (void) dds_write_ts(wr, buf[i], info[i].source_timestamp | 1);
  }
  if (k > 0)
    dds_return_loan(from, buf, k);
}

static void on_pings(dds_entity_t rd, void *arg)
{
  answer_pings(arg, rd);
}

static void set_data_listener(dds_entity_t rd, dds_on_data_available_fn fn, void *arg)
{
  dds_listener_t *l = dds_create_listener(arg);
  dds_lset_data_available(l, fn);
  check(dds_set_listener(rd, l), "set a listener");
  dds_delete_listener(l);
}

// A waitset woken by unread samples of `rd`; *cond receives the read condition to take with.
static dds_entity_t reader_waitset(dds_entity_t dp, dds_entity_t rd, dds_entity_t *cond)
{
  dds_entity_t ws = check(dds_create_waitset(dp), "create a waitset");
  *cond = check(dds_create_readcondition(rd, DDS_NOT_READ_SAMPLE_STATE | DDS_ANY_VIEW_STATE | DDS_ANY_INSTANCE_STATE),
                "create a read condition");
  check(dds_waitset_attach(ws, *cond, 0), "attach a read condition");
  return ws;
}

static int run_pong(struct node *n)
{
  const struct options *o = n->o;
  dds_entity_t ws = 0, cond = 0;
  if (o->waitset)
    ws = reader_waitset(n->dp, n->rd_ping, &cond);
  else
    set_data_listener(n->rd_ping, on_pings, n);
  if (!o->quiet)
    fprintf(stderr, "pong: answering pings for %g s\n", o->warmup + o->duration);
  const int64_t end = n->created + (int64_t) ((o->warmup + o->duration) * 1e9);
  for (int64_t now = mono_ns(); now < end && !stop_requested; now = mono_ns()) {
    int64_t wait = end - now < 100000000 ? end - now : 100000000;
    if (o->waitset) {
      dds_waitset_wait(ws, NULL, 0, wait);
      answer_pings(n, cond);
    } else {
      sleep_ns(wait < 50000000 ? wait : 50000000);
    }
  }
  if (!o->waitset)
    dds_set_listener(n->rd_ping, NULL);  // returns once no callback runs any more
  return 0;
}

// ---------------------------------------------------------------------------------------------
// ping: write a ping, wait for the pong of every expected peer, record the round trip on this
// process's monotonic clock, repeat (or ping at a fixed --rate, whatever the pongs do).

struct pinger {
  pthread_mutex_t lock;  // everything below but `sample`
  uint32_t seq;          // of the newest ping
  uint32_t seen;         // pongs of the newest ping
  int64_t last_sent;     // when the newest ping was written
  uint32_t ring_seq[RING];
  int64_t ring_at[RING];  // when each recent ping was written, by seq % RING
  bool measuring, finished;
  uint64_t sent_measured;
  struct recorder rec;

  pthread_mutex_t sample_lock;  // the sample, held by whoever writes
  void *sample;
  dds_entity_t writer;
  uint32_t expected;   // pongs per ping
  bool back_to_back;   // ping again as soon as every pong came (no --rate)
};

static void send_next(struct pinger *p)
{
  pthread_mutex_lock(&p->lock);
  if (p->finished) {
    pthread_mutex_unlock(&p->lock);
    return;
  }
  uint32_t seq = ++p->seq;
  int64_t now = mono_ns();
  p->seen = 0;
  p->last_sent = now;
  p->ring_seq[seq % RING] = seq;
  p->ring_at[seq % RING] = now;
  if (p->measuring)
    p->sent_measured++;
  pthread_mutex_unlock(&p->lock);

  pthread_mutex_lock(&p->sample_lock);
  ((KeyedSeq *) p->sample)->seq = seq;
  // ddsperf's convention: the lowest bit of the timestamp set means "a ping".
  (void) dds_write_ts(p->writer, p->sample, dds_time() | 1);
  pthread_mutex_unlock(&p->sample_lock);
}

// Records the round trips of the pongs taken; pings again when all expected pongs are in.
static void on_pongs(struct pinger *p, void *const *buf, const dds_sample_info_t *info, int32_t k)
{
  int64_t now = mono_ns();
  bool complete = false, again;
  pthread_mutex_lock(&p->lock);
  for (int32_t i = 0; i < k; i++) {
    if (!info[i].valid_data)
      continue;
    uint32_t seq = ((const KeyedSeq *) buf[i])->seq;
    if (p->ring_seq[seq % RING] != seq || p->ring_at[seq % RING] == 0)
      continue;
    if (p->measuring)
      rec_add(&p->rec, (uint64_t) (now - p->ring_at[seq % RING]));
    if (seq == p->seq)
      complete = ++p->seen >= p->expected;
  }
  again = complete && p->back_to_back && !p->finished;
  pthread_mutex_unlock(&p->lock);
  if (again)
    send_next(p);
}

static void take_pongs(struct pinger *p, dds_entity_t from)
{
  void *buf[MAX_TAKE] = {NULL};
  dds_sample_info_t info[MAX_TAKE];
  int32_t k = dds_take_wl(from, buf, info, MAX_TAKE);
  if (k > 0) {
    on_pongs(p, buf, info, k);
    dds_return_loan(from, buf, k);
  }
}

static void on_pong_data(dds_entity_t rd, void *arg)
{
  take_pongs(arg, rd);
}

// Waits until the ping writer and the pong reader each matched --subscribers peers; the
// nanoseconds since the participant's creation, or -1.
static int64_t wait_matched(struct node *n)
{
  const struct options *o = n->o;
  const int64_t deadline = mono_ns() + (int64_t) (o->match_timeout * 1e9);
  dds_publication_matched_status_t w;
  dds_subscription_matched_status_t r;
  for (;;) {
    dds_get_publication_matched_status(n->wr_ping, &w);
    dds_get_subscription_matched_status(n->rd_pong, &r);
    if (w.current_count >= o->subscribers && r.current_count >= o->subscribers)
      return mono_ns() - n->created;
    if (mono_ns() >= deadline || stop_requested) {
      fprintf(stderr, "cyclone_ping: no peer: after %g s the ping writer matched %" PRIu32
              " and the pong reader %" PRIu32 " of %" PRIu32 " expected peers\n",
              o->match_timeout, w.current_count, r.current_count, o->subscribers);
      return -1;
    }
    sleep_ns(1000000);
  }
}

// Room for the round trips of a run at 250,000 a second (more than this machine's loopback
// gives): rarely grown while measuring.
static size_t expected_round_trips(const struct options *o)
{
  double n = o->count ? (double) o->count : (o->duration + 1.0) * 250000.0 * o->subscribers;
  return (size_t) fmin(fmax(n, 1024.0), 1e9);
}

static void pinger_init(struct pinger *p, struct node *n)
{
  memset(p, 0, sizeof *p);
  pthread_mutex_init(&p->lock, NULL);
  pthread_mutex_init(&p->sample_lock, NULL);
  rec_init(&p->rec, expected_round_trips(n->o));
  p->sample = make_sample(n->o);
  p->writer = n->wr_ping;
  p->expected = n->o->subscribers;
  p->back_to_back = n->o->rate == 0;
  p->last_sent = mono_ns();
}

static void pinger_fini(struct pinger *p, const struct options *o)
{
  free_sample(o, p->sample);
  free(p->rec.v);
  pthread_mutex_destroy(&p->lock);
  pthread_mutex_destroy(&p->sample_lock);
}

// The state of the main loop of ping.
struct ping_loop {
  int64_t start, warmup, measure, period;
  int64_t next_send, next_tick, last_tick;
  int64_t measured_from;  // 0: still warming up
  struct usage usage_from;
  struct timeline timeline;
  uint32_t *scratch;  // for the live line's median
  size_t scratch_cap;
};

// Paces pings: at the fixed rate, or again when nobody answered the last one for a while
// (lost; 100 ms while warming up, when discovery may still be settling, then 1 s).
static void pace(struct pinger *p, struct ping_loop *l, int64_t now)
{
  if (l->period > 0) {
    for (; l->next_send <= now; l->next_send += l->period)
      send_next(p);
    return;
  }
  int64_t timeout = l->measured_from ? NS_PER_S : NS_PER_S / 10;
  pthread_mutex_lock(&p->lock);
  bool stale = now - p->last_sent >= timeout;
  pthread_mutex_unlock(&p->lock);
  if (stale)
    send_next(p);
}

// Closes the current second: its round trips are those recorded since the previous one.
static void end_interval(struct pinger *p, struct ping_loop *l, int64_t now, bool quiet)
{
  struct interval *iv = timeline_add(&l->timeline);
  iv->t = (double) (now - l->measured_from) / 1e9;
  iv->seconds = (double) (now - l->last_tick) / 1e9;
  pthread_mutex_lock(&p->lock);
  iv->from = p->rec.interval_from;
  iv->to = p->rec.interval_from = p->rec.n;
  if (!quiet)
    slice_stats(p->rec.v, iv, &l->scratch, &l->scratch_cap);
  pthread_mutex_unlock(&p->lock);
  if (!quiet && iv->to > iv->from)
    fprintf(stderr, "ping %6.1fs  %8zu round trips  p50 %8.1f us  max %8.1f us\n", iv->t,
            iv->to - iv->from, (double) iv->p50 / 1e3, (double) iv->max / 1e3);
  else if (!quiet)
    fprintf(stderr, "ping %6.1fs  %8zu round trips\n", iv->t, (size_t) 0);
  l->last_tick = now;
  l->next_tick += NS_PER_S;
}

// Every measured ping should have brought one pong per peer; the newest may still be on its way.
static uint64_t count_lost(const struct pinger *p)
{
  uint64_t expected = p->sent_measured * p->expected;
  uint64_t in_flight = p->expected > p->seen ? p->expected - p->seen : 0;
  uint64_t got = p->rec.n + in_flight;
  return expected > got ? expected - got : 0;
}

// One turn of the loop's bookkeeping; true when the run is over.
static bool ping_step(struct pinger *p, struct ping_loop *l, const struct options *o, int64_t now)
{
  if (l->measured_from == 0 && now >= l->start + l->warmup) {
    pthread_mutex_lock(&p->lock);
    p->measuring = true;
    pthread_mutex_unlock(&p->lock);
    l->measured_from = now;
    l->last_tick = now;
    l->next_tick = now + NS_PER_S;  // so that the last second ends with the run
    l->usage_from = usage_now();
  }
  if (l->measured_from == 0)
    return stop_requested;
  pthread_mutex_lock(&p->lock);
  bool done = (o->count && p->rec.n >= o->count) || now >= l->measured_from + l->measure || stop_requested;
  if (done) {
    // No more pings, and pongs still arriving are not counted: the summary, the last second
    // and the losses all end here.
    p->measuring = false;
    p->finished = true;
    p->rec.lost = count_lost(p);
  }
  pthread_mutex_unlock(&p->lock);
  if (now >= l->next_tick || done)
    end_interval(p, l, now, o->quiet);
  return done;
}

// Waits for pongs (waitset) or sleeps until something is due.
// Wakes at the next second's line, the warm-up's or the run's end, the next paced ping, and
// otherwise every 100 ms to look for a lost ping (every 10 ms with --count, for the count
// reached), as `tachyon perf ping` does: a look every 10 ms made 100 wake-ups a second in a
// one-vCPU ping-pong's tail.
static void ping_wait(struct pinger *p, struct ping_loop *l, dds_entity_t ws, dds_entity_t cond,
                      const struct options *o, int64_t now)
{
  int64_t look = now + (o->count ? 10000000 : 100000000);
  int64_t end = l->measured_from ? l->measured_from + l->measure : l->start + l->warmup;
  int64_t due = l->next_tick < look ? l->next_tick : look;
  if (end < due)
    due = end;
  if (l->period > 0 && l->next_send < due)
    due = l->next_send;
  int64_t wait = due - mono_ns();
  if (ws != 0) {
    dds_waitset_wait(ws, NULL, 0, wait > 0 ? wait : 0);
    take_pongs(p, cond);
  } else {
    sleep_ns(wait);
  }
}

struct ping_result {
  struct summary latency;
  struct timeline timeline;
  struct usage usage_from, usage_to;
  double measured_s;
  int64_t discovery_ns;
  uint32_t *sorted;  // every measured round trip, sorted (the histogram)
};

static void run_ping_loop(struct pinger *p, struct ping_loop *l, const struct options *o,
                          dds_entity_t ws, dds_entity_t cond)
{
  l->start = mono_ns();
  l->warmup = (int64_t) (o->warmup * 1e9);
  l->measure = (int64_t) (o->duration * 1e9);
  l->period = o->rate > 0 ? (int64_t) (1e9 / o->rate) : 0;
  l->next_send = l->start + l->period;
  l->next_tick = l->start + l->warmup + NS_PER_S;
  send_next(p);
  for (;;) {
    int64_t now = mono_ns();
    pace(p, l, now);
    if (ping_step(p, l, o, now))
      break;
    ping_wait(p, l, ws, cond, o, now);
  }
}

static int run_ping(struct node *n, struct ping_result *res)
{
  const struct options *o = n->o;
  if ((res->discovery_ns = wait_matched(n)) < 0)
    return EXIT_NO_PEER;
  struct pinger *p = malloc(sizeof *p);
  if (p == NULL) {
    fputs("cyclone_ping: out of memory\n", stderr);
    return EXIT_DDS;
  }
  pinger_init(p, n);
  dds_entity_t ws = 0, cond = 0;
  if (o->waitset)
    ws = reader_waitset(n->dp, n->rd_pong, &cond);
  else
    set_data_listener(n->rd_pong, on_pong_data, p);

  struct ping_loop l = {0};
  run_ping_loop(p, &l, o, ws, cond);
  res->usage_to = usage_now();

  if (!o->waitset)
    dds_set_listener(n->rd_pong, NULL);  // returns once no callback runs any more

  // The timeline's medians from the arrival-ordered round trips, then the whole run's.
  for (size_t i = 0; i < l.timeline.n; i++)
    slice_stats(p->rec.v, &l.timeline.e[i], &l.scratch, &l.scratch_cap);
  free(l.scratch);
  res->latency = rec_summary(&p->rec);
  res->timeline = l.timeline;
  res->usage_from = l.usage_from;
  res->measured_s = (double) (res->usage_to.at - l.measured_from) / 1e9;
  // The sorted round trips are the histogram: keep them until the result is written.
  res->sorted = p->rec.v;
  p->rec.v = NULL;
  pinger_fini(p, o);
  free(p);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The result: the tachyon-perf/1 record (bench/SCHEMA.md) and a table on standard error

// A JSON number that reads back as a float, as serde writes an f64 (1.0, not 1).
static void json_double(FILE *f, double v)
{
  char text[40];
  snprintf(text, sizeof text, "%.17g", v);
  fprintf(f, "%s%s", text, strpbrk(text, ".e") ? "" : ".0");
}

static void json_config(FILE *f, const struct options *o, double measured_s)
{
  fprintf(f, "  \"config\": {\"size\": %" PRIu32 ", \"payload_bytes\": %" PRIu64 ", \"type\": \"%s\", "
          "\"reliability\": \"%s\", \"history\": \"%s\", \"depth\": %d, \"durability\": \"%s\", "
          "\"keys\": %" PRIu32 ", \"rate\": ",
          o->size, payload_bytes(o), o->type == TYPE_COMPLEX ? "complex" : "simple",
          o->reliable ? "reliable" : "best-effort", o->keep_all ? "keep-all" : "keep-last",
          o->keep_all ? 0 : ping_depth(o), o->transient_local ? "transient-local" : "volatile", o->keys);
  if (o->rate > 0)
    json_double(f, o->rate);
  else
    fputs("null", f);
  fprintf(f, ", \"burst\": %" PRIu32 ", \"delivery\": \"%s\", \"multicast\": %s, \"subscribers\": %" PRIu32
          ", \"warmup_s\": ",
          o->burst, o->waitset ? "waitset" : "listener", o->unicast ? "false" : "true", o->subscribers);
  json_double(f, o->warmup);
  fprintf(f, ", \"duration_s\": %.9f},\n", measured_s);
}

static void json_latency(FILE *f, const struct summary *s)
{
  fprintf(f, "  \"latency\": {\"count\": %" PRIu64 ", \"lost\": %" PRIu64 ", \"min\": %" PRIu64
          ", \"mean\": %" PRIu64 ", \"p50\": %" PRIu64 ", \"p90\": %" PRIu64 ", \"p99\": %" PRIu64
          ", \"p99_9\": %" PRIu64 ", \"p99_99\": %" PRIu64 ", \"max\": %" PRIu64 ", \"stddev\": %" PRIu64
          ", \"pdv\": %" PRIu64 "},\n",
          s->count, s->lost, s->min, s->mean, s->p50, s->p90, s->p99, s->p99_9, s->p99_99, s->max,
          s->stddev, s->pdv);
}

// [upper bound ns, count] of log buckets 1 % wide from 100 ns, the non-empty ones only.
static void json_histogram(FILE *f, const uint32_t *sorted, size_t n)
{
  double bound = 100.0;
  uint64_t count = 0;
  bool first = true;
  fputs("  \"histogram\": [", f);
  for (size_t i = 0; i <= n; i++) {
    while (i < n && (double) sorted[i] > ceil(bound)) {
      if (count > 0) {
        fprintf(f, "%s[%.0f, %" PRIu64 "]", first ? "" : ", ", ceil(bound), count);
        first = false;
        count = 0;
      }
      bound *= 1.01;
    }
    if (i < n)
      count++;
    else if (count > 0)
      fprintf(f, "%s[%.0f, %" PRIu64 "]", first ? "" : ", ", ceil(bound), count);
  }
  fputs("],\n", f);
}

static void json_timeline(FILE *f, const struct timeline *tl)
{
  fputs("  \"timeline\": [", f);
  for (size_t i = 0; i < tl->n; i++) {
    const struct interval *iv = &tl->e[i];
    size_t count = iv->to - iv->from;
    fprintf(f, "%s\n    {\"t\": %.6f, \"count\": %zu, ", i ? "," : "", iv->t, count);
    if (count > 0)
      fprintf(f, "\"p50\": %" PRIu64 ", \"max\": %" PRIu64, iv->p50, iv->max);
    else
      fputs("\"p50\": null, \"max\": null", f);
    fprintf(f, ", \"samples_per_s\": %.3f, \"mbit_per_s\": 0.0}",
            iv->seconds > 0 ? (double) count / iv->seconds : 0.0);
  }
  fputs(tl->n ? "\n  ],\n" : "],\n", f);
}

static void json_process(FILE *f, const struct usage *from, const struct usage *to)
{
  double user = to->user_s - from->user_s, sys = to->sys_s - from->sys_s;
  double wall = (double) (to->at - from->at) / 1e9;
  long rss = peak_rss_kib();
  fprintf(f, "  \"process\": {\"cpu_user_s\": %.6f, \"cpu_sys_s\": %.6f, \"cpu_percent\": %.3f, \"peak_rss_kib\": ",
          user, sys, wall > 0 ? (user + sys) / wall * 100.0 : 0.0);
  if (rss >= 0)
    fprintf(f, "%ld},\n", rss);
  else
    fputs("null},\n", f);
}

static void json_record(FILE *f, const struct options *o, const struct ping_result *r)
{
  fputs("{\n  \"schema\": \"tachyon-perf/1\",\n  \"implementation\": \"cyclone\",\n", f);
  fputs("  \"version\": \"" DDS_VERSION " (cyclone_ping)\",\n  \"role\": \"ping\",\n", f);
  json_config(f, o, r->measured_s);
  json_latency(f, &r->latency);
  json_histogram(f, r->sorted, r->latency.count);
  fputs("  \"throughput\": null,\n", f);
  json_timeline(f, &r->timeline);
  json_process(f, &r->usage_from, &r->usage_to);
  fprintf(f, "  \"discovery_ns\": %" PRId64 "\n}\n", r->discovery_ns);
}

static int write_json(const struct options *o, const struct ping_result *r)
{
  if (o->json == NULL)
    return 0;
  if (strcmp(o->json, "-") == 0) {
    json_record(stdout, o, r);
    return fflush(stdout) == 0 ? 0 : EXIT_DDS;
  }
  FILE *f = fopen(o->json, "w");
  if (f != NULL) {
    json_record(f, o, r);
    if (fclose(f) == 0)
      return 0;
  }
  fprintf(stderr, "cyclone_ping: cannot write %s: %s\n", o->json, strerror(errno));
  return EXIT_DDS;
}

static void print_table(const struct options *o, const struct ping_result *r)
{
  const struct summary *l = &r->latency;
  double user = r->usage_to.user_s - r->usage_from.user_s, sys = r->usage_to.sys_s - r->usage_from.sys_s;
  fprintf(stderr, "cyclone ping %s: size %" PRIu32 " (%" PRIu64 " B payload), %s %s, %s\n",
          o->type == TYPE_COMPLEX ? "complex" : "simple", o->size, payload_bytes(o),
          o->reliable ? "reliable" : "best-effort", o->keep_all ? "keep-all" : "keep-last",
          o->waitset ? "waitset" : "listener");
  fprintf(stderr, "round trip (us)  count %" PRIu64 "  lost %" PRIu64 "\n"
          "  min %.1f  mean %.1f  p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  p99.99 %.1f  max %.1f\n"
          "  stddev %.1f  pdv %.1f\n",
          l->count, l->lost, l->min / 1e3, l->mean / 1e3, l->p50 / 1e3, l->p90 / 1e3, l->p99 / 1e3,
          l->p99_9 / 1e3, l->p99_99 / 1e3, l->max / 1e3, l->stddev / 1e3, l->pdv / 1e3);
  fprintf(stderr, "process  cpu user %.2f s, sys %.2f s  peak rss %ld KiB\ndiscovery  %.2f ms\n",
          user, sys, peak_rss_kib(), (double) r->discovery_ns / 1e6);
}

// ---------------------------------------------------------------------------------------------

int main(int argc, char **argv)
{
  struct options o = parse_options(argc, argv);
  catch_signals();
  pin_process(&o);
  struct node n;
  node_init(&n, &o);
  int status;
  if (o.mode == MODE_PONG) {
    status = run_pong(&n);
    node_fini(&n);
    return status;
  }
  struct ping_result r = {0};
  status = run_ping(&n, &r);
  // Leave the domain before writing: the peers see this participant go at once.
  node_fini(&n);
  if (status == 0) {
    print_table(&o, &r);
    status = write_json(&o, &r);
  }
  free(r.sorted);
  free(r.timeline.e);
  return status;
}
