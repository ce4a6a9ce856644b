/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pipeline's "tm" section: defaults, parsing and validation (every key with its JSON
 * path), the sizes derived from it (queued packets, delay-line slots, PFC thresholds).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/base/emu_json.h"
#include "lib/proto/roce_rewrite.h"
#include "lib/tm/emu_tm_int.h"
#include "lib/tm/emu_tm_keys.h"

const char *const emu_tm_ctr_names[EMU_TM_CTR_MAX] = {
#define EMU_TM_CTR_NAME(e, s) s,
	EMU_TM_FOREACH_CTR(EMU_TM_CTR_NAME)
#undef EMU_TM_CTR_NAME
};

void
emu_tm_port_cfg_default(struct emu_tm_port_cfg *pc)
{
	const struct emu_key_table *t = &emu_tm_port_table;
	unsigned int i;

	/* the defaults of the key table: the same for ports tm.ports[] does not list */
	memset(pc, 0, sizeof(*pc));
	pc->rate_bps = (uint64_t)(emu_key_find(t, "rate_gbps")->def * 1e9 + 0.5);
	pc->limit_bytes = (uint64_t)emu_key_find(t, "buffer_kb")->idef * 1024;
	pc->queue_limit_bytes = pc->limit_bytes;
	pc->queue_pkts = (uint32_t)emu_key_find(t, "queue_pkts")->idef;
	pc->delay_ns = (uint64_t)(emu_key_find(t, "delay_us")->def * 1e3 + 0.5);
	pc->scheduler = EMU_TM_SCHED_STRICT;
	pc->lossless_mask = 1u << 3;
	for (i = 0; i < EMU_TM_N_PRIO; i++)
		pc->weights[i] = 1;
	pc->pfc.quanta = (uint16_t)emu_key_find(&emu_tm_pfc_table, "quanta")->idef;
}

void
emu_tm_cfg_default(struct emu_tm_cfg *cfg, unsigned int n_ports)
{
	unsigned int i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->n_ports = n_ports;
	for (i = 0; i < n_ports; i++) {
		emu_tm_port_cfg_default(&cfg->ports[i]);
		cfg->buffer.total_bytes += cfg->ports[i].limit_bytes;
	}
	cfg->buffer.dynamic = false;
	cfg->buffer.alpha = emu_key_find(&emu_tm_buffer_table, "alpha")->def;
	cfg->buffer.cell_bytes = (uint32_t)emu_key_find(&emu_tm_buffer_table, "cell_bytes")->idef;
}

/* Every key is read through its entry in emu_tm_keys.c (ranges, defaults, strings). */

uint64_t
emu_tm_pfc_xoff_bytes(double cable_m, uint64_t rate_bps, uint32_t mtu)
{
	/* xoff_bytes = (301 + 2.16 * cable_m) * speed_Gbps + 2.72 * MTU (NVIDIA mlx5) */
	return (uint64_t)ceil((301.0 + 2.16 * cable_m) * ((double)rate_bps / 1e9) +
			      2.72 * (double)mtu);
}

uint64_t
emu_tm_pause_ns(uint16_t quanta, uint64_t rate_bps)
{
	/* quanta * 512 bits / rate; quanta * 512e9 < 2^56, no overflow */
	return ((uint64_t)quanta * EMU_TM_PFC_QUANTUM_BITS * 1000000000ULL + rate_bps - 1) /
	       rate_bps;
}

void
emu_tm_ecn_ramp(struct emu_tm_ecn_cfg *ec)
{
	ec->slope_q48 = ec->kmax_bytes > ec->kmin_bytes ?
		(uint64_t)(ec->pmax * 281474976710656.0 /* 2^48 */ /
			   (double)(ec->kmax_bytes - ec->kmin_bytes)) : 0;
}

static int
emu_tm_ecn_parse(const json_t *o, const char *path, struct emu_tm_ecn_cfg *ec,
		 struct emu_err *err)
{
	int64_t kmin, kmax;
	const char *at;
	int rc;

	rc = emu_json_expect_object(o, path, err);
	if (rc == 0)
		rc = emu_keys_check(o, path, &emu_tm_ecn_table, err);
	if (rc == 0)
		rc = emu_key_int(o, path, &emu_tm_ecn_table, "kmin_kb", &kmin, err);
	if (rc == 0)
		rc = emu_key_int(o, path, &emu_tm_ecn_table, "kmax_kb", &kmax, err);
	if (rc == 0)
		rc = emu_key_num(o, path, &emu_tm_ecn_table, "pmax", &ec->pmax, err);
	if (rc == 0)
		rc = emu_key_str(o, path, &emu_tm_ecn_table, "mark_at", &at, err);
	if (rc != 0)
		return rc;
	if (kmax <= kmin)
		return emu_err_set(err, "%s.kmax_kb: must be > kmin_kb (%lld), got %lld", path,
				   (long long)kmin, (long long)kmax);
	ec->enabled = true;
	ec->at_enqueue = strcmp(at, "enqueue") == 0;
	ec->kmin_bytes = (uint64_t)kmin * 1024;
	ec->kmax_bytes = (uint64_t)kmax * 1024;
	emu_tm_ecn_ramp(ec);
	return 0;
}

