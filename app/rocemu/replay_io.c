/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocemu replay's inputs and outputs: its usage, the --in/--out names, reading an input's
 * next record, writing what the switch sends (--out) and what it drops (--drops). The run
 * itself is replay.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "app/rocemu/replay.h"

void
replay_usage(FILE *f)
{
	fprintf(f,
		"usage: rocemu replay --pipeline FILE [--profile FILE] [--seed N] [--stats FILE]\n"
		"                     [--max-mem MB] [--lenient] [--annotate none|events|all]\n"
		"                     [--drops DROPS.pcapng [--drops-snaplen B] [--drops-max-mb MB]\n"
		"                      [--drops-virtual]]\n"
		"                     [--prometheus FILE.prom]\n"
		"                     [--timeline FILE.csv [--timeline-us N]]\n"
		"                     --in IN.pcap[:PORT] ... [--out OUT[:PORT] ...]\n"
		"Runs the pipeline offline on a virtual clock taken from the input timestamps.\n"
		"--in FILE:PORT feeds the frames of FILE into port PORT (a port name of the\n"
		"pipeline); without :PORT, into the first port. pcap and pcapng inputs, micro- or\n"
		"nanosecond; header captures (caplen < orig_len) are timed and shaped at orig_len.\n"
		"--out FILE:PORT writes the frames port PORT sends; without :PORT, every frame the\n"
		"switch sends, in departure order. The format follows the name: FILE.pcapng is\n"
		"pcapng (for every port: one interface per port, named after it), any other name\n"
		"nanosecond pcap (for every port: the ports not told apart, no comments).\n"
		"Outputs are written under a temporary name and put in place when complete; an\n"
		"output may not be an input or another output. Frames leaving a port without an\n"
		"--out are counted as sent. An unreadable input record stops that input and makes\n"
		"the exit status 1 (--lenient: 0). SIGINT/SIGTERM stop reading, let the switch\n"
		"empty, finish the files and exit 128 + signal. Exit status: see docs/running.md.\n"
		"pcapng outputs carry a comment on each frame something happened to (--annotate\n"
		"events, the default; all: every frame, refused with no pcapng --out; none):\n"
		"\"rocemu: in=p0 out=p1 t_in=NS prio=3 qdepth=B wait=NSns ce=red delayed=NSns\n"
		"event=STAGE.COUNTER created=STAGE path=N via=LINK,LINK\" (path: the first fabric\n"
		"link it took, 1 + its index in --stats fabric.links[]; via: the links it took, by\n"
		"name). --in - reads standard input, --out -\n"
		"writes standard output (the summary then goes to standard error).\n"
		"--drops writes the first 128 bytes (--drops-snaplen) of every dropped frame, at\n"
		"the time it was dropped, with\n"
		"\"drop=REASON\" (the names of the summary's drops by reason); the virtual incast\n"
		"senders' frames (never on a wire) only with --drops-virtual. --drops-max-mb\n"
		"stops that file at a size (the run goes on; exit status 1).\n");
}

/* Split "file.pcap:PORT" (PORT optional) and resolve PORT against the pipeline. */
int
replay_file_port(const char *opt, const char *arg, const struct emu_pipeline *pl, char **file,
		 uint16_t *port, uint16_t dflt)
{
	char *copy = strdup(arg), *colon;
	unsigned int i;

	if (copy == NULL)
		return -1;
	colon = strrchr(copy, ':');
	*port = dflt;
	if (colon != NULL) {
		*colon = '\0';
		for (i = 0; i < pl->n_ports; i++)
			if (strcmp(pl->port_names[i], colon + 1) == 0)
				break;
		if (i == pl->n_ports) {
			fprintf(stderr, "rocemu replay: %s %s: no port named \"%s\" in %s\n", opt,
				arg, colon + 1, pl->file);
			free(copy);
			return -1;
		}
		*port = (uint16_t)i;
	}
	if (copy[0] == '\0') {
		fprintf(stderr, "rocemu replay: %s \"%s\": empty file name\n", opt, arg);
		free(copy);
		return -1;
	}
	*file = copy;
	return 0;
}

