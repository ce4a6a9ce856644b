/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocemu live mode: DPDK ports, one worker lcore that owns the whole switch
 * (RX -> ingress -> TM -> egress -> TX), and the main lcore for stats, capture
 * files and signals. The worker turns the TSC into the nanosecond clock the
 * switch runs on (wall-clock based, so captures carry real times).
 *
 * Over 600 lines: ports, the worker, the profile control and the telemetry endpoints; the
 * telemetry endpoints are the part to move out (issue 13).
 */
#include <ctype.h>
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
#include <rte_telemetry.h>

#include "app.h"
#include "lib/base/emu_compat.h"
#include "lib/switch/emu_timeline.h"

#define LIVE_RXD 1024
#define LIVE_TXD 1024

struct live_state {
	struct app_ctx ctx;
	uint16_t port_ids[EMU_MAX_PORTS];
	unsigned int n_ports;
	uint64_t tsc_hz;
	uint64_t tsc0;
	uint64_t wall0_ns;
	double drain_s;
	bool inline_main; /* only one lcore: the main lcore also runs the switch */
	volatile bool stop_rx;
	volatile bool worker_done;
	uint64_t drain_left; /* packets still held when the drain deadline passed */
	/* Gaps between two polls, by whichever lcore runs the switch: a worker descheduled by
	 * the kernel (a CPU shared with other processes) or a busy main loop. Arrivals are
	 * stamped when polled, so timestamps and the link's timing are late by up to the
	 * longest gap; counted in ctx.poll_gaps_over_1ms and ctx.poll_gap_max_ns, printed at
	 * exit (live_print_gaps()) and in --stats. */
	uint64_t last_poll_ns;
};

/* Where live mode's own lines go: stdout, or stderr when an output is standard output
 * (app_prepare() decides; before it, stdout). */
static FILE *live_out_f;
#define live_out (live_out_f != NULL ? live_out_f : stdout)

static volatile sig_atomic_t live_signals;
static volatile sig_atomic_t live_first_signal;
static volatile sig_atomic_t live_reload;

/*
 * Profile switches asked over DPDK telemetry ("/rocemu/profile,FILE" on the process's telemetry
 * socket, a unix socket in the EAL runtime directory, which only root can reach): the telemetry
 * thread hands the path to the main loop, which loads and offers it exactly as for SIGHUP, and
 * waits for the verdict. current is the file SIGHUP reloads.
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool pending;		/* a request waits for the main loop */
	bool done;		/* ... and its verdict is in result */
	bool loaded;
	unsigned int seq;	/* requests served, so a waiter knows its own verdict */
	char path[PATH_MAX];
	char result[512];
	char current[PATH_MAX];
} live_ctl = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

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
		"  --help                this text\n"
		"\n"
		"Ports: the pipeline's ports[] map to DPDK ports by \"dev\" (device name such as\n"
		"net_af_packet0 or a PCI address), or in order when \"dev\" is absent. Examples:\n"
		"  rocemu -l 0-1 --no-huge -m 1024 --vdev net_af_packet0,iface=veth0 \\\n"
		"         --vdev net_af_packet1,iface=veth1 -- --stats-interval 1\n"
		"  rocemu -l 0-1 -a 0000:3b:00.0 -a 0000:3b:00.1 -- --pipeline pipelines/bump-in-wire.json\n");
}

static int
live_find_port(const struct emu_pipeline *pl, unsigned int i, uint16_t *id)
{
	const struct emu_pipeline_port *pp = &pl->ports[i];
	char names[512] = "";
	size_t used = 0;
	unsigned int k = 0;
	uint16_t pid;

	if (pp->dev != NULL) {
		if (rte_eth_dev_get_port_by_name(pp->dev, id) == 0)
			return 0;
	} else {
		RTE_ETH_FOREACH_DEV(pid) {
			if (k++ == i) {
				*id = pid;
				return 0;
			}
		}
	}
	RTE_ETH_FOREACH_DEV(pid) {
		char name[RTE_ETH_NAME_MAX_LEN];

		if (rte_eth_dev_get_name_by_port(pid, name) == 0 && used < sizeof(names))
			used += snprintf(names + used, sizeof(names) - used, "%s%u=%s",
					 used ? ", " : "", pid, name);
	}
	if (pp->dev != NULL)
		fprintf(stderr,
			"ports[%u].dev: no DPDK port named \"%s\" (DPDK has %u port(s)%s%s); add it "
			"with --vdev or -a (in %s)\n",
			i, pp->dev, rte_eth_dev_count_avail(), used ? ": " : "", names, pl->file);
	else
		fprintf(stderr,
			"ports[%u] (%s): no DPDK port number %u (DPDK has %u port(s)%s%s); add it "
			"with --vdev or -a, or name it with \"dev\" (in %s)\n",
			i, pp->name, i, rte_eth_dev_count_avail(), used ? ": " : "", names, pl->file);
	return -1;
}

