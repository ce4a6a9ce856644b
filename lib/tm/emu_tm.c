/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Over 600 lines (1339): the whole traffic manager; issue 12 splits it into config, buffer,
 * scheduler, link, ECN, PFC and storm files under 500 lines each, with the layer split.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/core/emu_json.h"
#include "lib/proto/roce_rewrite.h"
#include "emu_tm.h"

const char *const emu_tm_ctr_names[EMU_TM_CTR_MAX] = {
#define EMU_TM_CTR_NAME(e, s) s,
	EMU_TM_FOREACH_CTR(EMU_TM_CTR_NAME)
#undef EMU_TM_CTR_NAME
};

/* A fixed-capacity ring of mbuf pointers; single owner, so no atomics (rte_ring's
 * MP/MC machinery and its separate memzone buy nothing here). */
struct emu_tm_fifo {
	struct rte_mbuf **slots;
	uint32_t mask;
	uint32_t head; /* next to pop */
	uint32_t tail; /* next to push */
};

struct emu_tm_port {
	struct emu_tm_port_cfg cfg;
	/* Egress side */
	struct emu_tm_fifo q[EMU_TM_N_Q]; /* waiting for the link, one per priority + control */
	struct emu_tm_fifo wire;          /* serialised, waiting for departure (delay line) */
	uint32_t nonempty;                /* bit q: q[q] holds a packet (the scheduler's view) */
	uint64_t q_bytes[EMU_TM_N_Q];     /* raw frame bytes, for ECN and stats */
	uint64_t all_q_bytes;             /* their sum (the port's queue, for its maximum) */
	uint64_t q_cells[EMU_TM_N_Q];     /* shared-buffer bytes in cells (headroom excluded) */
	uint64_t max_q_bytes[EMU_TM_N_Q];
	uint64_t port_cells;              /* sum of q_cells */
	uint32_t port_pkts;               /* data packets queued (control queue excluded) */
	int64_t deficit[EMU_TM_N_PRIO];   /* DWRR */
	uint8_t rr;                       /* DWRR: queue whose turn it is */
	bool rr_fresh;                    /* DWRR: rr got its quantum for this turn */
	/* When the link finishes its current frame: ns plus picoseconds (0-999). Times are
	 * epoch-based nanoseconds, so a single picosecond counter would overflow 64 bits. */
	uint64_t link_free_ns;
	uint32_t link_free_ps;
	uint64_t busy_ps; /* exact; the busy_ns counter is derived from it */
	/* Received PFC/PAUSE: queue q may not start before pause_until_ns[q]. */
	uint64_t pause_until_ns[EMU_TM_N_PRIO];
	uint64_t pause_start_ns[EMU_TM_N_PRIO];
	uint64_t paused_ns[EMU_TM_N_PRIO]; /* closed pause intervals */
	/* Ingress side: lossless bytes that arrived here and are still queued somewhere. */
	uint64_t ing_bytes[EMU_TM_N_PRIO];
	uint64_t hr_cells[EMU_TM_N_PRIO];  /* headroom in use */
	bool xoff[EMU_TM_N_PRIO];
	uint64_t xoff_start_ns[EMU_TM_N_PRIO];
	uint64_t xoff_ns[EMU_TM_N_PRIO];   /* closed XOFF intervals */
	uint64_t refresh_ns[EMU_TM_N_PRIO]; /* re-send XOFF at this time */
	uint16_t pfc_pending;              /* priorities whose state must be sent */
	/* Profile-driven link state and PFC storm. */
	bool link_up;
	bool storm_on;
	uint16_t storm_vector;
	bool storm_pause;      /* 802.3x PAUSE frames instead of PFC */
	uint16_t storm_quanta;
	uint64_t storm_pps;
	uint64_t storm_t0_ns;  /* frame k of the storm is due at t0 + k * 1e9 / pps */
	uint64_t storm_k;
	uint64_t storm_next_ns;
	/* PFC watchdog, per priority */
	uint64_t wd_start_ns[EMU_TM_N_PRIO]; /* start of the current continuous pause */
	uint64_t wd_last_ns[EMU_TM_N_PRIO];  /* last ignored frame while tripped */
	bool wd_tripped[EMU_TM_N_PRIO];
	uint64_t ctr[EMU_TM_CTR_MAX];
	/* emu_tm_wire_ps() of the last frame (its length and the rate then): frames of one
	 * length follow each other, and the 64-bit division costs more than the rest. */
	uint32_t memo_len;
	uint64_t memo_rate_bps, memo_wire_ps;
};

struct emu_tm {
	unsigned int n_ports;
	const struct emu_dropper *drop; /* the switch's drop path */
	uint32_t reason_base;           /* reason id of port 0's counter 0 */
	struct emu_tm_buffer_cfg buf;
	uint64_t used_cells; /* shared buffer in use */
	struct emu_tm_port ports[EMU_MAX_PORTS];
};

/* Every TM drop: through the switch's drop path, counted in the port's counter @p reason. */
static inline void
emu_tm_drop(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, unsigned int reason)
{
	emu_drop(tm->drop, m, tm->reason_base + (uint32_t)port * EMU_TM_CTR_MAX + reason,
		 &tm->ports[port].ctr[reason]);
}

void
emu_tm_set_dropper(struct emu_tm *tm, const struct emu_dropper *d, uint32_t reason_base)
{
	tm->drop = d;
	tm->reason_base = reason_base;
}

static uint32_t
emu_tm_fifo_count(const struct emu_tm_fifo *f)
{
	return f->tail - f->head;
}

static int
emu_tm_fifo_init(struct emu_tm_fifo *f, uint32_t cap)
{
	uint32_t n = rte_align32pow2(cap < 2 ? 2 : cap);

	f->slots = calloc(n, sizeof(*f->slots));
	if (f->slots == NULL)
		return -ENOMEM;
	f->mask = n - 1;
	f->head = 0;
	f->tail = 0;
	return 0;
}

static void
emu_tm_fifo_fini(struct emu_tm_fifo *f)
{
	while (f->slots != NULL && emu_tm_fifo_count(f) > 0)
		rte_pktmbuf_free(f->slots[f->head++ & f->mask]);
	free(f->slots);
	f->slots = NULL;
}

