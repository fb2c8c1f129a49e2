/* The command line shared by the C (Cyclone DDS) and C++ (Fast DDS) interop peers; Tachyon's
 * peer (interop/peer) takes the same options. interop/matrix.py drives all three.
 *
 *   peer pub|sub [options]
 *   --type shape|ashape|sshape|large  ShapeType (default), AppendableShape (the same,
 *                              @appendable), SuiteShape (the OMG suite's exactly, with its
 *                              sequence<uint8>: Cyclone DDS 0.10 and Tachyon only)
 *                              (ashape5 and ashape_x64, AppendableShape evolved, are Tachyon's
 *                              and Cyclone DDS 11's only: the others say UNSUPPORTED)
 *                           or LargeData
 *   --topic NAME            topic name (default "interop")
 *   --best-effort           BEST_EFFORT (default RELIABLE)
 *   --transient-local       TRANSIENT_LOCAL durability (default VOLATILE)
 *   --depth N               KEEP_LAST(N); 0 = KEEP_ALL (default)
 *   --partition P           the publisher's/subscriber's partition
 *   --representation 1|2    XCDR1 or XCDR2 only (default: the implementation's default)
 *   --lease-ms N            AUTOMATIC liveliness with this lease (default infinite)
 *   --deadline-ms N         DEADLINE period; DEADLINE_MISSED total is printed when the
 *                           offered/requested deadline missed status changes
 *   --strength N            (pub) OWNERSHIP EXCLUSIVE with this strength
 *   --exclusive             (sub) OWNERSHIP EXCLUSIVE
 *   --ordered               PRESENTATION access_scope TOPIC with ordered_access (publisher
 *                           or subscriber)
 *   pub: --count N --instances K --prefix S --size BYTES --period-ms MS --dispose
 *        --shapesize N (ShapeType's shapesize, default 30: tells writers apart)
 *        --wait-match N (readers to wait for before writing; 0 = write at once)
 *        --wait-go (after matching, print READY and write only once a line arrives on stdin:
 *        the driver sends it when the subscriber has matched too)
 *   sub: --expect N --expect-dispose --expect-incompatible --expect-not-alive
 *        --filter EXPR (read a content-filtered topic: EXPR in the DDS SQL filter grammar)
 *        --filter-param P (the next of EXPR's %0, %1, ...; at most 4)
 *        --read-period-ms MS (take only every MS, so samples of several instances pile up)
 *   both: --domain D (default 0) --linger-ms MS (stay after done) --timeout-s S (give up, exit 2)
 *
 * Output, one event a line on stdout: MATCHED n | INCOMPATIBLE policy_id | WRITTEN n | ACKED |
 * SAMPLE key seq len ok|bad | DISPOSED key | LIVELINESS alive not_alive | DEADLINE_MISSED total |
 * FILTERED n (a writer that filtered n samples for content-filtered readers) | DONE |
 * TIMEOUT what | UNSUPPORTED why (exit 3: the implementation cannot do what was asked).
 * A sample is "ok" when its content is what the writer's pattern says:
 *   ShapeType: color = prefix + (i % instances), x = i, y = 2 i + 1 (SAMPLE's len is the
 *              shapesize)
 *   LargeData: id = i % instances, seq = i, data[j] = (7 j + i) mod 256, size octets */
#ifndef PEER_OPTIONS_H
#define PEER_OPTIONS_H

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct peer_options {
  int pub;
  int domain;
  int large;
  int appendable;
  int suite;
  const char *topic;
  int reliable;
  int transient_local;
  int depth;
  const char *partition;
  int representation;
  long lease_ms;
  long deadline_ms;
  long strength;
  int exclusive;
  int ordered;
  const char *filter;
  const char *filter_params[4];
  int filter_param_count;
  long read_period_ms;
  long shapesize;
  long count;
  long instances;
  const char *prefix;
  long size;
  long period_ms;
  int dispose;
  int wait_go;
  long wait_match;
  long expect;
  int expect_dispose;
  int expect_incompatible;
  int expect_not_alive;
  long linger_ms;
  long timeout_s;
};

