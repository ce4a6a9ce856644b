/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocemu replay: pcap in, pcap out, on a virtual clock taken from the input
 * timestamps. The same stages and TM as live mode run; the clock jumps from
 * event to event (next input packet, next TM departure, next profile phase),
 * and keeps running after the last input until the switch is empty. Output
 * timestamps are the emulated departure times, in nanoseconds. Nothing here
 * reads a real clock, so the output is a function of the inputs, pipeline,
 * profile and seed alone.
 *
 * Its inputs and outputs are replay_io.c; rocemu check is check.c.
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
#include "lib/switch/emu_timeline.h"

#include "app/rocemu/replay.h"

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
	bool any_all_out = false; /* an --out of every port */
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

		any_all_out |= all;

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
		if (tl == NULL) {
			/* Departures that change nothing in the switch ride with the next input's
			 * pass when nothing else happens before it: one pass a frame, not two. They
			 * leave with their own times, in order on their port; with an --out of
			 * every port only while one port has any (its file stays in time order). */
			uint64_t t_wire;
			unsigned int n_wire;

			t_ev = emu_switch_next_change_ns(ctx.sw, &t_wire, &n_wire);
			if (!(first != NULL && t_in < t_ev && (n_wire <= 1 || !any_all_out)))
				t_ev = RTE_MIN(t_ev, t_wire);
		} else {
			/* the timeline samples the state at every event */
			t_ev = emu_switch_next_event_ns(ctx.sw);
		}
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
		app_teardown_exit(&ctx);
		app_eal_cleanup();
	} else {
		emu_pipeline_free(ctx.pl);
	}
	return rc;
}