/* Software PMDs hand every frame to us and send whatever we give them, MAC control included. */
static bool
live_is_software_pmd(const char *driver)
{
	static const char *const soft[] = { "net_af_packet", "net_af_xdp", "net_tap", "net_pcap",
					    "net_ring", "net_null", "net_memif", "net_vhost",
					    "net_virtio_user", NULL };
	unsigned int i;

	for (i = 0; soft[i] != NULL; i++)
		if (strcmp(driver, soft[i]) == 0)
			return true;
	return false;
}

/*
 * Say whether received PAUSE/PFC frames reach rocemu and whether it can send them. A NIC with
 * link flow control on consumes PAUSE/PFC in hardware: turn it off and ask for MAC control
 * frames to be forwarded; report what the driver accepted.
 */
static void
live_port_pfc_report(uint16_t id, const char *pname, const struct rte_eth_dev_info *info)
{
	struct rte_eth_fc_conf fc;
	int rc;

	if (live_is_software_pmd(info->driver_name)) {
		fprintf(live_out, "rocemu: port %s PFC: software port (%s): PAUSE/PFC frames are received and "
		       "sent like any frame\n", pname, info->driver_name);
		return;
	}
	memset(&fc, 0, sizeof(fc));
	rc = rte_eth_dev_flow_ctrl_get(id, &fc);
	if (rc == 0) {
		fc.mode = RTE_ETH_FC_NONE;
		fc.mac_ctrl_frame_fwd = 1;
		rc = rte_eth_dev_flow_ctrl_set(id, &fc);
	}
	if (rc == 0)
		fprintf(live_out, "rocemu: port %s PFC: NIC link flow control turned off and MAC control "
		       "forwarding on: received PAUSE/PFC frames should reach rocemu (pfc_rx counts "
		       "them); whether the NIC transmits the PFC frames rocemu sends cannot be "
		       "probed without a peer (check the peer's PFC counters)\n", pname);
	else
		fprintf(live_out, "rocemu: port %s PFC: WARNING: the %s driver cannot turn off link "
		       "flow control (%s): the NIC may consume PAUSE/PFC frames in hardware, so rocemu may never "
		       "see them, and may not send the ones rocemu builds\n",
		       pname, info->driver_name, rte_strerror(-rc));
}