void
emu_tm_port_cfg_default(struct emu_tm_port_cfg *pc)
{
	unsigned int i;

	memset(pc, 0, sizeof(*pc));
	pc->rate_bps = 100000000000ULL;
	pc->limit_bytes = 4ULL << 20;
	pc->queue_limit_bytes = pc->limit_bytes;
	pc->queue_pkts = 4096;
	pc->delay_ns = 0;
	pc->scheduler = EMU_TM_SCHED_STRICT;
	pc->lossless_mask = 1u << 3;
	for (i = 0; i < EMU_TM_N_PRIO; i++)
		pc->weights[i] = 1;
	pc->pfc.quanta = 0xFFFF;
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
	cfg->buffer.alpha = 1.0;
	cfg->buffer.cell_bytes = 1;
}

static const char *const emu_tm_keys[] = { "ports", "buffer", NULL };
static const char *const emu_tm_buffer_keys[] = { "total_kb", "mode", "alpha", "cell_bytes", NULL };
static const char *const emu_tm_port_keys[] = {
	"port", "rate_gbps", "buffer_kb", "queue_kb", "queue_pkts", "delay_us", "headroom_kb",
	"scheduler", "weights", "lossless", "ecn", "pfc", "pfc_watchdog_ms", NULL
};
static const char *const emu_tm_ecn_keys[] = { "kmin_kb", "kmax_kb", "pmax", "mark_at", NULL };
static const char *const emu_tm_pfc_keys[] = { "xoff_kb", "xon_kb", "cable_m", "quanta", NULL };

#define EMU_TM_MAX_RATE_GBPS 1600.0
#define EMU_TM_MAX_DELAY_US 10000000.0 /* 10 s */
#define EMU_TM_MAX_KB (16 * 1024 * 1024)

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
		rc = emu_json_check_keys(o, path, emu_tm_ecn_keys, err);
	if (rc == 0)
		rc = emu_json_get_int(o, path, "kmin_kb", true, 0, 0, EMU_TM_MAX_KB, &kmin, err);
	if (rc == 0)
		rc = emu_json_get_int(o, path, "kmax_kb", true, 0, 0, EMU_TM_MAX_KB, &kmax, err);
	if (rc == 0)
		rc = emu_json_get_num(o, path, "pmax", true, 0, 0.0, false, 1.0, &ec->pmax, err);
	if (rc == 0)
		rc = emu_json_get_str(o, path, "mark_at", false, "dequeue", &at, err);
	if (rc != 0)
		return rc;
	if (kmax <= kmin)
		return emu_err_set(err, "%s.kmax_kb: must be > kmin_kb (%lld), got %lld", path,
				   (long long)kmin, (long long)kmax);
	if (strcmp(at, "dequeue") != 0 && strcmp(at, "enqueue") != 0)
		return emu_err_set(err,
				   "%s.mark_at: must be \"dequeue\" or \"enqueue\", got \"%s\"",
				   path, at);
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
		rc = emu_json_check_keys(o, path, emu_tm_pfc_keys, err);
	if (rc == 0)
		rc = emu_json_get_int(o, path, "quanta", false, 0xFFFF, 1, 0xFFFF, &quanta, err);
	if (rc != 0)
		return rc;
	has_xoff = json_object_get(o, "xoff_kb") != NULL;
	has_cable = json_object_get(o, "cable_m") != NULL;
	if (has_xoff == has_cable)
		return emu_err_set(err,
				   "%s: give either \"xoff_kb\" (and \"xon_kb\") or \"cable_m\"",
				   path);
	if (has_xoff) {
		rc = emu_json_get_int(o, path, "xoff_kb", true, 0, 1, EMU_TM_MAX_KB, &xoff, err);
		if (rc == 0)
			rc = emu_json_get_int(o, path, "xon_kb", true, 0, 0, EMU_TM_MAX_KB, &xon,
					      err);
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
		rc = emu_json_get_num(o, path, "cable_m", true, 0, 0.0, false, 100000.0,
				      &cable_m, err);
		if (rc != 0)
			return rc;
		fc->xoff_bytes = emu_tm_pfc_xoff_bytes(cable_m, pc->rate_bps, mtu);
		fc->xon_bytes = fc->xoff_bytes - mtu; /* xoff > 2.72 MTU */
	}
	fc->quanta = (uint16_t)quanta;
	fc->enabled = true;
	return 0;
}

static int
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
		rc = emu_json_int_value(e, p, 0, EMU_TM_N_PRIO - 1, &prio, err);
		if (rc != 0)
			return rc;
		if (*mask & (1u << prio))
			return emu_err_set(err, "%s: priority %lld is listed twice", p,
					   (long long)prio);
		*mask |= (uint8_t)(1u << prio);
	}
	return 0;
}

static int
emu_tm_port_parse(const json_t *o, const char *path, uint32_t mtu, struct emu_tm_port_cfg *pc,
		  struct emu_err *err)
{
	char p[EMU_JSON_PATH_LEN];
	double rate_gbps, delay_us, wd_ms;
	int64_t buffer_kb, queue_kb, queue_pkts, headroom_kb, w;
	const char *sched;
	const json_t *v, *e;
	size_t i;
	int rc;

