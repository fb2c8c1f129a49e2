/*
 * gen.c - produce XCDR test vectors with Cyclone DDS's own serializer
 * (Debian cyclonedds-dev / libddsc 0.10.2).  See README.md.
 *
 * Nothing here encodes data by hand.  For each type:
 *   1. a topic is created from the idlc-generated descriptor, a writer and a
 *      reader are created, the sample is written once (local delivery only) and
 *      taken back with dds_takecdr(); the returned serdata's ->type is the
 *      topic's ddsi_sertype (the 0.10.2 API has no other public way to get it);
 *   2. for each data representation (XCDR1, XCDR2) a writer with that
 *      DATA_REPRESENTATION QoS is created to see whether Cyclone accepts it; if
 *      it does, the sertype is derived for that representation exactly as
 *      dds_create_writer() does (ddsi_sertype_derive_sertype) and the sample is
 *      serialized the way dds_write() does it: ddsi_serdata_from_sample(SDK_DATA)
 *      followed by ddsi_serdata_to_ser() (this includes the 4-byte
 *      encapsulation header and Cyclone's trailing padding/options);
 *   3. the big-endian form is written by Cyclone's dds_stream_write_sampleBE()
 *      into a dds_ostreamBE_t with the same derived sertype; the 4-byte header is
 *      the serdata header above with the identifier's endianness bit cleared,
 *      and the body padded to a multiple of 4 with the pad count in the options,
 *      exactly as dds_ostream_add_to_serdata_default() does for the LE case;
 *   4. key hashes come from ddsi_serdata_get_keyhash() on the serdata of each
 *      representation (force_md5 false and true).
 * Cross-check: the LE body is also written with dds_stream_write_sampleLE()
 * and must equal the serdata body.
 *
 * Output: tab-separated lines on stdout, turned into vectors.json by
 * generate.sh:
 *   V <type> <sample> <encoding> <source> <hex>
 *   K <type> <sample> <xcdr-version> <force_md5> <hex>
 *   U <type> <encoding> <why>
 *   I <type> <info>
 *   E <message>     (an internal consistency check failed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

#include "dds/dds.h"
#include "dds/ddsi/ddsi_serdata.h"
#include "dds/ddsi/ddsi_sertype.h"
#include "dds/ddsi/ddsi_serdata_default.h"
#include "dds/ddsi/ddsi_cdrstream.h"
#include "dds/ddsi/ddsi_keyhash.h"
#include "types.h"

static int errors = 0;

static const char *encname (uint16_t id)
{
  switch (id)
  {
    case 0x0000: return "CDR_BE";
    case 0x0001: return "CDR_LE";
    case 0x0002: return "PL_CDR_BE";
    case 0x0003: return "PL_CDR_LE";
    case 0x0006: return "CDR2_BE";
    case 0x0007: return "CDR2_LE";
    case 0x0008: return "D_CDR2_BE";
    case 0x0009: return "D_CDR2_LE";
    case 0x000a: return "PL_CDR2_BE";
    case 0x000b: return "PL_CDR2_LE";
    default: return "UNKNOWN";
  }
}

static void puthex (const unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    printf ("%02x", p[i]);
}

/* Names of the encodings Cyclone would use for a type in a representation, used for
   the "unsupported" list (the identifier itself comes from Cyclone). */
static void get_encnames (const struct ddsi_sertype *st, uint32_t xcdrv, const char **le, const char **be)
{
  const struct ddsi_sertype_default *sd = (const struct ddsi_sertype_default *) st;
  /* The CDR_* constants in q_protocol.h are defined so that the value, stored in memory,
     has the on-the-wire byte order; on a little-endian host CDR_LE is 0x0100.  Convert to the
     identifier as a big-endian 16-bit number. */
  uint16_t mem = ddsi_sertype_get_native_enc_identifier (xcdrv, sd->encoding_format);
  unsigned char b[2];
  memcpy (b, &mem, 2);
  uint16_t id = (uint16_t) ((b[0] << 8) | b[1]);
  *le = encname ((uint16_t) (id | 1));
  *be = encname ((uint16_t) (id & ~1));
}