static int
live_port_setup(struct live_state *st, unsigned int i)
{
	const struct emu_pipeline_port *pp = &st->ctx.pl->ports[i];
	uint16_t id = st->port_ids[i];
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	struct rte_eth_link link;
	char name[RTE_ETH_NAME_MAX_LEN] = "?";
	char link_s[RTE_ETH_LINK_MAX_STR_LEN];
	uint32_t mtu = pp->mtu;
	uint16_t got_mtu = 0;
	unsigned int socket;
	int rc;

	rte_eth_dev_get_name_by_port(id, name);
	rc = rte_eth_dev_info_get(id, &info);
	if (rc != 0) {
		fprintf(stderr, "rocemu: port %s (%s): cannot read device info: %s\n", pp->name,
			name, rte_strerror(-rc));
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	if (info.max_mtu != 0 && mtu > info.max_mtu) {
		fprintf(live_out, "rocemu: port %s (%s): MTU %u above the device's maximum %u, using %u\n",
		       pp->name, name, mtu, info.max_mtu, info.max_mtu);
		mtu = info.max_mtu;
	}
	conf.rxmode.mtu = mtu;
	if (mtu + 22 > (uint32_t)(emu_pipeline_data_room(st->ctx.pl) - RTE_PKTMBUF_HEADROOM) &&
	    (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER))
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	rc = rte_eth_dev_configure(id, 1, 1, &conf);
	if (rc != 0) {
		/* Some vdevs refuse an MTU they cannot set: retry with the default. */
		conf.rxmode.mtu = 0;
		rc = rte_eth_dev_configure(id, 1, 1, &conf);
		if (rc == 0)
			fprintf(live_out, "rocemu: port %s (%s): MTU %u not accepted, using the device default\n",
			       pp->name, name, mtu);
	}
	if (rc != 0) {
		fprintf(stderr, "rocemu: port %s (%s): configure failed: %s\n", pp->name, name,
			rte_strerror(-rc));
		return -1;
	}
	socket = rte_eth_dev_socket_id(id) < 0 ? (unsigned int)SOCKET_ID_ANY :
						  (unsigned int)rte_eth_dev_socket_id(id);
	rc = rte_eth_rx_queue_setup(id, 0, LIVE_RXD, socket, NULL, st->ctx.pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(id, 0, LIVE_TXD, socket, NULL);
	if (rc != 0) {
		fprintf(stderr, "rocemu: port %s (%s): queue setup failed: %s\n", pp->name, name,
			rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_dev_start(id);
	if (rc != 0) {
		fprintf(stderr, "rocemu: port %s (%s): start failed: %s\n", pp->name, name,
			rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_promiscuous_enable(id);
	rte_eth_dev_get_mtu(id, &got_mtu);
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(id, &link) != 0)
		snprintf(link_s, sizeof(link_s), "link state unknown");
	else if (link.link_status == RTE_ETH_LINK_DOWN)
		snprintf(link_s, sizeof(link_s), "link down");
	else
		snprintf(link_s, sizeof(link_s), "link up %u Mb/s %s-duplex", link.link_speed,
			 link.link_duplex == RTE_ETH_LINK_FULL_DUPLEX ? "full" : "half");
	fprintf(live_out, "rocemu: port %s = DPDK port %u (%s, driver %s): %s, MTU %u, promiscuous %s\n",
	       pp->name, id, name, info.driver_name, link_s, got_mtu,
	       rc == 0 ? "on" : "NOT supported");
	live_port_pfc_report(id, pp->name, &info);
	return 0;
}

static inline uint64_t
live_now_ns(const struct live_state *st)
{
	uint64_t d = rte_rdtsc() - st->tsc0;

	/* d * 1e9 / hz without overflow for ~centuries of uptime at GHz rates */
	return st->wall0_ns + (d / st->tsc_hz) * 1000000000ULL +
	       (d % st->tsc_hz) * 1000000000ULL / st->tsc_hz;
}

/* One pass: RX every port into the switch, TX what the switch releases by the time it gets
 * there. */
static inline void
live_poll(struct live_state *st, bool rx)
{
	struct emu_switch *sw = st->ctx.sw;
	struct rte_mbuf *pkts[EMU_BURST];
	struct rte_mbuf **tx;
	unsigned int p;
	uint64_t now = live_now_ns(st);
	uint16_t n, sent;

	if (st->last_poll_ns != 0 && now - st->last_poll_ns > 1000000) {
		st->ctx.poll_gaps_over_1ms++;
		if (now - st->last_poll_ns > st->ctx.poll_gap_max_ns)
			st->ctx.poll_gap_max_ns = now - st->last_poll_ns;
	}
	st->last_poll_ns = now;
	emu_switch_snap_serve(sw); /* a telemetry reader's snapshot, between bursts */
	for (p = 0; rx && p < st->n_ports; p++) {
		n = rte_eth_rx_burst(st->port_ids[p], 0, pkts, EMU_BURST);
		if (n > 0)
			emu_switch_rx(sw, (uint16_t)p, pkts, n, now);
	}
	/* The time again after the RX work (about 1-2 us a full pass): what became due meanwhile
	 * leaves in this pass, not one pass later (tests/bench/README.md, seventh pass). */
	if (rx)
		now = live_now_ns(st);
	for (p = 0; p < st->n_ports; p++) {
		n = emu_switch_tx_prepare(sw, (uint16_t)p, now, &tx);
		if (n == 0)
			continue;
		sent = rte_eth_tx_burst(st->port_ids[p], 0, tx, n);
		emu_switch_tx_done(sw, (uint16_t)p, sent);
	}
}

/* The poll gaps over 1 ms, one line; a second says what that means when there were any. */
static void
live_print_gaps(const struct live_state *st)
{
	double max_ms = (double)st->ctx.poll_gap_max_ns / 1e6;

	fprintf(live_out, "rocemu: polling: %" PRIu64 " gaps over 1 ms between two polls, the "
		"longest %.3f ms\n", st->ctx.poll_gaps_over_1ms, max_ms);
	if (st->ctx.poll_gaps_over_1ms > 0)
		fprintf(live_out, "rocemu: polling: the %s did not poll for up to %.3f ms (%s): arrival times, "
		       "captures and the link's timing are late by up to that\n",
		       st->inline_main ? "main lcore" : "worker lcore", max_ms,
		       st->inline_main ? "its captures, telemetry and statistics between polls; "
		       "-l with a second lcore gives the switch one of its own" :
		       "its CPU was shared: isolate it (isolcpus) and keep other processes off it");
}

static void
live_drain(struct live_state *st)
{
	uint64_t deadline = live_now_ns(st) + (uint64_t)(st->drain_s * 1e9);

	while (emu_switch_held(st->ctx.sw) > 0 && live_now_ns(st) < deadline)
		live_poll(st, false);
	st->drain_left = emu_switch_held(st->ctx.sw);
}

static int
live_worker(void *arg)
{
	struct live_state *st = arg;

	while (!st->stop_rx)
		live_poll(st, true);
	live_drain(st);
	__atomic_store_n(&st->worker_done, true, __ATOMIC_RELEASE);
	return 0;
}

/*
 * SIGHUP or a telemetry request: load a profile file and hand it to the switch without stopping
 * it. Returns 0 when the switch took it; msg gets the line printed.
 */
static int
live_reload_profile(struct live_state *st, const char *file, char *msg, size_t len)
{
	struct emu_profile *np = NULL;
	struct emu_program *old = NULL;
	struct emu_err err;
	uint64_t deadline;

	if (file == NULL || file[0] == '\0') {
		snprintf(msg, len, "rocemu: SIGHUP: no --profile to reload");
		fprintf(live_out, "%s\n", msg);
		return -1;
	}
	if (emu_profile_load(file, st->ctx.sw, &np, &err) != 0) {
		/* a syntax error names the file itself */
		const char *in = err.names_file ? "" : " (in ", *end = err.names_file ? "" : ")";
		const char *name = err.names_file ? "" : file;

		fprintf(live_out, "rocemu: profile reload refused, the running profile stays: %s%s%s%s\n",
			err.msg, in, name, end);
		if (snprintf(msg, len, "rocemu: profile reload refused, the running profile stays: "
			     "%s%s%s%s", err.msg, in, name, end) >= (int)len)
			msg[len - 2] = '.';	/* cut: the whole line is on stdout */
		return -1;
	}
	emu_switch_offer_program(st->ctx.sw, emu_profile_prog(np));
	deadline = live_now_ns(st) + 2000000000ULL;
	while (!emu_switch_program_taken(st->ctx.sw, &old)) {
		if (st->inline_main)
			live_poll(st, true);
		else
			usleep(100);
		if (live_now_ns(st) > deadline) {
			/* The worker is wedged: keep the offer, it will be taken later; the
			 * new profile is then owned by the switch until exit. */
			snprintf(msg, len, "rocemu: profile reload from %s pending (worker busy)",
				 file);
			fprintf(live_out, "%s\n", msg);
			return -1;
		}
	}
	/* the program the switch gave back is the running profile's (or none) */
	emu_profile_free(old != NULL ? old->owner : NULL);
	st->ctx.prof = np;
	snprintf(msg, len, "rocemu: profile reloaded from %s (%u changes, time zero now)", file,
		 np->n_actions);
	fprintf(live_out, "%s\n", msg);
	emu_profile_path_warnings(np, st->ctx.sw, live_out);
	return 0;
}

/* Copy at most n - 1 bytes of src and a NUL (telemetry strings hold 127 characters). */
static void
live_strcpy(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);

	memcpy(dst, src, l);
	dst[l] = '\0';
}

/* Telemetry thread: "/rocemu/profile,FILE" switches to FILE; without FILE, the running one. */
static int
live_tel_profile(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct timespec until;
	unsigned int seq;
	char text[RTE_TEL_MAX_STRING_LEN];
	int rc = 0;

	(void)cmd;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&live_ctl.mu);
	if (params == NULL || params[0] == '\0') {
		live_strcpy(text, sizeof(text), live_ctl.current);
		rte_tel_data_add_dict_string(d, "profile", text);
		pthread_mutex_unlock(&live_ctl.mu);
		return 0;
	}
	if (live_ctl.pending || strlen(params) >= sizeof(live_ctl.path)) {
		pthread_mutex_unlock(&live_ctl.mu);
		rte_tel_data_add_dict_string(d, "result", "refused");
		rte_tel_data_add_dict_string(d, "message", live_ctl.pending ?
					     "another profile switch is in progress" :
					     "path too long");
		return 0;
	}
	snprintf(live_ctl.path, sizeof(live_ctl.path), "%s", params);
	live_ctl.pending = true;
	live_ctl.done = false;
	seq = live_ctl.seq;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	while (!(live_ctl.done && live_ctl.seq != seq) && rc == 0)
		rc = pthread_cond_timedwait(&live_ctl.cv, &live_ctl.mu, &until);
	if (live_ctl.done && live_ctl.seq != seq) {
		rte_tel_data_add_dict_string(d, "result", live_ctl.loaded ? "loaded" : "refused");
		/* telemetry strings are short: the whole line is on rocemu's standard output */
		live_strcpy(text, sizeof(text), live_ctl.result);
		rte_tel_data_add_dict_string(d, "message", text);
	} else {
		rte_tel_data_add_dict_string(d, "result", "pending");
		rte_tel_data_add_dict_string(d, "message", "no answer from the main loop in 5 s");
	}
	pthread_mutex_unlock(&live_ctl.mu);
	return 0;
}


static struct live_state *live_tel_state;

/*
 * A telemetry dictionary key: DPDK takes only [A-Za-z0-9_/] (others are replaced by '_') and
 * at most RTE_TEL_MAX_STRING_LEN - 1 characters (longer names are cut, not refused).
 */
static void
live_tel_key(char *buf, size_t len, const char *k)
{
	size_t i;

	if (buf != k)
		snprintf(buf, len < RTE_TEL_MAX_STRING_LEN ? len : RTE_TEL_MAX_STRING_LEN, "%s", k);
	for (i = 0; buf[i] != '\0'; i++)
		if (!isalnum((unsigned char)buf[i]) && buf[i] != '_' && buf[i] != '/')
			buf[i] = '_';
}

/* Integer and boolean members of @p o into @p d. */
static void
live_tel_flat(struct rte_tel_data *d, const json_t *o, const char *prefix)
{
	char key[RTE_TEL_MAX_STRING_LEN];
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)o, k, v) {
		if (!json_is_integer(v) && !json_is_boolean(v))
			continue;
		snprintf(key, sizeof(key), "%s%s", prefix, k);
		live_tel_key(key, sizeof(key), key);
		EMU_TEL_ADD_DICT_UINT(d, key, json_is_boolean(v) ? json_is_true(v) :
					   (uint64_t)json_integer_value(v));
	}
}

/* One container per element of @p arr, named by its member @p name_key. */
static void
live_tel_per(struct rte_tel_data *d, const json_t *arr, const char *name_key, const char *sub)
{
	const json_t *o;
	size_t i;

	json_array_foreach(arr, i, o) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		char key[RTE_TEL_MAX_STRING_LEN];

		if (c == NULL)
			return;
		rte_tel_data_start_dict(c);
		live_tel_flat(c, o, "");
		if (sub != NULL)
			live_tel_flat(c, json_object_get(o, sub), "");
		live_tel_key(key, sizeof(key), json_string_value(json_object_get(o, name_key)));
		if (rte_tel_data_add_dict_container(d, key, c, 0) != 0)
			rte_tel_data_free(c);
	}
}