static inline int peer_parse_options(int argc, char **argv, struct peer_options *o)
{
  static const struct option longopts[] = {
    {"type", required_argument, 0, 't'},         {"topic", required_argument, 0, 'T'},
    {"best-effort", no_argument, 0, 'b'},        {"transient-local", no_argument, 0, 'l'},
    {"depth", required_argument, 0, 'd'},        {"partition", required_argument, 0, 'p'},
    {"representation", required_argument, 0, 'r'}, {"lease-ms", required_argument, 0, 'L'},
    {"count", required_argument, 0, 'c'},        {"instances", required_argument, 0, 'i'},
    {"prefix", required_argument, 0, 'P'},       {"size", required_argument, 0, 's'},
    {"period-ms", required_argument, 0, 'm'},    {"dispose", no_argument, 0, 'D'},
    {"wait-match", required_argument, 0, 'w'},   {"expect", required_argument, 0, 'e'},
    {"expect-dispose", no_argument, 0, 'E'},     {"expect-incompatible", no_argument, 0, 'I'},
    {"expect-not-alive", no_argument, 0, 'N'},   {"linger-ms", required_argument, 0, 'g'},
    {"timeout-s", required_argument, 0, 'o'},    {"domain", required_argument, 0, 'Z'},
    {"wait-go", no_argument, 0, 'G'},           {"deadline-ms", required_argument, 0, 'F'},
    {"strength", required_argument, 0, 'S'},     {"exclusive", no_argument, 0, 'X'},
    {"shapesize", required_argument, 0, 'z'},    {"ordered", no_argument, 0, 'O'},
    {"filter", required_argument, 0, 'Q'},       {"filter-param", required_argument, 0, 'q'},
    {"read-period-ms", required_argument, 0, 'R'},
    {0, 0, 0, 0}};
  memset(o, 0, sizeof(*o));
  o->topic = "interop";
  o->reliable = 1;
  o->lease_ms = -1;
  o->strength = -1;
  o->shapesize = 30;
  o->count = 10;
  o->instances = 1;
  o->prefix = "C";
  o->size = 1024;
  o->wait_match = 1;
  o->timeout_s = 30;
  if (argc < 2 || (strcmp(argv[1], "pub") != 0 && strcmp(argv[1], "sub") != 0)) {
    fprintf(stderr, "usage: %s pub|sub [options] (see peer_options.h)\n", argv[0]);
    return -1;
  }
  o->pub = strcmp(argv[1], "pub") == 0;
  optind = 2;
  int c;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
      case 't':
        o->large = o->appendable = o->suite = 0;
        if (strcmp(optarg, "shape") == 0) {}
        else if (strcmp(optarg, "ashape") == 0) o->appendable = 1;
        else if (strcmp(optarg, "sshape") == 0) o->suite = 1;
        else if (strcmp(optarg, "large") == 0) o->large = 1;
        else if (strcmp(optarg, "ashape5") == 0 || strcmp(optarg, "ashape_x64") == 0) {
          // The type evolution cases need a second version of AppendableShape, which this
          // peer's IDL does not have.
          printf("UNSUPPORTED this peer has no %s type (type evolution: Cyclone DDS 11 and Tachyon)\n", optarg);
          fflush(stdout);
          exit(3);
        }
        else { fprintf(stderr, "--type: shape, ashape, sshape or large, not %s\n", optarg); return -1; }
        break;
      case 'T': o->topic = optarg; break;
      case 'b': o->reliable = 0; break;
      case 'l': o->transient_local = 1; break;
      case 'd': o->depth = atoi(optarg); break;
      case 'p': o->partition = optarg; break;
      case 'r':
        o->representation = atoi(optarg);
        if (o->representation != 1 && o->representation != 2) {
          fprintf(stderr, "--representation: 1 or 2\n");
          return -1;
        }
        break;
      case 'L': o->lease_ms = atol(optarg); break;
      case 'c': o->count = atol(optarg); break;
      case 'i': o->instances = atol(optarg) > 0 ? atol(optarg) : 1; break;
      case 'P': o->prefix = optarg; break;
      case 's': o->size = atol(optarg); break;
      case 'm': o->period_ms = atol(optarg); break;
      case 'D': o->dispose = 1; break;
      case 'w': o->wait_match = atol(optarg); break;
      case 'e': o->expect = atol(optarg); break;
      case 'E': o->expect_dispose = 1; break;
      case 'I': o->expect_incompatible = 1; break;
      case 'N': o->expect_not_alive = 1; break;
      case 'g': o->linger_ms = atol(optarg); break;
      case 'o': o->timeout_s = atol(optarg); break;
      case 'Z': o->domain = atoi(optarg); break;
      case 'G': o->wait_go = 1; break;
      case 'F': o->deadline_ms = atol(optarg); break;
      case 'S': o->strength = atol(optarg); break;
      case 'X': o->exclusive = 1; break;
      case 'z': o->shapesize = atol(optarg); break;
      case 'O': o->ordered = 1; break;
      case 'Q': o->filter = optarg; break;
      case 'q':
        if (o->filter_param_count == 4) {
          fprintf(stderr, "--filter-param: at most 4\n");
          return -1;
        }
        o->filter_params[o->filter_param_count++] = optarg;
        break;
      case 'R': o->read_period_ms = atol(optarg); break;
      default: return -1;
    }
  }
  return 0;
}

/* --wait-go: says READY and waits for the driver's line on stdin. */
static inline void peer_wait_go(const struct peer_options *o)
{
  if (!o->wait_go)
    return;
  printf("READY\n");
  fflush(stdout);
  char line[64];
  if (fgets(line, sizeof line, stdin) == NULL)
    fprintf(stderr, "--wait-go: stdin closed, writing anyway\n");
}

/* The byte at offset j of sample i's LargeData payload. */
static inline unsigned char peer_large_byte(long j, long i)
{
  return (unsigned char)((7 * j + i) & 0xff);
}

#endif
