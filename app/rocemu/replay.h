/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What rocemu replay's run (replay.c) and its inputs and outputs (replay_io.c) share: the
 * inputs and outputs, the --drops capture, and the steps that read an input, write what the
 * switch sends and write a dropped frame.
 */
#ifndef ROCEMU_REPLAY_H
#define ROCEMU_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "app.h"
#include "lib/capture/emu_pcapr.h"
#include "lib/capture/emu_pcapw.h"

#define REPLAY_MAX_FILES EMU_MAX_PORTS
#define REPLAY_ALL_PORTS UINT16_MAX
#define REPLAY_DROPS_SNAPLEN 128 /* --drops: headers, as Lumina's captures */

struct replay_in {
	char *file;
	uint16_t port;
	struct emu_pcapr r;
	bool has_next;
	bool bad;           /* stopped on an unreadable record */
	struct emu_pcap_rec rec;
	uint64_t frames;    /* frames read */
	uint64_t snapped;   /* of which header captures (caplen < orig_len) */
	uint64_t late;      /* of which timed before the clock (its times went backwards) */
};

struct replay_out {
	char *file;
	uint16_t port;      /* REPLAY_ALL_PORTS: every port, one pcapng interface each */
	bool pcapng;        /* annotated */
	struct emu_pcapw *w;
	uint64_t frames;
};

enum replay_annotate { REPLAY_ANN_NONE, REPLAY_ANN_EVENTS, REPLAY_ANN_ALL };

/** --annotate: set by app_replay_main() before the run. */
extern enum replay_annotate replay_annotate;

/* --drops: every dropped frame, at the time it was dropped, with its reason. */
struct replay_drops {
	struct emu_pcapw *w;
	struct emu_switch *sw;
	uint8_t *linear;
	uint64_t now_ns;
	uint64_t frames;
	uint32_t snaplen;    /* --drops-snaplen: bytes kept of each frame */
	uint64_t max_bytes;  /* --drops-max-mb: 0 none; reached, the file takes no more */
	uint64_t capped;     /* dropped frames not written: the cap was reached */
	bool virtual_frames; /* --drops-virtual: the incast senders' frames too */
	uint64_t virtual_skipped;
};

/** replay --help. */
void replay_usage(FILE *f);

/** Split "file.pcap:PORT" (PORT optional) and resolve PORT against the pipeline. */
int replay_file_port(const char *opt, const char *arg, const struct emu_pipeline *pl,
		     char **file, uint16_t *port, uint16_t dflt);

/** The input's next record (an unreadable one stops the input, said once). */
void replay_in_next(struct replay_in *in);

/** The switch's drop hook of --drops (@p arg: struct replay_drops). */
void replay_on_drop(void *arg, struct rte_mbuf *m, uint32_t reason);

/** What the switch sends by @p now_ns into the --out files, then the ports' counters. */
void replay_write(struct replay_out *outs, unsigned int n_out, struct emu_switch *sw,
		  unsigned int n_ports, uint64_t now_ns, uint8_t *linear);

#endif