/* The drop_* counters of each element of @p arr as PREFIX/NAME/COUNTER. */
static void
live_tel_drops(struct rte_tel_data *d, const json_t *arr, const char *prefix)
{
	char key[RTE_TEL_MAX_STRING_LEN];
	const json_t *o;
	const char *k;
	json_t *v;
	size_t i;

	json_array_foreach(arr, i, o)
		json_object_foreach(json_object_get(o, "counters"), k, v)
			if (strncmp(k, "drop_", 5) == 0) {
				snprintf(key, sizeof(key), "%s/%s/%s", prefix,
					 json_string_value(json_object_get(o, "name")), k);
				live_tel_key(key, sizeof(key), key);
				EMU_TEL_ADD_DICT_UINT(d, key, (uint64_t)json_integer_value(v));
			}
}

/* How long a telemetry request waits for the worker's snapshot. The worker answers between
 * two bursts, within microseconds when it runs; on a loaded 2-vCPU box it was seen descheduled
 * for more than 200 ms (robust-behaviour, once). */
#define LIVE_SNAP_WAIT_US 1000000

/*
 * /rocemu/ports, /rocemu/stages, /rocemu/tm[,PORT], /rocemu/drops, /rocemu/fabric,
 * /rocemu/capture, /rocemu/conservation: a snapshot the worker takes between bursts (it is
 * not stopped).
 */
