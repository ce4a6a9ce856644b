/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drop reasons (one id per counter), drop hooks, no-route warnings, stage failures and the
 * per-packet annotation a capture writes.
 */
#include <errno.h>
#include <inttypes.h>
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

unsigned int
emu_switch_route_warnings(const struct emu_switch *sw, FILE *f)
{
	uint32_t reach[EMU_MAX_PORTS] = { 0 }, masks[EMU_MAX_PORTS];
	unsigned int i, p, n = 0;
	bool chooser = false;

	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_inst *st = &sw->stages[i];

		if (st->ops->routes == NULL || st->egress)
			continue;
		memset(masks, 0, sizeof(masks));
		st->ops->routes(st->priv, sw->n_ports, masks);
		for (p = 0; p < sw->n_ports; p++)
			reach[p] |= masks[p];
		chooser = true;
	}
	if (!chooser) {
		fprintf(f, "rocemu: WARNING: no ingress stage chooses an egress port (add a "
			"\"forward\" stage): every frame will be dropped as drop_no_route\n");
		return 1;
	}
	for (p = 0; p < sw->n_ports; p++)
		if (reach[p] == 0) {
			fprintf(f, "rocemu: WARNING: no route from port %s: every frame arriving "
				"there will be dropped (see the forward stage's pairs or macs)\n",
				sw->pl->port_names[p]);
			n++;
		}
	return n;
}

unsigned int
emu_switch_report_failures(const struct emu_switch *sw, FILE *f)
{
	return emu_switch_report_failures_as(sw, f, "rocemu");
}

unsigned int
emu_switch_report_failures_as(const struct emu_switch *sw, FILE *f, const char *prog)
{
	char msg[EMU_ERR_LEN + 128];
	unsigned int i, n = 0;

	for (i = 0; i < sw->n_stages; i++) {
		const struct emu_stage_inst *st = &sw->stages[i];

		if (st->ops->failed != NULL && st->initialised &&
		    st->ops->failed(st->priv, msg, sizeof(msg))) {
			fprintf(f, "%s: stage %s: %s\n", prog, st->name, msg);
			n++;
		}
	}
	return n;
}

int
emu_switch_add_drop_hook(struct emu_switch *sw,
			 void (*hook)(void *arg, struct rte_mbuf *m, uint32_t reason), void *arg)
{
	if (sw->dropper.n_hooks >= EMU_DROP_MAX_HOOKS)
		return -ENOSPC;
	sw->dropper.hooks[sw->dropper.n_hooks].fn = hook;
	sw->dropper.hooks[sw->dropper.n_hooks].arg = arg;
	sw->dropper.n_hooks++;
	return 0;
}

int
emu_switch_env_add_drop_hook(void *sw, void (*fn)(void *arg, struct rte_mbuf *m, uint32_t reason),
			     void *arg)
{
	return emu_switch_add_drop_hook(sw, fn, arg);
}

size_t
emu_switch_env_annotate(const void *sw, const struct emu_pkt_meta *meta, int drop_reason,
			bool all, char *buf, size_t len)
{
	return emu_switch_annotate_meta(sw, meta, drop_reason, all, buf, len);
}

uint32_t
emu_switch_n_reasons(const struct emu_switch *sw)
{
	return sw->n_reasons;
}