	rc = emu_json_get_num(o, path, "rate_gbps", false, (double)pc->rate_bps / 1e9, 0.0, true,
			      EMU_TM_MAX_RATE_GBPS, &rate_gbps, err);
	if (rc == 0)
		rc = emu_json_get_int(o, path, "buffer_kb", false,
				      (int64_t)(pc->limit_bytes / 1024), 1, EMU_TM_MAX_KB,
				      &buffer_kb, err);
	if (rc == 0)
		rc = emu_json_get_int(o, path, "queue_kb", false, buffer_kb, 1, EMU_TM_MAX_KB,
				      &queue_kb, err);
	if (rc == 0)
		rc = emu_json_get_int(o, path, "queue_pkts", false, pc->queue_pkts, 16, 1 << 24,
				      &queue_pkts, err);
	if (rc == 0)
		rc = emu_json_get_num(o, path, "delay_us", false, (double)pc->delay_ns / 1e3, 0.0,
				      false, EMU_TM_MAX_DELAY_US, &delay_us, err);
	if (rc == 0)
		rc = emu_json_get_num(o, path, "pfc_watchdog_ms", false, 0.0, 0.0, false, 100000.0,
				      &wd_ms, err);
	if (rc == 0)
		rc = emu_json_get_str(o, path, "scheduler", false, "strict", &sched, err);
	if (rc != 0)
		return rc;
	pc->pfc_watchdog_ns = (uint64_t)(wd_ms * 1e6 + 0.5);
	pc->rate_bps = (uint64_t)(rate_gbps * 1e9 + 0.5);
	if (pc->rate_bps < 1000)
		return emu_err_set(err, "%s.rate_gbps: must be at least 1e-6 (1 kb/s), got %g",
				   path, rate_gbps);
	pc->limit_bytes = (uint64_t)buffer_kb * 1024;
	pc->queue_limit_bytes = (uint64_t)queue_kb * 1024;
	pc->queue_pkts = (uint32_t)queue_pkts;
	pc->delay_ns = (uint64_t)(delay_us * 1e3 + 0.5);
	if (strcmp(sched, "strict") == 0)
		pc->scheduler = EMU_TM_SCHED_STRICT;
	else if (strcmp(sched, "dwrr") == 0)
		pc->scheduler = EMU_TM_SCHED_DWRR;
	else
		return emu_err_set(err, "%s.scheduler: must be \"strict\" or \"dwrr\", got \"%s\"",
				   path, sched);
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
			rc = emu_json_int_value(e, pe, 1, 1000, &w, err);
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
	rc = emu_json_get_int(o, path, "headroom_kb", false,
			      pc->pfc.enabled ? (int64_t)((pc->pfc.xoff_bytes + 1023) / 1024) : 0,
			      0, EMU_TM_MAX_KB, &headroom_kb, err);
	if (rc != 0)
		return rc;
	pc->headroom_bytes = (uint64_t)headroom_kb * 1024;
	return 0;
}

