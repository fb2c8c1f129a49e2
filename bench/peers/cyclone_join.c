// cyclone_join: one process of a discovery-at-scale run (bench/join.py, issue 18) on Cyclone
// DDS's C API, doing what `tachyon perf join` does (crates/tachyon-cli/src/perf/join.rs):
//
//   cyclone_join --index I --processes P [--endpoints E] [--domain D] [--duration S]
//                [--match-timeout S]
//
// Process I creates E endpoints, half writers and half readers (RELIABLE, KEEP_LAST 1, type
// KeyedSeq): writer k on topic join_I_k, reader k on the topic of writer k of process
// (I + 1 + k mod (P - 1)) mod P. When every endpoint is matched it prints
// {"index": I, "matched_at": T} (T: seconds since the Unix epoch) and keeps its participant
// until SIGINT/SIGTERM or S seconds after starting; status 1 when not matched in time.
//
// Built by bench/build-peers.sh into target/bench/cyclone_join (KeyedSeq from
// cyclone_ping_types.idl).

#define _GNU_SOURCE
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dds/dds.h"
#include "cyclone_ping_types.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
  (void)sig;
  stop = 1;
}

static double now_s(clockid_t clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long number(const char *name, const char *text, long lo, long hi)
{
  char *end;
  long v = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "cyclone_join: --%s %s: a whole number from %ld to %ld\n", name, text, lo, hi);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv)
{
  long index = -1, processes = 0, endpoints = 10, domain = 0;
  double duration = 60.0, match_timeout = 60.0;
  static const struct option longopts[] = {
    {"index", required_argument, NULL, 'i'},
    {"processes", required_argument, NULL, 'p'},
    {"endpoints", required_argument, NULL, 'e'},
    {"domain", required_argument, NULL, 'd'},
    {"duration", required_argument, NULL, 's'},
    {"match-timeout", required_argument, NULL, 't'},
    {NULL, 0, NULL, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case 'i': index = number("index", optarg, 0, 100000); break;
      case 'p': processes = number("processes", optarg, 2, 100000); break;
      case 'e': endpoints = number("endpoints", optarg, 1, 1000); break;
      case 'd': domain = number("domain", optarg, 0, 232); break;
      case 's': duration = atof(optarg); break;
      case 't': match_timeout = atof(optarg); break;
      default:
        fprintf(stderr, "usage: cyclone_join --index I --processes P [--endpoints E] [--domain D] "
                        "[--duration S] [--match-timeout S]\n");
        return 2;
    }
  }
  if (processes < 2 || index < 0 || index >= processes) {
    fprintf(stderr, "cyclone_join: --processes of at least 2 and --index below it\n");
    return 2;
  }
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  double started = now_s(CLOCK_MONOTONIC);

  dds_entity_t pp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
  if (pp < 0) {
    fprintf(stderr, "cyclone_join: dds_create_participant: %s\n", dds_strretcode(pp));
    return 1;
  }
  dds_qos_t *qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 1);
  long writers_n = (endpoints + 1) / 2, readers_n = endpoints / 2;
  dds_entity_t *writers = calloc((size_t)writers_n, sizeof(*writers));
  dds_entity_t *readers = calloc((size_t)(readers_n ? readers_n : 1), sizeof(*readers));
  char name[64];
  for (long k = 0; k < writers_n; k++) {
    snprintf(name, sizeof(name), "join_%ld_%ld", index, k);
    dds_entity_t tp = dds_create_topic(pp, &KeyedSeq_desc, name, NULL, NULL);
    writers[k] = tp < 0 ? tp : dds_create_writer(pp, tp, qos, NULL);
    if (writers[k] < 0) {
      fprintf(stderr, "cyclone_join: writer on %s: %s\n", name, dds_strretcode(writers[k]));
      return 1;
    }
  }
  for (long k = 0; k < readers_n; k++) {
    long owner = (index + 1 + k % (processes - 1)) % processes;
    snprintf(name, sizeof(name), "join_%ld_%ld", owner, k);
    dds_entity_t tp = dds_create_topic(pp, &KeyedSeq_desc, name, NULL, NULL);
    readers[k] = tp < 0 ? tp : dds_create_reader(pp, tp, qos, NULL);
    if (readers[k] < 0) {
      fprintf(stderr, "cyclone_join: reader on %s: %s\n", name, dds_strretcode(readers[k]));
      return 1;
    }
  }
  dds_delete_qos(qos);

  for (;;) {
    int matched = 1;
    for (long k = 0; matched && k < writers_n; k++) {
      dds_publication_matched_status_t st;
      matched = dds_get_publication_matched_status(writers[k], &st) == 0 && st.current_count >= 1;
    }
    for (long k = 0; matched && k < readers_n; k++) {
      dds_subscription_matched_status_t st;
      matched = dds_get_subscription_matched_status(readers[k], &st) == 0 && st.current_count >= 1;
    }
    if (matched)
      break;
    if (stop || now_s(CLOCK_MONOTONIC) - started > match_timeout) {
      fprintf(stderr, "cyclone_join: process %ld: not every endpoint matched within %.1f s\n", index,
              now_s(CLOCK_MONOTONIC) - started);
      dds_delete(pp);
      return 1;
    }
    dds_sleepfor(DDS_MSECS(5));
  }
  printf("{\"index\": %ld, \"matched_at\": %.6f}\n", index, now_s(CLOCK_REALTIME));
  fflush(stdout);
  while (!stop && now_s(CLOCK_MONOTONIC) - started < duration)
    dds_sleepfor(DDS_MSECS(20));
  dds_delete(pp);
  free(writers);
  free(readers);
  return 0;
}
