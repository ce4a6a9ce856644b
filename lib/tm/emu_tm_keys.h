/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_TM_KEYS_H
#define EMU_TM_KEYS_H

/**
 * @file
 * The key tables of the pipeline's "tm" section and "incast" sources, and of the keys a
 * profile phase may change on them (lib/base/emu_keys.h): the loaders read through them and
 * `rocemu schema` writes them out.
 */

#include "lib/base/emu_keys.h"

/** The pipeline's "tm" object (ports, buffer). */
extern const struct emu_key_table emu_tm_table;
/** One entry of tm.ports[]. */
extern const struct emu_key_table emu_tm_port_table;
/** tm.ports[].ecn, tm.ports[].pfc, tm.buffer. */
extern const struct emu_key_table emu_tm_ecn_table, emu_tm_pfc_table, emu_tm_buffer_table;
/** What a profile phase may set on a TM port: "tm": {"PORT": {...}}. */
extern const struct emu_key_table emu_tm_set_table;
/** A PFC storm (the object form of a phase's pfc_storm). */
extern const struct emu_key_table emu_tm_storm_table;
/** One entry of the pipeline's "incast" array. */
extern const struct emu_key_table emu_incast_table;
/** What a profile phase may set on an incast source: "incast": {"NAME": {...}}. */
extern const struct emu_key_table emu_incast_set_table;

#endif