static int
live_tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct live_state *st = live_tel_state;
	json_t *root, *arr, *o;
	size_t i;

	rte_tel_data_start_dict(d);
	if (st == NULL)
		return -1;
	root = emu_switch_snap_request(st->ctx.sw,
				       __atomic_load_n(&st->worker_done, __ATOMIC_ACQUIRE) ||
				       (st->inline_main && st->stop_rx), LIVE_SNAP_WAIT_US);
	if (root == NULL) {
		rte_tel_data_add_dict_string(d, "error", "the worker did not answer in 1 s");
		return 0;
	}
	if (strcmp(cmd, "/rocemu/ports") == 0) {
		live_tel_per(d, json_object_get(root, "ports"), "name", NULL);
	} else if (strcmp(cmd, "/rocemu/stages") == 0) {
		live_tel_per(d, json_object_get(root, "stages"), "name", "counters");
	} else if (strcmp(cmd, "/rocemu/tm") == 0) {
		arr = json_object_get(root, "tm");
		if (params == NULL || params[0] == '\0') {
			live_tel_per(d, arr, "port", "counters");
		} else {
			bool found = false;

			json_array_foreach(arr, i, o) {
				const json_t *pr;
				size_t k;

				if (strcmp(json_string_value(json_object_get(o, "port")), params) != 0)
					continue;
				found = true;
				live_tel_flat(d, o, "");
				live_tel_flat(d, json_object_get(o, "counters"), "");
				json_array_foreach(json_object_get(o, "priorities"), k, pr) {
					char pre[32];

					snprintf(pre, sizeof(pre), "prio%zu_", k);
					live_tel_flat(d, pr, pre);
				}
			}
			if (!found)
				rte_tel_data_add_dict_string(d, "error", "no such port");
		}
	} else if (strcmp(cmd, "/rocemu/drops") == 0) {
		char key[RTE_TEL_MAX_STRING_LEN];
		const char *k;
		json_t *v;

		json_array_foreach(json_object_get(root, "stages"), i, o)
			json_object_foreach(json_object_get(o, "counters"), k, v)
				if (strncmp(k, "drop_", 5) == 0) {
					snprintf(key, sizeof(key), "%s/%s",
						 json_string_value(json_object_get(o, "name")), k);
					live_tel_key(key, sizeof(key), key);
					EMU_TEL_ADD_DICT_UINT(d, key, (uint64_t)json_integer_value(v));
				}
		json_array_foreach(json_object_get(root, "tm"), i, o)
			json_object_foreach(json_object_get(o, "counters"), k, v)
				if (strncmp(k, "drop_", 5) == 0) {
					snprintf(key, sizeof(key), "tm/%s/%s",
						 json_string_value(json_object_get(o, "port")), k);
					live_tel_key(key, sizeof(key), key);
					EMU_TEL_ADD_DICT_UINT(d, key, (uint64_t)json_integer_value(v));
				}
		live_tel_drops(d, json_object_get(json_object_get(root, "fabric"), "links"),
			       "fabric");
		live_tel_drops(d, json_object_get(json_object_get(root, "fabric"), "switches"),
			       "fabric");
		live_tel_drops(d, json_object_get(root, "incast"), "incast");
		json_object_foreach(json_object_get(root, "runner"), k, v)
			if (strncmp(k, "drop_", 5) == 0) {
				snprintf(key, sizeof(key), "runner/%s", k);
				EMU_TEL_ADD_DICT_UINT(d, key, (uint64_t)json_integer_value(v));
			}
	} else if (strcmp(cmd, "/rocemu/fabric") == 0) {
		const json_t *fab = json_object_get(root, "fabric");

		/* links and switches share one namespace in a pipeline file: one dict */
		live_tel_per(d, json_object_get(fab, "links"), "name", "counters");
		live_tel_per(d, json_object_get(fab, "switches"), "name", "counters");
	} else if (strcmp(cmd, "/rocemu/capture") == 0) {
		json_t *caps = json_array();

		json_array_foreach(json_object_get(root, "stages"), i, o)
			if (strcmp(json_string_value(json_object_get(o, "type")), "capture") == 0)
				json_array_append(caps, o);
		live_tel_per(d, caps, "name", "counters");
		json_decref(caps);
	} else {
		live_tel_flat(d, json_object_get(root, "conservation"), "");
	}
	json_decref(root);
	return 0;
}