struct tinfo {
  const char *tname;
  const dds_topic_descriptor_t *desc;
  dds_entity_t topic;
  struct ddsi_serdata *base_sd; /* keeps the base sertype alive */
  const struct ddsi_sertype *base;
  bool can[3];                  /* can[1]: XCDR1 accepted, can[2]: XCDR2 accepted */
};

static void setup_type (dds_entity_t pp, struct tinfo *ti, const void *first_sample)
{
  char tpname[128];
  snprintf (tpname, sizeof (tpname), "cdrvec_%s", ti->tname);
  ti->topic = dds_create_topic (pp, ti->desc, tpname, NULL, NULL);
  if (ti->topic < 0)
  {
    fprintf (stderr, "create_topic %s: %s\n", ti->tname, dds_strretcode (ti->topic));
    exit (1);
  }
  /* default writer: report the representation Cyclone picks by default */
  dds_entity_t wr = dds_create_writer (pp, ti->topic, NULL, NULL);
  dds_entity_t rd = dds_create_reader (pp, ti->topic, NULL, NULL);
  if (wr < 0 || rd < 0)
  {
    fprintf (stderr, "create_writer/reader %s: %s %s\n", ti->tname, dds_strretcode (wr), dds_strretcode (rd));
    exit (1);
  }
  dds_qos_t *q = dds_create_qos ();
  dds_get_qos (wr, q);
  uint32_t n = 0;
  dds_data_representation_id_t *ids = NULL;
  if (dds_qget_data_representation (q, &n, &ids))
  {
    printf ("I\t%s\tdefault writer data_representation:", ti->tname);
    for (uint32_t i = 0; i < n; i++)
      printf (" %s", ids[i] == DDS_DATA_REPRESENTATION_XCDR1 ? "XCDR1" : ids[i] == DDS_DATA_REPRESENTATION_XCDR2 ? "XCDR2" : "other");
    printf ("\n");
    dds_free (ids);
  }
  dds_get_qos (ti->topic, q);
  if (dds_qget_data_representation (q, &n, &ids))
  {
    printf ("I\t%s\tdefault topic data_representation:", ti->tname);
    for (uint32_t i = 0; i < n; i++)
      printf (" %s", ids[i] == DDS_DATA_REPRESENTATION_XCDR1 ? "XCDR1" : ids[i] == DDS_DATA_REPRESENTATION_XCDR2 ? "XCDR2" : "other");
    printf ("\n");
    dds_free (ids);
  }
  dds_delete_qos (q);

  dds_return_t rc = dds_write (wr, first_sample);
  if (rc != 0)
  {
    fprintf (stderr, "write %s: %s\n", ti->tname, dds_strretcode (rc));
    exit (1);
  }
  struct ddsi_serdata *sd = NULL;
  dds_sample_info_t si;
  rc = dds_takecdr (rd, &sd, 1, &si, DDS_ANY_STATE);
  if (rc != 1 || sd == NULL)
  {
    fprintf (stderr, "takecdr %s: %d\n", ti->tname, (int) rc);
    exit (1);
  }
  ti->base_sd = sd;
  ti->base = sd->type;
  {
    const struct ddsi_sertype_default *b = (const struct ddsi_sertype_default *) ti->base;
    printf ("I\t%s\tidlc flagset: FIXED_KEY(XCDR1 key <= 16 bytes)=%d FIXED_KEY_XCDR2=%d; memcpy-optimised serialized size XCDR1=%zu XCDR2=%zu (0 = not optimised)\n",
            ti->tname, (ti->desc->m_flagset & DDS_TOPIC_FIXED_KEY) ? 1 : 0, (ti->desc->m_flagset & DDS_TOPIC_FIXED_KEY_XCDR2) ? 1 : 0,
            b->opt_size_xcdr1, b->opt_size_xcdr2);
  }
  dds_delete (wr);
  dds_delete (rd);

  for (uint32_t v = 1; v <= 2; v++)
  {
    dds_qos_t *wq = dds_create_qos ();
    dds_qset_data_representation (wq, 1, (dds_data_representation_id_t[]) { v == 1 ? DDS_DATA_REPRESENTATION_XCDR1 : DDS_DATA_REPRESENTATION_XCDR2 });
    dds_entity_t w = dds_create_writer (pp, ti->topic, wq, NULL);
    dds_delete_qos (wq);
    ti->can[v] = (w > 0);
    if (w > 0)
      dds_delete (w);
    else
    {
      const char *le, *be;
      get_encnames (ti->base, v, &le, &be);
      printf ("U\t%s\t%s\tdds_create_writer with DATA_REPRESENTATION XCDR%u fails: %s (%d); minimum XCDR version of type per dds_stream_minimum_xcdr_version = %u\n",
              ti->tname, le, v, dds_strretcode (w), (int) w, (unsigned) dds_stream_minimum_xcdr_version (ti->desc->m_ops));
      printf ("U\t%s\t%s\tdds_create_writer with DATA_REPRESENTATION XCDR%u fails: %s (%d); minimum XCDR version of type per dds_stream_minimum_xcdr_version = %u\n",
              ti->tname, be, v, dds_strretcode (w), (int) w, (unsigned) dds_stream_minimum_xcdr_version (ti->desc->m_ops));
    }
  }
}