static int
emu_tm_buffer_parse(const json_t *o, struct emu_tm_buffer_cfg *bc, struct emu_err *err)
{
	int64_t total_kb, cell;
	const char *mode;
	int rc;

	rc = emu_json_expect_object(o, "tm.buffer", err);
	if (rc == 0)
		rc = emu_json_check_keys(o, "tm.buffer", emu_tm_buffer_keys, err);
	if (rc == 0)
		rc = emu_json_get_int(o, "tm.buffer", "total_kb", false,
				      (int64_t)(bc->total_bytes / 1024), 1, EMU_TM_MAX_KB * 16LL,
				      &total_kb, err);
	if (rc == 0)
		rc = emu_json_get_str(o, "tm.buffer", "mode", false, "static", &mode, err);
	if (rc == 0)
		rc = emu_json_get_num(o, "tm.buffer", "alpha", false, 1.0, 0.0, true, 64.0,
				      &bc->alpha, err);
	if (rc == 0)
		rc = emu_json_get_int(o, "tm.buffer", "cell_bytes", false, 1, 1, 4096, &cell, err);
	if (rc != 0)
		return rc;
	if (strcmp(mode, "static") != 0 && strcmp(mode, "dynamic") != 0)
		return emu_err_set(err,
				   "tm.buffer.mode: must be \"static\" or \"dynamic\", got \"%s\"",
				   mode);
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
		rc = emu_json_check_keys(tm, "tm", emu_tm_keys, err);
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
			rc = emu_json_check_keys(o, path, emu_tm_port_keys, err);
		if (rc == 0)
			rc = emu_json_get_str(o, path, "port", true, NULL, &name, err);
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

static uint64_t
emu_tm_cells(const struct emu_tm_buffer_cfg *bc, uint32_t len)
{
	uint32_t cb = bc->cell_bytes;

	if ((cb & (cb - 1)) == 0) /* 1 (no cells) or a power of two: no division */
		return ((uint64_t)len + cb - 1) & ~(uint64_t)(cb - 1);
	return (uint64_t)(len + cb - 1) / cb * cb;
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

struct emu_tm *
emu_tm_create(const struct emu_tm_cfg *cfg, struct emu_err *err)
{
	struct emu_tm *tm;
	unsigned int i, q;

	tm = calloc(1, sizeof(*tm));
	if (tm == NULL)
		goto nomem;
	tm->n_ports = cfg->n_ports;
	tm->buf = cfg->buffer;
	for (i = 0; i < cfg->n_ports; i++) {
		struct emu_tm_port *p = &tm->ports[i];

		p->cfg = cfg->ports[i];
		emu_tm_ecn_ramp(&p->cfg.ecn); /* derived: callers may fill the config directly */
		p->link_up = true;
		for (q = 0; q < EMU_TM_N_Q; q++)
			if (emu_tm_fifo_init(&p->q[q], q == EMU_TM_CTRL_Q ? EMU_TM_CTRL_SLOTS :
						       p->cfg.queue_pkts) != 0)
				goto nomem;
		if (emu_tm_fifo_init(&p->wire, emu_tm_wire_slots(&p->cfg)) != 0)
			goto nomem;
	}
	return tm;
nomem:
	emu_tm_free(tm);
	emu_err_setrc(err, -ENOMEM, "tm: out of memory allocating queues");
	return NULL;
}

void
emu_tm_free(struct emu_tm *tm)
{
	unsigned int i, q;

	if (tm == NULL)
		return;
	for (i = 0; i < tm->n_ports; i++) {
		for (q = 0; q < EMU_TM_N_Q; q++)
			emu_tm_fifo_fini(&tm->ports[i].q[q]);
		emu_tm_fifo_fini(&tm->ports[i].wire);
	}
	free(tm);
}

/*
 * RED ramp on the queue's instantaneous length q (bytes), as in PROTOCOL.md:
 *     p = 0                                   q <= kmin
 *     p = pmax * (q - kmin) / (kmax - kmin)   kmin < q <= kmax
 *     p = 1                                   q > kmax
 * ECT packets only: a Not-ECT packet is never marked (ecn_not_ect counts those that
 * found q above kmin), a CE packet stays CE (ecn_ce_already). The draw is uniform in
 * [0, 1) from the stream the caller passes in; a packet is marked when draw < p.
 */
static void
emu_tm_ecn(struct emu_tm_port *p, struct rte_mbuf *m, uint64_t q, struct emu_rng *rng)
{
	const struct emu_tm_ecn_cfg *ec = &p->cfg.ecn;
	struct emu_pkt_meta *meta = emu_meta(m);

	if (q <= ec->kmin_bytes)
		return;
	if (!(meta->flags & EMU_META_PARSED) || meta->pkt.ip_version == 0 ||
	    meta->pkt.ecn == 0) {
		p->ctr[EMU_TM_CTR_ECN_NOT_ECT] += 1;
		return;
	}
	if (meta->pkt.ecn == 3) {
		p->ctr[EMU_TM_CTR_ECN_CE_ALREADY] += 1;
		return;
	}
	/* the ramp (above kmax every ECT packet is marked) */
	if (q <= ec->kmax_bytes && !((emu_rng_u64(rng) >> 16) < emu_tm_red_q48(ec, q)))
		return;
	/* Headers are in the first segment (the parser linearises only short ones). */
	if (m->data_len < (uint32_t)meta->pkt.l3_off + 40 ||
	    roce_set_ecn(rte_pktmbuf_mtod(m, uint8_t *), &meta->pkt, 3) != 0) {
		p->ctr[EMU_TM_CTR_ECN_NOT_ECT] += 1;
		return;
	}
	p->ctr[EMU_TM_CTR_ECN_MARKED] += 1;
	meta->trace.marks |= EMU_TRACE_CE_RED;
}

bool
emu_tm_enqueue(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, uint64_t now_ns,
	       struct emu_rng *rng)
{
	struct emu_tm_port *p = &tm->ports[port];
	struct emu_pkt_meta *meta = emu_meta(m);
	uint32_t len = emu_wire_len(m);
	struct emu_tm_port *in = NULL;
	unsigned int q, reason = EMU_TM_CTR_MAX;
	uint64_t cells;

	if (!p->link_up) {
		emu_tm_drop(tm, port, m, EMU_TM_CTR_DROP_LINK_DOWN);
		return false;
	}
	if (meta->flags & EMU_META_MACCTL) {
		q = EMU_TM_CTRL_Q;
		if (emu_tm_fifo_count(&p->q[q]) > p->q[q].mask)
			reason = EMU_TM_CTR_DROP_QUEUE_FULL;
		cells = 0;
	} else {
		q = meta->prio & (EMU_TM_N_PRIO - 1);
		cells = emu_tm_cells(&tm->buf, len);
		if (meta->in_port < tm->n_ports &&
		    (tm->ports[meta->in_port].cfg.lossless_mask & (1u << q)))
			in = &tm->ports[meta->in_port];
		meta->flags &= (uint8_t)~EMU_META_HEADROOM;
		if (p->port_pkts >= p->cfg.queue_pkts)
			reason = EMU_TM_CTR_DROP_QUEUE_FULL;
		else if (p->port_cells + cells > p->cfg.limit_bytes)
			reason = EMU_TM_CTR_DROP_QUEUE_FULL;
		else if (!tm->buf.dynamic && p->q_cells[q] + cells > p->cfg.queue_limit_bytes)
			reason = EMU_TM_CTR_DROP_QUEUE_FULL;
		else if (tm->used_cells + cells > tm->buf.total_bytes)
			reason = EMU_TM_CTR_DROP_BUFFER_FULL;
		/* Dynamic threshold (Choudhury-Hahne): queue <= alpha * free shared buffer. */
		else if (tm->buf.dynamic &&
			 (double)(p->q_cells[q] + cells) >
				 tm->buf.alpha * (double)(tm->buf.total_bytes - tm->used_cells))
			reason = EMU_TM_CTR_DROP_QUEUE_FULL;
		/* Without headroom (no PFC configured) a lossless frame is dropped like a lossy
		 * one, under the reason the shared buffer gave. */
		if (reason != EMU_TM_CTR_MAX && in != NULL && in->cfg.headroom_bytes > 0) {
			/* A lossless packet the shared buffer refuses goes into the headroom
			 * of its ingress port (only the slot limit is absolute). */
			if (p->port_pkts >= p->cfg.queue_pkts)
				reason = EMU_TM_CTR_DROP_QUEUE_FULL;
			else if (in->hr_cells[q] + cells > in->cfg.headroom_bytes)
				reason = EMU_TM_CTR_DROP_HEADROOM_OVERFLOW;
			else {
				reason = EMU_TM_CTR_MAX;
				meta->flags |= EMU_META_HEADROOM;
			}
		}
	}
	if (reason != EMU_TM_CTR_MAX) {
		emu_tm_drop(tm, port, m, reason);
		return false;
	}
	if (q != EMU_TM_CTRL_Q) {
		if (meta->flags & EMU_META_HEADROOM) {
			in->hr_cells[q] += cells;
			in->ctr[EMU_TM_CTR_HEADROOM_PKTS] += 1;
		} else {
			tm->used_cells += cells;
			p->q_cells[q] += cells;
			p->port_cells += cells;
		}
		p->port_pkts += 1;
		if (p->cfg.ecn.enabled && p->cfg.ecn.at_enqueue)
			emu_tm_ecn(p, m, p->q_bytes[q], rng);
		if (in != NULL) {
			in->ing_bytes[q] += len;
			/* Crossing XOFF: tell the sender on the ingress port to pause. */
			if (in->cfg.pfc.enabled && !in->xoff[q] &&
			    in->ing_bytes[q] > in->cfg.pfc.xoff_bytes) {
				in->xoff[q] = true;
				in->xoff_start_ns[q] = now_ns;
				in->refresh_ns[q] = now_ns;
				in->pfc_pending |= (uint16_t)(1u << q);
			}
		}
	}
	meta->ts_ns = now_ns;
	meta->trace.t_enq_ns = now_ns;
	meta->trace.qdepth_bytes = (uint32_t)RTE_MIN(p->q_bytes[q], (uint64_t)UINT32_MAX);
	p->q[q].slots[p->q[q].tail++ & p->q[q].mask] = m;
	p->nonempty |= 1u << q;
	p->q_bytes[q] += len;
	p->all_q_bytes += len;
	p->ctr[EMU_TM_CTR_ENQ_PKTS] += 1;
	p->ctr[EMU_TM_CTR_ENQ_BYTES] += len;
	if (p->q_bytes[q] > p->max_q_bytes[q])
		p->max_q_bytes[q] = p->q_bytes[q];
	if (p->all_q_bytes > p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES])
		p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES] = p->all_q_bytes;
	return true;
}

