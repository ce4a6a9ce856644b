/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The switch's reports: conservation, the summary, the interval line, counter snapshots
 * (taken by the owner, read by other threads) and the stats JSON built from them.
 * About 600 lines on purpose: the summary, the snapshot and the JSON read the same counter
 * layout, and split apart each would need it declared again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_malloc.h>

#include "lib/proto/roce_build.h"
#include "lib/proto/roce_mbuf.h"
#include "lib/base/emu_json.h"

#include "lib/switch/emu_switch_int.h"

bool
emu_is_drop_name(const char *name)
{
	return strncmp(name, "drop_", 5) == 0;
}

void
emu_switch_conservation(const struct emu_switch *sw, struct emu_conservation *c)
{
	uint64_t pfc_merged = 0;
	unsigned int i, k;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < sw->n_ports; i++) {
		c->rx += sw->port_stats[i].rx_pkts;
		c->tx += sw->port_stats[i].tx_pkts;
	}
	for (i = 0; i < sw->pl->tm.n_ports; i++) {
		const uint64_t *tc = emu_tm_port_ctrs(sw->tm, i);

		for (k = 0; k < EMU_TM_CTR_MAX; k++)
			if (emu_is_drop_name(emu_tm_ctr_names[k]))
				c->drops += tc[k];
		/* PFC frames merged into the one before them in a full control queue */
		pfc_merged += tc[EMU_TM_CTR_PFC_COALESCED];
	}
	if (sw->fab != NULL) {
		for (i = 0; i < sw->fab->n_links; i++)
			c->drops += sw->fab_link_ctr[i][FAB_LINK_CTR_DROP_LOSS];
		for (i = 0; i < sw->fab->n_switches; i++)
			c->drops += sw->fab_sw_ctr[i][FAB_SW_CTR_DROP_NO_PATH];
	}
	for (i = 0; i < sw->n_stages; i++)
		for (k = 0; k < sw->stages[i].ops->n_ctr; k++)
			if (emu_is_drop_name(sw->stages[i].ops->ctr_names[k]))
				c->drops += sw->stages[i].ctr[k];
	for (k = 0; k < EMU_RUN_CTR_MAX; k++)
		if (emu_is_drop_name(emu_run_ctr_names[k]))
			c->drops += sw->ctr[k];
	c->created = sw->ctr[EMU_RUN_CTR_CREATED] + sw->ctr[EMU_RUN_CTR_FLOOD_COPIES];
	c->held = emu_switch_held(sw);
	c->consumed = sw->ctr[EMU_RUN_CTR_CONSUMED_MAC_CONTROL] + pfc_merged;
	/* virtual frames: created when generated, consumed when absorbed at release */
	for (i = 0; i < sw->n_incast; i++) {
		c->created += sw->incast[i].ctr[EMU_INCAST_CTR_GENERATED];
		c->consumed += sw->incast[i].ctr[EMU_INCAST_CTR_ABSORBED];
		c->drops += sw->incast[i].ctr[EMU_INCAST_CTR_DROP_SINK_FULL];
	}
	c->handoff_out = sw->ctr[EMU_RUN_CTR_HANDOFF_OUT];
	c->handoff_in = sw->ctr[EMU_RUN_CTR_HANDOFF_IN];
	c->unaccounted = (int64_t)(c->rx + c->created + c->handoff_in) -
			 (int64_t)(c->tx + c->drops + c->held + c->consumed + c->handoff_out);
}

void
emu_switch_conservation_line(const struct emu_switch *sw, char *buf, size_t len)
{
	struct emu_conservation c;

	emu_switch_conservation(sw, &c);
	emu_conservation_text(&c, buf, len);
}

void
emu_conservation_text(const struct emu_conservation *cp, char *buf, size_t len)
{
	struct emu_conservation c = *cp;
	int64_t rings = (int64_t)c.handoff_out - (int64_t)c.handoff_in;

	/* frames between workers (in their rings) are held too: summed over every worker,
	 * handoff_out - handoff_in of them */
	if (rings > 0)
		c.held += (uint64_t)rings;
	snprintf(buf, len,
		 "conservation: rx %" PRIu64 " + created %" PRIu64 " = tx %" PRIu64
		 " + drops %" PRIu64 " + held %" PRIu64 " + consumed %" PRIu64 ": %s",
		 c.rx, c.created, c.tx, c.drops, c.held, c.consumed,
		 c.unaccounted == 0 ? "OK" : "MISMATCH");
	if (c.unaccounted != 0) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, " (%" PRId64 " packets unaccounted)",
			 c.unaccounted);
	}
}