static void do_sample (struct tinfo *ti, const char *sname, const void *sample, bool keyed)
{
  for (uint32_t v = 1; v <= 2; v++)
  {
    if (!ti->can[v])
      continue;
    dds_type_consistency_enforcement_qospolicy_t tce = { .kind = DDS_TYPE_CONSISTENCY_ALLOW_TYPE_COERCION, .ignore_sequence_bounds = true, .ignore_string_bounds = true, .ignore_member_names = false, .prevent_type_widening = false, .force_type_validation = false };
    struct ddsi_sertype *st = ddsi_sertype_derive_sertype (ti->base, v == 1 ? DDS_DATA_REPRESENTATION_XCDR1 : DDS_DATA_REPRESENTATION_XCDR2, tce);
    if (st == NULL)
    {
      printf ("E\tderive_sertype %s XCDR%u failed\n", ti->tname, v);
      errors++;
      continue;
    }
    /* derive_sertype returns either the base itself (no extra reference) or a fresh copy with
       a zero reference count; dds_create_writer takes a reference, so do the same */
    st = ddsi_sertype_ref (st);
    const struct ddsi_sertype_default *sdt = (const struct ddsi_sertype_default *) st;
    if (sdt->write_encoding_version != v)
    {
      printf ("E\t%s derived sertype has write_encoding_version %u\n", ti->tname, (unsigned) sdt->write_encoding_version);
      errors++;
    }

    /* --- LE (native) via the serdata path, as dds_write does --- */
    struct ddsi_serdata *sd = ddsi_serdata_from_sample (st, SDK_DATA, sample);
    if (sd == NULL)
    {
      printf ("E\tserdata_from_sample %s/%s XCDR%u returned NULL\n", ti->tname, sname, v);
      errors++;
      continue;
    }
    uint32_t sz = ddsi_serdata_size (sd);
    unsigned char *buf = malloc (sz);
    ddsi_serdata_to_ser (sd, 0, sz, buf);
    uint16_t id = (uint16_t) ((buf[0] << 8) | buf[1]);
    printf ("V\t%s\t%s\t%s\tlibddsc:ddsi_serdata_from_sample+ddsi_serdata_to_ser\t", ti->tname, sname, encname (id));
    puthex (buf, sz);
    printf ("\n");

    /* --- cross-check: LE via the stream writer --- */
    {
      dds_ostreamLE_t os;
      dds_ostreamLE_init (&os, 0, v);
      if (!dds_stream_write_sampleLE (&os, sample, sdt))
      {
        printf ("E\tdds_stream_write_sampleLE %s/%s failed\n", ti->tname, sname);
        errors++;
      }
      else
      {
        uint32_t pad = (buf[2] << 8 | buf[3]) & 3;
        if (os.x.m_index + pad + 4 != sz || memcmp (os.x.m_buffer, buf + 4, os.x.m_index) != 0)
        {
          printf ("E\tLE stream writer differs from serdata for %s/%s XCDR%u\n", ti->tname, sname, v);
          errors++;
        }
      }
      dds_ostreamLE_fini (&os);
    }

    /* --- BE via dds_stream_write_sampleBE --- */
    {
      dds_ostreamBE_t os;
      dds_ostreamBE_init (&os, 0, v);
      if (!dds_stream_write_sampleBE (&os, sample, sdt))
      {
        printf ("E\tdds_stream_write_sampleBE %s/%s failed\n", ti->tname, sname);
        errors++;
      }
      else
      {
        uint32_t body = os.x.m_index;
        uint32_t pad = (4 - (body % 4)) % 4;
        uint16_t beid = (uint16_t) (id & ~1);
        unsigned char hdr[4] = { (unsigned char) (beid >> 8), (unsigned char) beid, 0, (unsigned char) pad };
        unsigned char zeros[4] = { 0, 0, 0, 0 };
        printf ("V\t%s\t%s\t%s\tlibddsc:dds_stream_write_sampleBE\t", ti->tname, sname, encname (beid));
        puthex (hdr, 4);
        puthex (os.x.m_buffer, body);
        puthex (zeros, pad);
        printf ("\n");
        /* sanity: same length and same padding as the LE serdata */
        if (body + pad + 4 != sz || hdr[2] != buf[2] || hdr[3] != buf[3])
        {
          printf ("E\tBE size/padding differs from LE for %s/%s XCDR%u\n", ti->tname, sname, v);
          errors++;
        }
      }
      dds_ostreamBE_fini (&os);
    }

    if (keyed)
    {
      for (int force = 0; force <= 1; force++)
      {
        struct ddsi_keyhash kh;
        memset (&kh, 0xee, sizeof (kh));
        ddsi_serdata_get_keyhash (sd, &kh, force);
        printf ("K\t%s\t%s\t%u\t%d\t", ti->tname, sname, v, force);
        puthex (kh.value, 16);
        printf ("\n");
      }
      /* Also the key-only serdata (what dispose/unregister would carry). */
      struct ddsi_serdata *kd = ddsi_serdata_from_sample (st, SDK_KEY, sample);
      if (kd)
      {
        uint32_t ksz = ddsi_serdata_size (kd);
        unsigned char *kbuf = malloc (ksz);
        ddsi_serdata_to_ser (kd, 0, ksz, kbuf);
        printf ("I\t%s\tkey-only serdata (SDK_KEY) for %s, XCDR%u: ", ti->tname, sname, v);
        puthex (kbuf, ksz);
        printf ("\n");
        free (kbuf);
        ddsi_serdata_unref (kd);
      }
    }
    free (buf);
    ddsi_serdata_unref (sd);
    ddsi_sertype_unref (st);
  }
}