void
replay_in_next(struct replay_in *in)
{
	struct emu_err err;
	int rc;

	if (!in->has_next)
		return;
	rc = emu_pcapr_next(&in->r, &in->rec, &err);
	if (rc < 0 && app_stop_signal != 0)
		rc = 0; /* a read from a pipe cut by the stop (EINTR): the input ends there */
	if (rc < 0) {
		fprintf(stderr, "rocemu replay: %s; the frames before it were replayed\n", err.msg);
		in->bad = true;
	}
	in->has_next = rc == 1;
	if (rc == 1) {
		in->frames++;
		in->snapped += in->rec.caplen < in->rec.origlen;
	}
}

/* --annotate (set once by app_replay_main() before the run) */
enum replay_annotate replay_annotate = REPLAY_ANN_EVENTS;

void
replay_on_drop(void *arg, struct rte_mbuf *m, uint32_t reason)
{
	struct replay_drops *d = arg;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	char comment[512];

	if (unlikely(emu_meta(m)->flags & EMU_META_VIRTUAL) && !d->virtual_frames) {
		d->virtual_skipped++; /* never on a wire: only when asked */
		return;
	}
	emu_switch_annotate(d->sw, m, (int)reason, true, comment, sizeof(comment));
	len = RTE_MIN(len, d->snaplen); /* headers: a drop capture is for what and why */
	if (d->max_bytes != 0 && (d->capped != 0 ||
				  emu_pcapw_size(d->w) + sizeof(comment) + len > d->max_bytes)) {
		d->capped++; /* stopped at its cap: the file stays complete, the run goes on */
		return;
	}
	if (emu_pcapw_write(d->w, 0, d->now_ns, rte_pktmbuf_read(m, 0, len, d->linear), len,
			    emu_wire_len(m), 0, comment) == 0)
		d->frames++;
}

void
replay_write(struct replay_out *outs, unsigned int n_out, struct emu_switch *sw,
	     unsigned int n_ports, uint64_t now_ns, uint8_t *linear)
{
	char comment[512];
	struct rte_mbuf **pkts;
	unsigned int p, o;
	uint16_t n, i;

	emu_switch_tick(sw, now_ns);
	for (p = 0; p < n_ports; p++) {
		if (emu_switch_tx_idle(sw, (uint16_t)p))
			continue; /* its tx_prepare would change nothing */
		n = emu_switch_tx_prepare(sw, (uint16_t)p, now_ns, &pkts);
		for (o = 0; o < n_out; o++) {
			struct replay_out *ro = &outs[o];

			if (ro->port != p && ro->port != REPLAY_ALL_PORTS)
				continue;
			for (i = 0; i < n; i++) {
				uint32_t len = rte_pktmbuf_pkt_len(pkts[i]);
				bool ann = ro->pcapng && replay_annotate != REPLAY_ANN_NONE &&
					   emu_switch_annotate(sw, pkts[i], -1,
							       replay_annotate == REPLAY_ANN_ALL,
							       comment, sizeof(comment)) > 0;

				/* a failed file keeps its first error; the run goes on */
				if (emu_pcapw_write(ro->w, ro->port == REPLAY_ALL_PORTS && ro->pcapng ?
							p : 0,
						    emu_meta(pkts[i])->ts_ns,
						    rte_pktmbuf_read(pkts[i], 0, len, linear), len,
						    emu_wire_len(pkts[i]), EMU_PCAPW_OUTBOUND,
						    ann ? comment : NULL) == 0)
					ro->frames++;
			}
		}
		rte_pktmbuf_free_bulk(pkts, n);
		emu_switch_tx_done(sw, (uint16_t)p, n);
	}
}