void
emu_switch_print_summary(const struct emu_switch *sw, FILE *f)
{
	char line[512];
	unsigned int i, k;

	fprintf(f, "ports:\n");
	for (i = 0; i < sw->n_ports; i++) {
		const struct emu_port_stats *ps = &sw->port_stats[i];

		fprintf(f, "  %-8s rx %12" PRIu64 " pkts %15" PRIu64 " bytes   tx %12" PRIu64
			   " pkts %15" PRIu64 " bytes\n",
			sw->pl->port_names[i], ps->rx_pkts, ps->rx_bytes, ps->tx_pkts, ps->tx_bytes);
	}
	fprintf(f, "stages:\n");
	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_inst *st = &sw->stages[i];

		fprintf(f, "  %s %s (%s): in %" PRIu64 " out %" PRIu64, st->egress ? "egress " : "ingress",
			st->name, st->ops->type, st->in_pkts, st->out_pkts);
		for (k = 0; k < st->ops->n_ctr; k++)
			if (st->ctr[k] != 0)
				fprintf(f, " %s=%" PRIu64, st->ops->ctr_names[k], st->ctr[k]);
		fprintf(f, "\n");
		if (st->ops->summary != NULL) {
			st->ops->summary(st->priv, line, sizeof(line));
			if (line[0] != '\0')
				fprintf(f, "      %s\n", line);
		}
	}
	fprintf(f, "tm:\n");
	for (i = 0; i < sw->pl->tm.n_ports; i++) {
		const uint64_t *tc = emu_tm_port_ctrs(sw->tm, i);
		const struct emu_tm_port_cfg *pc = emu_tm_port_cfg(sw->tm, i);

		if (i == sw->n_ports)
			fprintf(f, "fabric links (TM ports of their own):\n");
		fprintf(f, "  %-8s %s%.3f Gb/s delay %" PRIu64 " ns held %" PRIu64 ":",
			sw->pl->tm_port_names[i],
			emu_tm_link_up(sw->tm, (uint16_t)i) ? "" : "LINK DOWN ",
			(double)pc->rate_bps / 1e9, pc->delay_ns, emu_tm_port_held(sw->tm, i));
		if (i >= sw->n_ports)
			for (k = 0; k < FAB_LINK_CTR_MAX; k++)
				fprintf(f, " %s=%" PRIu64, fab_link_ctr_names[k],
					sw->fab_link_ctr[i - sw->n_ports][k]);
		for (k = 0; k < EMU_TM_CTR_MAX; k++)
			if (tc[k] != 0 || k < EMU_TM_CTR_DROP_QUEUE_FULL)
				fprintf(f, " %s=%" PRIu64, emu_tm_ctr_names[k], tc[k]);
		fprintf(f, "\n");
		for (k = 0; k < EMU_TM_N_PRIO; k++) {
			struct emu_tm_prio_stats ps;

			emu_tm_prio_stats(sw->tm, i, k, sw->last_now_ns, &ps);
			if (ps.max_queue_bytes == 0 && ps.paused_ns == 0 && ps.xoff_ns == 0 &&
			    ps.ingress_bytes == 0)
				continue;
			fprintf(f,
				"    prio %u: queue %" PRIu64 " B (%" PRIu64 " pkts, max %" PRIu64
				" B) ingress %" PRIu64 " B headroom %" PRIu64 " B%s paused %"
				PRIu64 " ns%s xoff %" PRIu64 " ns\n",
				k, ps.queue_bytes, ps.queue_pkts, ps.max_queue_bytes,
				ps.ingress_bytes, ps.headroom_bytes, ps.paused ? " PAUSED" : "",
				ps.paused_ns, ps.xoff ? " XOFF" : "", ps.xoff_ns);
		}
	}
	{
		uint64_t used, total;

		emu_tm_buffer_use(sw->tm, &used, &total);
		fprintf(f, "  shared buffer: %" PRIu64 " of %" PRIu64 " bytes in use\n", used,
			total);
	}
	for (i = 0; i < sw->n_incast; i++) {
		const struct emu_incast_src *src = &sw->incast[i];

		fprintf(f, "incast %s -> %s prio %u%s%s%s:", src->s.cfg.name,
			sw->pl->port_names[src->s.cfg.port], src->s.cfg.prio,
			src->s.cfg.enabled ? "" : " (disabled)",
			src->s.cfg.sink_port != EMU_PORT_NONE ? " sink " : "",
			src->s.cfg.sink_port != EMU_PORT_NONE ?
				sw->pl->port_names[src->s.cfg.sink_port] : "");
		for (k = 0; k < EMU_INCAST_CTR_MAX; k++)
			fprintf(f, " %s=%" PRIu64, emu_incast_ctr_names[k], src->ctr[k]);
		fprintf(f, "\n");
		for (k = 0; src->hosts != NULL && k < src->hosts->n; k++) {
			struct emu_incast_host_stats hst;

			emu_incast_host_stats(src->hosts, k, sw->last_now_ns, &hst);
			fprintf(f,
				"  sender %u: frames=%" PRIu64 " bytes=%" PRIu64 " left_bytes=%" PRIu64
				" marked=%" PRIu64 " cnps=%" PRIu64 " rate_cuts=%" PRIu64
				" pauses=%" PRIu64 " paused_ns=%" PRIu64 " queued_bytes=%" PRIu64
				" rate_mbps=%.1f%s\n",
				k, hst.frames, hst.bytes, hst.left_bytes, hst.marked, hst.cnps,
				hst.rate_cuts, hst.pauses, hst.paused_ns, hst.queued_bytes,
				hst.rate_mbps, hst.paused ? " PAUSED" : "");
		}
	}
	fprintf(f, "runner:");
	for (k = 0; k < EMU_RUN_CTR_MAX; k++)
		fprintf(f, " %s=%" PRIu64, emu_run_ctr_names[k], sw->ctr[k]);
	fprintf(f, "\ndrops by reason:");
	{
		bool any = false;

		for (i = 0; i < sw->n_stages; i++)
			for (k = 0; k < sw->stages[i].ops->n_ctr; k++)
				if (emu_is_drop_name(sw->stages[i].ops->ctr_names[k]) &&
				    sw->stages[i].ctr[k] != 0) {
					fprintf(f, " %s.%s=%" PRIu64, sw->stages[i].name,
						sw->stages[i].ops->ctr_names[k], sw->stages[i].ctr[k]);
					any = true;
				}
		for (i = 0; i < sw->pl->tm.n_ports; i++)
			for (k = 0; k < EMU_TM_CTR_MAX; k++)
				if (emu_is_drop_name(emu_tm_ctr_names[k]) &&
				    emu_tm_port_ctrs(sw->tm, i)[k] != 0) {
					fprintf(f, " tm.%s.%s=%" PRIu64, sw->pl->tm_port_names[i],
						emu_tm_ctr_names[k], emu_tm_port_ctrs(sw->tm, i)[k]);
					any = true;
				}
		for (i = 0; sw->fab != NULL && i < sw->fab->n_links; i++)
			if (sw->fab_link_ctr[i][FAB_LINK_CTR_DROP_LOSS] != 0) {
				fprintf(f, " fabric.%s.drop_link_loss=%" PRIu64, sw->fab->links[i].name,
					sw->fab_link_ctr[i][FAB_LINK_CTR_DROP_LOSS]);
				any = true;
			}
		for (i = 0; sw->fab != NULL && i < sw->fab->n_switches; i++)
			if (sw->fab_sw_ctr[i][FAB_SW_CTR_DROP_NO_PATH] != 0) {
				fprintf(f, " fabric.%s.drop_no_path=%" PRIu64, sw->fab->sw[i].name,
					sw->fab_sw_ctr[i][FAB_SW_CTR_DROP_NO_PATH]);
				any = true;
			}
		for (i = 0; i < sw->n_incast; i++)
			if (sw->incast[i].ctr[EMU_INCAST_CTR_DROP_SINK_FULL] != 0) {
				fprintf(f, " incast.%s.drop_sink_full=%" PRIu64,
					sw->incast[i].s.cfg.name,
					sw->incast[i].ctr[EMU_INCAST_CTR_DROP_SINK_FULL]);
				any = true;
			}
		for (k = 0; k < EMU_RUN_CTR_MAX; k++)
			if (emu_is_drop_name(emu_run_ctr_names[k]) && sw->ctr[k] != 0) {
				fprintf(f, " runner.%s=%" PRIu64, emu_run_ctr_names[k], sw->ctr[k]);
				any = true;
			}
		fprintf(f, "%s\n", any ? "" : " none");
	}
	emu_switch_conservation_line(sw, line, sizeof(line));
	fprintf(f, "%s\n", line);
}