/* Earliest start of queue @p q's head: max(link free, arrival, pause end), as ns + ps. */
static inline void
emu_tm_start(const struct emu_tm_port *p, unsigned int q, uint64_t *ns, uint32_t *ps)
{
	uint64_t arrival_ns = emu_meta(p->q[q].slots[p->q[q].head & p->q[q].mask])->ts_ns;

	if (q != EMU_TM_CTRL_Q && p->pause_until_ns[q] > arrival_ns)
		arrival_ns = p->pause_until_ns[q];
	if (arrival_ns > p->link_free_ns ||
	    (arrival_ns == p->link_free_ns && p->link_free_ps == 0)) {
		*ns = arrival_ns;
		*ps = 0;
	} else {
		*ns = p->link_free_ns;
		*ps = p->link_free_ps;
	}
}

/*
 * The queue whose head starts next and when: among the queues whose head could start
 * earliest, the control queue first, then the scheduler's choice. Returns -1 when
 * every queue is empty.
 */
static int
emu_tm_pick(struct emu_tm_port *p, uint64_t *start_ns, uint32_t *start_ps, bool commit)
{
	uint64_t s_ns[EMU_TM_N_Q], best_ns = UINT64_MAX;
	uint32_t s_ps[EMU_TM_N_Q], best_ps = 0;
	unsigned int q, eligible = 0;
	uint32_t left = p->nonempty;
	int chosen = -1;

	/* only the queues that hold packets: most of the time one or two of nine */
	while (left != 0) {
		q = (unsigned int)__builtin_ctz(left);
		left &= left - 1;
		emu_tm_start(p, q, &s_ns[q], &s_ps[q]);
		if (s_ns[q] < best_ns || (s_ns[q] == best_ns && s_ps[q] < best_ps)) {
			best_ns = s_ns[q];
			best_ps = s_ps[q];
			eligible = 0;
		}
		if (s_ns[q] == best_ns && s_ps[q] == best_ps)
			eligible |= 1u << q;
	}
	if (eligible == 0)
		return -1;
	*start_ns = best_ns;
	*start_ps = best_ps;
	if (eligible & (1u << EMU_TM_CTRL_Q))
		return EMU_TM_CTRL_Q;
	if (p->cfg.scheduler == EMU_TM_SCHED_STRICT || !commit)
		return 31 - __builtin_clz(eligible);
	/* DWRR: the turn stays with a queue while its deficit covers its head; a queue that
	 * runs empty loses its deficit. Terminates: every round adds weight x quantum. */
	for (;;) {
		q = p->rr;
		if (eligible & (1u << q)) {
			const struct emu_tm_fifo *f = &p->q[q];
			uint32_t len = emu_wire_len(f->slots[f->head & f->mask]);

			if (!p->rr_fresh) {
				p->deficit[q] +=
					(int64_t)p->cfg.weights[q] * EMU_TM_DWRR_QUANTUM_BYTES;
				p->rr_fresh = true;
			}
			if (p->deficit[q] >= (int64_t)len) {
				p->deficit[q] -= len;
				chosen = (int)q;
				break;
			}
		} else if (emu_tm_fifo_count(&p->q[q]) == 0) {
			p->deficit[q] = 0;
		}
		p->rr = (uint8_t)((q + 1) % EMU_TM_N_PRIO);
		p->rr_fresh = false;
	}
	return chosen;
}

/* Bytes of a lossless priority that arrived on @p in left its queue at @p now_ns. */
static void
emu_tm_ingress_release(struct emu_tm_port *in, unsigned int q, uint32_t len, uint64_t now_ns)
{
	in->ing_bytes[q] -= len;
	if (in->xoff[q] && in->ing_bytes[q] < in->cfg.pfc.xon_bytes) {
		in->xoff[q] = false;
		/* In live mode a frame may start on the link (now_ns = its start time) before
		 * the time of the enqueue that raised XOFF: never count a negative interval. */
		if (now_ns > in->xoff_start_ns[q])
			in->xoff_ns[q] += now_ns - in->xoff_start_ns[q];
		in->pfc_pending |= (uint16_t)(1u << q);
	}
}

/* A packet of queue @p q (not the control queue) left it at @p now_ns: give back its buffer
 * cells (shared or headroom) and its ingress bytes, which may end an XOFF. */
static inline void
emu_tm_unaccount(struct emu_tm *tm, struct emu_tm_port *p, unsigned int q,
		 const struct emu_pkt_meta *meta, uint32_t len, uint64_t now_ns)
{
	uint64_t cells = emu_tm_cells(&tm->buf, len);
	struct emu_tm_port *in = NULL;

	if (meta->in_port < tm->n_ports &&
	    (tm->ports[meta->in_port].cfg.lossless_mask & (1u << q)))
		in = &tm->ports[meta->in_port];
	if (meta->flags & EMU_META_HEADROOM) {
		in->hr_cells[q] -= cells;
	} else {
		tm->used_cells -= cells;
		p->q_cells[q] -= cells;
		p->port_cells -= cells;
	}
	p->port_pkts -= 1;
	if (in != NULL)
		emu_tm_ingress_release(in, q, len, now_ns);
}

/* Start serialising every queued packet whose start time has come. */
static void
emu_tm_port_advance(struct emu_tm *tm, struct emu_tm_port *p, uint64_t now_ns,
		    struct emu_rng *rng)
{
	while (emu_tm_fifo_count(&p->wire) <= p->wire.mask) {
		uint64_t start_ns, wire_ps, sum_ps;
		struct emu_pkt_meta *meta;
		struct rte_mbuf *m;
		uint32_t start_ps, len;
		int q;

		if (p->nonempty != 0 && (p->nonempty & (p->nonempty - 1)) == 0) {
			/* one queue holds packets: emu_tm_pick() would choose it */
			q = __builtin_ctz(p->nonempty);
			emu_tm_start(p, (unsigned int)q, &start_ns, &start_ps);
		} else {
			q = emu_tm_pick(p, &start_ns, &start_ps, false);
		}
		if (q < 0 || start_ns > now_ns || (start_ns == now_ns && start_ps > 0))
			break;
		/* the strict scheduler's choice does not change when it commits */
		if (p->cfg.scheduler != EMU_TM_SCHED_STRICT)
			q = emu_tm_pick(p, &start_ns, &start_ps, true);
		m = p->q[q].slots[p->q[q].head & p->q[q].mask];
		meta = emu_meta(m);
		len = emu_wire_len(m);
		if (len != p->memo_len || p->cfg.rate_bps != p->memo_rate_bps) {
			p->memo_len = len;
			p->memo_rate_bps = p->cfg.rate_bps;
			p->memo_wire_ps = emu_tm_wire_ps(len, p->cfg.rate_bps);
		}
		wire_ps = p->memo_wire_ps;
		sum_ps = start_ps + wire_ps;
		p->link_free_ns = start_ns + sum_ps / 1000;
		p->link_free_ps = (uint32_t)(sum_ps % 1000);
		p->q[q].head++;
		if (emu_tm_fifo_count(&p->q[q]) == 0)
			p->nonempty &= ~(1u << q);
		p->q_bytes[q] -= len;
		p->all_q_bytes -= len;
		if (q != EMU_TM_CTRL_Q) {
			emu_tm_unaccount(tm, p, (unsigned int)q, meta, len, start_ns);
			/* the queue length the packet leaves behind */
			if (p->cfg.ecn.enabled && !p->cfg.ecn.at_enqueue)
				emu_tm_ecn(p, m, p->q_bytes[q], rng);
		}
		p->busy_ps += wire_ps;
		p->ctr[EMU_TM_CTR_BUSY_NS] = p->busy_ps / 1000;
		meta->trace.wait_ns = start_ns > meta->ts_ns ?
			(uint32_t)RTE_MIN(start_ns - meta->ts_ns, (uint64_t)UINT32_MAX) : 0;
		/* departure = finish rounded up to the ns, plus the propagation delay */
		meta->ts_ns = p->link_free_ns + (p->link_free_ps != 0) + p->cfg.delay_ns;
		p->wire.slots[p->wire.tail++ & p->wire.mask] = m;
	}
}