bool
emu_switch_reason_name(const struct emu_switch *sw, uint32_t id, char *buf, size_t len)
{
	const char *ctr = NULL;
	unsigned int i;

	buf[0] = '\0';
	if (id >= sw->n_reasons)
		return false;
	if (id >= sw->run_reason_base) {
		ctr = emu_run_ctr_names[id - sw->run_reason_base];
		snprintf(buf, len, "runner.%s", ctr);
	} else if (id >= sw->incast_reason_base) {
		uint32_t k = (id - sw->incast_reason_base) / EMU_INCAST_CTR_MAX;

		if (k >= sw->n_incast)
			return false;
		ctr = emu_incast_ctr_names[(id - sw->incast_reason_base) % EMU_INCAST_CTR_MAX];
		snprintf(buf, len, "incast.%s.%s", sw->incast[k].s.cfg.name, ctr);
	} else if (id >= sw->fab_reason_base) {
		uint32_t k = id - sw->fab_reason_base, nl = sw->fab->n_links * FAB_LINK_CTR_MAX;

		if (k < nl) {
			ctr = fab_link_ctr_names[k % FAB_LINK_CTR_MAX];
			snprintf(buf, len, "fabric.%s.%s", sw->fab->links[k / FAB_LINK_CTR_MAX].name,
				 ctr);
		} else {
			k -= nl;
			ctr = fab_sw_ctr_names[k % FAB_SW_CTR_MAX];
			snprintf(buf, len, "fabric.%s.%s", sw->fab->sw[k / FAB_SW_CTR_MAX].name, ctr);
		}
	} else if (id >= sw->tm_reason_base) {
		uint32_t k = id - sw->tm_reason_base;

		ctr = emu_tm_ctr_names[k % EMU_TM_CTR_MAX];
		snprintf(buf, len, "tm.%s.%s", sw->pl->tm_port_names[k / EMU_TM_CTR_MAX], ctr);
	} else {
		for (i = 0; i < sw->n_stages; i++) {
			const struct emu_stage_inst *st = &sw->stages[i];

			if (id >= st->reason_base && id < st->reason_base + st->ops->n_ctr) {
				ctr = st->ops->ctr_names[id - st->reason_base];
				snprintf(buf, len, "%s.%s", st->name, ctr);
				break;
			}
		}
	}
	return ctr != NULL && emu_is_drop_name(ctr);
}

uint64_t
emu_switch_reason_count(const struct emu_switch *sw, uint32_t id)
{
	unsigned int i;

	if (id >= sw->n_reasons)
		return 0;
	if (id >= sw->run_reason_base)
		return sw->ctr[id - sw->run_reason_base];
	if (id >= sw->incast_reason_base) {
		uint32_t k = (id - sw->incast_reason_base) / EMU_INCAST_CTR_MAX;

		return k < sw->n_incast ?
		       sw->incast[k].ctr[(id - sw->incast_reason_base) % EMU_INCAST_CTR_MAX] : 0;
	}
	if (id >= sw->fab_reason_base) {
		uint32_t k = id - sw->fab_reason_base, nl = sw->fab->n_links * FAB_LINK_CTR_MAX;

		if (k < nl)
			return sw->fab_link_ctr[k / FAB_LINK_CTR_MAX][k % FAB_LINK_CTR_MAX];
		k -= nl;
		return sw->fab_sw_ctr[k / FAB_SW_CTR_MAX][k % FAB_SW_CTR_MAX];
	}
	if (id >= sw->tm_reason_base)
		return emu_tm_port_ctrs(sw->tm, (id - sw->tm_reason_base) / EMU_TM_CTR_MAX)
			[(id - sw->tm_reason_base) % EMU_TM_CTR_MAX];
	for (i = 0; i < sw->n_stages; i++)
		if (id >= sw->stages[i].reason_base &&
		    id < sw->stages[i].reason_base + sw->stages[i].ops->n_ctr)
			return sw->stages[i].ctr[id - sw->stages[i].reason_base];
	return 0;
}

/*
 * The annotation is written by the capture's writer for every record it annotates (with
 * "annotate": "all", every frame): appends by hand rather than snprintf, which cost ~10x
 * more (tests/bench/README.md, bench_capture). An append stops at @p len - 1 characters.
 */
struct emu_ann {
	char *buf;
	size_t len;  /* > 0 */
	size_t used; /* < len */
};

static inline void
emu_ann_mem(struct emu_ann *a, const char *s, size_t l)
{
	size_t room = a->len - 1 - a->used;

	if (l > room)
		l = room;
	memcpy(a->buf + a->used, s, l);
	a->used += l;
}

#define emu_ann_lit(a, s) emu_ann_mem((a), (s), sizeof(s) - 1)

static inline void
emu_ann_str(struct emu_ann *a, const char *s)
{
	emu_ann_mem(a, s, strlen(s));
}

