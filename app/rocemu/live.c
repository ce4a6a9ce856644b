/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocemu live mode: DPDK ports, N worker lcores that each own the egress of some ports and
 * run a replica of the switch (RX -> ingress -> TM -> egress -> TX; frames for another
 * worker's port cross an SPSC ring), and the main lcore for stats, capture files and signals.
 * The workers turn the TSC into the nanosecond clock the switch runs on (wall-clock based, so
 * captures carry real times). This file: options and the main loop; live_port.c,
 * live_worker.c and live_ctl.c the rest (live.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "lib/base/emu_prom.h"
#include "lib/switch/emu_timeline.h"
#include "live.h"

FILE *live_out_f;
volatile sig_atomic_t live_signals;
volatile sig_atomic_t live_first_signal;
volatile sig_atomic_t live_reload;

static void
live_on_sighup(int sig)
{
	(void)sig;
	live_reload = 1;
}

static void
live_on_signal(int sig)
{
	if (live_signals++ == 0)
		live_first_signal = sig;
	if (live_signals > 1) {
		static const char msg[] = "rocemu: second signal, exiting at once\n";

		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
			/* nothing to do */
		}
		_exit(APP_EXIT_FAIL);
	}
}

static void
live_usage(FILE *f)
{
	fprintf(f,
		"usage: rocemu [EAL options] -- [options]\n"
		"       rocemu replay --pipeline FILE --in IN.pcap[:PORT] ... --out OUT.pcap[:PORT] ...\n"
		"       rocemu check [--pipeline FILE] [--profile FILE]\n"
		"       rocemu schema pipeline|profile|node [--out FILE]   (JSON Schema for editors)\n"
		"\n"
		"Live mode options (after --):\n"
		"  --pipeline FILE       switch definition (default pipelines/bump-in-wire.json)\n"
		"  --profile FILE        scenario over time (profiles/*.json)\n"
		"  --stats FILE          write all counters as JSON at exit\n"
		"  --stats-interval S    print one line of rates every S seconds\n"
		"  --duration S          stop after S seconds (default: until SIGINT/SIGTERM)\n"
		"  --drain S             at stop, let the switch empty for up to S s (default 1)\n"
		"  --seed N              RNG seed, decimal 0..2^63-1 (overrides the profile's)\n"
		"  --max-mem MB          refuse a pipeline that needs more memory (default: RAM)\n"
		"  --timeline FILE.csv   queues, pauses and port counters over time, a row each time\n"
		"                        one changed, sampled every main-loop pass (~10 ms)\n"
		"  --prometheus FILE     node_exporter textfile of every counter, rewritten\n"
		"                        atomically every --stats-interval (1 s if not given)\n"
		"  SIGHUP                reload --profile FILE: validated first; a bad file is refused\n"
		"                        and the running profile stays; a good one starts its timeline\n"
		"                        at the moment it is taken, without stopping the switch\n"
		"  telemetry             /rocemu/profile,FILE on DPDK's telemetry socket (root only)\n"
		"                        switches to FILE the same way and answers loaded or refused\n"
		"                        with the reason: echo /rocemu/profile,/abs/new.json |\n"
		"                        dpdk-telemetry.py -f FILE_PREFIX; SIGHUP then reloads FILE\n"
		"  --workers N           worker lcores (default 1): each owns the egress of the\n"
		"                        ports p with p mod N = its index, and polls the RX queues\n"
		"                        of the ports whose traffic it sends (docs/multicore.md);\n"
		"                        needs N lcores besides the main one (-l, or --lcores)\n"
		"  --rx-queues Q         RX queues per port (default 1; RSS on IP addresses and UDP\n"
		"                        ports where the device has it), spread over the workers\n"
		"  --rxq-map P:Q:W,...   RX queue Q of port P (name or index) to worker W\n"
		"  --rx-spread           ports with one RX queue (vdevs, NICs without RSS): the\n"
		"                        worker polling it keeps the RoCEv2 frames whose hash of\n"
		"                        (destination IP, destination QP) is its own and pushes the\n"
		"                        rest to the other workers' ingress over rings (per-QP order\n"
		"                        kept); needs --workers 2 or more and --rx-queues 1\n"
		"  --ring-size N         entries of each ring between two workers (power of two,\n"
		"                        default 1024); a worker stops taking frames from its RX\n"
		"                        queues while a ring it feeds has room for less than two\n"
		"                        bursts; what a full ring refuses is runner.drop_handoff_full\n"
		"  --strict              exit status 1 when rocemu itself lost frames (the NIC's\n"
		"                        imissed, rx_nombuf, ierrors, oerrors; a full ring between\n"
		"                        workers), not only when the pipeline's accounting failed\n"
		"  --help                this text\n"
		"\n"
		"Ports: the pipeline's ports[] map to DPDK ports by \"dev\" (device name such as\n"
		"net_af_packet0 or a PCI address), or in order when \"dev\" is absent. Examples:\n"
		"  rocemu -l 0-1 --no-huge -m 1024 --vdev net_af_packet0,iface=veth0 \\\n"
		"         --vdev net_af_packet1,iface=veth1 -- --stats-interval 1\n"
		"  rocemu -l 0-1 -a 0000:3b:00.0 -a 0000:3b:00.1 -- --pipeline pipelines/bump-in-wire.json\n");
}
/* Options after EAL's. Returns 0, 1 for --help (printed), -1 (message printed). */
static int
live_parse_args(struct live_state *st, struct app_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		APP_COMMON_LONGOPTS,
		{ "stats-interval", required_argument, NULL, 'I' },
		{ "duration", required_argument, NULL, 'D' },
		{ "drain", required_argument, NULL, 'R' },
		{ "workers", required_argument, NULL, 'w' },
		{ "rx-queues", required_argument, NULL, 'q' },
		{ "rxq-map", required_argument, NULL, 'm' },
		{ "rx-spread", no_argument, NULL, 'X' },
		{ "strict", no_argument, NULL, 'x' },
		{ "ring-size", required_argument, NULL, 'z' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int c;

	o->drain_s = 1.0;
	st->n_workers = 1;
	st->ring_size = LIVE_RING_SIZE;
	st->n_rxq[0] = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int h = app_common_opt(o, c, optarg);

		if (h < 0)
			return -1;
		if (h > 0)
			continue;
		switch (c) {
		case 'I':
			if (app_parse_seconds("--stats-interval", optarg, &o->stats_interval_s) != 0)
				return -1;
			break;
		case 'D':
			if (app_parse_seconds("--duration", optarg, &o->duration_s) != 0)
				return -1;
			break;
		case 'R':
			if (app_parse_seconds("--drain", optarg, &o->drain_s) != 0)
				return -1;
			break;
		case 'w':
		case 'q':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || v < 1 ||
			    v > (c == 'w' ? LIVE_MAX_WORKERS : LIVE_MAX_RXQ)) {
				fprintf(stderr, "rocemu: %s: must be an integer 1..%d, got \"%s\"\n",
					c == 'w' ? "--workers" : "--rx-queues",
					c == 'w' ? LIVE_MAX_WORKERS : LIVE_MAX_RXQ, optarg);
				return -1;
			}
			if (c == 'w')
				st->n_workers = (unsigned int)v;
			else
				st->n_rxq[0] = (unsigned int)v;
			break;
		case 'm':
			st->rxq_map = optarg;
			break;
		case 'X':
			st->rx_spread = true;
			break;
		case 'z':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || v < 2 || v > 65536 ||
			    (v & (v - 1)) != 0) {
				fprintf(stderr, "rocemu: --ring-size: must be a power of two 2..65536, "
					"got \"%s\"\n", optarg);
				return -1;
			}
			st->ring_size = (unsigned int)v;
			break;
		case 'x':
			st->strict = true;
			break;
		case APP_OPT_HELP:
			live_usage(stdout);
			return 1;
		default:
			live_usage(stderr);
			return -1;
		}
	}
	if (st->rx_spread && (st->n_workers < 2 || st->n_rxq[0] > 1)) {
		fprintf(stderr, "rocemu: --rx-spread: %s\n", st->n_workers < 2 ?
			"needs --workers 2 or more (it spreads one RX queue over the workers)" :
			"spreads ports with one RX queue; with --rx-queues above 1 the NIC's RSS "
			"spreads them");
		return -1;
	}
	o->stats_print = o->stats_interval_s > 0;
	if (o->prom_file != NULL && o->stats_interval_s == 0)
		o->stats_interval_s = 1.0; /* the textfile's period; no line printed then */
	if (optind < argc) {
		fprintf(stderr, "rocemu: unexpected argument \"%s\" (see rocemu --help)\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

/* The workers' lcores: EAL's worker lcores in order; none means the main lcore polls. */
static int
live_plan(struct live_state *st)
{
	unsigned int lcores[RTE_MAX_LCORE], n = 0, l, p;

	RTE_LCORE_FOREACH_WORKER(l)
		lcores[n++] = l;
	st->inline_main = n == 0;
	if (st->inline_main) {
		if (st->n_workers > 1) {
			fprintf(stderr, "rocemu: --workers %u needs %u worker lcores besides the main "
				"one, EAL has none: give -l 0-%u, or map them onto fewer CPUs with "
				"--lcores '(0-%u)@(0,1)'\n", st->n_workers, st->n_workers,
				st->n_workers, st->n_workers);
			return -1;
		}
		lcores[0] = rte_lcore_id();
		n = 1;
	}
	for (p = 1; p < st->n_ports; p++)
		st->n_rxq[p] = st->n_rxq[0];
	for (p = 0; p < st->n_ports; p++)
		st->spread_port[p] = st->rx_spread && st->n_rxq[p] == 1;
	return live_workers_plan(st, lcores, n);
}

/* The prometheus textfile and the interval line from one merged snapshot. */
static int
live_interval(struct live_state *st, const struct app_opts *o, double t, struct emu_err *err)
{
	json_t *root = NULL;
	int rc = 0;

	if (o->prom_file != NULL) {
		root = live_stats_json(st, true, 1000000);
		if (root == NULL)
			return emu_err_set(err, "%s: a worker did not answer in 1 s", o->prom_file);
		rc = emu_prom_write(root, o->prom_file, err);
		json_decref(root);
	}
	if (o->stats_print) {
		struct emu_snap_view views[LIVE_MAX_WORKERS];
		struct emu_snap *sn = live_snap(st, true, 1000000, views);

		if (sn != NULL) {
			emu_switch_print_interval_snap(st->ctx.sw, sn, live_out, t);
			free(sn);
		}
	}
	return rc;
}

/* The summary's own lines: what rocemu itself lost (not emulated), and the workers. Returns
 * the frames lost. */
static uint64_t
live_print_lost(struct live_state *st, const struct emu_snap_view *views)
{
	uint64_t rx_lost, tx_lost, ring = 0, lost;
	unsigned int i;

	live_nic_read(st, st->nic);
	for (i = 0; i < st->n_workers; i++)
		ring += views[i].drop_full;
	lost = live_nic_lost(st->nic, st->n_ports, &rx_lost, &tx_lost) + ring;
	fprintf(live_out, "nic:");
	for (i = 0; i < st->n_ports; i++)
		fprintf(live_out, " %s imissed=%" PRIu64 " rx_nombuf=%" PRIu64 " ierrors=%" PRIu64
			" oerrors=%" PRIu64 "%s", st->ctx.pl->port_names[i], st->nic[i].imissed,
			st->nic[i].rx_nombuf, st->nic[i].ierrors, st->nic[i].oerrors,
			i + 1 < st->n_ports ? "," : "\n");
	live_print_workers(st, views, live_out);
	live_guard_print(st, live_out);
	if (lost > 0)
		fprintf(live_out, "rocemu: LOST %" PRIu64 " frames itself, not emulated: %" PRIu64
			" the NICs dropped on receive (imissed, rx_nombuf, ierrors), %" PRIu64
			" they failed to send (oerrors), %" PRIu64 " found a ring between workers "
			"full (runner.drop_handoff_full)%s\n", lost, rx_lost, tx_lost, ring,
			st->strict ? "; --strict: exit status 1" :
				     "; rocemu was the bottleneck: more --workers or --rx-queues, "
				     "or ports[].rx_guard to pause the peers (docs/multicore.md)");
	else
		fprintf(live_out, "rocemu: lost no frame itself (NIC counters and rings between "
			"workers)\n");
	return lost;
}

static json_t *
live_extra_stats(void *arg)
{
	struct live_state *st = arg;
	json_t *o = json_object();

	json_object_set_new(o, "workers", live_workers_json(st, st->exit_views));
	json_object_set_new(o, "nic", live_nic_json(st, st->nic));
	json_object_set_new(o, "mbufs", live_mbufs_json(st));
	return o;
}

int
app_live_main(int argc, char **argv)
{
	struct live_state *st;
	struct app_opts o = { 0 };
	struct emu_err err;
	struct timespec ts;
	double next_stats, t;
	unsigned int i;
	int ret, rc = APP_EXIT_FAIL;
	bool prom_failed = false;
	struct emu_timeline *tl = NULL;
	struct emu_snap *tl_snap = NULL;
	uint64_t lost;
	sigset_t sigs;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		live_usage(stdout);
		return APP_EXIT_OK;
	}
	/* From here on a signal is a flag the run reads: a stop while the ports and files are
	 * set up leaves no temporary file and no EAL directory behind. */
	signal(SIGINT, live_on_signal);
	signal(SIGTERM, live_on_signal);
	signal(SIGHUP, live_on_sighup);
	/* Only the main thread takes these signals: EAL's threads (workers, interrupts,
	 * telemetry and the telemetry clients' threads) inherit the mask blocked here, so a
	 * handler never runs on a thread that the main loop's flags would race with (TSan saw a
	 * SIGHUP delivered to a telemetry client's thread). What arrives meanwhile is pending. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	ret = rte_eal_init(argc, argv);
	pthread_sigmask(SIG_UNBLOCK, &sigs, NULL);
	if (ret < 0) {
		fprintf(stderr, "rocemu: EAL initialisation failed: %s (see rocemu --help)\n",
			rte_strerror(rte_errno));
		return APP_EXIT_CONFIG;
	}
	argc -= ret;
	argv += ret;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		goto out_eal;
	ret = live_parse_args(st, &o, argc, argv);
	if (ret != 0) {
		free(st);
		app_eal_cleanup();
		return ret > 0 ? APP_EXIT_OK : APP_EXIT_CONFIG;
	}
	st->drain_s = o.drain_s;
	st->ctx.live = true; /* --stats gets the poll gaps */
	if (app_load_pipeline(&st->ctx, &o) != 0)
		goto out_cfg;
	{
		struct app_prep prep;

		if (app_prepare(&st->ctx, &o, NULL, 0, &prep) != 0)
			goto out_cfg;
		live_out_f = st->ctx.summary;
	}
	if (live_find_ports(st) != 0 || live_plan(st) != 0)
		goto out_cfg;
	/* more RX queues fill more descriptors; the rings between workers and each worker's
	 * staging hold frames too */
	o.extra_mbufs = (st->n_rxq[0] - 1) * LIVE_RXD * st->n_ports +
			(st->n_workers > 1 ? st->n_workers * (st->n_workers - 1) *
					     (st->ring_size + 64) + st->n_workers * 512 : 0) +
			(st->rx_spread ? st->n_workers * (st->n_workers - 1) * st->ring_size : 0);
	if (app_build(&st->ctx, &o, &err) != 0 || live_workers_build(st, &err) != 0) {
		fprintf(stderr, "rocemu: %s\n", err.msg);
		goto out_cfg;
	}
	for (i = 0; i < st->n_ports; i++)
		if (live_port_setup(st, i) != 0)
			goto out;
	if (live_guard_setup(st) != 0)
		goto out;
	for (i = 0; i < st->n_ports; i++)
		st->any_guard |= st->guard[i].on;
	emu_switch_route_warnings(st->ctx.sw, live_out);
	emu_profile_path_warnings(st->ctx.prof, st->ctx.sw, live_out);
	if (o.timeline_file != NULL) {
		tl = emu_timeline_open(o.timeline_file, st->ctx.sw, &err);
		if (tl == NULL) {
			fprintf(stderr, "rocemu: --timeline %s\n", err.msg);
			goto out;
		}
	}
	if (st->inline_main)
		fprintf(live_out, "rocemu: only one lcore: the main lcore runs the switch and the stats "
		       "(give -l 0-1 for a dedicated worker)\n");
	if (live_signals > 0) {
		/* stopped while setting up: nothing forwarded, so the old files stay as they were */
		fprintf(stderr, "rocemu: stopped by signal %d (%s) before forwarding: nothing "
			"written\n", live_first_signal, strsignal(live_first_signal));
		rc = APP_EXIT_SIGNAL + live_first_signal;
		goto out;
	}
	live_ctl_register(st, o.profile);
	if (live_nic_start(st) != 0)
		goto out;
	st->tsc_hz = rte_get_tsc_hz();
	clock_gettime(CLOCK_REALTIME, &ts);
	st->wall0_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	st->tsc0 = rte_rdtsc();
	live_set_program(st, st->ctx.prof);
	fprintf(live_out, "rocemu: running %s%s%s, seed %" PRIu64 ", %u worker%s:",
		st->ctx.pl->file, o.profile ? " with profile " : "", o.profile ? o.profile : "",
		st->ctx.seed, st->n_workers, st->n_workers == 1 ? "" : "s");
	for (i = 0; i < st->n_workers; i++) {
		unsigned int k;

		fprintf(live_out, "%s %s %u owns", i ? ";" : "",
			st->inline_main ? "main lcore" : "lcore", st->w[i].lcore);
		for (k = 0; k < st->n_ports; k++)
			if ((st->w[i].owned >> k) & 1)
				fprintf(live_out, " %s", st->ctx.pl->port_names[k]);
		fprintf(live_out, ", polls");
		for (k = 0; k < st->w[i].n_rxq; k++)
			fprintf(live_out, " %s:%u", st->ctx.pl->port_names[st->w[i].rxq[k].port],
				st->w[i].rxq[k].queue);
		if (st->w[i].n_rxq == 0)
			fprintf(live_out, " no RX queue");
	}
	fprintf(live_out, "\n");
	fflush(live_out);
	if (!st->inline_main)
		for (i = 0; i < st->n_workers; i++)
			rte_eal_remote_launch(live_worker_main, &st->w[i], st->w[i].lcore);
	next_stats = o.stats_interval_s;
	for (;;) {
		if (st->inline_main) {
			for (i = 0; i < 256; i++)
				live_poll(&st->w[0], true);
		} else {
			usleep(10000); /* the main lcore may share a CPU with a worker */
		}
		emu_switch_service(st->ctx.sw, false);
		if (live_reload) {
			live_reload = 0;
			live_ctl_sighup(st);
		}
		live_ctl_serve(st);
		if (tl != NULL) {
			struct emu_snap_view views[LIVE_MAX_WORKERS];

			tl_snap = live_snap(st, true, 100000, views);
			if (tl_snap != NULL)
				emu_timeline_sample(tl, st->ctx.sw, tl_snap, live_now_ns(st));
			free(tl_snap);
			tl_snap = NULL;
		}
		t = live_elapsed_s(st);
		if (o.stats_interval_s > 0 && t >= next_stats) {
			if (live_interval(st, &o, t, &err) != 0) {
				fprintf(stderr, "rocemu: --prometheus %s (stopping it)\n", err.msg);
				o.prom_file = NULL;
				prom_failed = true;
			}
			fflush(live_out);
			next_stats += o.stats_interval_s;
		}
		if (live_signals > 0 || (o.duration_s > 0 && t >= o.duration_s))
			break;
	}
	__atomic_store_n(&st->stop_rx, true, __ATOMIC_RELEASE);
	if (!st->inline_main) {
		/* the workers drain their switches; capture rings go on being written meanwhile */
		while (!live_workers_done(st)) {
			emu_switch_service(st->ctx.sw, false);
			usleep(1000);
		}
		for (i = 0; i < st->n_workers; i++)
			rte_eal_wait_lcore(st->w[i].lcore);
	}
	live_drain(st); /* the rings between workers, and what is left: on this lcore now */
	if (st->drain_left > 0)
		/* counted as drop_discarded_at_exit, so the conservation line stays exact */
		for (i = 0; i < st->n_workers; i++)
			emu_switch_discard_held(st->w[i].sw);
	emu_switch_service(st->ctx.sw, true);
	fprintf(live_out, "rocemu: stopped after %.3f s (%s)\n", live_elapsed_s(st),
	       live_signals > 0 ? "signal" : "duration");
	live_print_gaps(st);
	if (st->drain_left > 0)
		fprintf(live_out, "rocemu: %" PRIu64 " packets still held after the %.1f s drain, counted "
		       "as drop_discarded_at_exit\n",
		       st->drain_left, st->drain_s);
	live_workers_merge(st, st->exit_views);
	emu_switch_print_summary(st->ctx.sw, live_out);
	lost = live_print_lost(st, st->exit_views);
	/* the error lines below go to stderr: with both streams in one file, the summary first
	 * (a buffered summary cut one mid-line) */
	fflush(live_out);
	rc = APP_EXIT_OK;
	if (lost > 0 && st->strict)
		rc = APP_EXIT_FAIL;
	if (emu_switch_report_failures(st->ctx.sw, stderr) > 0)
		rc = APP_EXIT_FAIL;
	{
		struct emu_conservation cons;

		emu_switch_conservation(st->ctx.sw, &cons);
		if (cons.unaccounted != 0) {
			fprintf(stderr, "rocemu: conservation MISMATCH: %" PRId64 " packets "
				"unaccounted for (exit status 1)\n", cons.unaccounted);
			rc = APP_EXIT_FAIL;
		}
	}
	st->ctx.poll_gaps_over_1ms = 0;
	for (i = 0; i < st->n_workers; i++) {
		st->ctx.poll_gaps_over_1ms += st->w[i].gaps_over_1ms;
		st->ctx.poll_gap_max_ns = RTE_MAX(st->ctx.poll_gap_max_ns, st->w[i].gap_max_ns);
	}
	st->ctx.extra_stats = live_extra_stats;
	st->ctx.extra_arg = st;
	if (o.stats_file != NULL && app_write_stats(&st->ctx, o.stats_file, &err) != 0) {
		fprintf(stderr, "rocemu: %s\n", err.msg);
		rc = APP_EXIT_FAIL;
	}
	if (o.prom_file != NULL && app_write_prom(&st->ctx, o.prom_file, &err) != 0) {
		fprintf(stderr, "rocemu: --prometheus %s\n", err.msg);
		rc = APP_EXIT_FAIL;
	}
	if (prom_failed)
		rc = APP_EXIT_FAIL;
	if (tl != NULL) {
		tl_snap = emu_switch_snap_alloc(st->ctx.sw);
		if (tl_snap != NULL) {
			emu_switch_snap_take(st->ctx.sw, tl_snap); /* the workers have stopped */
			emu_timeline_sample(tl, st->ctx.sw, tl_snap, live_now_ns(st));
		}
		if (emu_timeline_close(tl, &err) != 0) {
			fprintf(stderr, "rocemu: --timeline %s\n", err.msg);
			rc = APP_EXIT_FAIL;
		}
		tl = NULL;
	}
out:
	emu_timeline_abort(tl);
	free(tl_snap);
	live_ports_close(st);
	live_programs_free(st);
	live_workers_free(st);
	app_teardown(&st->ctx);
	free(st);
out_eal:
	app_eal_cleanup();
	return rc;
out_cfg:
	if (st->w != NULL)
		live_workers_free(st);
	app_teardown(&st->ctx);
	free(st);
	app_eal_cleanup();
	return APP_EXIT_CONFIG;
}
