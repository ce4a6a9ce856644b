/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef NODE_LOAD_H
#define NODE_LOAD_H

/**
 * @file
 * Node files (docs/node.md): a JSON object whose keys describe a GPU server, validated key by
 * key against one key table (unknown keys refused, every message starting with its JSON path,
 * "node.pcie.lanes: must be one of 1,2,4,8,16, got 3"), and the same table as a JSON
 * Schema (rocemu schema node).
 */

#include <jansson.h>

#include "lib/base/emu_err.h"
#include "lib/node/node_model.h"

/**
 * Read the node description @p doc (its path @p path, "node") into @p c. A key that is absent
 * leaves @p c's value as it is (the caller's defaults: node_cfg_default(), rocegen's
 * --ranks and --line-rate-mbps). 0 or -EINVAL with @p err.
 */
int node_load_json(const json_t *doc, const char *path, struct node_cfg *c, struct emu_err *err);

/** Load @p file (JSON_REJECT_DUPLICATES) as a new reference in @p out; 0 or -errno. */
int node_load_file(const char *file, json_t **out, struct emu_err *err);

/** The node file's JSON Schema; new reference or NULL with @p err. */
json_t *node_schema(struct emu_err *err);

/** The node and what the model computes from it, as a JSON object (--json's "node"). */
json_t *node_json(const struct node_cfg *c, const struct node_eval *e);

#endif
