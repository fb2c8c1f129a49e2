/* Declarations of cyclone_compat.c, force-included into the suite's shape_main.c when it is
 * built against Cyclone DDS 0.10 (interop/shape/build-peers.sh). */
#ifndef CYCLONE_COMPAT_H
#define CYCLONE_COMPAT_H
#include "dds/dds.h"
dds_return_t dds_take_next_instance(dds_entity_t rd, void **buf, dds_sample_info_t *si,
                                    size_t bufsz, uint32_t maxs, dds_instance_handle_t handle);
dds_return_t dds_read_next_instance(dds_entity_t rd, void **buf, dds_sample_info_t *si,
                                    size_t bufsz, uint32_t maxs, dds_instance_handle_t handle);
#endif
