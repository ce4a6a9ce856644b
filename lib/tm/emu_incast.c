/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include "lib/tm/emu_incast.h"
#include "lib/tm/emu_tm.h"
#include "lib/tm/emu_tm_keys.h"
#include "lib/base/emu_json.h"
#include "lib/pkt/emu_pkt.h"
#include "lib/proto/roce_build.h"
#include "lib/proto/roce_proto.h"

#include <rte_memcpy.h>


const char *const emu_incast_ctr_names[EMU_INCAST_CTR_MAX] = {
#define EMU_INCAST_CTR_NAME(e, s) s,
	EMU_INCAST_FOREACH_CTR(EMU_INCAST_CTR_NAME)
#undef EMU_INCAST_CTR_NAME
};

/* Every key is read through its entry in emu_tm_keys.c (emu_incast_table). */
#define T (&emu_incast_table)

static int
emu_incast_port(const json_t *o, const char *path, const char *key, unsigned int n_ports,
		const char *const *names, uint16_t *out, struct emu_err *err)
{
	const char *name;
	unsigned int i;
	int rc;

	rc = emu_key_str(o, path, T, key, &name, err);
	if (rc != 0 || name == NULL)
		return rc;
	for (i = 0; i < n_ports; i++)
		if (strcmp(names[i], name) == 0) {
			*out = (uint16_t)i;
			return 0;
		}
	return emu_err_set(err, "%s.%s: no port named \"%s\" in ports[]", path, key, name);
}


/* Bursts: one sender's message must fit in the period at its rate (else cycles overlap). */
static int
emu_incast_burst_fits(const struct emu_incast_cfg *c, const char *path, struct emu_err *err)
{
	unsigned __int128 ns;

	if (c->mode != EMU_INCAST_BURSTS)
		return 0;
	ns = ((unsigned __int128)c->msg_frames * emu_incast_wire_bits(c->frame_bytes) *
		      1000000000ULL + c->rate_bps - 1) / c->rate_bps;
	if (ns > c->period_ns)
		return emu_err_set(err,
				   "%s: a message of %u frames takes %.3f us at %.3f Gb/s "
				   "per sender, longer than period_us (%.3f)",
				   path, c->msg_frames, (double)ns / 1e3, (double)c->rate_bps / 1e9,
				   (double)c->period_ns / 1e3);
	return 0;
}