static int
emu_tm_pfc_parse(const json_t *o, const char *path, uint32_t mtu, struct emu_tm_port_cfg *pc,
		 struct emu_err *err)
{
	struct emu_tm_pfc_cfg *fc = &pc->pfc;
	bool has_xoff, has_cable;
	int64_t xoff, xon, quanta;
	double cable_m;
	int rc;

	rc = emu_json_expect_object(o, path, err);
	if (rc == 0)
		rc = emu_keys_check(o, path, &emu_tm_pfc_table, err);
	if (rc == 0)
		rc = emu_key_int(o, path, &emu_tm_pfc_table, "quanta", &quanta, err);
	if (rc != 0)
		return rc;
	has_xoff = json_object_get(o, "xoff_kb") != NULL;
	has_cable = json_object_get(o, "cable_m") != NULL;
	if (has_xoff == has_cable)
		return emu_err_set(err,
				   "%s: give either \"xoff_kb\" (and \"xon_kb\") or \"cable_m\"",
				   path);
	if (has_xoff) {
		rc = emu_key_int_req(o, path, &emu_tm_pfc_table, "xoff_kb", &xoff, err);
		if (rc == 0)
			rc = emu_key_int_req(o, path, &emu_tm_pfc_table, "xon_kb", &xon, err);
		if (rc != 0)
			return rc;
		if (xon >= xoff)
			return emu_err_set(err, "%s.xon_kb: must be < xoff_kb (%lld), got %lld",
					   path, (long long)xoff, (long long)xon);
		fc->xoff_bytes = (uint64_t)xoff * 1024;
		fc->xon_bytes = (uint64_t)xon * 1024;
	} else {
		if (json_object_get(o, "xon_kb") != NULL)
			return emu_err_set(err, "%s.xon_kb: only with \"xoff_kb\" (\"cable_m\" "
					   "derives it as XOFF - MTU)", path);
		rc = emu_key_num_req(o, path, &emu_tm_pfc_table, "cable_m", &cable_m, err);
		if (rc != 0)
			return rc;
		fc->xoff_bytes = emu_tm_pfc_xoff_bytes(cable_m, pc->rate_bps, mtu);
		fc->xon_bytes = fc->xoff_bytes - mtu; /* xoff > 2.72 MTU */
	}
	fc->quanta = (uint16_t)quanta;
	fc->enabled = true;
	return 0;
}

int
emu_tm_prio_list(const json_t *v, const char *path, uint8_t *mask, struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	const json_t *e;
	int64_t prio;
	size_t i;
	int rc;

	rc = emu_json_expect_array(v, path, err);
	if (rc != 0)
		return rc;
	*mask = 0;
	json_array_foreach(v, i, e) {
		emu_json_path_idx(p, sizeof(p), path, i);
		rc = emu_key_int_value(e, p, &emu_tm_port_table, "lossless", &prio, err);
		if (rc != 0)
			return rc;
		if (*mask & (1u << prio))
			return emu_err_set(err, "%s: priority %lld is listed twice", p,
					   (long long)prio);
		*mask |= (uint8_t)(1u << prio);
	}
	return 0;
}

