/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Over 600 lines (736): the replay loop, its inputs and outputs (per-port pcap, the merged
 * pcapng), --annotate/--drops/--timeline and signal handling share one run state; the input
 * side is the piece to move out next.
 *
 * rocemu replay: pcap in, pcap out, on a virtual clock taken from the input
 * timestamps. The same stages and TM as live mode run; the clock jumps from
 * event to event (next input packet, next TM departure, next profile phase),
 * and keeps running after the last input until the switch is empty. Output
 * timestamps are the emulated departure times, in nanoseconds. Nothing here
 * reads a real clock, so the output is a function of the inputs, pipeline,
 * profile and seed alone.
 *
 * rocemu check: load and validate a pipeline (and a profile), then exit.
 *
 * Over 600 lines: replay and check; check moves to its own file when the options are shared
 * through a table.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "app.h"
#include "lib/capture/emu_pcapr.h"
#include "lib/capture/emu_pcapw.h"
#include "lib/switch/emu_timeline.h"

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

static void
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
		"empty, finish the files and exit 128 + signal. Exit status: see README.\n"
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
static int
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

static void
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

enum replay_annotate { REPLAY_ANN_NONE, REPLAY_ANN_EVENTS, REPLAY_ANN_ALL };

static enum replay_annotate replay_annotate = REPLAY_ANN_EVENTS;

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

static void
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

static void
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