void
emu_switch_print_interval(const struct emu_switch *sw, FILE *f, double t_s)
{
	struct emu_switch *msw = (struct emu_switch *)(uintptr_t)sw;
	struct emu_conservation c;
	double dt = t_s - sw->last_interval_s;
	unsigned int i;

	if (dt <= 0)
		dt = 1;
	fprintf(f, "t=%.1fs", t_s);
	for (i = 0; i < sw->n_ports; i++) {
		const struct emu_port_stats *ps = &sw->port_stats[i];
		const struct emu_port_stats *last = &sw->last_interval[i];

		fprintf(f, " | %s rx %" PRIu64 " (%.3f Mpps %.3f Gb/s) tx %" PRIu64
			   " (%.3f Mpps %.3f Gb/s)",
			sw->pl->port_names[i], ps->rx_pkts,
			(double)(ps->rx_pkts - last->rx_pkts) / dt / 1e6,
			(double)(ps->rx_bytes - last->rx_bytes) * 8 / dt / 1e9, ps->tx_pkts,
			(double)(ps->tx_pkts - last->tx_pkts) / dt / 1e6,
			(double)(ps->tx_bytes - last->tx_bytes) * 8 / dt / 1e9);
		msw->last_interval[i] = *ps;
	}
	emu_switch_conservation(sw, &c);
	fprintf(f, " | drops %" PRIu64 " held %" PRIu64 "\n", c.drops, c.held);
	msw->last_interval_s = t_s;
}