static int
emu_incast_one(const json_t *o, const char *path, unsigned int n_ports, const char *const *names,
	       const uint32_t *mtus, struct emu_incast_cfg *c, struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	int64_t prio, senders, frame, msg_kb;
	double rate, on_us = 0, off_us = 0, period_us = 0, cnp_delay_us = 0;
	const char *mode, *dcqcn;
	uint32_t max_frame;
	int rc;

	memset(c, 0, sizeof(*c));
	rc = emu_json_expect_object(o, path, err);
	if (rc == 0)
		rc = emu_keys_check(o, path, T, err);
	if (rc == 0)
		rc = emu_key_str(o, path, T, "name", &c->name, err);
	c->port = 0;
	if (rc == 0)
		rc = emu_incast_port(o, path, "port", n_ports, names, &c->port, err);
	c->sink_port = EMU_PORT_NONE;
	if (rc == 0)
		rc = emu_incast_port(o, path, "sink_port", n_ports, names, &c->sink_port, err);
	if (rc == 0)
		rc = emu_key_int(o, path, T, "priority", &prio, err);
	if (rc == 0)
		rc = emu_key_int(o, path, T, "senders", &senders, err);
	if (rc == 0)
		rc = emu_key_num(o, path, T, "rate_gbps", &rate, err);
	if (rc == 0)
		rc = emu_key_int(o, path, T, "frame_bytes", &frame, err);
	if (rc == 0)
		rc = emu_key_bool(o, path, T, "enabled", &c->enabled, err);
	if (rc == 0)
		rc = emu_key_str(o, path, T, "mode", &mode, err);
	if (rc == 0)
		rc = emu_key_bool(o, path, T, "honour_pfc", &c->honour_pfc, err);
	if (rc == 0)
		rc = emu_key_str(o, path, T, "dcqcn", &dcqcn, err);
	if (rc == 0)
		rc = emu_key_num(o, path, T, "cnp_delay_us", &cnp_delay_us, err);
	if (rc == 0)
		rc = emu_key_str(o, path, T, "attach", &c->attach, err);
	c->attach_leaf = EMU_PORT_NONE;
	if (rc != 0)
		return rc;
	c->dcqcn = strcmp(dcqcn, "nvidia") == 0 ? EMU_INCAST_DCQCN_NVIDIA :
		   strcmp(dcqcn, "paper") == 0	 ? EMU_INCAST_DCQCN_PAPER :
						   EMU_INCAST_DCQCN_OFF;
	c->cnp_delay_ns = (uint64_t)(cnp_delay_us * 1e3 + 0.5);
	if (emu_incast_closed_loop(c) && strcmp(mode, "continuous") != 0)
		return emu_err_set(err, "%s.%s: only with \"mode\": \"continuous\"", path,
				   c->honour_pfc ? "honour_pfc" : "dcqcn");
	if (emu_incast_closed_loop(c) && senders > EMU_INCAST_MAX_HOSTS)
		return emu_err_set(err,
				   "%s.senders: at most %d with honour_pfc or dcqcn (each sender "
				   "is modelled on its own), got %lld",
				   path, EMU_INCAST_MAX_HOSTS, (long long)senders);
	max_frame = mtus[c->port] + 14;
	if (c->sink_port != EMU_PORT_NONE && mtus[c->sink_port] + 14 < max_frame)
		max_frame = mtus[c->sink_port] + 14;
	if (frame > max_frame)
		return emu_err_set(err,
				   "%s.frame_bytes: must be <= %u (the ports' MTU + 14), got %lld",
				   path, max_frame, (long long)frame);
	c->prio = (uint8_t)prio;
	c->senders = (uint32_t)senders;
	c->rate_bps = (uint64_t)(rate * 1e9 + 0.5);
	if (c->rate_bps == 0)
		c->rate_bps = 1;
	c->frame_bytes = (uint32_t)frame;
	if (strcmp(mode, "continuous") == 0) {
		c->mode = EMU_INCAST_CONTINUOUS;
	} else if (strcmp(mode, "on_off") == 0) {
		c->mode = EMU_INCAST_ON_OFF;
		rc = emu_key_num_req(o, path, T, "on_us", &on_us, err);
		if (rc == 0)
			rc = emu_key_num_req(o, path, T, "off_us", &off_us, err);
		if (rc != 0)
			return rc;
		c->on_ns = (uint64_t)(on_us * 1e3 + 0.5);
		c->off_ns = (uint64_t)(off_us * 1e3 + 0.5);
		if (c->on_ns == 0)
			return emu_err_set(err, "%s.on_us: must be at least 0.001 (1 ns), got %g",
					   path, on_us);
	} else if (strcmp(mode, "bursts") == 0) {
		c->mode = EMU_INCAST_BURSTS;
		rc = emu_key_int_req(o, path, T, "message_kb", &msg_kb, err);
		if (rc == 0)
			rc = emu_key_num_req(o, path, T, "period_us", &period_us, err);
		if (rc != 0)
			return rc;
		c->msg_frames = (uint32_t)((msg_kb * 1024 + frame - 1) / frame);
		c->period_ns = (uint64_t)(period_us * 1e3 + 0.5);
		emu_json_path(p, sizeof(p), path, "period_us");
		rc = emu_incast_burst_fits(c, p, err);
		if (rc != 0)
			return rc;
	} else {
		return emu_err_set(err,
				   "%s.mode: must be \"continuous\", \"on_off\" or \"bursts\", "
				   "got \"%s\"",
				   path, mode);
	}
	if (c->mode != EMU_INCAST_ON_OFF &&
	    (json_object_get(o, "on_us") != NULL || json_object_get(o, "off_us") != NULL))
		return emu_err_set(err, "%s.%s: only with \"mode\": \"on_off\"", path,
				   json_object_get(o, "on_us") != NULL ? "on_us" : "off_us");
	if (c->mode != EMU_INCAST_BURSTS &&
	    (json_object_get(o, "message_kb") != NULL || json_object_get(o, "period_us") != NULL))
		return emu_err_set(err, "%s.%s: only with \"mode\": \"bursts\"", path,
				   json_object_get(o, "message_kb") != NULL ? "message_kb" :
									     "period_us");
	return 0;
}

int
emu_incast_parse(const json_t *arr, unsigned int n_ports, const char *const *names,
		 const uint32_t *mtus, struct emu_incast_cfg *cfgs, unsigned int *n,
		 struct emu_err *err)
{
	char path[EMU_JSON_PATH_LEN];
	const json_t *o;
	unsigned int j;
	size_t idx;
	int rc;

