/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live mode's ports: found by name or order, configured with one RX queue per --rx-queues
 * (RSS on IP addresses and UDP ports where the device has it) and one TX queue, which only
 * the port's egress owner sends on; and the NIC's own counters (rte_eth_stats), read as
 * deltas from the start, so that frames the NIC dropped before rocemu saw them are named.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "live.h"

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

int
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
	unsigned int socket, n_rxq = st->n_rxq[i], q;
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
	if (n_rxq > info.max_rx_queues) {
		fprintf(stderr, "rocemu: port %s (%s): %u RX queues asked (--rx-queues), the %s "
			"driver has at most %u\n", pp->name, name, n_rxq, info.driver_name,
			info.max_rx_queues);
		return -1;
	}
	if (n_rxq > 1 && info.flow_type_rss_offloads != 0) {
		/* RoCEv2's UDP destination port is always 4791: the IP addresses and the UDP
		 * source port (the NIC's per-QP entropy) keep one QP on one queue */
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP) &
						   info.flow_type_rss_offloads;
	}
	if (mtu + 22 > (uint32_t)(emu_pipeline_data_room(st->ctx.pl) - RTE_PKTMBUF_HEADROOM) &&
	    (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER))
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
	rc = rte_eth_dev_configure(id, n_rxq, 1, &conf);
	if (rc != 0) {
		/* Some vdevs refuse an MTU they cannot set: retry with the default. */
		conf.rxmode.mtu = 0;
		rc = rte_eth_dev_configure(id, n_rxq, 1, &conf);
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
	for (q = 0, rc = 0; q < n_rxq && rc == 0; q++)
		rc = rte_eth_rx_queue_setup(id, q, LIVE_RXD, socket, NULL, st->ctx.pool);
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
	fprintf(live_out, "rocemu: port %s = DPDK port %u (%s, driver %s): %s, MTU %u, promiscuous %s, "
		"%u RX queue%s%s\n", pp->name, id, name, info.driver_name, link_s, got_mtu,
		rc == 0 ? "on" : "NOT supported", n_rxq, n_rxq == 1 ? "" : "s",
		n_rxq > 1 ? (conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS ?
			     " (RSS on IP addresses and UDP ports)" :
			     " (no RSS: the device or its driver spreads them)") : "");
	live_port_pfc_report(id, pp->name, &info);
	return 0;
}

int
live_find_ports(struct live_state *st)
{
	unsigned int i, j;

	st->n_ports = st->ctx.pl->n_ports;
	for (i = 0; i < st->n_ports; i++) {
		if (live_find_port(st->ctx.pl, i, &st->port_ids[i]) != 0)
			return -1;
		for (j = 0; j < i; j++)
			if (st->port_ids[j] == st->port_ids[i]) {
				fprintf(stderr, "ports[%u]: DPDK port %u is already ports[%u] (in %s)\n",
					i, st->port_ids[i], j, st->ctx.pl->file);
				return -1;
			}
	}
	return 0;
}

void
live_ports_close(struct live_state *st)
{
	unsigned int i;

	for (i = 0; i < st->n_ports; i++) {
		rte_eth_dev_stop(st->port_ids[i]);
		rte_eth_dev_close(st->port_ids[i]);
	}
	free(st->nic0);
	st->nic0 = NULL;
}

/* The NIC counters as they are when forwarding starts: every later reading is a delta. */
int
live_nic_start(struct live_state *st)
{
	unsigned int i;

	st->nic0 = calloc(st->n_ports, sizeof(*st->nic0));
	if (st->nic0 == NULL)
		return -1;
	for (i = 0; i < st->n_ports; i++)
		if (rte_eth_stats_get(st->port_ids[i], &st->nic0[i]) != 0)
			memset(&st->nic0[i], 0, sizeof(st->nic0[i]));
	return 0;
}

static uint64_t
live_delta(uint64_t now, uint64_t then)
{
	return now >= then ? now - then : 0; /* a driver that reset its counters */
}

/* Every port's counters into @p out (a control-path call, from any non-worker thread). */
void
live_nic_read(const struct live_state *st, struct live_nic *out)
{
	struct rte_eth_stats s;
	unsigned int i;

	memset(out, 0, st->n_ports * sizeof(*out));
	if (st->nic0 == NULL)
		return;
	for (i = 0; i < st->n_ports; i++) {
		const struct rte_eth_stats *z = &st->nic0[i];
		struct live_nic *n = &out[i];

		if (rte_eth_stats_get(st->port_ids[i], &s) != 0)
			continue;
		n->ipackets = live_delta(s.ipackets, z->ipackets);
		n->opackets = live_delta(s.opackets, z->opackets);
		n->imissed = live_delta(s.imissed, z->imissed);
		n->ierrors = live_delta(s.ierrors, z->ierrors);
		n->rx_nombuf = live_delta(s.rx_nombuf, z->rx_nombuf);
		n->oerrors = live_delta(s.oerrors, z->oerrors);
	}
}

/*
 * Frames rocemu itself lost, not emulated: the NIC's RX losses (imissed: its ring was full;
 * rx_nombuf: no mbuf to receive into; ierrors: bad frames) and TX errors (oerrors: accepted
 * by tx_burst, not sent). Returns the sum.
 */
uint64_t
live_nic_lost(const struct live_nic *nic, unsigned int n_ports, uint64_t *rx_lost,
	      uint64_t *tx_lost)
{
	uint64_t rx = 0, tx = 0;
	unsigned int i;

	for (i = 0; i < n_ports; i++) {
		rx += nic[i].imissed + nic[i].rx_nombuf + nic[i].ierrors;
		tx += nic[i].oerrors;
	}
	if (rx_lost != NULL)
		*rx_lost = rx;
	if (tx_lost != NULL)
		*tx_lost = tx;
	return rx + tx;
}

/* {"p0": {"imissed": N, ...}, ...} for --stats, telemetry and Prometheus. */
json_t *
live_nic_json(const struct live_state *st, const struct live_nic *nic)
{
	json_t *o = json_object();
	unsigned int i;

	for (i = 0; o != NULL && i < st->n_ports; i++) {
		const struct live_nic *n = &nic[i];
		json_t *p = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}",
				      "ipackets", (json_int_t)n->ipackets,
				      "opackets", (json_int_t)n->opackets,
				      "drop_nic_imissed", (json_int_t)n->imissed,
				      "drop_nic_rx_nombuf", (json_int_t)n->rx_nombuf,
				      "drop_nic_ierrors", (json_int_t)n->ierrors,
				      "drop_nic_oerrors", (json_int_t)n->oerrors);

		if (p != NULL && st->guard[i].on)
			json_object_set_new(p, "rx_guard", live_guard_json(st, i));
		json_object_set_new(o, st->ctx.pl->port_names[i], p);
	}
	return o;
}