int
app_replay_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		APP_COMMON_LONGOPTS,
		{ "in", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ "lenient", no_argument, NULL, 'L' },
		{ "annotate", required_argument, NULL, 'A' },
		{ "drops", required_argument, NULL, 'd' },
		{ "drops-virtual", no_argument, NULL, 'V' },
		{ "drops-snaplen", required_argument, NULL, 'N' },
		{ "drops-max-mb", required_argument, NULL, 'X' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in_args[REPLAY_MAX_FILES], *out_args[REPLAY_MAX_FILES];
	struct emu_file_ref refs[2 * REPLAY_MAX_FILES];
	struct replay_in ins[REPLAY_MAX_FILES];
	struct replay_out outs[REPLAY_MAX_FILES];
	unsigned int n_in = 0, n_out = 0, n_refs = 0, i, j;
	struct app_opts o = { 0 };
	struct app_ctx ctx = { 0 };
	struct app_prep prep;
	struct emu_err err;
	uint8_t *linear = NULL;
	uint64_t now_ns = 0, nombuf = 0, bad_len = 0, t_in, t_ev, port_tx[EMU_MAX_PORTS];
	/* the last input frame's time and the profile changes made by then (UINT64_MAX: the
	 * input has not ended) */
	uint64_t t_last_in = 0, changes_in = UINT64_MAX;
	bool started = false, lenient = false, eal = false, any_bad = false, running = false;
	const char *drops_file = NULL, *annotate_given = NULL;
	struct replay_drops drops = { 0 };
	struct emu_timeline *tl = NULL;
	struct emu_snap *tl_snap = NULL;
	uint64_t tl_res_ns = 10000, tl_last_ns = 0, tl_bucket = 0;
	bool tl_any = false;
	FILE *sum;
	int c, rc = APP_EXIT_CONFIG;

	memset(ins, 0, sizeof(ins));
	memset(outs, 0, sizeof(outs));
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int h = app_common_opt(&o, c, optarg);

		if (h < 0)
			return APP_EXIT_CONFIG;
		if (h > 0)
			continue;
		switch (c) {
		case 'i':
		case 'o':
			if ((c == 'i' ? n_in : n_out) >= REPLAY_MAX_FILES) {
				fprintf(stderr, "rocemu replay: at most %d --%s files\n",
					REPLAY_MAX_FILES, c == 'i' ? "in" : "out");
				return APP_EXIT_CONFIG;
			}
			if (c == 'i')
				in_args[n_in++] = optarg;
			else
				out_args[n_out++] = optarg;
			break;
		case 'L':
			lenient = true;
			break;
		case 'A':
			annotate_given = optarg;
			if (strcmp(optarg, "none") == 0)
				replay_annotate = REPLAY_ANN_NONE;
			else if (strcmp(optarg, "events") == 0)
				replay_annotate = REPLAY_ANN_EVENTS;
			else if (strcmp(optarg, "all") == 0)
				replay_annotate = REPLAY_ANN_ALL;
			else {
				fprintf(stderr, "rocemu replay: --annotate: none, events or all, got "
					"\"%s\"\n", optarg);
				return APP_EXIT_CONFIG;
			}
			break;
		case 'd':
			drops_file = optarg;
			break;
		case 'V':
			drops.virtual_frames = true;
			break;
		case 'X': {
			char *end;
			double v;

			errno = 0;
			v = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' || !(v >= 0.01) || v > 1e9) {
				fprintf(stderr, "rocemu replay: --drops-max-mb: must be a number of MB "
					"from 0.01 to 1e9, got \"%s\"\n", optarg);
				return APP_EXIT_CONFIG;
			}
			drops.max_bytes = (uint64_t)(v * 1e6);
			break;
		}
		case 'N': {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || optarg[0] < '0' ||
			    optarg[0] > '9' || v < 64 || v > 65535) {
				fprintf(stderr, "rocemu replay: --drops-snaplen: must be a number of "
					"bytes from 64 to 65535, got \"%s\"\n", optarg);
				return APP_EXIT_CONFIG;
			}
			drops.snaplen = (uint32_t)v;
			break;
		}
		case APP_OPT_HELP:
			replay_usage(stdout);
			return APP_EXIT_OK;
		default:
			replay_usage(stderr);
			return APP_EXIT_CONFIG;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rocemu replay: unexpected argument \"%s\"\n", argv[optind]);
		return APP_EXIT_CONFIG;
	}
	if (n_in == 0) {
		fprintf(stderr, "rocemu replay: give at least one --in FILE.pcap[:PORT]\n");
		return APP_EXIT_CONFIG;
	}
	/* From here on a signal is a flag the run reads: a stop during the set-up (EAL, pools,
	 * the outputs' temporary files) leaves no temporary file and no EAL directory behind. */
	app_install_stop_signals();
	if (app_load_pipeline(&ctx, &o) != 0)
		return APP_EXIT_CONFIG;
	/* Every path first, then the memory: nothing is opened before both are known good. */
	for (i = 0; i < n_in; i++) {
		if (replay_file_port("--in", in_args[i], ctx.pl, &ins[i].file, &ins[i].port, 0) != 0)
			goto out;
		refs[n_refs++] = (struct emu_file_ref){ "--in", ins[i].file, true };
	}
	for (i = 0; i < n_out; i++) {
		if (replay_file_port("--out", out_args[i], ctx.pl, &outs[i].file, &outs[i].port,
				     REPLAY_ALL_PORTS) != 0)
			goto out;
		for (j = 0; j < i; j++)
			if (outs[j].port == outs[i].port && outs[i].port != REPLAY_ALL_PORTS) {
				fprintf(stderr, "rocemu replay: --out %s: port %s already has --out "
					"%s\n", out_args[i], ctx.pl->port_names[outs[i].port],
					outs[j].file);
				goto out;
			}
		refs[n_refs++] = (struct emu_file_ref){ "--out", outs[i].file, false };
	}
	if (annotate_given != NULL && replay_annotate != REPLAY_ANN_NONE) {
		/* like a capture stage's "annotate" on a .pcap file: an option with no effect */
		bool any_pcapng = false;

		for (i = 0; i < n_out; i++)
			any_pcapng |= emu_pcapw_fmt_for(outs[i].file) == EMU_PCAPW_PCAPNG;
		if (!any_pcapng) {
			fprintf(stderr, "rocemu replay: --annotate %s: no --out is pcapng, so no frame "
				"could carry a comment (a .pcap file is classic pcap: name a "
				"FILE.pcapng)\n", annotate_given);
			goto out;
		}
	}
	if (drops_file == NULL && (drops.virtual_frames || drops.snaplen != 0 ||
				   drops.max_bytes != 0)) {
		fprintf(stderr, "rocemu replay: --drops-%s: needs --drops FILE.pcapng\n",
			drops.virtual_frames ? "virtual" : drops.snaplen != 0 ? "snaplen" : "max-mb");
		goto out;
	}
	if (drops.snaplen == 0)
		drops.snaplen = REPLAY_DROPS_SNAPLEN;
	if (drops_file != NULL)
		refs[n_refs++] = (struct emu_file_ref){ "--drops", drops_file, false };
	if (app_prepare(&ctx, &o, refs, n_refs, &prep) != 0)
		goto out;
	for (i = 0; i < n_in; i++) {
		if (emu_pcapr_open(&ins[i].r, ins[i].file, NULL, &err) != 0) {
			if (app_stop_signal == 0) /* else a pipe's read cut by the stop: said at out */
				fprintf(stderr, "rocemu replay: --in %s\n", err.msg);
			goto out;
		}
		ins[i].has_next = true;
	}
	for (i = 0; i < n_out; i++)
		if (emu_out_probe(outs[i].file, &err) != 0) {
			fprintf(stderr, "rocemu replay: --out %s\n", err.msg);
			goto out;
		}
	if (drops_file != NULL && emu_out_probe(drops_file, &err) != 0) {
		fprintf(stderr, "rocemu replay: --drops %s\n", err.msg);
		goto out;
	}
	if (app_eal_init_portless("rocemu", prep.needs.eal_bytes / (1024 * 1024) + 256,
				  &err) != 0) {
		fprintf(stderr, "rocemu replay: %s\n", err.msg);
		rc = APP_EXIT_FAIL;
		goto out;
	}
	eal = true;
	if (app_build(&ctx, &o, &err) != 0) {
		fprintf(stderr, "%s: %s\n", app_prog, err.msg);
		goto out;
	}
	for (i = 0; i < n_out; i++) {
		bool all = outs[i].port == REPLAY_ALL_PORTS;
		static const char *const merged[] = { "all" };

		/* the format follows the name: .pcapng is pcapng, anything else classic pcap (for
		 * every port too: one interface, the ports not told apart) */
		outs[i].pcapng = emu_pcapw_fmt_for(outs[i].file) == EMU_PCAPW_PCAPNG;
		if (outs[i].pcapng && replay_annotate != REPLAY_ANN_NONE)
			emu_switch_want_trace(ctx.sw); /* the comments are the traces */
		outs[i].w = emu_pcapw_open(outs[i].file,
					   outs[i].pcapng ? EMU_PCAPW_PCAPNG : EMU_PCAPW_PCAP,
					   65535, all && outs[i].pcapng ? ctx.pl->n_ports : 1,
					   all ? (outs[i].pcapng ? ctx.pl->port_names : merged) :
						 &ctx.pl->port_names[outs[i].port],
					   &err);
		if (outs[i].w == NULL) {
			fprintf(stderr, "rocemu replay: --out %s\n", err.msg);
			goto out;
		}
	}
	linear = malloc(65536);
	if (linear == NULL)
		goto out;
	if (o.timeline_file != NULL) {
		if (o.timeline_us > 0)
			tl_res_ns = (uint64_t)(o.timeline_us * 1000.0);
		tl = emu_timeline_open(o.timeline_file, ctx.sw, &err);
		tl_snap = emu_switch_snap_alloc(ctx.sw);
		if (tl == NULL || tl_snap == NULL) {
			fprintf(stderr, "rocemu replay: --timeline %s\n", tl ? "out of memory" : err.msg);
			goto out;
		}
	}
	if (drops_file != NULL) {
		drops.w = emu_pcapw_open(drops_file, EMU_PCAPW_PCAPNG, drops.snaplen, 1,
					 (const char *const[]){ "drop" }, &err);
		if (drops.w == NULL) {
			fprintf(stderr, "rocemu replay: --drops %s\n", err.msg);
			goto out;
		}
		drops.sw = ctx.sw;
		emu_switch_want_trace(ctx.sw); /* each drop's comment is its trace */
		drops.linear = malloc(65536);
		if (drops.linear == NULL)
			goto out;
		emu_switch_add_drop_hook(ctx.sw, replay_on_drop, &drops);
	}
	emu_switch_route_warnings(ctx.sw, stderr);
	emu_profile_path_warnings(ctx.prof, ctx.sw, stderr);
	{
		bool fed[EMU_MAX_PORTS] = { false };

		for (i = 0; i < n_in; i++)
			fed[ins[i].port] = true;
		app_unpausable_warnings(ctx.pl, fed, stderr);
	}
	if (app_stop_signal != 0)
		goto out; /* stopped while setting up (said at out) */
	running = true;
	for (i = 0; i < n_in; i++)
		replay_in_next(&ins[i]);

	for (;;) {
		struct replay_in *first = NULL;

		if (app_stop_signal != 0)
			/* stop reading; what is in the switch still leaves, on the virtual clock */
			for (i = 0; i < n_in; i++)
				ins[i].has_next = false;
		for (i = 0; i < n_in; i++)
			if (ins[i].has_next && (first == NULL || ins[i].rec.ts_ns < first->rec.ts_ns))
				first = &ins[i];
		t_in = first != NULL ? first->rec.ts_ns : UINT64_MAX;
		if (first != NULL)
			t_last_in = t_in;
		else if (started && changes_in == UINT64_MAX)
			changes_in = emu_switch_profile_changes(ctx.sw);
		if (!started) {
			if (first == NULL)
				break;
			now_ns = t_in;
			emu_switch_set_program(ctx.sw, emu_profile_prog(ctx.prof), now_ns);
			started = true;
		}
		/* Incast sources and PFC storms never run dry: they stop with the last input and
		 * profile phase. */
		if (t_in == UINT64_MAX &&
		    (ctx.prof == NULL || emu_profile_next_ns(ctx.prof) == UINT64_MAX ||
		     app_stop_signal != 0))
			emu_switch_sources_stop(ctx.sw);
		t_ev = emu_switch_next_event_ns(ctx.sw);
		if (t_in == UINT64_MAX && t_ev == UINT64_MAX)
			break;
		if (t_in == UINT64_MAX && app_stop_signal != 0 && ctx.prof != NULL &&
		    emu_switch_held(ctx.sw) == 0)
			break; /* stopped: the profile's later phases have nothing to act on */
		if (t_ev <= t_in) {
			now_ns = RTE_MAX(now_ns, t_ev);
			drops.now_ns = now_ns;
			replay_write(outs, n_out, ctx.sw, ctx.pl->n_ports, now_ns, linear);
		} else {
			/* A burst: consecutive frames of one input with the same timestamp. */
			struct rte_mbuf *burst[EMU_BURST];
			uint32_t lens[EMU_BURST];
			uint16_t n = 0;
			uint64_t ts = first->rec.ts_ns;
			uint32_t room = (uint32_t)emu_pipeline_data_room(ctx.pl) - RTE_PKTMBUF_HEADROOM;
			const bool late = ts < now_ns; /* injected at now_ns: counted, and said */

			now_ns = RTE_MAX(now_ns, ts);
			drops.now_ns = now_ns;
			while (first->has_next && first->rec.ts_ns == ts && n < EMU_BURST) {
				struct rte_mbuf *m;
				uint32_t len = first->rec.caplen;

				first->late += late;
				if (len < 14 || first->rec.origlen > room) {
					bad_len++;
				} else if ((m = rte_pktmbuf_alloc(ctx.pool)) == NULL) {
					nombuf++;
				} else {
					memcpy(rte_pktmbuf_append(m, (uint16_t)len), first->rec.data,
					       len);
					lens[n] = first->rec.origlen;
					burst[n++] = m;
				}
				replay_in_next(first);
			}
			if (n > 0)
				emu_switch_rx_lens(ctx.sw, first->port, burst, n, lens, now_ns);
			replay_write(outs, n_out, ctx.sw, ctx.pl->n_ports, now_ns, linear);
		}
		emu_switch_service(ctx.sw, false);
		/* The state after the last event of each grid step is the step's row (a state
		 * between two events, such as a pause, is never skipped). */
		if (tl != NULL) {
			if (tl_any && now_ns / tl_res_ns != tl_bucket)
				emu_timeline_sample(tl, ctx.sw, tl_snap, tl_last_ns);
			emu_switch_snap_take(ctx.sw, tl_snap);
			tl_last_ns = now_ns;
			tl_bucket = now_ns / tl_res_ns;
			tl_any = true;
		}
	}
	if (app_stop_signal != 0) {
		/* anything still held (a profile's incast, a stop mid-phase) is counted */
		emu_switch_discard_held(ctx.sw);
		replay_write(outs, n_out, ctx.sw, ctx.pl->n_ports, now_ns, linear);
	}
	emu_switch_service(ctx.sw, true);
	sum = ctx.summary != NULL ? ctx.summary : stdout;
	if (app_stop_signal != 0)
		fprintf(sum, "replay: stopped by signal %d (%s): input no longer read, the switch "
		       "emptied, files complete\n", app_stop_signal, strsignal(app_stop_signal));
	emu_switch_print_summary(ctx.sw, sum);
	rc = APP_EXIT_OK;
	for (i = 0; i < n_in; i++) {
		fprintf(sum, "replay: in  %s -> %s: %" PRIu64 " frames", ins[i].file,
		       ctx.pl->port_names[ins[i].port], ins[i].frames);
		if (ins[i].snapped > 0)
			fprintf(sum, " (%" PRIu64 " header captures, timed at their original length)",
			       ins[i].snapped);
		if (ins[i].late > 0)
			fprintf(sum, " (%" PRIu64 " timed before the frame ahead of them: the file's "
				"times go backwards; they entered at the clock's time)", ins[i].late);
		fprintf(sum, "%s\n", ins[i].bad ? " (stopped at an unreadable record)" : "");
		any_bad |= ins[i].bad;
	}
	for (i = 0; i < ctx.pl->n_ports; i++) {
		struct emu_port_stats ps;

		emu_switch_port_stats(ctx.sw, (uint16_t)i, &ps);
		port_tx[i] = ps.tx_pkts;
	}
	for (i = 0; i < n_out; i++) {
		bool all = outs[i].port == REPLAY_ALL_PORTS;
		uint64_t others = 0;

		/* the summary names a file only once it is in place */
		if (emu_pcapw_close(outs[i].w, &err) != 0) {
			fprintf(sum, "replay: out %s: FAILED, not written (below)\n",
				all ? "every port" : ctx.pl->port_names[outs[i].port]);
			fprintf(stderr, "rocemu replay: --out %s\n", err.msg);
			rc = APP_EXIT_FAIL;
		} else {
			fprintf(sum, "replay: out %s -> %s: %" PRIu64 " frames\n",
				all ? "every port" : ctx.pl->port_names[outs[i].port], outs[i].file,
				outs[i].frames);
		}
		outs[i].w = NULL;
		if (all)
			continue;
		for (j = 0; j < ctx.pl->n_ports; j++)
			if (j != outs[i].port)
				others += port_tx[j];
		if (port_tx[outs[i].port] == 0 && others > 0)
			fprintf(stderr, "rocemu replay: WARNING: --out %s: port %s sent nothing, "
				"while the other ports sent %" PRIu64 " frames (name another port "
				"with FILE:PORT, or give --out FILE alone for every port)\n",
				out_args[i], ctx.pl->port_names[outs[i].port], others);
	}
	if (tl != NULL) {
		if (tl_any)
			emu_timeline_sample(tl, ctx.sw, tl_snap, tl_last_ns);
		emu_switch_snap_take(ctx.sw, tl_snap);
		emu_timeline_sample(tl, ctx.sw, tl_snap, now_ns);
		{
			uint64_t rows = emu_timeline_rows(tl);

			if (emu_timeline_close(tl, &err) != 0) {
				fprintf(sum, "replay: timeline: FAILED, not written (below)\n");
				fprintf(stderr, "rocemu replay: --timeline %s\n", err.msg);
				rc = APP_EXIT_FAIL;
			} else {
				fprintf(sum, "replay: timeline -> %s: %" PRIu64 " rows\n",
					o.timeline_file, rows);
			}
		}
		tl = NULL;
	}
	if (drops.w != NULL) {
		if (emu_pcapw_close(drops.w, &err) != 0) {
			/* a file never put in place is not named as written (its data: below) */
			fprintf(sum, "replay: drops: FAILED, not written (below)\n");
			fprintf(stderr, "rocemu replay: --drops %s\n", err.msg);
			rc = APP_EXIT_FAIL;
		} else {
			fprintf(sum, "replay: drops -> %s: %" PRIu64 " frames", drops_file,
				drops.frames);
			if (drops.virtual_skipped > 0)
				fprintf(sum, " (%" PRIu64 " dropped virtual incast frames not "
					"written: --drops-virtual to include them)",
					drops.virtual_skipped);
			fprintf(sum, "\n");
			if (drops.capped > 0) {
				fprintf(stderr, "rocemu replay: --drops %s: reached --drops-max-mb "
					"%.6g: capture stopped there (%" PRIu64 " frames in the file, "
					"%" PRIu64 " dropped frames after it not written), forwarding "
					"went on\n", drops_file, (double)drops.max_bytes / 1e6,
					drops.frames, drops.capped);
				rc = APP_EXIT_FAIL;
			}
		}
		drops.w = NULL;
	}
	fprintf(sum, "replay: %s\n", app_version());
	fprintf(sum, "replay: virtual clock ended at %" PRIu64 ".%09" PRIu64 " s\n",
	       now_ns / UINT64_C(1000000000), now_ns % UINT64_C(1000000000));
	if (changes_in != UINT64_MAX && emu_switch_profile_changes(ctx.sw) > changes_in)
		/* a profile longer than the capture: say that its later phases met no input */
		fprintf(sum, "replay: profile: %" PRIu64 " of its %" PRIu64 " changes came after the "
			"last input frame (at %" PRIu64 ".%09" PRIu64 " s): no input frame met them\n",
			emu_switch_profile_changes(ctx.sw) - changes_in,
			emu_switch_profile_changes(ctx.sw), t_last_in / UINT64_C(1000000000),
			t_last_in % UINT64_C(1000000000));
	if (fflush(sum) != 0 || ferror(sum)) {
		/* the conservation line is the run's verdict: not written is not silent */
		fprintf(stderr, "rocemu replay: the summary could not be written to %s: %s\n",
			sum == stdout ? "standard output" : "standard error", strerror(errno));
		rc = APP_EXIT_FAIL;
	}
	if (emu_switch_report_failures_as(ctx.sw, stderr, "rocemu replay") > 0)
		rc = APP_EXIT_FAIL;
	if (any_bad && !lenient) {
		fprintf(stderr, "rocemu replay: an input had an unreadable record (exit status 1; "
			"--lenient to accept)\n");
		rc = APP_EXIT_FAIL;
	}
	if (bad_len != 0 || nombuf != 0) {
		/* Not part of the switch's conservation (they never entered it): say so loudly. */
		fprintf(stderr,
			"rocemu replay: %" PRIu64 " input frames not injected: %" PRIu64
			" shorter than 14 B or longer than the ports' MTU, %" PRIu64
			" for lack of mbufs (raise \"mbufs\" in the pipeline)\n",
			bad_len + nombuf, bad_len, nombuf);
		rc = APP_EXIT_FAIL;
	}
	{
		struct emu_conservation cons;

		emu_switch_conservation(ctx.sw, &cons);
		if (cons.unaccounted != 0)
			rc = APP_EXIT_FAIL;
	}
	if (o.stats_file != NULL && app_write_stats(&ctx, o.stats_file, &err) != 0) {
		fprintf(stderr, "rocemu replay: --stats %s\n", err.msg);
		rc = APP_EXIT_FAIL;
	}
	if (o.prom_file != NULL && app_write_prom(&ctx, o.prom_file, &err) != 0) {
		fprintf(stderr, "rocemu replay: --prometheus %s\n", err.msg);
		rc = APP_EXIT_FAIL;
	}
	if (app_stop_signal != 0)
		rc = APP_EXIT_SIGNAL + app_stop_signal;