/* Main loop: serve a telemetry profile switch if one waits. */
static void
live_ctl_serve(struct live_state *st)
{
	char path[PATH_MAX], msg[512];
	int rc;

	pthread_mutex_lock(&live_ctl.mu);
	if (!live_ctl.pending) {
		pthread_mutex_unlock(&live_ctl.mu);
		return;
	}
	snprintf(path, sizeof(path), "%s", live_ctl.path);
	pthread_mutex_unlock(&live_ctl.mu);
	rc = live_reload_profile(st, path, msg, sizeof(msg));
	pthread_mutex_lock(&live_ctl.mu);
	if (rc == 0)
		snprintf(live_ctl.current, sizeof(live_ctl.current), "%s", path);
	/* strip the "rocemu: " prefix: the reply says who it is from */
	snprintf(live_ctl.result, sizeof(live_ctl.result), "%s",
		 strncmp(msg, "rocemu: ", 8) == 0 ? msg + 8 : msg);
	live_ctl.loaded = rc == 0;
	live_ctl.pending = false;
	live_ctl.done = true;
	live_ctl.seq++;
	pthread_cond_broadcast(&live_ctl.cv);
	pthread_mutex_unlock(&live_ctl.mu);
}

static double
live_elapsed_s(const struct live_state *st)
{
	return (double)(live_now_ns(st) - st->wall0_ns) / 1e9;
}