int main (void)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  dds_entity_t pp = dds_create_participant (DDS_DOMAIN_DEFAULT, NULL, NULL);
  if (pp < 0)
  {
    fprintf (stderr, "create_participant: %s\n", dds_strretcode (pp));
    return 1;
  }

  /* ---------------- samples ----------------
     All samples have static storage duration so that the padding bytes inside the C structs
     are zero (C11 6.7.9p10): for types whose in-memory layout equals the XCDR1 layout Cyclone
     serializes by memcpy, padding included (see README). */
  static ShapeType shape_red = { .x = 10, .y = 20, .shapesize = 30 };
  strcpy (shape_red.color, "RED");
  static ShapeType shape_long = { .x = -1, .y = 2147483647, .shapesize = 0 };
  strcpy (shape_long.color, "MAGENTA_LONGER_COLOR_NAME");
  static AppendableShape ashape_red = { .x = 10, .y = 20, .shapesize = 30 };
  strcpy (ashape_red.color, "RED");
  static AppendableShape ashape_long = { .x = -1, .y = 2147483647, .shapesize = 0 };
  strcpy (ashape_long.color, "MAGENTA_LONGER_COLOR_NAME");

  static Primitives prims = {
    .b = true, .c = 'A', .o = 0xAB, .i8v = -5, .u8v = 250, .s = -1234, .us = 54321,
    .l = -123456789, .ul = 4000000000u, .ll = -1234567890123LL, .ull = 18000000000000000000ULL,
    .f = 1.5f, .d = -2.25, .o2 = 7, .d2 = 3.0e100
  };

  static Strings strs = { .plain = "hello, world", .empty = "" };
  strcpy (strs.bounded, "12345678");

  static int32_t longs[] = { 1, -2, 3 };
  static uint8_t octets[] = { 1, 2, 3, 4, 5 };
  static double doubles[] = { 0.5 };
  static char *strings[] = { "a", "bc", "" };
  static Inner inners[] = { { 1, 1.0 }, { -1, -1.0 } };
  static Sequences seqs = {
    .longs = { 3, 3, longs, false },
    .octets = { 5, 5, octets, false },
    .doubles = { 1, 1, doubles, false },
    .strings = { 3, 3, strings, false },
    .inners = { 2, 2, inners, false }
  };
  static Sequences seqs_empty;
  memset (&seqs_empty, 0, sizeof (seqs_empty));

  static Arrays arrs = {
    .a1 = { 1, 2, 3 }, .a2 = { { 1, 2, 3 }, { 4, 5, 6 } }, .a3 = { "x", "yz" },
    .a4 = { 1.0, -1.0 }, .a5 = { 9, 8, 7, 6, 5 }, .a6 = { { 1, 2.0 }, { 3, 4.0 } }
  };

  static Inner nseq[] = { { 8, 8.5 } };
  static Nested nested = { .tag = 1, .inner = { 7, 0.25 }, .seq = { 1, 1, nseq, false } };

  static Color cs[] = { RED, GREEN, BLUE };
  static WithEnum enums = { .c = BLUE, .cs = { 3, 3, cs, false }, .arr = { GREEN, RED } };

  static WithUnion unions;
  memset (&unions, 0, sizeof (unions));
  unions.a._d = 1; unions.a._u.l = -7;
  unions.b._d = 2; unions.b._u.s = "union";
  unions.c._d = 3; unions.c._u.d = 6.5;
  unions.d._d = 4; unions.d._u.inner.a = 2; unions.d._u.inner.b = 2.5;
  unions.e._d = 1; unions.e._u.o = 0x11;
  unions.f._d = 2; unions.f._u.ll = -9;

  static int32_t opt_b = 2;
  static Inner opt_d = { 4, 5.0 };
  static WithOptional opt_all = { .a = 1, .b = &opt_b, .c = "three", .d = &opt_d };
  static WithOptional opt_none = { .a = 1, .b = NULL, .c = NULL, .d = NULL };

  static int16_t appc[] = { 1, 2, 3 };
  static AppendableStruct app = { .a = 42, .b = "app", .c = { 3, 3, appc, false } };

  static int16_t mopt = 9;
  static MutableStruct mut_all = { .ident = 7, .name = "mutable", .value = 0.125, .opt = &mopt };
  static MutableStruct mut_noopt = { .ident = 7, .name = "mutable", .value = 0.125, .opt = NULL };

  static HashIds hash = { .alpha = 1, .beta = "beta" };
  static MustUnderstand mu = { .id = 3, .m = 4 };
  static KeyedMulti km = { .k1 = 1, .k2 = 0x0102030405060708LL, .v = 99 };
  static KeyedNested kn = { .k = { 5, 6.5 }, .v = 1 };
  static KeyedSmallString kss = { .v = 2 };
  strcpy (kss.name, "abc");
  static KeyedSmallString kss_full = { .v = 3 };
  strcpy (kss_full.name, "12345678");

  static uint8_t bigdata[1024];
  for (int i = 0; i < 1024; i++)
    bigdata[i] = (uint8_t) (i % 251);
  static Big big1k = { .data = { 1024, 1024, bigdata, false } };

  /* ---------------- run ---------------- */