void
emu_switch_print_interval_snap(struct emu_switch *sw, const struct emu_snap *sn, FILE *f,
			       double t_s)
{
	double dt = t_s - sw->last_interval_s;
	int64_t rings = (int64_t)sn->cons.handoff_out - (int64_t)sn->cons.handoff_in;
	unsigned int i;

	if (dt <= 0)
		dt = 1;
	fprintf(f, "t=%.1fs", t_s);
	for (i = 0; i < sw->n_ports; i++) {
		const struct emu_port_stats *ps = &sn->ports[i];
		const struct emu_port_stats *last = &sw->last_interval[i];

		fprintf(f, " | %s rx %" PRIu64 " (%.3f Mpps %.3f Gb/s) tx %" PRIu64
			   " (%.3f Mpps %.3f Gb/s)",
			sw->pl->port_names[i], ps->rx_pkts,
			(double)(ps->rx_pkts - last->rx_pkts) / dt / 1e6,
			(double)(ps->rx_bytes - last->rx_bytes) * 8 / dt / 1e9, ps->tx_pkts,
			(double)(ps->tx_pkts - last->tx_pkts) / dt / 1e6,
			(double)(ps->tx_bytes - last->tx_bytes) * 8 / dt / 1e9);
		sw->last_interval[i] = *ps;
	}
	fprintf(f, " | drops %" PRIu64 " held %" PRIu64 "\n", sn->cons.drops,
		sn->cons.held + (rings > 0 ? (uint64_t)rings : 0));
	sw->last_interval_s = t_s;
}

