/* The Cyclone DDS side of the interop matrix (Debian cyclonedds-dev 0.10.x).
 * Options and output: peer_options.h. Built by interop/build-peers.sh. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dds/dds.h"
#include "interop.h"
#include "peer_options.h"

static struct peer_options o;

static dds_time_t deadline_at(long seconds) { return dds_time() + DDS_SECS(seconds); }

static void sleep_ms(long ms) { dds_sleepfor(DDS_MSECS(ms)); }

static dds_qos_t *endpoint_qos(void)
{
  dds_qos_t *q = dds_create_qos();
  dds_qset_reliability(q, o.reliable ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT,
                       DDS_SECS(10));
  dds_qset_durability(q, o.transient_local ? DDS_DURABILITY_TRANSIENT_LOCAL : DDS_DURABILITY_VOLATILE);
  if (o.depth > 0)
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, o.depth);
  else
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
  /* Cyclone keeps what a TRANSIENT_LOCAL writer offers late joiners by DURABILITY_SERVICE's
   * history (default KEEP_LAST 1), not by HISTORY as the spec has it: make them agree. */
  if (o.transient_local)
    dds_qset_durability_service(q, 0, o.depth > 0 ? DDS_HISTORY_KEEP_LAST : DDS_HISTORY_KEEP_ALL,
                                o.depth > 0 ? o.depth : 0, DDS_LENGTH_UNLIMITED,
                                DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED);
  if (o.lease_ms > 0)
    dds_qset_liveliness(q, DDS_LIVELINESS_AUTOMATIC, DDS_MSECS(o.lease_ms));
  if (o.deadline_ms > 0)
    dds_qset_deadline(q, DDS_MSECS(o.deadline_ms));
  if (o.strength >= 0 || o.exclusive)
    dds_qset_ownership(q, DDS_OWNERSHIP_EXCLUSIVE);
  if (o.strength >= 0)
    dds_qset_ownership_strength(q, (int32_t)o.strength);
  if (o.representation) {
    dds_data_representation_id_t r =
        o.representation == 1 ? DDS_DATA_REPRESENTATION_XCDR1 : DDS_DATA_REPRESENTATION_XCDR2;
    dds_qset_data_representation(q, 1, &r);
  }
  return q;
}

static dds_qos_t *group_qos(void)
{
  dds_qos_t *q = dds_create_qos();
  if (o.partition)
    dds_qset_partition1(q, o.partition);
  if (o.ordered)
    dds_qset_presentation(q, DDS_PRESENTATION_TOPIC, false, true);
  return q;
}

/* Prints statuses that changed; returns whether an incompatible QoS was seen. */
static int report_statuses(dds_entity_t ep, int32_t *matched, int *incompatible, uint32_t *alive,
                           uint32_t *not_alive)
{
  if (o.pub) {
    dds_publication_matched_status_t m;
    if (dds_get_publication_matched_status(ep, &m) == 0 && (int32_t)m.current_count != *matched) {
      *matched = (int32_t)m.current_count;
      printf("MATCHED %d\n", *matched);
    }
    dds_offered_incompatible_qos_status_t q;
    if (dds_get_offered_incompatible_qos_status(ep, &q) == 0 && q.total_count_change > 0) {
      printf("INCOMPATIBLE %u\n", q.last_policy_id);
      *incompatible = 1;
    }
    dds_offered_deadline_missed_status_t d;
    if (dds_get_offered_deadline_missed_status(ep, &d) == 0 && d.total_count_change > 0)
      printf("DEADLINE_MISSED %u\n", d.total_count);
  } else {
    dds_subscription_matched_status_t m;
    if (dds_get_subscription_matched_status(ep, &m) == 0 && (int32_t)m.current_count != *matched) {
      *matched = (int32_t)m.current_count;
      printf("MATCHED %d\n", *matched);
    }
    dds_requested_incompatible_qos_status_t q;
    if (dds_get_requested_incompatible_qos_status(ep, &q) == 0 && q.total_count_change > 0) {
      printf("INCOMPATIBLE %u\n", q.last_policy_id);
      *incompatible = 1;
    }
    dds_requested_deadline_missed_status_t d;
    if (dds_get_requested_deadline_missed_status(ep, &d) == 0 && d.total_count_change > 0)
      printf("DEADLINE_MISSED %u\n", d.total_count);
    dds_liveliness_changed_status_t l;
    if (dds_get_liveliness_changed_status(ep, &l) == 0 &&
        (l.alive_count != *alive || l.not_alive_count != *not_alive)) {
      *alive = l.alive_count;
      *not_alive = l.not_alive_count;
      printf("LIVELINESS %u %u\n", *alive, *not_alive);
    }
  }
  fflush(stdout);
  return *incompatible;
}