#define T(name) struct tinfo ti_##name = { .tname = #name, .desc = &name##_desc }
  T(ShapeType); T(AppendableShape); T(Primitives); T(Strings); T(Sequences); T(Arrays);
  T(Nested); T(WithEnum); T(WithUnion); T(WithOptional); T(AppendableStruct);
  T(MutableStruct); T(HashIds); T(MustUnderstand); T(KeyedMulti); T(KeyedNested);
  T(KeyedSmallString); T(Big);
#undef T

  setup_type (pp, &ti_ShapeType, &shape_red);
  do_sample (&ti_ShapeType, "shape_red", &shape_red, true);
  do_sample (&ti_ShapeType, "shape_long", &shape_long, true);
  setup_type (pp, &ti_AppendableShape, &ashape_red);
  do_sample (&ti_AppendableShape, "shape_red", &ashape_red, true);
  do_sample (&ti_AppendableShape, "shape_long", &ashape_long, true);
  setup_type (pp, &ti_Primitives, &prims);
  do_sample (&ti_Primitives, "prims", &prims, false);
  setup_type (pp, &ti_Strings, &strs);
  do_sample (&ti_Strings, "strs", &strs, false);
  setup_type (pp, &ti_Sequences, &seqs);
  do_sample (&ti_Sequences, "seqs", &seqs, false);
  do_sample (&ti_Sequences, "seqs_empty", &seqs_empty, false);
  setup_type (pp, &ti_Arrays, &arrs);
  do_sample (&ti_Arrays, "arrs", &arrs, false);
  setup_type (pp, &ti_Nested, &nested);
  do_sample (&ti_Nested, "nested", &nested, false);
  setup_type (pp, &ti_WithEnum, &enums);
  do_sample (&ti_WithEnum, "enums", &enums, false);
  setup_type (pp, &ti_WithUnion, &unions);
  do_sample (&ti_WithUnion, "unions", &unions, false);
  setup_type (pp, &ti_WithOptional, &opt_all);
  do_sample (&ti_WithOptional, "opt_all", &opt_all, false);
  do_sample (&ti_WithOptional, "opt_none", &opt_none, false);
  setup_type (pp, &ti_AppendableStruct, &app);
  do_sample (&ti_AppendableStruct, "app", &app, false);
  setup_type (pp, &ti_MutableStruct, &mut_all);
  do_sample (&ti_MutableStruct, "mut_all", &mut_all, true);
  do_sample (&ti_MutableStruct, "mut_noopt", &mut_noopt, true);
  setup_type (pp, &ti_HashIds, &hash);
  do_sample (&ti_HashIds, "hash", &hash, false);
  setup_type (pp, &ti_MustUnderstand, &mu);
  do_sample (&ti_MustUnderstand, "mu", &mu, true);
  setup_type (pp, &ti_KeyedMulti, &km);
  do_sample (&ti_KeyedMulti, "km", &km, true);
  setup_type (pp, &ti_KeyedNested, &kn);
  do_sample (&ti_KeyedNested, "kn", &kn, true);
  setup_type (pp, &ti_KeyedSmallString, &kss);
  do_sample (&ti_KeyedSmallString, "kss", &kss, true);
  do_sample (&ti_KeyedSmallString, "kss_full", &kss_full, true);
  /* Demonstration (not a vector): KeyedNested with the C struct padding filled with 0xAA.
     Cyclone's XCDR1 path memcpy's such "memory-layout-compatible" types, padding included. */
  {
    KeyedNested dirty;
    memset (&dirty, 0xaa, sizeof (dirty));
    dirty.k.a = 5; dirty.k.b = 6.5; dirty.v = 1;
    for (uint32_t v = 1; v <= 2; v++)
    {
      dds_type_consistency_enforcement_qospolicy_t tce = { .kind = DDS_TYPE_CONSISTENCY_ALLOW_TYPE_COERCION, .ignore_sequence_bounds = true, .ignore_string_bounds = true };
      struct ddsi_sertype *st = ddsi_sertype_ref (ddsi_sertype_derive_sertype (ti_KeyedNested.base, v == 1 ? DDS_DATA_REPRESENTATION_XCDR1 : DDS_DATA_REPRESENTATION_XCDR2, tce));
      struct ddsi_serdata *sd = ddsi_serdata_from_sample (st, SDK_DATA, &dirty);
      uint32_t sz = ddsi_serdata_size (sd);
      unsigned char *buf = malloc (sz);
      ddsi_serdata_to_ser (sd, 0, sz, buf);
      printf ("I\tKeyedNested\tkn with C padding bytes = 0xAA, XCDR%u serdata: ", v);
      puthex (buf, sz);
      printf ("\n");
      free (buf);
      ddsi_serdata_unref (sd);
      ddsi_sertype_unref (st);
    }
  }

  setup_type (pp, &ti_Big, &big1k);
  do_sample (&ti_Big, "big1k", &big1k, false);

  dds_delete (pp);
  if (errors)
    fprintf (stderr, "%d internal check(s) failed\n", errors);
  return errors ? 2 : 0;
}
