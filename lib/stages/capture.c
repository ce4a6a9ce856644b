/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture: a tap. Copies (up to snaplen bytes of) every packet it sees, or those of
 * the listed ports, into a ring; the main lcore writes the pcap (nanosecond
 * timestamps: arrival time on ingress, emulated departure time on egress).
 * Packets always pass on unchanged.
 *
 * Its configuration (keys, filter, drops list, init, needs) is in capture_config.c.
 */
/* rte_bpf_convert() (a libpcap filter to eBPF) is experimental in every DPDK up to 24.11. */
#define ALLOW_EXPERIMENTAL_API 1
#include <string.h>

#include <rte_bpf.h>

#include <rte_common.h>

#include "lib/capture/emu_capture.h"
#include "lib/capture/emu_pcapw.h"
#include "lib/base/emu_out.h"
#include <rte_errno.h>
#include <rte_malloc.h>
#include "lib/base/emu_json.h"
#include "lib/stages/stages.h"
#include "lib/stages/capture_priv.h"

#define CAPTURE_FOREACH_CTR(_) \
	_(CAPTURED, "captured") \
	_(RING_FULL, "not_captured_ring_full") \
	_(NOMBUF, "not_captured_nombuf") \
	_(FILTERED, "filtered") \
	_(LIMIT, "not_captured_limit") \
	_(DROPS_OFFERED, "drops_offered") \
	_(VIRTUAL, "not_captured_virtual")

enum capture_ctr {
#define CAPTURE_CTR_ENUM(e, s) CAPTURE_CTR_##e,
	CAPTURE_FOREACH_CTR(CAPTURE_CTR_ENUM)
#undef CAPTURE_CTR_ENUM
	CAPTURE_CTR_MAX
};

static const char *const capture_ctr_names[] = {
#define CAPTURE_CTR_NAME(e, s) s,
	CAPTURE_FOREACH_CTR(CAPTURE_CTR_NAME)
#undef CAPTURE_CTR_NAME
};

/* max_frames and max_ns over every worker's replica (live --workers): one count and one
 * first time, the first replica's, taken atomically (a frame more than max_frames may be
 * refused as two workers race for the last one; none is taken beyond it) */