out:
	if (!running && app_stop_signal != 0) {
		/* stopped while setting up (an input on a pipe may have failed with EINTR): no
		 * frame was replayed, so the old files stay as they were */
		fprintf(stderr, "rocemu replay: stopped by signal %d (%s) before the first frame: "
			"nothing written\n", app_stop_signal, strsignal(app_stop_signal));
		rc = APP_EXIT_SIGNAL + app_stop_signal;
	}
	/* outputs still open here belong to a refused or failed run: the old files stay */
	for (i = 0; i < REPLAY_MAX_FILES; i++) {
		emu_pcapw_abort(outs[i].w);
		free(outs[i].file);
		emu_pcapr_close(&ins[i].r);
		free(ins[i].file);
	}
	emu_pcapw_abort(drops.w);
	free(drops.linear);
	emu_timeline_abort(tl);
	free(tl_snap);
	free(linear);
	if (eal) {
		app_teardown(&ctx);
		app_eal_cleanup();
	} else {
		emu_pipeline_free(ctx.pl);
	}
	return rc;
}

int
app_check_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		APP_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct app_opts o = { 0 };
	struct app_ctx ctx = { 0 };
	struct app_prep prep;
	struct emu_err err;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int h = app_common_opt(&o, c, optarg);

		if (h < 0)
			return APP_EXIT_CONFIG;
		if (h > 0)
			continue;
		if (c == APP_OPT_HELP) {
			printf("usage: rocemu check [--pipeline] FILE [--profile FILE] [--max-mem MB]\n"
			       "Validates a pipeline (and a profile against it) as a run would, "
			       "without taking its memory or opening its files, and exits: 0 when "
			       "a run with it would start, 2 with the first error otherwise.\n");
			return APP_EXIT_OK;
		}
		fprintf(stderr, "rocemu check: see rocemu check --help\n");
		return APP_EXIT_CONFIG;
	}
	if (optind < argc) {
		if (o.pipeline != NULL || optind + 1 < argc) {
			fprintf(stderr, "rocemu check: unexpected argument \"%s\" (one pipeline: "
				"FILE or --pipeline FILE)\n", argv[optind + (o.pipeline == NULL)]);
			return APP_EXIT_CONFIG;
		}
		o.pipeline = argv[optind];
	}
	if (app_load_pipeline(&ctx, &o) != 0)
		return APP_EXIT_CONFIG;
	if (app_prepare(&ctx, &o, NULL, 0, &prep) != 0) {
		emu_pipeline_free(ctx.pl);
		return APP_EXIT_CONFIG;
	}
	ctx.pl->check_only = true;
	/* builds nothing that holds packets: little memory whatever the pipeline needs */
	if (app_eal_init_portless("rocemu", 512, &err) != 0) {
		fprintf(stderr, "rocemu check: %s\n", err.msg);
		emu_pipeline_free(ctx.pl);
		return APP_EXIT_FAIL;
	}
	rc = app_build(&ctx, &o, &err);
	if (rc != 0)
		fprintf(stderr, "%s: %s\n", app_prog, err.msg);
	if (rc == 0) {
		emu_switch_route_warnings(ctx.sw, stderr);
		emu_profile_path_warnings(ctx.prof, ctx.sw, stderr);
		app_unpausable_warnings(ctx.pl, NULL, stderr);
		app_capture_estimate(ctx.pl, o.pipeline, o.profile, stderr);
		printf("%s%s%s: OK (needs %.0f MB)\n", o.pipeline, o.profile ? " + " : "",
		       o.profile ? o.profile : "", (double)prep.needs.total_bytes / 1e6);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "rocemu check: the verdict could not be written to "
				"standard output: %s\n", strerror(errno));
			app_teardown(&ctx);
			app_eal_cleanup();
			return APP_EXIT_FAIL;
		}
	}
	app_teardown(&ctx);
	app_eal_cleanup();
	return rc == 0 ? APP_EXIT_OK : APP_EXIT_CONFIG;
}