static const char emu_ann_digits[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal, two digits a division. */
static inline void
emu_ann_u64(struct emu_ann *a, uint64_t v)
{
	char t[20], *p = t + sizeof(t);

	while (v >= 100) {
		p -= 2;
		memcpy(p, emu_ann_digits + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, emu_ann_digits + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	emu_ann_mem(a, p, (size_t)(t + sizeof(t) - p));
}

#define emu_ann_kv(a, key, v, unit) do { \
		emu_ann_lit((a), key); \
		emu_ann_u64((a), (v)); \
		emu_ann_lit((a), unit); \
	} while (0)

static const char *
emu_switch_port_label(const struct emu_switch *sw, uint16_t port)
{
	if (port < sw->n_ports)
		return sw->pl->port_names[port];
	return port == EMU_PORT_SELF ? "switch" : port == EMU_PORT_FLOOD ? "flood" : "none";
}

size_t
emu_switch_annotate(const struct emu_switch *sw, struct rte_mbuf *m, int drop_reason, bool all,
		    char *buf, size_t len)
{
	return emu_switch_annotate_meta(sw, emu_meta(m), drop_reason, all, buf, len);
}

size_t
emu_switch_annotate_meta(const struct emu_switch *sw, const struct emu_pkt_meta *meta,
			 int drop_reason, bool all, char *buf, size_t len)
{
	const struct emu_trace *tr = &meta->trace;
	struct emu_ann a = { .buf = buf, .len = len, .used = 0 };
	char name[128];

	if (len == 0)
		return 0;
	buf[0] = '\0';
	if (drop_reason < 0 && tr->drop_reason != 0)
		drop_reason = tr->drop_reason - 1; /* a drop capture's copy */
	if (!all && drop_reason < 0 && !emu_trace_eventful(tr))
		return 0;
	emu_ann_lit(&a, "rocemu:");
	if (drop_reason >= 0) {
		emu_switch_reason_name(sw, (uint32_t)drop_reason, name, sizeof(name));
		emu_ann_lit(&a, " drop=");
		emu_ann_str(&a, name);
	}
	emu_ann_lit(&a, " in=");
	emu_ann_str(&a, emu_switch_port_label(sw, meta->in_port));
	if (meta->out_port != EMU_PORT_NONE) {
		emu_ann_lit(&a, " out=");
		emu_ann_str(&a, emu_switch_port_label(sw, meta->out_port));
	}
	emu_ann_kv(&a, " t_in=", tr->t_in_ns, "");
	emu_ann_kv(&a, " prio=", meta->prio, "");
	if (tr->t_enq_ns != 0 && drop_reason < 0) {
		emu_ann_kv(&a, " qdepth=", tr->qdepth_bytes, "");
		emu_ann_kv(&a, " wait=", tr->wait_ns, "ns");
	}
	if (tr->marks & EMU_TRACE_CE_RED)
		emu_ann_lit(&a, " ce=red");
	if (tr->marks & EMU_TRACE_CE_EVENT)
		emu_ann_lit(&a, " ce=event");
	if (tr->marks & EMU_TRACE_DELAYED)
		emu_ann_kv(&a, " delayed=", tr->delay_ns, "ns");
	if (tr->marks & EMU_TRACE_CORRUPTED)
		emu_ann_lit(&a, " corrupted");
	if (tr->marks & EMU_TRACE_REWRITTEN)
		emu_ann_lit(&a, " rewritten");
	if (tr->marks & EMU_TRACE_DUPLICATE)
		emu_ann_lit(&a, " duplicate");
	if (tr->event_reason != 0) {
		emu_switch_reason_name(sw, tr->event_reason - 1u, name, sizeof(name));
		emu_ann_lit(&a, " event=");
		emu_ann_str(&a, name);
	}
	if (tr->created_by == EMU_TRACE_BY_SWITCH) {
		emu_ann_lit(&a, " created=switch");
	} else if (tr->created_by == EMU_TRACE_BY_INCAST) {
		emu_ann_lit(&a, " created=incast");
	} else if (tr->created_by != 0 && tr->created_by <= sw->n_stages) {
		emu_ann_lit(&a, " created=");
		emu_ann_str(&a, sw->stages[tr->created_by - 1].name);
	}
	if (tr->path != 0) {
		emu_ann_kv(&a, " path=", tr->path, "");
		if (sw->fab != NULL && tr->path <= sw->fab->n_links) {
			unsigned int k;

			emu_ann_lit(&a, " via=");
			emu_ann_str(&a, sw->fab->links[tr->path - 1].name);
			for (k = 0; k < RTE_DIM(tr->via) && tr->via[k] != 0 &&
			     tr->via[k] <= sw->fab->n_links; k++) {
				emu_ann_lit(&a, ",");
				emu_ann_str(&a, sw->fab->links[tr->via[k] - 1].name);
			}
		}
	}
	buf[a.used] = '\0';
	return a.used;
}