static bool
capture_limited_shared(struct capture_priv *r, uint64_t now_ns)
{
	uint64_t first = __atomic_load_n(&r->first_ns, __ATOMIC_RELAXED), zero = 0;

	if (first == 0) {
		if (!__atomic_compare_exchange_n(&r->first_ns, &zero, now_ns, false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			now_ns = RTE_MAX(now_ns, zero);
		first = __atomic_load_n(&r->first_ns, __ATOMIC_RELAXED);
	}
	if (r->max_ns != 0 && now_ns > first && now_ns - first >= r->max_ns)
		return true;
	if (r->max_frames != 0 &&
	    __atomic_fetch_add(&r->taken, 1, __ATOMIC_RELAXED) >= r->max_frames)
		return true;
	return false;
}

static inline bool
capture_limited(struct capture_priv *cp, uint64_t now_ns)
{
	if (cp->primary != NULL || cp->n_peers > 0)
		return capture_limited_shared(cp->primary != NULL ? cp->primary : cp, now_ns);
	if (cp->taken == 0)
		cp->first_ns = now_ns;
	if ((cp->max_frames != 0 && cp->taken >= cp->max_frames) ||
	    (cp->max_ns != 0 && now_ns - cp->first_ns >= cp->max_ns))
		return true;
	cp->taken++;
	return false;
}

/* Drop hook (worker): a copy of every dropped frame on the "drop" interface. */
void
capture_on_drop(void *arg, struct rte_mbuf *m, uint32_t reason)
{
	struct capture_priv *cp = arg;

	if (unlikely(emu_meta(m)->flags & EMU_META_VIRTUAL) && !cp->virtual_frames) {
		/* a frame no wire carried: only when asked ("virtual") */
		if (cp->enabled)
			cp->ctr[CAPTURE_CTR_VIRTUAL] += 1;
		return;
	}
	if (cp->enabled && (cp->bpf == NULL || rte_bpf_exec(cp->bpf, m) != 0) &&
	    !capture_limited(cp, emu_meta(m)->ts_ns)) {
		cp->drops_seen++;
		/* the stage's own counters: this runs on the worker, between stages */
		cp->ctr[CAPTURE_CTR_DROPS_OFFERED] += 1;
		if (emu_capture_push_if(cp->cap, m, emu_meta(m)->ts_ns, cp->n_ports, 0,
					(int)reason))
			cp->ctr[CAPTURE_CTR_CAPTURED] += 1;
		else
			cp->ctr[CAPTURE_CTR_RING_FULL] += 1;
	}
}

static uint16_t
capture_process(void *priv, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx)
{
	struct capture_priv *cp = priv;
	uint64_t offered = 0, captured = 0, filtered = 0, limited = 0;
	struct rte_mbuf *sel[64];
	unsigned int k = 0;
	uint16_t i;

	if (!cp->enabled || cp->cap == NULL)
		return n;
	if (cp->bpf == NULL && cp->max_frames == 0 && cp->max_ns == 0) {
		/* no filter, no limit: the burst goes to the ring as it is, chosen by port there */
		unsigned int o;

		captured = emu_capture_push_burst_ports(cp->cap, pkts, n, cp->egress,
							cp->port_mask, &o);
		offered = o;
		filtered = n - o;
	} else {
		for (i = 0; i < n; i++) {
			struct emu_pkt_meta *meta = emu_meta(pkts[i]);

			if (!emu_stage_port_in(meta, cp->egress, cp->port_mask) ||
			    (cp->bpf != NULL && rte_bpf_exec(cp->bpf, pkts[i]) == 0)) {
				filtered++;
				continue;
			}
			if (capture_limited(cp, meta->ts_ns)) {
				limited++;
				continue;
			}
			sel[k++] = pkts[i];
			if (k == RTE_DIM(sel)) {
				offered += k;
				captured += emu_capture_push_burst(cp->cap, sel, k, cp->egress);
				k = 0;
			}
		}
		if (k != 0) {
			offered += k;
			captured += emu_capture_push_burst(cp->cap, sel, k, cp->egress);
		}
	}
	ctx->ctr[CAPTURE_CTR_CAPTURED] += captured;
	ctx->ctr[CAPTURE_CTR_RING_FULL] += offered - captured;
	ctx->ctr[CAPTURE_CTR_FILTERED] += filtered;
	ctx->ctr[CAPTURE_CTR_LIMIT] += limited;
	return n;
}

static void
capture_free(void *priv)
{
	struct capture_priv *cp = priv;
	unsigned int i;

	/* a replica goes before its first replica (emu_switch_create_replica()): unlink it */
	for (i = 0; cp->primary != NULL && i < cp->primary->n_peers; i++)
		if (cp->primary->peers[i] == cp)
			cp->primary->peers[i] = NULL;
	for (i = 0; i < cp->n_peers; i++)
		if (cp->peers[i] != NULL)
			cp->peers[i]->primary = NULL;

	emu_capture_free(cp->cap);
	cp->cap = NULL;
	if (cp->bpf != NULL)
		rte_bpf_destroy(cp->bpf);
	cp->bpf = NULL;
}

static int
capture_compile(const void *priv, const char *key, const json_t *val, struct emu_set *out,
		const char *path, struct emu_err *err)
{
	RTE_SET_USED(priv);
	if (emu_key_find(&capture_set_table, key) == NULL)
		return emu_err_set(err, "%s: unknown key (a profile can change: enabled)", path);
	if (!json_is_boolean(val))
		return emu_err_set(err, "%s: must be a boolean, got %s", path,
				   emu_json_type_name(val));
	memset(out, 0, sizeof(*out));
	out->u32 = json_is_true(val);
	return 0;
}

static void
capture_apply(void *priv, const struct emu_set *s)
{
	((struct capture_priv *)priv)->enabled = s->u32 != 0;
}

static json_t *
capture_settings(const void *priv)
{
	return json_pack("{s:b}", "enabled", ((const struct capture_priv *)priv)->enabled);
}

static void
capture_service(void *priv, bool final)
{
	struct capture_priv *cp = priv;

	if (cp->cap == NULL)
		return;
	if (final)
		emu_capture_close(cp->cap);
	else
		/* as much as the ring holds: the worker cannot fill it faster than one pass */
		emu_capture_drain(cp->cap, emu_capture_ring_size(cp->cap));
}

static void
capture_clock(void *priv, uint64_t now_ns)
{
	struct capture_priv *cp = priv;

	if (cp->cap != NULL)
		emu_capture_publish_clock(cp->cap, now_ns);
}

static bool
capture_failed(const void *priv, char *msg, size_t len)
{
	const struct capture_priv *cp = priv;
	const char *e = cp->cap != NULL ? emu_capture_error(cp->cap) : NULL;
	struct emu_capture_stats s;

	if (e == NULL)
		return false;
	emu_capture_stats(cp->cap, &s);
	if (!emu_capture_file_failed(cp->cap))
		snprintf(msg, len, "%s (%lu frames in the file, %lu captured frames after the cap "
			 "not written)", e, (unsigned long)s.written, (unsigned long)s.capped);
	else
		snprintf(msg, len, "%s (%lu frames in the file, %lu captured frames lost)", e,
			 (unsigned long)s.written, (unsigned long)s.write_errors);
	return true;
}

static void
capture_summary(const void *priv, char *buf, size_t len)
{
	const struct capture_priv *cp = priv;
	struct emu_capture_stats s;

	uint64_t drops_seen = cp->drops_seen;
	unsigned int i;

	if (cp->cap == NULL || cp->primary != NULL) {
		buf[0] = '\0'; /* a replica's file is its first replica's, which says it all */
		return;
	}
	for (i = 0; i < cp->n_peers; i++)
		if (cp->peers[i] != NULL)
			drops_seen += cp->peers[i]->drops_seen;
	emu_capture_stats(cp->cap, &s);
	if (emu_capture_file_failed(cp->cap))
		/* the file is not in place: name where its data is (the error says), not it */
		snprintf(buf, len, "capture: FAILED, %lu packets written: %s",
			 (unsigned long)s.written, emu_capture_error(cp->cap));
	else
		snprintf(buf, len, "capture: %lu packets written to %s%s", (unsigned long)s.written,
			 emu_capture_file(cp->cap), s.capped > 0 ? " (stopped at max_mb)" : "");
	if (cp->drops) {
		size_t u = strlen(buf);
		uint64_t virt = cp->ctr != NULL ? cp->ctr[CAPTURE_CTR_VIRTUAL] : 0;

		if (cp->drop_ptrs[0] != NULL)
			snprintf(buf + u, len - u, " (%lu dropped frames handed to it, %lu of them "
				 "not of the listed reasons)", (unsigned long)drops_seen,
				 (unsigned long)s.filtered_drops);
		else
			snprintf(buf + u, len - u, " (%lu dropped frames handed to it)",
				 (unsigned long)drops_seen);
		u = strlen(buf);
		if (virt > 0)
			snprintf(buf + u, len - u, "; %lu dropped virtual incast frames not captured "
				 "(\"virtual\": true to include them)", (unsigned long)virt);
	}
	if (s.late > 0) {
		size_t u = strlen(buf);

		snprintf(buf + u, len - u, "; %lu frames later than the 10 ms time-order window, "
			 "written at the time of the frame before them", (unsigned long)s.late);
	}
	if (s.ring_full > 0) {
		/* by design the datapath never waits for the writer; what that cost is said here */
		size_t u = strlen(buf);

		snprintf(buf + u, len - u, "; %lu frames NOT captured: the ring was full (the writer "
			 "fell behind; a larger ring_size, a shorter snaplen or a filter)",
			 (unsigned long)s.ring_full);
	}
}

/* It copies bytes, the metadata and the trace; its filter reads the frame, not the parse. */
static enum emu_parse_need
capture_parse_need(const void *priv)
{
	(void)priv;
	return EMU_PARSE_CLASS;
}

/* An annotated capture copies each packet's trace for its writer. */
static bool
capture_reads_trace(const void *priv)
{
	return ((const struct capture_priv *)priv)->annotating;
}

const struct emu_stage_ops emu_stage_capture = {
	.type = "capture",
	.priv_size = sizeof(struct capture_priv),
	.ctr_names = capture_ctr_names,
	.n_ctr = CAPTURE_CTR_MAX,
	.keys = capture_keys,
	.key_table = &capture_key_table,
	.set_table = &capture_set_table,
	.init = capture_init,
	.parse_need = capture_parse_need,
	.reads_trace = capture_reads_trace,
	.process = capture_process,
	.free = capture_free,
	.compile = capture_compile,
	.apply = capture_apply,
	.settings = capture_settings,
	.service = capture_service,
	.replicable = true,
	.clock = capture_clock,
	.summary = capture_summary,
	.needs = capture_needs,
	.failed = capture_failed,
};
