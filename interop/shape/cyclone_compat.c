/* What the OMG suite's srcC/shape_main.c needs of Cyclone DDS 0.11 and Debian's Cyclone DDS
 * 0.10 lacks: dds_take_next_instance and dds_read_next_instance ("the samples of the first
 * instance after `handle` in handle order"). Built next to shape_main.c by
 * interop/shape/build-peers.sh; our code, no part of the suite's.
 *
 * 0.10 has no way to look at the cache without marking samples read, so the next handle is
 * found with a loaned read (marking what it sees READ, which shape_main never looks at), then
 * its samples are taken (or read) with dds_take_instance / dds_read_instance. */
#include "cyclone_compat.h"

#define COMPAT_PEEK 4096

static dds_return_t next_instance(dds_entity_t rd, void **buf, dds_sample_info_t *si,
                                  size_t bufsz, uint32_t maxs, dds_instance_handle_t handle,
                                  int take)
{
  static void *peek[COMPAT_PEEK];
  static dds_sample_info_t peek_si[COMPAT_PEEK];
  peek[0] = NULL;
  dds_return_t n = dds_read_wl(rd, peek, peek_si, COMPAT_PEEK);
  if (n <= 0)
    return n;
  dds_instance_handle_t best = 0;
  for (dds_return_t i = 0; i < n; i++) {
    dds_instance_handle_t h = peek_si[i].instance_handle;
    if (h > handle && (best == 0 || h < best))
      best = h;
  }
  (void)dds_return_loan(rd, peek, n);
  if (best == 0)
    return 0;
  return take ? dds_take_instance(rd, buf, si, bufsz, maxs, best)
              : dds_read_instance(rd, buf, si, bufsz, maxs, best);
}

dds_return_t dds_take_next_instance(dds_entity_t rd, void **buf, dds_sample_info_t *si,
                                    size_t bufsz, uint32_t maxs, dds_instance_handle_t handle)
{
  return next_instance(rd, buf, si, bufsz, maxs, handle, 1);
}

dds_return_t dds_read_next_instance(dds_entity_t rd, void **buf, dds_sample_info_t *si,
                                    size_t bufsz, uint32_t maxs, dds_instance_handle_t handle)
{
  return next_instance(rd, buf, si, bufsz, maxs, handle, 0);
}