static void fill(void *sample, long i)
{
  if (o.large) {
    LargeData *s = sample;
    s->id = (int32_t)(i % o.instances);
    s->seq = (uint32_t)i;
    for (long j = 0; j < o.size; j++)
      s->data._buffer[j] = peer_large_byte(j, i);
  } else {
    ShapeType *s = sample;
    snprintf(s->color, sizeof(s->color), "%s%ld", o.prefix, i % o.instances);
    s->x = (int32_t)i;
    s->y = (int32_t)(2 * i + 1);
    s->shapesize = (int32_t)o.shapesize;
    if (o.suite) {
      /* Four octets, each the sequence number's low octet (as Tachyon's peer writes). */
      SuiteShape *u = sample;
      for (uint32_t j = 0; j < u->additional_payload_size._maximum; j++)
        u->additional_payload_size._buffer[j] = (uint8_t)(i & 0xff);
      u->additional_payload_size._length = u->additional_payload_size._maximum;
    }
  }
}

static int run_pub(dds_entity_t pp, dds_entity_t topic)
{
  dds_qos_t *gq = group_qos(), *q = endpoint_qos();
  dds_entity_t pub = dds_create_publisher(pp, gq, NULL);
  dds_entity_t wr = dds_create_writer(pub, topic, q, NULL);
  dds_delete_qos(gq);
  dds_delete_qos(q);
  if (wr < 0) {
    fprintf(stderr, "create writer: %s\n", dds_strretcode(wr));
    return 1;
  }
  int32_t matched = 0;
  int incompatible = 0;
  uint32_t alive = 0, not_alive = 0;
  dds_time_t end = deadline_at(o.timeout_s);
  if (o.expect_incompatible) {
    while (!report_statuses(wr, &matched, &incompatible, &alive, &not_alive)) {
      if (dds_time() > end) {
        printf("TIMEOUT incompatible\n");
        return 2;
      }
      sleep_ms(10);
    }
    sleep_ms(o.linger_ms);
    printf("DONE\n");
    return 0;
  }
  while (matched < o.wait_match) {
    report_statuses(wr, &matched, &incompatible, &alive, &not_alive);
    if (dds_time() > end) {
      printf("TIMEOUT match\n");
      return 2;
    }
    sleep_ms(10);
  }
  peer_wait_go(&o);
  LargeData large;
  SuiteShape shape; /* ShapeType and AppendableShape are its first members */
  uint8_t payload[4];
  memset(&large, 0, sizeof(large));
  memset(&shape, 0, sizeof(shape));
  if (o.large) {
    large.data._buffer = malloc((size_t)o.size + 1);
    large.data._length = large.data._maximum = (uint32_t)o.size;
  }
  if (o.suite) {
    shape.additional_payload_size._buffer = payload;
    shape.additional_payload_size._maximum = 4;
  }
  void *sample = o.large ? (void *)&large : (void *)&shape;
  for (long i = 0; i < o.count; i++) {
    fill(sample, i);
    dds_return_t rc = dds_write(wr, sample);
    if (rc != 0) {
      fprintf(stderr, "write %ld: %s\n", i, dds_strretcode(rc));
      return 1;
    }
    if (o.period_ms)
      sleep_ms(o.period_ms);
  }
  if (o.dispose) {
    fill(sample, 0);
    dds_return_t rc = dds_dispose(wr, sample);
    if (rc != 0) {
      fprintf(stderr, "dispose: %s\n", dds_strretcode(rc));
      return 1;
    }
  }
  printf("WRITTEN %ld\n", o.count);
  fflush(stdout);
  if (o.reliable && o.wait_match > 0) {
    if (dds_wait_for_acks(wr, DDS_SECS(o.timeout_s)) == 0)
      printf("ACKED\n");
    else
      printf("TIMEOUT acks\n");
  }
  dds_time_t linger_end = dds_time() + DDS_MSECS(o.linger_ms);
  while (dds_time() < linger_end) {
    report_statuses(wr, &matched, &incompatible, &alive, &not_alive);
    sleep_ms(10);
  }
  printf("DONE\n");
  free(large.data._buffer);
  return 0;
}

static void print_sample(const void *data)
{
  if (o.large) {
    const LargeData *s = data;
    int ok = 1;
    for (uint32_t j = 0; j < s->data._length && ok; j++)
      ok = s->data._buffer[j] == peer_large_byte(j, s->seq);
    printf("SAMPLE %d %u %u %s\n", s->id, s->seq, s->data._length, ok ? "ok" : "bad");
  } else {
    const ShapeType *s = data;
    int ok = s->y == 2 * s->x + 1;
    if (o.suite) {
      const SuiteShape *u = data;
      ok = ok && u->additional_payload_size._length == 4;
      for (uint32_t j = 0; j < u->additional_payload_size._length && ok; j++)
        ok = u->additional_payload_size._buffer[j] == (uint8_t)(s->x & 0xff);
    }
    printf("SAMPLE %s %d %d %s\n", s->color, s->x, s->shapesize, ok ? "ok" : "bad");
  }
}

