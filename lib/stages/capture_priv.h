/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_CAPTURE_STAGE_PRIV_H
#define EMU_CAPTURE_STAGE_PRIV_H

/*
 * The capture stage's internals, shared by capture.c (its packet path, the drop hook and the
 * writer's service) and capture_config.c (its keys, filter, init and needs).
 */

#include <stdbool.h>
#include <stdint.h>

#include "lib/capture/emu_capture.h"
#include "lib/stages/stages.h"

#define CAPTURE_MAX_DROP_NAMES 16
#define CAPTURE_MAX_PEERS 15 /* replicas besides the first (emu_capture's producers) */

struct capture_priv {
	struct emu_capture *cap;
	bool egress;
	bool enabled;
	bool pcapng;
	bool drops;
	bool virtual_frames; /* "virtual": the incast senders' frames too */
	struct rte_bpf *bpf; /* "filter": frames it returns 0 for are not captured */
	uint64_t max_frames;  /* 0: no limit */
	uint64_t max_ns;      /* 0: no limit; from the first frame captured */
	uint64_t first_ns;
	uint64_t taken;       /* frames handed to the capture (worker) */
	uint16_t n_ports;
	uint64_t drops_seen; /* worker: dropped frames handed to the capture */
	uint64_t *ctr;       /* the stage's counters, for the drop hook */
	uint32_t port_mask; /* bit per switch port; all ones = every port */
	bool annotating;    /* the writer formats each record's trace: the switch must write it */
	char if_names[EMU_MAX_PORTS + 1][40];
	const char *if_ptrs[EMU_MAX_PORTS + 2];
	char drop_names[CAPTURE_MAX_DROP_NAMES][64];
	const char *drop_ptrs[CAPTURE_MAX_DROP_NAMES + 1];
	/* live --workers: a replica's stage pushes into a ring of the first replica's file */
	struct capture_priv *primary;          /* a replica's: the first replica's stage */
	struct capture_priv *peers[CAPTURE_MAX_PEERS]; /* the first replica's: the others */
	unsigned int n_peers;
};

/* capture_config.c */
extern const char *const capture_keys[];
extern const struct emu_key_table capture_key_table, capture_set_table;
int capture_needs(const json_t *cfg, const struct emu_stage_env *env,
		  struct emu_stage_needs *needs, struct emu_err *err);
int capture_init(void *priv, const json_t *cfg, const struct emu_stage_env *env,
		 struct emu_err *err);

/* capture.c: the drop hook capture_init() installs */
void capture_on_drop(void *arg, struct rte_mbuf *m, uint32_t reason);

#endif
