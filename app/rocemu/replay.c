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
 * rocemu check: load and validate a pipeline (and a profile), then exit.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "app.h"

#define REPLAY_MAX_FILES EMU_MAX_PORTS

struct replay_in {
	const char *file;
	pcap_t *pc;
	uint16_t port;
	bool has_next;
	struct pcap_pkthdr *hdr;
	const u_char *data;
	uint64_t ts_ns;
	uint64_t frames;
};

struct replay_out {
	const char *file;
	pcap_t *pd;
	pcap_dumper_t *dumper;
	uint64_t frames;
};

static void
replay_usage(FILE *f)
{
	fprintf(f,
		"usage: rocemu replay --pipeline FILE [--profile FILE] [--seed N] [--stats FILE]\n"
		"                     --in IN.pcap[:PORT] ... [--out OUT.pcap[:PORT] ...]\n"
		"Runs the pipeline offline on a virtual clock taken from the input timestamps.\n"
		"PORT is a port name from the pipeline; without it the n-th --in (or --out) is the\n"
		"pipeline's n-th port. Frames leaving a port without an --out are counted as sent.\n"
		"Output timestamps are emulated departure times (nanosecond pcap).\n");
}

/* Split "file.pcap:PORT" (PORT optional) and resolve PORT against the pipeline. */
static int
replay_file_port(const char *arg, unsigned int nth, const struct emu_pipeline *pl, char **file,
		 uint16_t *port)
{
	char *copy = strdup(arg), *colon;
	unsigned int i;

	if (copy == NULL)
		return -1;
	colon = strrchr(copy, ':');
	if (colon != NULL) {
		*colon = '\0';
		for (i = 0; i < pl->n_ports; i++)
			if (strcmp(pl->port_names[i], colon + 1) == 0)
				break;
		if (i == pl->n_ports) {
			fprintf(stderr, "rocemu replay: %s: no port named \"%s\" in %s\n", arg,
				colon + 1, pl->file);
			free(copy);
			return -1;
		}
		*port = (uint16_t)i;
	} else {
		if (nth >= pl->n_ports) {
			fprintf(stderr,
				"rocemu replay: %s: the pipeline has only %u ports; name one with "
				"FILE:PORT\n",
				arg, pl->n_ports);
			free(copy);
			return -1;
		}
		*port = (uint16_t)nth;
	}
	*file = copy;
	return 0;
}

static void
replay_in_next(struct replay_in *in)
{
	int rc = pcap_next_ex(in->pc, &in->hdr, &in->data);

	in->has_next = rc == 1;
	if (rc == PCAP_ERROR)
		fprintf(stderr, "rocemu replay: %s: %s (stopping this input)\n", in->file,
			pcap_geterr(in->pc));
	if (in->has_next)
		in->ts_ns = (uint64_t)in->hdr->ts.tv_sec * 1000000000ULL +
			    (uint64_t)in->hdr->ts.tv_usec;
}