uint16_t
emu_tm_dequeue(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct rte_mbuf **out,
	       uint16_t max, struct emu_rng *rng)
{
	struct emu_tm_port *p = &tm->ports[port];
	uint64_t bytes = 0;
	uint16_t n = 0;

	/* nothing queued, nothing on the wire: what the rest would find (polled every pass) */
	if (p->nonempty == 0 && emu_tm_fifo_count(&p->wire) == 0)
		return 0;
	emu_tm_port_advance(tm, p, now_ns, rng);
	while (n < max && emu_tm_fifo_count(&p->wire) > 0) {
		struct rte_mbuf *m = p->wire.slots[p->wire.head & p->wire.mask];

		if (emu_meta(m)->ts_ns > now_ns)
			break;
		p->wire.head++;
		bytes += emu_wire_len(m);
		out[n++] = m;
	}
	/* Packets the delay line could not take before may start now. */
	if (n > 0)
		emu_tm_port_advance(tm, p, now_ns, rng);
	p->ctr[EMU_TM_CTR_DEQ_PKTS] += n;
	p->ctr[EMU_TM_CTR_DEQ_BYTES] += bytes;
	return n;
}

/* PFC watchdog (rule in emu_tm.h): whether a frame with time @p t for priority @p q is
 * honoured. */
static bool
emu_tm_watchdog(struct emu_tm_port *p, unsigned int q, uint16_t t, uint64_t now_ns)
{
	uint64_t w = p->cfg.pfc_watchdog_ns;

	if (p->wd_tripped[q]) {
		if (now_ns - p->wd_last_ns[q] < w) {
			p->wd_last_ns[q] = now_ns;
			p->ctr[EMU_TM_CTR_PFC_WATCHDOG_IGNORED] += 1;
			return false;
		}
		p->wd_tripped[q] = false;
	}
	if (t == 0)
		return true;
	if (p->pause_until_ns[q] <= now_ns) {
		p->wd_start_ns[q] = now_ns; /* a new continuous pause */
		return true;
	}
	if (now_ns - p->wd_start_ns[q] < w)
		return true;
	/* Trip: end the running pause now and ignore this frame. */
	p->paused_ns[q] += now_ns - p->pause_start_ns[q];
	p->pause_start_ns[q] = now_ns;
	p->pause_until_ns[q] = now_ns;
	p->wd_tripped[q] = true;
	p->wd_last_ns[q] = now_ns;
	p->ctr[EMU_TM_CTR_PFC_WATCHDOG_TRIPS] += 1;
	return false;
}

void
emu_tm_pause_rx(struct emu_tm *tm, uint16_t port, uint64_t now_ns, uint16_t opcode,
		uint16_t enable_vector, const uint16_t quanta[EMU_TM_N_PRIO], struct emu_rng *rng)
{
	struct emu_tm_port *p = &tm->ports[port];
	unsigned int q;

	/* Packets that could start before this frame arrived have started. */
	emu_tm_port_advance(tm, p, now_ns, rng);
	if (opcode == EMU_TM_MACCTL_OPCODE_PAUSE)
		p->ctr[EMU_TM_CTR_PAUSE_RX] += 1;
	else if (opcode == EMU_TM_MACCTL_OPCODE_PFC)
		p->ctr[EMU_TM_CTR_PFC_RX] += 1;
	else
		return;
	for (q = 0; q < EMU_TM_N_PRIO; q++) {
		uint16_t t;

		if (opcode == EMU_TM_MACCTL_OPCODE_PAUSE)
			t = quanta[0];
		else if (enable_vector & (1u << q))
			t = quanta[q];
		else
			continue;
		if (p->cfg.pfc_watchdog_ns > 0 && !emu_tm_watchdog(p, q, t, now_ns))
			continue;
		/* Close the running interval; a new frame restarts the timer, 0 resumes now. */
		if (p->pause_until_ns[q] > p->pause_start_ns[q])
			p->paused_ns[q] += RTE_MIN(p->pause_until_ns[q], now_ns) -
					   p->pause_start_ns[q];
		p->pause_start_ns[q] = now_ns;
		p->pause_until_ns[q] = now_ns + emu_tm_pause_ns(t, p->cfg.rate_bps);
	}
}