	*n = 0;
	if (arr == NULL)
		return 0;
	rc = emu_json_expect_array(arr, "incast", err);
	if (rc != 0)
		return rc;
	if (json_array_size(arr) > EMU_MAX_INCAST)
		return emu_err_set(err, "incast: at most %d sources, got %zu", EMU_MAX_INCAST,
				   json_array_size(arr));
	json_array_foreach(arr, idx, o) {
		emu_json_path_idx(path, sizeof(path), "incast", idx);
		rc = emu_incast_one(o, path, n_ports, names, mtus, &cfgs[idx], err);
		if (rc != 0)
			return rc;
		for (j = 0; j < idx; j++)
			if (strcmp(cfgs[j].name, cfgs[idx].name) == 0)
				return emu_err_set(err, "%s.name: \"%s\" is already incast[%u]",
						   path, cfgs[idx].name, j);
		*n = (unsigned int)idx + 1;
	}
	return 0;
}

int
emu_incast_check_tm(const struct emu_incast_cfg *cfgs, unsigned int n,
		    const struct emu_tm_cfg *tm, struct emu_err *err)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct emu_incast_cfg *c = &cfgs[i];
		const struct emu_tm_port_cfg *pc = &tm->ports[c->port];

		if (c->honour_pfc && (!pc->pfc.enabled || !(pc->lossless_mask & (1u << c->prio))))
			return emu_err_set(err,
					   "incast[%u].honour_pfc: priority %u is not lossless with "
					   "PFC on at the source's port (tm: lossless, pfc)",
					   i, c->prio);
	}
	return 0;
}

/* Offset of frame k of a cycle from the cycle's start (the senders staggered by 1/N). */
static uint64_t
emu_incast_offset_ns(const struct emu_incast_cfg *c, uint64_t k)
{
	return (uint64_t)((unsigned __int128)k * emu_incast_wire_bits(c->frame_bytes) *
			  1000000000ULL / ((unsigned __int128)c->senders * c->rate_bps));
}

static uint64_t
emu_incast_cycle_ns(const struct emu_incast_cfg *c)
{
	return c->mode == EMU_INCAST_ON_OFF ? c->on_ns + c->off_ns : c->period_ns;
}

static void
emu_incast_sched_update(struct emu_incast_sched *s)
{
	const struct emu_incast_cfg *c = &s->cfg;
	uint64_t off;

	if (!c->enabled) {
		s->next_ns = UINT64_MAX;
		return;
	}
	off = emu_incast_offset_ns(c, s->k);
	if ((c->mode == EMU_INCAST_ON_OFF && off >= c->on_ns) ||
	    (c->mode == EMU_INCAST_BURSTS && s->k >= (uint64_t)c->senders * c->msg_frames)) {
		s->cycle++;
		s->k = 0;
		off = 0;
	}
	if (c->mode == EMU_INCAST_CONTINUOUS)
		s->next_ns = s->epoch_ns + off;
	else
		s->next_ns = s->epoch_ns + s->cycle * emu_incast_cycle_ns(c) + off;
}

void
emu_incast_sched_start(struct emu_incast_sched *s, uint64_t epoch_ns)
{
	s->epoch_ns = epoch_ns;
	s->cycle = 0;
	s->k = 0;
	emu_incast_sched_update(s);
}

void
emu_incast_sched_advance(struct emu_incast_sched *s)
{
	s->k++;
	emu_incast_sched_update(s);
}

enum { EMU_INCAST_SET_ENABLED, EMU_INCAST_SET_SENDERS, EMU_INCAST_SET_RATE };

json_t *
emu_incast_settings(const struct emu_incast_cfg *c)
{
	return json_pack("{s:b, s:I, s:f}", "enabled", c->enabled, "senders",
			 (json_int_t)c->senders, "rate_gbps", (double)c->rate_bps / 1e9);
}

int
emu_incast_compile(const struct emu_incast_cfg *base, const char *key, const json_t *val,
		   struct emu_set *out, const char *path, struct emu_err *err)
{
	struct emu_incast_cfg c = *base;
	int64_t i;
	double x;
	int rc;