/* Prints the key of a disposed instance: from the sample when it has data, else looked up. */
static void print_key(dds_entity_t rd, const void *data, dds_instance_handle_t ih)
{
  if (o.large) {
    LargeData k;
    memset(&k, 0, sizeof(k));
    if (data)
      printf("DISPOSED %d\n", ((const LargeData *)data)->id);
    else if (dds_instance_get_key(rd, ih, &k) == 0)
      printf("DISPOSED %d\n", k.id);
    else
      printf("DISPOSED ?\n");
    LargeData_free(&k, DDS_FREE_CONTENTS);
  } else {
    SuiteShape k; /* the largest of the shape types, whose first members they are */
    memset(&k, 0, sizeof(k));
    if (data)
      printf("DISPOSED %s\n", ((const ShapeType *)data)->color);
    else if (dds_instance_get_key(rd, ih, &k) == 0)
      printf("DISPOSED %s\n", k.color);
    else
      printf("DISPOSED ?\n");
    if (o.suite)
      SuiteShape_free(&k, DDS_FREE_CONTENTS);
  }
}

static int run_sub(dds_entity_t pp, dds_entity_t topic)
{
  dds_qos_t *gq = group_qos(), *q = endpoint_qos();
  dds_entity_t sub = dds_create_subscriber(pp, gq, NULL);
  dds_entity_t rd = dds_create_reader(sub, topic, q, NULL);
  dds_delete_qos(gq);
  dds_delete_qos(q);
  if (rd < 0) {
    fprintf(stderr, "create reader: %s\n", dds_strretcode(rd));
    return 1;
  }
  int32_t matched = 0;
  int incompatible = 0, disposed = 0, was_alive = 0, lost = 0;
  uint32_t alive = 0, not_alive = 0;
  long got = 0;
  dds_time_t end = deadline_at(o.timeout_s);
  enum { N = 64 };
  for (;;) {
    report_statuses(rd, &matched, &incompatible, &alive, &not_alive);
    was_alive |= alive > 0;
    lost |= was_alive && alive == 0;
    void *ptrs[N] = {0};
    dds_sample_info_t infos[N];
    int n = dds_take(rd, ptrs, infos, N, N);
    for (int k = 0; k < n; k++) {
      if (infos[k].valid_data) {
        print_sample(ptrs[k]);
        got++;
      }
      if (infos[k].instance_state == DDS_IST_NOT_ALIVE_DISPOSED) {
        print_key(rd, infos[k].valid_data ? ptrs[k] : NULL, infos[k].instance_handle);
        disposed = 1;
      }
    }
    if (n > 0)
      dds_return_loan(rd, ptrs, n);
    fflush(stdout);
    int done = got >= o.expect && (!o.expect_dispose || disposed) &&
               (!o.expect_incompatible || incompatible) && (!o.expect_not_alive || lost);
    if (done)
      break;
    if (dds_time() > end) {
      printf("TIMEOUT got %ld\n", got);
      return 2;
    }
    sleep_ms(o.read_period_ms > 0 ? o.read_period_ms : n > 0 ? 0 : 5);
  }
  /* Statuses keep being reported while lingering: a deadline missed after the last sample
     (every sample may arrive at once, repaired after a loss) shows only here. */
  dds_time_t linger_end = dds_time() + DDS_MSECS(o.linger_ms);
  while (dds_time() < linger_end) {
    report_statuses(rd, &matched, &incompatible, &alive, &not_alive);
    void *ptrs[N] = {0};
    dds_sample_info_t infos[N];
    int n = dds_take(rd, ptrs, infos, N, N);
    for (int k = 0; k < n; k++)
      if (infos[k].valid_data)
        print_sample(ptrs[k]);
    if (n > 0)
      dds_return_loan(rd, ptrs, n);
    sleep_ms(10);
  }
  printf("DONE\n");
  return 0;
}

int main(int argc, char **argv)
{
  if (peer_parse_options(argc, argv, &o) != 0)
    return 1;
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!o.pub && o.filter) {
    printf("UNSUPPORTED Cyclone DDS 0.10 has no SQL content filter (only a local function)\n");
    return 3;
  }
  if (!o.pub && o.ordered) {
    /* 0.10 accepts the QoS (and its writers announce it) but its readers do not order. */
    printf("UNSUPPORTED Cyclone DDS 0.10 readers do not implement PRESENTATION ordered_access\n");
    return 3;
  }
  dds_entity_t pp = dds_create_participant((dds_domainid_t)o.domain, NULL, NULL);
  if (pp < 0) {
    fprintf(stderr, "create participant: %s\n", dds_strretcode(pp));
    return 1;
  }
  /* AppendableShape's members are ShapeType's: the code below uses ShapeType for both. */
  _Static_assert(sizeof(AppendableShape) == sizeof(ShapeType), "same layout");
  _Static_assert(offsetof(SuiteShape, shapesize) == offsetof(ShapeType, shapesize),
                 "ShapeType's members first");
  const dds_topic_descriptor_t *desc = o.large      ? &LargeData_desc
                                       : o.suite    ? &SuiteShape_desc
                                       : o.appendable ? &AppendableShape_desc
                                                      : &ShapeType_desc;
  dds_entity_t topic = dds_create_topic(pp, desc, o.topic, NULL, NULL);
  if (topic < 0) {
    fprintf(stderr, "create topic: %s\n", dds_strretcode(topic));
    return 1;
  }
  int rc = o.pub ? run_pub(pp, topic) : run_sub(pp, topic);
  dds_delete(pp);
  return rc;
}