int
emu_tm_port_parse(const json_t *o, const char *path, uint32_t mtu, struct emu_tm_port_cfg *pc,
		  struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	double rate_gbps, delay_us, wd_ms;
	int64_t buffer_kb, queue_kb, queue_pkts, headroom_kb, w;
	const struct emu_key_table *t = &emu_tm_port_table;
	const char *sched;
	const json_t *v, *e;
	size_t i;
	int rc;

	rc = emu_key_num(o, path, t, "rate_gbps", &rate_gbps, err);
	if (rc == 0)
		rc = emu_key_int(o, path, t, "buffer_kb", &buffer_kb, err);
	if (rc == 0)
		rc = emu_key_int_def(o, path, t, "queue_kb", buffer_kb, &queue_kb, err);
	if (rc == 0)
		rc = emu_key_int(o, path, t, "queue_pkts", &queue_pkts, err);
	if (rc == 0)
		rc = emu_key_num(o, path, t, "delay_us", &delay_us, err);
	if (rc == 0)
		rc = emu_key_num(o, path, t, "pfc_watchdog_ms", &wd_ms, err);
	if (rc == 0)
		rc = emu_key_str(o, path, t, "scheduler", &sched, err);
	if (rc != 0)
		return rc;
	pc->pfc_watchdog_ns = (uint64_t)(wd_ms * 1e6 + 0.5);
	pc->rate_bps = (uint64_t)(rate_gbps * 1e9 + 0.5); /* >= 1000: the key's minimum */
	pc->limit_bytes = (uint64_t)buffer_kb * 1024;
	pc->queue_limit_bytes = (uint64_t)queue_kb * 1024;
	pc->queue_pkts = (uint32_t)queue_pkts;
	pc->delay_ns = (uint64_t)(delay_us * 1e3 + 0.5);
	pc->scheduler = strcmp(sched, "dwrr") == 0 ? EMU_TM_SCHED_DWRR : EMU_TM_SCHED_STRICT;
	v = json_object_get(o, "weights");
	if (v != NULL) {
		emu_json_path(p, sizeof(p), path, "weights");
		if (pc->scheduler != EMU_TM_SCHED_DWRR)
			return emu_err_set(err, "%s: only with \"scheduler\": \"dwrr\"", p);
		if (!json_is_array(v))
			return emu_err_set(err, "%s: must be an array of 8 integers (one per "
					   "priority), got %s", p, emu_json_type_name(v));
		if (json_array_size(v) != EMU_TM_N_PRIO)
			return emu_err_set(err,
					   "%s: must have 8 weights (one per priority), got %zu", p,
					   json_array_size(v));
		json_array_foreach(v, i, e) {
			char pe[EMU_JSON_PATH_LEN];

			emu_json_path_idx(pe, sizeof(pe), p, i);
			rc = emu_key_int_value(e, pe, t, "weights", &w, err);
			if (rc != 0)
				return rc;
			pc->weights[i] = (uint16_t)w;
		}
	}
	v = json_object_get(o, "lossless");
	if (v != NULL) {
		emu_json_path(p, sizeof(p), path, "lossless");
		rc = emu_tm_prio_list(v, p, &pc->lossless_mask, err);
		if (rc != 0)
			return rc;
	}
	v = json_object_get(o, "ecn");
	if (v != NULL) {
		emu_json_path(p, sizeof(p), path, "ecn");
		rc = emu_tm_ecn_parse(v, p, &pc->ecn, err);
		if (rc != 0)
			return rc;
	}
	v = json_object_get(o, "pfc");
	if (v != NULL) {
		emu_json_path(p, sizeof(p), path, "pfc");
		rc = emu_tm_pfc_parse(v, p, mtu, pc, err);
		if (rc != 0)
			return rc;
	}
	/* Default headroom: what NVIDIA's formula says is in flight after XOFF. */
	rc = emu_key_int_def(o, path, t, "headroom_kb",
			     pc->pfc.enabled ? (int64_t)((pc->pfc.xoff_bytes + 1023) / 1024) : 0,
			     &headroom_kb, err);
	if (rc != 0)
		return rc;
	pc->headroom_bytes = (uint64_t)headroom_kb * 1024;
	return 0;
}

static int
emu_tm_buffer_parse(const json_t *o, struct emu_tm_buffer_cfg *bc, struct emu_err *err)
{
	const struct emu_key_table *t = &emu_tm_buffer_table;
	int64_t total_kb, cell;
	const char *mode;
	int rc;

	rc = emu_json_expect_object(o, "tm.buffer", err);
	if (rc == 0)
		rc = emu_keys_check(o, "tm.buffer", t, err);
	if (rc == 0)
		rc = emu_key_int_def(o, "tm.buffer", t, "total_kb", (int64_t)(bc->total_bytes / 1024),
				     &total_kb, err);
	if (rc == 0)
		rc = emu_key_str(o, "tm.buffer", t, "mode", &mode, err);
	if (rc == 0)
		rc = emu_key_num(o, "tm.buffer", t, "alpha", &bc->alpha, err);
	if (rc == 0)
		rc = emu_key_int(o, "tm.buffer", t, "cell_bytes", &cell, err);
	if (rc != 0)
		return rc;
	if (strcmp(mode, "static") == 0 && json_object_get(o, "alpha") != NULL)
		return emu_err_set(err, "tm.buffer.alpha: only with \"mode\": \"dynamic\"");
	bc->dynamic = strcmp(mode, "dynamic") == 0;
	bc->total_bytes = (uint64_t)total_kb * 1024;
	bc->cell_bytes = (uint32_t)cell;
	return 0;
}