unsigned int
emu_tm_pfc_collect(struct emu_tm *tm, uint64_t now_ns, struct emu_tm_pfc_frame *out,
		   unsigned int max)
{
	unsigned int i, q, n = 0;

	for (i = 0; i < tm->n_ports && n < max; i++) {
		struct emu_tm_port *p = &tm->ports[i];
		struct emu_tm_pfc_frame *f;
		uint64_t half_ns;

		if (p->storm_on && p->storm_next_ns <= now_ns && n < max) {
			f = &out[n++];
			memset(f, 0, sizeof(*f));
			f->port = (uint16_t)i;
			f->vector = p->storm_vector;
			f->pause = p->storm_pause;
			for (q = 0; q < EMU_TM_N_PRIO; q++)
				if (p->storm_vector & (1u << q))
					f->quanta[q] = p->storm_quanta;
			if (f->pause)
				f->quanta[0] = p->storm_quanta;
			p->ctr[EMU_TM_CTR_PFC_STORM_TX] += 1;
			p->storm_k += 1;
			p->storm_next_ns = p->storm_t0_ns +
					   p->storm_k * 1000000000ULL / p->storm_pps;
		}
		if (!p->cfg.pfc.enabled || n == max)
			continue;
		/* Refresh XOFF at half the pause time while still above XON. */
		for (q = 0; q < EMU_TM_N_PRIO; q++)
			if (p->xoff[q] && p->refresh_ns[q] <= now_ns)
				p->pfc_pending |= (uint16_t)(1u << q);
		if (p->pfc_pending == 0)
			continue;
		half_ns = emu_tm_pause_ns(p->cfg.pfc.quanta, p->cfg.rate_bps) / 2;
		f = &out[n++];
		memset(f, 0, sizeof(*f));
		f->port = (uint16_t)i;
		f->vector = p->pfc_pending;
		for (q = 0; q < EMU_TM_N_PRIO; q++) {
			if (!(p->pfc_pending & (1u << q)))
				continue;
			if (p->xoff[q]) {
				f->quanta[q] = p->cfg.pfc.quanta;
				p->refresh_ns[q] = now_ns + (half_ns > 0 ? half_ns : 1);
				p->ctr[EMU_TM_CTR_PFC_QUANTA_SENT] += f->quanta[q];
			}
		}
		for (q = 0; q < EMU_TM_N_PRIO && f->quanta[q] == 0; q++)
			;
		p->ctr[q < EMU_TM_N_PRIO ? EMU_TM_CTR_PFC_TX_XOFF : EMU_TM_CTR_PFC_TX_XON] += 1;
		p->pfc_pending = 0;
	}
	return n;
}

uint64_t
emu_tm_next_event_ns(const struct emu_tm *tm)
{
	uint64_t next = UINT64_MAX;
	unsigned int i, q;

	for (i = 0; i < tm->n_ports; i++) {
		struct emu_tm_port *p = (struct emu_tm_port *)(uintptr_t)&tm->ports[i];
		uint64_t start_ns;
		uint32_t start_ps;

		if (emu_tm_fifo_count(&p->wire) > 0)
			next = RTE_MIN(next,
				       emu_meta(p->wire.slots[p->wire.head & p->wire.mask])->ts_ns);
		/* includes pause expiries of non-empty queues (pick does not commit) */
		if (emu_tm_fifo_count(&p->wire) <= p->wire.mask &&
		    emu_tm_pick(p, &start_ns, &start_ps, false) >= 0)
			next = RTE_MIN(next, start_ns + (start_ps != 0));
		if (p->storm_on)
			next = RTE_MIN(next, p->storm_next_ns);
		if (p->cfg.pfc.enabled)
			for (q = 0; q < EMU_TM_N_PRIO; q++)
				if (p->xoff[q])
					next = RTE_MIN(next, p->refresh_ns[q]);
	}
	return next;
}

uint64_t
emu_tm_port_held(const struct emu_tm *tm, uint16_t port)
{
	const struct emu_tm_port *p = &tm->ports[port];
	uint64_t held = emu_tm_fifo_count(&p->wire);
	unsigned int q;

	for (q = 0; q < EMU_TM_N_Q; q++)
		held += emu_tm_fifo_count(&p->q[q]);
	return held;
}

uint64_t
emu_tm_held(const struct emu_tm *tm)
{
	uint64_t held = 0;
	unsigned int i;

	for (i = 0; i < tm->n_ports; i++)
		held += emu_tm_port_held(tm, i);
	return held;
}

const uint64_t *
emu_tm_port_ctrs(const struct emu_tm *tm, uint16_t port)
{
	return tm->ports[port].ctr;
}

void
emu_tm_prio_stats(const struct emu_tm *tm, uint16_t port, unsigned int prio, uint64_t now_ns,
		  struct emu_tm_prio_stats *s)
{
	const struct emu_tm_port *p = &tm->ports[port];

	s->queue_bytes = p->q_bytes[prio];
	s->queue_pkts = emu_tm_fifo_count(&p->q[prio]);
	s->max_queue_bytes = p->max_q_bytes[prio];
	s->ingress_bytes = p->ing_bytes[prio];
	s->headroom_bytes = p->hr_cells[prio];
	s->paused = p->pause_until_ns[prio] > now_ns;
	s->paused_ns = p->paused_ns[prio];
	if (p->pause_until_ns[prio] > p->pause_start_ns[prio] && now_ns > p->pause_start_ns[prio])
		s->paused_ns += RTE_MIN(p->pause_until_ns[prio], now_ns) - p->pause_start_ns[prio];
	s->xoff = p->xoff[prio];
	s->xoff_ns = p->xoff_ns[prio];
	if (p->xoff[prio] && now_ns > p->xoff_start_ns[prio])
		s->xoff_ns += now_ns - p->xoff_start_ns[prio];
}

void
emu_tm_buffer_use(const struct emu_tm *tm, uint64_t *used_bytes, uint64_t *total_bytes)
{
	*used_bytes = tm->used_cells;
	*total_bytes = tm->buf.total_bytes;
}

const struct emu_tm_port_cfg *
emu_tm_port_cfg(const struct emu_tm *tm, uint16_t port)
{
	return &tm->ports[port].cfg;
}

bool
emu_tm_link_up(const struct emu_tm *tm, uint16_t port)
{
	return tm->ports[port].link_up;
}

/* The link went down at @p now_ns: drop what waits in the port's queues (frames already
 * serialised, in the delay line, still arrive). */
static void
emu_tm_flush(struct emu_tm *tm, struct emu_tm_port *p, uint64_t now_ns)
{
	unsigned int q;

	p->nonempty = 0;
	for (q = 0; q < EMU_TM_N_Q; q++) {
		while (emu_tm_fifo_count(&p->q[q]) > 0) {
			struct rte_mbuf *m = p->q[q].slots[p->q[q].head++ & p->q[q].mask];
			struct emu_pkt_meta *meta = emu_meta(m);
			uint32_t len = emu_wire_len(m);

			p->q_bytes[q] -= len;
			p->all_q_bytes -= len;
			if (q != EMU_TM_CTRL_Q) {
				emu_tm_unaccount(tm, p, q, meta, len, now_ns);
				p->deficit[q] = 0;
			}
			emu_tm_drop(tm, (uint16_t)(p - tm->ports), m, EMU_TM_CTR_DROP_LINK_DOWN);
		}
	}
}