static json_t *
emu_ctr_object(const char *const *names, const uint64_t *vals, unsigned int n)
{
	json_t *o = json_object();
	unsigned int k;

	for (k = 0; k < n; k++)
		json_object_set_new(o, names[k], json_integer((json_int_t)vals[k]));
	return o;
}


struct emu_snap *
emu_switch_snap_alloc(const struct emu_switch *sw)
{
	return calloc(1, emu_switch_snap_size(sw));
}

void
emu_switch_snap_take(const struct emu_switch *sw, struct emu_snap *sn)
{
	unsigned int i, k, off = 0;

	for (i = 0; i < sw->n_ports; i++)
		sn->ports[i] = sw->port_stats[i];
	memcpy(sn->fab_link_ctr, sw->fab_link_ctr, sizeof(sn->fab_link_ctr));
	memcpy(sn->fab_sw_ctr, sw->fab_sw_ctr, sizeof(sn->fab_sw_ctr));
	for (i = 0; i < sw->pl->tm.n_ports; i++) {
		sn->tm_held[i] = emu_tm_port_held(sw->tm, i);
		sn->tm_link_up[i] = emu_tm_link_up(sw->tm, (uint16_t)i);
		memcpy(sn->tm_ctr[i], emu_tm_port_ctrs(sw->tm, i), sizeof(sn->tm_ctr[i]));
		for (k = 0; k < EMU_TM_N_PRIO; k++)
			emu_tm_prio_stats(sw->tm, i, k, sw->last_now_ns, &sn->prio[i][k]);
	}
	emu_tm_buffer_use(sw->tm, &sn->buf_used, &sn->buf_total);
	memcpy(sn->run_ctr, sw->ctr, sizeof(sn->run_ctr));
	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_inst *st = &sw->stages[i];

		sn->st_in[i] = st->in_pkts;
		sn->st_out[i] = st->out_pkts;
		memcpy(&sn->stage_ctr[off], st->ctr, st->ops->n_ctr * sizeof(uint64_t));
		off += st->ops->n_ctr;
	}
	for (i = 0; i < sw->n_incast; i++) {
		const struct emu_incast_src *src = &sw->incast[i];
		unsigned int j;

		sn->incast_enabled[i] = src->s.cfg.enabled;
		memcpy(sn->incast_ctr[i], src->ctr, sizeof(sn->incast_ctr[i]));
		for (j = 0; src->hosts != NULL && j < src->hosts->n; j++)
			emu_incast_host_stats(src->hosts, j, sw->last_now_ns, &sn->incast_host[i][j]);
	}
	emu_switch_conservation(sw, &sn->cons);
}

/* A closed-loop source's senders, for --stats and telemetry. */
static json_t *
emu_incast_hosts_json(const struct emu_incast_host_stats *hs, unsigned int n)
{
	json_t *a = json_array();
	unsigned int j;

	for (j = 0; j < n; j++)
		json_array_append_new(
			a, json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:b}",
				     "frames", (json_int_t)hs[j].frames, "bytes",
				     (json_int_t)hs[j].bytes, "left_bytes",
				     (json_int_t)hs[j].left_bytes, "marked", (json_int_t)hs[j].marked,
				     "cnps", (json_int_t)hs[j].cnps, "rate_cuts",
				     (json_int_t)hs[j].rate_cuts, "pauses", (json_int_t)hs[j].pauses,
				     "paused_ns", (json_int_t)hs[j].paused_ns, "queued_bytes",
				     (json_int_t)hs[j].queued_bytes, "rate_mbps", hs[j].rate_mbps,
				     "paused", hs[j].paused));
	return a;
}

static json_t *
emu_snap_prio_array(const struct emu_snap *sn, uint16_t port)
{
	json_t *a = json_array();
	unsigned int k;

	for (k = 0; k < EMU_TM_N_PRIO; k++) {
		const struct emu_tm_prio_stats *ps = &sn->prio[port][k];

		json_array_append_new(
			a, json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:b, s:I, s:b, s:I}", "prio",
				     (int)k, "queue_bytes", (json_int_t)ps->queue_bytes,
				     "queue_pkts", (json_int_t)ps->queue_pkts, "max_queue_bytes",
				     (json_int_t)ps->max_queue_bytes, "ingress_bytes",
				     (json_int_t)ps->ingress_bytes, "headroom_bytes",
				     (json_int_t)ps->headroom_bytes, "paused", ps->paused,
				     "paused_ns", (json_int_t)ps->paused_ns, "xoff", ps->xoff,
				     "xoff_ns", (json_int_t)ps->xoff_ns));
	}
	return a;
}