static void
replay_write(struct replay_out *outs[], struct emu_switch *sw, unsigned int n_ports,
	     uint64_t now_ns, uint8_t *linear)
{
	struct rte_mbuf **pkts;
	unsigned int p;
	uint16_t n, i;

	for (p = 0; p < n_ports; p++) {
		n = emu_switch_tx_prepare(sw, (uint16_t)p, now_ns, &pkts);
		for (i = 0; i < n && outs[p] != NULL; i++) {
			struct pcap_pkthdr h;
			uint64_t ts = emu_meta(pkts[i])->ts_ns;

			h.ts.tv_sec = (time_t)(ts / 1000000000ULL);
			h.ts.tv_usec = (suseconds_t)(ts % 1000000000ULL);
			h.caplen = h.len = rte_pktmbuf_pkt_len(pkts[i]);
			pcap_dump((u_char *)outs[p]->dumper, &h,
				  rte_pktmbuf_read(pkts[i], 0, h.caplen, linear));
			outs[p]->frames++;
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
		{ NULL, 0, NULL, 0 },
	};
	const char *in_args[REPLAY_MAX_FILES], *out_args[REPLAY_MAX_FILES];
	struct replay_in ins[REPLAY_MAX_FILES];
	struct replay_out outs_store[REPLAY_MAX_FILES];
	struct replay_out *outs[EMU_MAX_PORTS] = { NULL };
	unsigned int n_in = 0, n_out = 0, i;
	struct app_opts o = { 0 };
	struct app_ctx ctx = { 0 };
	struct emu_err err;
	char errbuf[PCAP_ERRBUF_SIZE];
	uint8_t *linear = NULL;
	uint64_t now_ns = 0, nombuf = 0, bad_len = 0, t_in, t_ev;
	bool started = false;
	int c, rc = APP_EXIT_CONFIG;

	memset(ins, 0, sizeof(ins));
	memset(outs_store, 0, sizeof(outs_store));
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
		replay_usage(stderr);
		return APP_EXIT_CONFIG;
	}
	if (app_load_pipeline(&ctx, &o) != 0)
		return APP_EXIT_CONFIG;
	for (i = 0; i < n_in; i++) {
		char *file;

		if (replay_file_port(in_args[i], i, ctx.pl, &file, &ins[i].port) != 0)
			goto out;
		ins[i].file = file;
		ins[i].pc = pcap_open_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO,
								    errbuf);
		if (ins[i].pc == NULL) {
			fprintf(stderr, "rocemu replay: %s: %s\n", file, errbuf);
			goto out;
		}
		if (pcap_datalink(ins[i].pc) != DLT_EN10MB) {
			fprintf(stderr, "rocemu replay: %s: link type %s, need Ethernet (EN10MB)\n",
				file, pcap_datalink_val_to_name(pcap_datalink(ins[i].pc)));
			goto out;
		}
	}
	for (i = 0; i < n_out; i++) {
		struct replay_out *ro = &outs_store[i];
		char *file;
		uint16_t port;

		if (replay_file_port(out_args[i], i, ctx.pl, &file, &port) != 0)
			goto out;
		ro->file = file;
		if (outs[port] != NULL) {
			fprintf(stderr, "rocemu replay: port %s has two --out files\n",
				ctx.pl->port_names[port]);
			goto out;
		}
		ro->pd = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
							      PCAP_TSTAMP_PRECISION_NANO);
		ro->dumper = ro->pd != NULL ? pcap_dump_open(ro->pd, file) : NULL;
		if (ro->dumper == NULL) {
			fprintf(stderr, "rocemu replay: %s: cannot open for writing: %s\n", file,
				ro->pd != NULL ? pcap_geterr(ro->pd) : "out of memory");
			goto out;
		}
		outs[port] = ro;
	}
	if (app_eal_init_portless("rocemu", app_mem_mb_needed(ctx.pl), &err) != 0) {
		fprintf(stderr, "rocemu replay: %s\n", err.msg);
		rc = APP_EXIT_FAIL;
		goto out;
	}
	if (app_build(&ctx, &o, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		goto out_eal;
	}
	linear = malloc(65536);
	if (linear == NULL)
		goto out_eal;
	for (i = 0; i < n_in; i++)
		replay_in_next(&ins[i]);

	for (;;) {
		struct replay_in *first = NULL;

		for (i = 0; i < n_in; i++)
			if (ins[i].has_next && (first == NULL || ins[i].ts_ns < first->ts_ns))
				first = &ins[i];
		t_in = first != NULL ? first->ts_ns : UINT64_MAX;
		if (!started) {
			if (first == NULL)
				break;
			now_ns = t_in;
			emu_switch_set_profile(ctx.sw, ctx.prof, now_ns);
			started = true;
		}
		/* Incast sources never run dry: they stop with the last input and profile phase. */
		if (t_in == UINT64_MAX &&
		    (ctx.prof == NULL || emu_profile_next_ns(ctx.prof) == UINT64_MAX))
			emu_switch_incast_stop(ctx.sw);
		t_ev = emu_switch_next_event_ns(ctx.sw);
		if (t_in == UINT64_MAX && t_ev == UINT64_MAX)
			break;
		if (t_ev <= t_in) {
			now_ns = RTE_MAX(now_ns, t_ev);
			replay_write(outs, ctx.sw, ctx.pl->n_ports, now_ns, linear);
		} else {
			/* A burst: consecutive frames of one input with the same timestamp. */
			struct rte_mbuf *burst[EMU_BURST];
			uint16_t n = 0;
			uint64_t ts = first->ts_ns;

			now_ns = RTE_MAX(now_ns, ts);
			while (first->has_next && first->ts_ns == ts && n < EMU_BURST) {
				struct rte_mbuf *m;
				uint32_t len = first->hdr->caplen;

				first->frames++;
				if (len < 14 || len > (uint32_t)emu_pipeline_data_room(ctx.pl) -
							      RTE_PKTMBUF_HEADROOM) {
					bad_len++;
				} else if ((m = rte_pktmbuf_alloc(ctx.pool)) == NULL) {
					nombuf++;
				} else {
					memcpy(rte_pktmbuf_append(m, (uint16_t)len), first->data,
					       len);
					burst[n++] = m;
				}
				replay_in_next(first);
			}
			if (n > 0)
				emu_switch_rx(ctx.sw, first->port, burst, n, now_ns);
			replay_write(outs, ctx.sw, ctx.pl->n_ports, now_ns, linear);
		}
		emu_switch_service(ctx.sw, false);
	}
	emu_switch_service(ctx.sw, true);
	emu_switch_print_summary(ctx.sw, stdout);
	for (i = 0; i < n_in; i++)
		printf("replay: in  %s -> %s: %" PRIu64 " frames\n", ins[i].file,
		       ctx.pl->port_names[ins[i].port], ins[i].frames);
	for (i = 0; i < ctx.pl->n_ports; i++)
		if (outs[i] != NULL)
			printf("replay: out %s -> %s: %" PRIu64 " frames\n", ctx.pl->port_names[i],
			       outs[i]->file, outs[i]->frames);
	printf("replay: virtual clock ended at %" PRIu64 ".%09" PRIu64 " s\n",
	       now_ns / UINT64_C(1000000000), now_ns % UINT64_C(1000000000));
	rc = APP_EXIT_OK;
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
		fprintf(stderr, "rocemu replay: %s\n", err.msg);
		rc = APP_EXIT_FAIL;
	}