int
emu_tm_cfg_parse(const json_t *tm, unsigned int n_ports, const char *const *names,
		 const uint32_t *mtus, struct emu_tm_cfg *cfg, struct emu_err *err)
{
	bool seen[EMU_MAX_PORTS] = { false };
	char path[EMU_JSON_PATH_LEN];
	const json_t *ports, *o;
	const char *name;
	unsigned int p;
	size_t idx;
	int rc;

	emu_tm_cfg_default(cfg, n_ports);
	if (tm == NULL)
		return 0;
	rc = emu_json_expect_object(tm, "tm", err);
	if (rc == 0)
		rc = emu_keys_check(tm, "tm", &emu_tm_table, err);
	if (rc != 0)
		return rc;
	ports = json_object_get(tm, "ports");
	if (ports != NULL) {
		rc = emu_json_expect_array(ports, "tm.ports", err);
		if (rc != 0)
			return rc;
	}
	json_array_foreach(ports, idx, o) {
		emu_json_path_idx(path, sizeof(path), "tm.ports", idx);
		rc = emu_json_expect_object(o, path, err);
		if (rc == 0)
			rc = emu_keys_check(o, path, &emu_tm_port_table, err);
		if (rc == 0)
			rc = emu_key_str(o, path, &emu_tm_port_table, "port", &name, err);
		if (rc != 0)
			return rc;
		for (p = 0; p < n_ports; p++)
			if (strcmp(names[p], name) == 0)
				break;
		if (p == n_ports)
			return emu_err_set(err, "%s.port: no port named \"%s\" in ports[]", path,
					   name);
		if (seen[p])
			return emu_err_set(err, "%s.port: port \"%s\" is configured twice", path,
					   name);
		seen[p] = true;
		rc = emu_tm_port_parse(o, path, mtus != NULL ? mtus[p] : 9216, &cfg->ports[p], err);
		if (rc != 0)
			return rc;
	}
	/* The shared buffer defaults to the sum of the port limits. */
	cfg->buffer.total_bytes = 0;
	for (p = 0; p < n_ports; p++)
		cfg->buffer.total_bytes += cfg->ports[p].limit_bytes;
	o = json_object_get(tm, "buffer");
	if (o != NULL)
		return emu_tm_buffer_parse(o, &cfg->buffer, err);
	return 0;
}

uint64_t
emu_tm_max_queued_pkts(const struct emu_tm_cfg *cfg)
{
	uint64_t slots = 0, bytes = cfg->buffer.total_bytes, per_pkt;
	unsigned int i;

	for (i = 0; i < cfg->n_ports; i++) {
		slots += cfg->ports[i].queue_pkts;
		bytes += cfg->ports[i].headroom_bytes *
			 (uint64_t)__builtin_popcount(cfg->ports[i].lossless_mask);
	}
	per_pkt = emu_tm_cells(&cfg->buffer, EMU_TM_MIN_FRAME_BYTES);
	return RTE_MIN(slots, bytes / per_pkt + cfg->n_ports);
}

uint32_t
emu_tm_wire_slots(const struct emu_tm_port_cfg *pc)
{
	uint64_t slots;

	slots = (uint64_t)((double)pc->rate_bps * (double)pc->delay_ns / 1e9 /
			   (8.0 * (EMU_TM_MIN_FRAME_BYTES + EMU_TM_WIRE_OVERHEAD_BYTES)));
	slots += pc->queue_pkts + EMU_TM_CTRL_SLOTS;
	return slots > (1u << 24) ? 1u << 24 : (uint32_t)slots;
}

/*
 * Frames on the wire at once: at most one per minimum frame time during delay + one wire time,
 * so a delay line of S slots carries delay_ns <= (S - 1) x wire time of a minimum frame.
 */
int
emu_tm_delay_fits(const struct emu_tm_port_cfg *sized, uint64_t rate_bps, uint64_t delay_ns,
		  const char *path, struct emu_err *err)
{
	uint64_t slots = rte_align32pow2(RTE_MAX(emu_tm_wire_slots(sized), 2u));
	uint64_t min_ps = emu_tm_wire_ps(EMU_TM_MIN_FRAME_BYTES, rate_bps);
	double max_ns = (double)(slots - 1) * (double)min_ps / 1e3;

	if ((double)delay_ns <= max_ns)
		return 0;
	return emu_err_set(err, "%s: a delay of %.3f us at %g Gb/s needs a delay line of %.0f slots "
			   "(one per minimum frame on the wire); the pipeline sized it for %" PRIu64
			   " (at most %.3f us at that rate): set a larger delay_us (or rate_gbps) "
			   "for the port in the pipeline", path, (double)delay_ns / 1e3,
			   (double)rate_bps / 1e9, (double)delay_ns * 1e3 / (double)min_ps + 1,
			   slots, max_ns / 1e3);
}
