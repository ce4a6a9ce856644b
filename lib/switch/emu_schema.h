/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_SCHEMA_H
#define EMU_SCHEMA_H

/**
 * @file
 * The JSON Schema of a pipeline file, written from the key tables the loaders read through
 * (lib/base/emu_keys.h): the top level and ports (emu_pipeline.c), tm and incast
 * (lib/tm/emu_tm_keys.c), and every stage type's key_table, as a "oneOf" told apart by
 * "type": {"const": ...}.
 */

#include <jansson.h>

#include "lib/base/emu_err.h"
#include "lib/base/emu_keys.h"

/** The pipeline's top level and one port (emu_pipeline.c). */
extern const struct emu_key_table emu_pipeline_table, emu_pipeline_port_table;

/** The schema of a pipeline file; new reference, or NULL with @p err filled. */
json_t *emu_pipeline_schema(struct emu_err *err);

/**
 * What a profile phase may set on a stage ("stages": {"NAME": {...}}): "anyOf" the set_table
 * of every stage type that has one (a profile names stages, not types). New reference.
 */
json_t *emu_stage_set_schema(struct emu_err *err);

#endif
