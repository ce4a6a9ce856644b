/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PFC and 802.3x PAUSE: frames received (pausing queues, with the watchdog), the XOFF/XON
 * state the ingress accounting asks for (collected as frames for the switch to send), and
 * PFC storms a profile starts.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/base/emu_json.h"
#include "lib/proto/roce_build.h"
#include "lib/proto/roce_rewrite.h"
#include "lib/tm/emu_tm_int.h"
#include "lib/tm/emu_tm_keys.h"


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

	/* nothing pending, no XOFF to refresh, no storm: the loop below would find nothing
	 * (every setter of a pfc_pending bit sets pfc_any) */
	if (!emu_tm_pfc_work(tm))
		return 0;
	tm->hot.pfc_any = false;
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
	if (n == max)
		tm->hot.pfc_any = true; /* some may be left for the next call */
	return n;
}

bool
emu_tm_pfc_pending(const struct emu_tm *tm)
{
	return tm->hot.pfc_any;
}

/* pfc_storm: false, or {quanta, rate_pps, priorities | pause}; u32 = on | pause << 1 |
 * vector << 8 | quanta << 16, u64 = rate_pps */
int
emu_tm_storm_compile(const json_t *val, struct emu_set *out, const char *path,
		     struct emu_err *err)
{
	int64_t quanta, pps;
	const json_t *v;
	uint8_t mask = 0;
	bool pause;
	char pp[EMU_JSON_PATH_LEN];
	int rc;

	if (json_is_false(val))
		return 0;
	if (!json_is_object(val))
		return emu_err_set(err, "%s: must be an object or false, got %s", path,
				   emu_json_type_name(val));
	rc = emu_keys_check(val, path, &emu_tm_storm_table, err);
	if (rc == 0)
		rc = emu_key_int(val, path, &emu_tm_storm_table, "quanta", &quanta, err);
	if (rc == 0)
		rc = emu_key_int(val, path, &emu_tm_storm_table, "rate_pps", &pps, err);
	if (rc == 0)
		rc = emu_key_bool(val, path, &emu_tm_storm_table, "pause", &pause, err);
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
	out->u32 = 1u | (pause ? 2u : 0u) | (uint32_t)mask << 8 | (uint32_t)quanta << 16;
	out->u64 = (uint64_t)pps;
	return 0;
}

void
emu_tm_storm_apply(struct emu_tm_port *p, const struct emu_set *s, uint64_t now_ns)
{
	if (!(s->u32 & 1u)) {
		p->storm_on = false;
		return;
	}
	p->storm_on = true;
	p->storm_vector = (uint8_t)(s->u32 >> 8);
	p->storm_pause = (s->u32 & 2u) != 0;
	p->storm_quanta = (uint16_t)(s->u32 >> 16);
	p->storm_pps = s->u64;
	p->storm_t0_ns = now_ns;
	p->storm_k = 0;
	p->storm_next_ns = now_ns;
}

struct rte_mbuf *
emu_tm_pfc_mbuf(struct rte_mempool *mp, const struct emu_tm_pfc_frame *f,
		const uint8_t src_mac[6], uint64_t now_ns)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct emu_pkt_meta *meta;
	char *buf;
	int len;

	buf = m != NULL ? rte_pktmbuf_append(m, EMU_TM_MIN_FRAME_BYTES) : NULL;
	if (buf == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	if (f->pause)
		len = roce_build_pause((uint8_t *)buf, EMU_TM_MIN_FRAME_BYTES, src_mac,
				       f->quanta[0]);
	else
		len = roce_build_pfc((uint8_t *)buf, EMU_TM_MIN_FRAME_BYTES, src_mac, f->vector,
				     f->quanta);
	RTE_VERIFY(len == EMU_TM_MIN_FRAME_BYTES);
	meta = emu_meta(m);
	memset(meta, 0, sizeof(*meta));
	meta->ts_ns = now_ns;
	meta->in_port = EMU_PORT_SELF;
	meta->out_port = f->port;
	meta->flags = EMU_META_CREATED | EMU_META_MACCTL;
	meta->trace.t_in_ns = now_ns;
	meta->trace.created_by = EMU_TRACE_BY_SWITCH;
	return m;
}