json_t *
emu_switch_snap_json(const struct emu_switch *sw, const struct emu_snap *sn)
{
	json_t *root = json_object();
	json_t *ports = json_array(), *stages = json_array(), *tm = json_array();
	const struct emu_conservation *c = &sn->cons;
	unsigned int i, off = 0;

	for (i = 0; i < sw->n_ports; i++) {
		const struct emu_port_stats *ps = &sn->ports[i];

		json_array_append_new(ports,
				      json_pack("{s:s, s:I, s:I, s:I, s:I}", "name",
						sw->pl->port_names[i], "rx_pkts",
						(json_int_t)ps->rx_pkts, "rx_bytes",
						(json_int_t)ps->rx_bytes, "tx_pkts",
						(json_int_t)ps->tx_pkts, "tx_bytes",
						(json_int_t)ps->tx_bytes));
	}
	for (i = 0; i < sw->pl->tm.n_ports; i++)
		json_array_append_new(tm, json_pack("{s:s, s:b, s:I, s:o, s:o}", "port",
						    sw->pl->tm_port_names[i], "link_up",
						    (int)sn->tm_link_up[i], "held",
						    (json_int_t)sn->tm_held[i], "counters",
						    emu_ctr_object(emu_tm_ctr_names, sn->tm_ctr[i],
								   EMU_TM_CTR_MAX),
						    "priorities", emu_snap_prio_array(sn, i)));
	if (sw->fab != NULL) {
		json_t *fab = json_pack("{s:[], s:[]}", "links", "switches");

		for (i = 0; i < sw->fab->n_links; i++) {
			const struct fab_link_cfg *l = &sw->fab->links[i];

			json_array_append_new(json_object_get(fab, "links"),
					      json_pack("{s:s, s:s, s:s, s:o}", "name", l->name,
							"from", sw->fab->sw[l->from].name, "to",
							sw->fab->sw[l->to].name, "counters",
							emu_ctr_object(fab_link_ctr_names,
								       sn->fab_link_ctr[i],
								       FAB_LINK_CTR_MAX)));
		}
		for (i = 0; i < sw->fab->n_switches; i++)
			json_array_append_new(json_object_get(fab, "switches"),
					      json_pack("{s:s, s:o}", "name", sw->fab->sw[i].name,
							"counters",
							emu_ctr_object(fab_sw_ctr_names,
								       sn->fab_sw_ctr[i],
								       FAB_SW_CTR_MAX)));
		json_object_set_new(root, "fabric", fab);
	}
	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_inst *st = &sw->stages[i];

		json_array_append_new(stages,
				      json_pack("{s:s, s:s, s:s, s:I, s:I, s:o}", "name", st->name,
						"type", st->ops->type, "list",
						st->egress ? "egress" : "ingress", "in_pkts",
						(json_int_t)sn->st_in[i], "out_pkts",
						(json_int_t)sn->st_out[i], "counters",
						emu_ctr_object(st->ops->ctr_names, &sn->stage_ctr[off],
							       st->ops->n_ctr)));
		off += st->ops->n_ctr;
	}
	json_object_set_new(root, "ports", ports);
	json_object_set_new(root, "stages", stages);
	json_object_set_new(root, "tm", tm);
	json_object_set_new(root, "buffer",
			    json_pack("{s:I, s:I}", "used_bytes", (json_int_t)sn->buf_used,
				      "total_bytes", (json_int_t)sn->buf_total));
	{
		json_t *inc = json_array();

		for (i = 0; i < sw->n_incast; i++) {
			const struct emu_incast_src *src = &sw->incast[i];

			json_t *o = json_pack("{s:s, s:s, s:i, s:b, s:o}", "name", src->s.cfg.name,
					      "port", sw->pl->port_names[src->s.cfg.port],
					      "priority", (int)src->s.cfg.prio, "enabled",
					      sn->incast_enabled[i], "counters",
					      emu_ctr_object(emu_incast_ctr_names, sn->incast_ctr[i],
							     EMU_INCAST_CTR_MAX));

			if (src->hosts != NULL)
				json_object_set_new(o, "senders",
						    emu_incast_hosts_json(sn->incast_host[i],
									  src->hosts->n));
			json_array_append_new(inc, o);
		}
		json_object_set_new(root, "incast", inc);
	}
	json_object_set_new(root, "runner",
			    emu_ctr_object(emu_run_ctr_names, sn->run_ctr, EMU_RUN_CTR_MAX));
	json_object_set_new(root, "conservation",
			    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}", "rx",
				      (json_int_t)c->rx,
				      "created", (json_int_t)c->created, "tx", (json_int_t)c->tx,
				      "drops", (json_int_t)c->drops, "held", (json_int_t)c->held,
				      "consumed", (json_int_t)c->consumed,
				      "unaccounted", (json_int_t)c->unaccounted, "ok",
				      c->unaccounted == 0));
	return root;
}