out_eal:
	app_teardown(&ctx);
	for (i = 0; i < REPLAY_MAX_FILES; i++)
		if (outs_store[i].dumper != NULL)
			pcap_dump_close(outs_store[i].dumper);
	free(linear);
	app_eal_cleanup();
	goto close;
out:
	emu_pipeline_free(ctx.pl);
close:
	for (i = 0; i < REPLAY_MAX_FILES; i++) {
		if (ins[i].pc != NULL)
			pcap_close(ins[i].pc);
		free((char *)(uintptr_t)ins[i].file);
		if (outs_store[i].pd != NULL)
			pcap_close(outs_store[i].pd);
		free((char *)(uintptr_t)outs_store[i].file);
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
			printf("usage: rocemu check [--pipeline FILE] [--profile FILE]\n"
			       "Validates a pipeline (and a profile against it) and exits: 0 when "
			       "valid, 2 with the first error otherwise.\n");
			return APP_EXIT_OK;
		}
		return APP_EXIT_CONFIG;
	}
	if (app_load_pipeline(&ctx, &o) != 0)
		return APP_EXIT_CONFIG;
	ctx.pl->check_only = true;
	if (app_eal_init_portless("rocemu", app_mem_mb_needed(ctx.pl), &err) != 0) {
		fprintf(stderr, "rocemu check: %s\n", err.msg);
		emu_pipeline_free(ctx.pl);
		return APP_EXIT_FAIL;
	}
	rc = app_build(&ctx, &o, &err);
	if (rc != 0)
		fprintf(stderr, "%s\n", err.msg);
	else
		printf("%s%s%s: OK\n", o.pipeline, o.profile ? " + " : "",
		       o.profile ? o.profile : "");
	app_teardown(&ctx);
	app_eal_cleanup();
	return rc == 0 ? APP_EXIT_OK : (rc == -ENOMEM ? APP_EXIT_FAIL : APP_EXIT_CONFIG);
}