int
app_live_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		APP_COMMON_LONGOPTS,
		{ "stats-interval", required_argument, NULL, 'I' },
		{ "duration", required_argument, NULL, 'D' },
		{ "drain", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	struct live_state *st;
	struct app_opts o = { 0 };
	struct emu_err err;
	struct timespec ts;
	double next_stats, t;
	unsigned int i, worker;
	int c, ret, rc = APP_EXIT_FAIL;
	bool prom_failed = false;
	struct emu_timeline *tl = NULL;
	struct emu_snap *tl_snap = NULL;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		live_usage(stdout);
		return APP_EXIT_OK;
	}
	/* From here on a signal is a flag the run reads: a stop while the ports and files are
	 * set up leaves no temporary file and no EAL directory behind. */
	signal(SIGINT, live_on_signal);
	signal(SIGTERM, live_on_signal);
	signal(SIGHUP, live_on_sighup);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "rocemu: EAL initialisation failed: %s (see rocemu --help)\n",
			rte_strerror(rte_errno));
		return APP_EXIT_CONFIG;
	}
	argc -= ret;
	argv += ret;
	o.drain_s = 1.0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int h = app_common_opt(&o, c, optarg);

		if (h < 0)
			goto out_eal_cfg;
		if (h > 0)
			continue;
		switch (c) {
		case 'I':
			if (app_parse_seconds("--stats-interval", optarg, &o.stats_interval_s) != 0)
				goto out_eal_cfg;
			break;
		case 'D':
			if (app_parse_seconds("--duration", optarg, &o.duration_s) != 0)
				goto out_eal_cfg;
			break;
		case 'R':
			if (app_parse_seconds("--drain", optarg, &o.drain_s) != 0)
				goto out_eal_cfg;
			break;
		case APP_OPT_HELP:
			live_usage(stdout);
			app_eal_cleanup();
			return APP_EXIT_OK;
		default:
			live_usage(stderr);
			goto out_eal_cfg;
		}
	}
	o.stats_print = o.stats_interval_s > 0;
	if (o.prom_file != NULL && o.stats_interval_s == 0)
		o.stats_interval_s = 1.0; /* the textfile's period; no line printed then */
	if (optind < argc) {
		fprintf(stderr, "rocemu: unexpected argument \"%s\" (see rocemu --help)\n",
			argv[optind]);
		goto out_eal_cfg;
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		goto out_eal;
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
	st->n_ports = st->ctx.pl->n_ports;
	for (i = 0; i < st->n_ports; i++) {
		unsigned int j;

		if (live_find_port(st->ctx.pl, i, &st->port_ids[i]) != 0)
			goto out_cfg;
		for (j = 0; j < i; j++)
			if (st->port_ids[j] == st->port_ids[i]) {
				fprintf(stderr, "ports[%u]: DPDK port %u is already ports[%u] (in %s)\n",
					i, st->port_ids[i], j, st->ctx.pl->file);
				goto out_cfg;
			}
	}
	if (app_build(&st->ctx, &o, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		goto out_cfg;
	}
	for (i = 0; i < st->n_ports; i++)
		if (live_port_setup(st, i) != 0)
			goto out;
	emu_switch_route_warnings(st->ctx.sw, live_out);
	emu_profile_path_warnings(st->ctx.prof, st->ctx.sw, live_out);
	if (o.timeline_file != NULL) {
		tl = emu_timeline_open(o.timeline_file, st->ctx.sw, &err);
		tl_snap = emu_switch_snap_alloc(st->ctx.sw);
		if (tl == NULL || tl_snap == NULL) {
			fprintf(stderr, "rocemu: --timeline %s\n", tl ? "out of memory" : err.msg);
			goto out;
		}
	}
	worker = rte_get_next_lcore(rte_lcore_id(), 1, 0);
	st->inline_main = worker >= RTE_MAX_LCORE;
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
	snprintf(live_ctl.current, sizeof(live_ctl.current), "%s", o.profile ? o.profile : "");
	live_tel_state = st;
	{
		static const char *const cmds[][2] = {
			{ "/rocemu/ports", "Per port: rx/tx packets and bytes" },
			{ "/rocemu/stages", "Per stage: packets in and out, every counter" },
			{ "/rocemu/tm", "Per TM port: counters; /rocemu/tm,PORT: one port with its "
					"queues per priority" },
			{ "/rocemu/drops", "Drops by reason" },
			{ "/rocemu/fabric", "Per fabric link and switch: routed, drop_link_loss, "
					    "drop_no_path, buckets_moved" },
			{ "/rocemu/capture", "Capture stages: captured, not captured, filtered" },
			{ "/rocemu/conservation", "rx + created = tx + drops + held + consumed" },
		};

		for (i = 0; i < RTE_DIM(cmds); i++)
			if (rte_telemetry_register_cmd(cmds[i][0], live_tel_stats, cmds[i][1]) != 0)
				fprintf(live_out, "rocemu: telemetry command %s not registered\n", cmds[i][0]);
	}
	if (rte_telemetry_register_cmd("/rocemu/profile", live_tel_profile,
				       "Switch to a profile file, validated first: "
				       "/rocemu/profile,FILE. Without FILE: the running one") != 0)
		fprintf(live_out, "rocemu: telemetry command /rocemu/profile not registered: switch "
		       "profiles with SIGHUP\n");
	st->tsc_hz = rte_get_tsc_hz();
	clock_gettime(CLOCK_REALTIME, &ts);
	st->wall0_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	st->tsc0 = rte_rdtsc();
	emu_switch_set_program(st->ctx.sw, emu_profile_prog(st->ctx.prof), st->wall0_ns);
	fprintf(live_out, "rocemu: running %s%s%s, seed %" PRIu64 "%s\n", st->ctx.pl->file,
	       o.profile ? " with profile " : "", o.profile ? o.profile : "", st->ctx.seed,
	       st->inline_main ? "" : ", worker on lcore");
	fflush(live_out);
	if (!st->inline_main)
		rte_eal_remote_launch(live_worker, st, worker);
	next_stats = o.stats_interval_s;
	for (;;) {
		if (st->inline_main) {
			for (i = 0; i < 256; i++)
				live_poll(st, true);
		} else {
			usleep(10000);
		}
		emu_switch_service(st->ctx.sw, false);
		if (live_reload) {
			char msg[512], path[PATH_MAX];

			live_reload = 0;
			pthread_mutex_lock(&live_ctl.mu);
			snprintf(path, sizeof(path), "%s", live_ctl.current);
			pthread_mutex_unlock(&live_ctl.mu);
			live_reload_profile(st, path, msg, sizeof(msg));
			fflush(live_out);
		}
		live_ctl_serve(st);
		if (tl != NULL && emu_switch_snap_fetch(st->ctx.sw, st->inline_main, 100000,
							tl_snap) == 0)
			emu_timeline_sample(tl, st->ctx.sw, tl_snap, live_now_ns(st));
		t = live_elapsed_s(st);
		if (o.stats_interval_s > 0 && t >= next_stats) {
			if (o.stats_print)
				emu_switch_print_interval(st->ctx.sw, live_out, t);
			fflush(live_out);
			if (o.prom_file != NULL && app_write_prom(&st->ctx, o.prom_file, &err) != 0) {
				fprintf(stderr, "rocemu: --prometheus %s (stopping it)\n", err.msg);
				o.prom_file = NULL;
				prom_failed = true;
			}
			next_stats += o.stats_interval_s;
		}
		if (live_signals > 0 || (o.duration_s > 0 && t >= o.duration_s))
			break;
	}
	st->stop_rx = true;
	if (st->inline_main) {
		live_drain(st);
	} else {
		/* the worker drains the switch; capture rings go on being written meanwhile */
		while (!__atomic_load_n(&st->worker_done, __ATOMIC_ACQUIRE)) {
			emu_switch_service(st->ctx.sw, false);
			usleep(1000);
		}
		rte_eal_wait_lcore(worker);
	}
	if (st->drain_left > 0)
		/* counted as drop_discarded_at_exit, so the conservation line stays exact */
		emu_switch_discard_held(st->ctx.sw);
	emu_switch_service(st->ctx.sw, true);
	fprintf(live_out, "rocemu: stopped after %.3f s (%s)\n", live_elapsed_s(st),
	       live_signals > 0 ? "signal" : "duration");
	live_print_gaps(st);
	if (st->drain_left > 0)
		fprintf(live_out, "rocemu: %" PRIu64 " packets still held after the %.1f s drain, counted "
		       "as drop_discarded_at_exit\n",
		       st->drain_left, st->drain_s);
	emu_switch_print_summary(st->ctx.sw, live_out);
	rc = APP_EXIT_OK;
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
		emu_switch_snap_take(st->ctx.sw, tl_snap); /* the worker has stopped */
		emu_timeline_sample(tl, st->ctx.sw, tl_snap, live_now_ns(st));
		if (emu_timeline_close(tl, &err) != 0) {
			fprintf(stderr, "rocemu: --timeline %s\n", err.msg);
			rc = APP_EXIT_FAIL;
		}
		tl = NULL;
	}
out:
	emu_timeline_abort(tl);
	free(tl_snap);
	for (i = 0; i < st->n_ports; i++) {
		rte_eth_dev_stop(st->port_ids[i]);
		rte_eth_dev_close(st->port_ids[i]);
	}
	app_teardown(&st->ctx);
	free(st);
out_eal:
	app_eal_cleanup();
	return rc;
out_cfg:
	app_teardown(&st->ctx);
	free(st);
out_eal_cfg:
	app_eal_cleanup();
	return APP_EXIT_CONFIG;
}