json_t *
emu_switch_stats_json(const struct emu_switch *sw)
{
	struct emu_snap *sn = emu_switch_snap_alloc(sw);
	json_t *root;

	if (sn == NULL)
		return json_object();
	emu_switch_snap_take(sw, sn);
	root = emu_switch_snap_json(sw, sn);
	free(sn);
	return root;
}

/*
 * Snapshots for other threads (telemetry): the reader posts a request, the owner copies the
 * counters into sw->snap between bursts (emu_switch_snap_serve(), a flag test per poll) and
 * says so; the reader builds the JSON from the copy. The owner is never stopped and the
 * reader never reads the owner's counters.
 */
void
emu_switch_snap_serve(struct emu_switch *sw)
{
	if (likely(!__atomic_load_n(&sw->snap_req, __ATOMIC_ACQUIRE)))
		return;
	emu_switch_snap_take(sw, sw->snap);
	__atomic_store_n(&sw->snap_req, false, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sw->snap_seq, 1, __ATOMIC_RELEASE);
}

size_t
emu_switch_snap_size(const struct emu_switch *sw)
{
	unsigned int i, n = 0;

	for (i = 0; i < sw->n_stages; i++)
		n += sw->stages[i].ops->n_ctr;
	return sizeof(struct emu_snap) + n * sizeof(uint64_t);
}

int
emu_switch_snap_fetch(struct emu_switch *sw, bool owner_gone, uint64_t timeout_us,
		      struct emu_snap *dst)
{
	uint64_t seq, waited = 0;
	int rc = -ENOMEM;

	pthread_mutex_lock(&sw->snap_mu);
	if (sw->snap == NULL)
		sw->snap = emu_switch_snap_alloc(sw);
	if (sw->snap == NULL)
		goto out;
	if (owner_gone) {
		emu_switch_snap_take(sw, sw->snap);
	} else {
		seq = __atomic_load_n(&sw->snap_seq, __ATOMIC_ACQUIRE);
		__atomic_store_n(&sw->snap_req, true, __ATOMIC_RELEASE);
		while (__atomic_load_n(&sw->snap_seq, __ATOMIC_ACQUIRE) == seq) {
			if (waited >= timeout_us) {
				__atomic_store_n(&sw->snap_req, false, __ATOMIC_RELAXED);
				rc = -ETIMEDOUT;
				goto out;
			}
			usleep(50);
			waited += 50;
		}
	}
	memcpy(dst, sw->snap, emu_switch_snap_size(sw));
	rc = 0;
out:
	pthread_mutex_unlock(&sw->snap_mu);
	return rc;
}

json_t *
emu_switch_snap_request(struct emu_switch *sw, bool owner_gone, uint64_t timeout_us)
{
	struct emu_snap *sn = emu_switch_snap_alloc(sw);
	json_t *root = NULL;

	if (sn != NULL && emu_switch_snap_fetch(sw, owner_gone, timeout_us, sn) == 0)
		root = emu_switch_snap_json(sw, sn);
	free(sn);
	return root;
}