	memset(out, 0, sizeof(*out));
	if (strcmp(key, "enabled") == 0) {
		if (!json_is_boolean(val))
			return emu_err_set(err, "%s: must be a boolean, got %s", path,
					   emu_json_type_name(val));
		out->key = EMU_INCAST_SET_ENABLED;
		out->u32 = json_is_true(val);
	} else if (strcmp(key, "senders") == 0) {
		rc = emu_key_int_value(val, path, &emu_incast_set_table, key, &i, err);
		if (rc != 0)
			return rc;
		out->key = EMU_INCAST_SET_SENDERS;
		out->u32 = (uint32_t)i;
	} else if (strcmp(key, "rate_gbps") == 0) {
		rc = emu_key_num_value(val, path, &emu_incast_set_table, key, &x, err);
		if (rc != 0)
			return rc;
		c.rate_bps = (uint64_t)(x * 1e9 + 0.5);
		if (c.rate_bps == 0)
			c.rate_bps = 1;
		/* the message length and period are the pipeline's: only the rate changes */
		rc = emu_incast_burst_fits(&c, path, err);
		if (rc != 0)
			return rc;
		out->key = EMU_INCAST_SET_RATE;
		out->u64 = c.rate_bps;
	} else {
		return emu_keys_unknown(path, &emu_incast_set_table, err);
	}
	return 0;
}

void
emu_incast_apply(struct emu_incast_sched *s, const struct emu_set *set, uint64_t now_ns)
{
	struct emu_incast_cfg c = s->cfg;

	if (set->key == EMU_INCAST_SET_ENABLED)
		c.enabled = set->u32 != 0;
	else if (set->key == EMU_INCAST_SET_SENDERS)
		c.senders = set->u32;
	else
		c.rate_bps = set->u64;
	/* A change to a running source restarts its pattern now; disabling stops it now. */
	if (c.enabled != s->cfg.enabled || c.senders != s->cfg.senders ||
	    c.rate_bps != s->cfg.rate_bps) {
		s->cfg = c;
		emu_incast_sched_start(s, now_ns);
	}
}

#define EMU_INCAST_HDR_BYTES 58 /* Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 */

/* DSCP the filler frames carry for priority @p prio (the default trust-DSCP map's inverse). */
static uint8_t
emu_incast_dscp(uint8_t prio)
{
	if (prio == 3)
		return 26;
	if (prio == 6)
		return 48;
	return (uint8_t)(prio << 3);
}

int
emu_incast_build_template(const struct emu_incast_cfg *c, unsigned int idx,
			  const uint8_t dst_mac[6], uint8_t *tmpl, struct roce_pkt *pkt)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	uint32_t payload;
	int len;

	memcpy(hp.dst_mac, dst_mac, 6);
	memcpy(hp.src_mac, (const uint8_t[6]){ 0x02, 0x69, 0x6e, 0x63, 0x00, (uint8_t)idx }, 6);
	hp.dscp = emu_incast_dscp(c->prio);
	hp.ecn = 2;
	memcpy(hp.src_ip, (const uint8_t[4]){ 10, 255, (uint8_t)idx, 1 }, 4);
	memcpy(hp.dst_ip, (const uint8_t[4]){ 10, 255, 255, (uint8_t)c->port }, 4);
	hp.opcode = ROCE_OP_RDMA_WRITE_MIDDLE;
	hp.dest_qp = 0xc00000 + idx;
	payload = (c->frame_bytes - EMU_INCAST_HDR_BYTES) & ~3u;
	len = roce_build(tmpl, c->frame_bytes, &hp, NULL, payload);
	if (len < 0 || (uint32_t)len > c->frame_bytes)
		return -EINVAL;
	roce_parse(tmpl, (uint32_t)len, 4791, pkt);
	return 0;
}

struct rte_mbuf *
emu_incast_frame(struct rte_mempool *mp, const uint8_t *tmpl, const struct roce_pkt *pkt,
		 const struct emu_incast_cfg *c, unsigned int idx, uint64_t t_ns)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct emu_pkt_meta *meta;
	char *buf;

	buf = m != NULL ? rte_pktmbuf_append(m, (uint16_t)c->frame_bytes) : NULL;
	if (buf == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	rte_memcpy(buf, tmpl, c->frame_bytes);
	meta = emu_meta(m);
	meta->ts_ns = t_ns;
	meta->in_port = EMU_PORT_SELF;
	meta->out_port = c->port;
	meta->prio = c->prio;
	meta->flags = EMU_META_PARSED | EMU_META_CREATED | EMU_META_VIRTUAL;
	memset(&meta->trace, 0, sizeof(meta->trace));
	meta->trace.t_in_ns = t_ns;
	meta->trace.created_by = EMU_TRACE_BY_INCAST;
	meta->reserved = (uint16_t)idx;
	meta->pkt = *pkt;
	return m;
}