static const char *const emu_tm_storm_keys[] = { "priorities", "quanta", "rate_pps", "pause",
						 NULL };

static int
emu_tm_storm_set(struct emu_tm_port *p, const json_t *val, bool apply, uint64_t now_ns,
		 const char *path, struct emu_err *err)
{
	int64_t quanta, pps;
	const json_t *v;
	uint8_t mask = 0;
	bool pause;
	char pp[EMU_JSON_PATH_LEN];
	int rc;

	if (json_is_false(val)) {
		if (apply)
			p->storm_on = false;
		return 0;
	}
	if (!json_is_object(val))
		return emu_err_set(err, "%s: must be an object or false, got %s", path,
				   emu_json_type_name(val));
	rc = emu_json_check_keys(val, path, emu_tm_storm_keys, err);
	if (rc == 0)
		rc = emu_json_get_int(val, path, "quanta", false, 0xFFFF, 0, 0xFFFF, &quanta, err);
	if (rc == 0)
		rc = emu_json_get_int(val, path, "rate_pps", true, 0, 1, 10000000, &pps, err);
	if (rc == 0)
		rc = emu_json_get_bool(val, path, "pause", false, false, &pause, err);
	if (rc != 0)
		return rc;
	v = json_object_get(val, "priorities");
	emu_json_path(pp, sizeof(pp), path, "priorities");
	if (pause) {
		/* 802.3x PAUSE stops every priority: a priority list would be meaningless. */
		if (v != NULL)
			return emu_err_set(err, "%s: not used with \"pause\": true (PAUSE stops all "
					   "priorities)", pp);
	} else {
		if (v == NULL)
			return emu_err_set(err, "%s: required key is missing", pp);
		rc = emu_tm_prio_list(v, pp, &mask, err);
		if (rc != 0)
			return rc;
		if (mask == 0)
			return emu_err_set(err, "%s: must list at least one priority", pp);
	}
	if (apply) {
		p->storm_on = true;
		p->storm_vector = mask;
		p->storm_pause = pause;
		p->storm_quanta = (uint16_t)quanta;
		p->storm_pps = (uint64_t)pps;
		p->storm_t0_ns = now_ns;
		p->storm_k = 0;
		p->storm_next_ns = now_ns;
	}
	return 0;
}

json_t *
emu_tm_get(const struct emu_tm *tm, uint16_t port, const char *key)
{
	const struct emu_tm_port *p = &tm->ports[port];
	json_t *o, *prios;
	unsigned int q;

	if (strcmp(key, "rate_gbps") == 0)
		return json_real((double)p->cfg.rate_bps / 1e9);
	if (strcmp(key, "delay_us") == 0)
		return json_real((double)p->cfg.delay_ns / 1e3);
	if (strcmp(key, "buffer_kb") == 0)
		return json_integer((json_int_t)(p->cfg.limit_bytes / 1024));
	if (strcmp(key, "link") == 0)
		return json_string(p->link_up ? "up" : "down");
	if (strcmp(key, "pfc_storm") != 0)
		return NULL;
	if (!p->storm_on)
		return json_false();
	o = json_pack("{s:I, s:I}", "quanta", (json_int_t)p->storm_quanta, "rate_pps",
		      (json_int_t)p->storm_pps);
	if (o == NULL)
		return NULL;
	if (p->storm_pause) {
		json_object_set_new(o, "pause", json_true());
		return o;
	}
	prios = json_array();
	for (q = 0; q < EMU_TM_N_PRIO; q++)
		if (p->storm_vector & (1u << q))
			json_array_append_new(prios, json_integer(q));
	json_object_set_new(o, "priorities", prios);
	return o;
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

int
emu_tm_set(struct emu_tm *tm, uint16_t port, const char *key, const json_t *val, bool apply,
	   uint64_t now_ns, struct emu_rng *rng, const char *path, struct emu_err *err)
{
	struct emu_tm_port *p = &tm->ports[port];
	const char *s;
	double x;
	int64_t i;
	int rc;

	if (strcmp(key, "rate_gbps") == 0) {
		rc = emu_json_num_value(val, path, 1e-6, false, EMU_TM_MAX_RATE_GBPS, &x, err);
		if (rc == 0 && apply)
			p->cfg.rate_bps = (uint64_t)(x * 1e9 + 0.5);
		return rc;
	}
	if (strcmp(key, "delay_us") == 0) {
		rc = emu_json_num_value(val, path, 0.0, false, EMU_TM_MAX_DELAY_US, &x, err);
		if (rc == 0 && apply)
			p->cfg.delay_ns = (uint64_t)(x * 1e3 + 0.5);
		return rc;
	}
	if (strcmp(key, "buffer_kb") == 0) {
		rc = emu_json_int_value(val, path, 1, 16 * 1024 * 1024, &i, err);
		if (rc == 0 && apply) {
			/* a per-queue limit that followed the port's keeps following it */
			if (p->cfg.queue_limit_bytes == p->cfg.limit_bytes)
				p->cfg.queue_limit_bytes = (uint64_t)i * 1024;
			p->cfg.limit_bytes = (uint64_t)i * 1024;
		}
		return rc;
	}
	if (strcmp(key, "link") == 0) {
		s = json_string_value(val);
		if (s == NULL)
			return emu_err_set(err, "%s: must be \"down\" or \"up\", got %s", path,
					   emu_json_type_name(val));
		if (strcmp(s, "down") != 0 && strcmp(s, "up") != 0)
			return emu_err_set(err, "%s: must be \"down\" or \"up\", got \"%s\"", path,
					   s);
		if (!apply)
			return 0;
		if (strcmp(s, "up") == 0) {
			p->link_up = true;
		} else if (p->link_up) {
			/* what could start before the link went down has started */
			emu_tm_port_advance(tm, p, now_ns, rng);
			p->link_up = false;
			emu_tm_flush(tm, p, now_ns);
		}
		return 0;
	}
	if (strcmp(key, "pfc_storm") == 0)
		return emu_tm_storm_set(p, val, apply, now_ns, path, err);
	return emu_err_set(err, "%s: unknown key (known: rate_gbps, delay_us, buffer_kb, link, "
			   "pfc_storm)", path);
}
