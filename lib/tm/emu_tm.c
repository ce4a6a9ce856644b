/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "lib/core/emu_json.h"
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
	struct emu_tm_fifo q;    /* waiting for the link */
	struct emu_tm_fifo wire; /* serialised, waiting for departure (delay line) */
	uint64_t q_bytes;
	/* When the link finishes its current frame: ns plus picoseconds (0-999). Times are
	 * epoch-based nanoseconds, so a single picosecond counter would overflow 64 bits. */
	uint64_t link_free_ns;
	uint32_t link_free_ps;
	uint64_t busy_ps; /* exact; the busy_ns counter is derived from it */
	uint64_t ctr[EMU_TM_CTR_MAX];
};

struct emu_tm {
	unsigned int n_ports;
	struct emu_tm_port ports[EMU_MAX_PORTS];
};

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
	pc->rate_bps = 100000000000ULL;
	pc->limit_bytes = 4ULL << 20;
	pc->queue_pkts = 4096;
	pc->delay_ns = 0;
}

static const char *const emu_tm_keys[] = { "ports", NULL };
static const char *const emu_tm_port_keys[] = {
	"port", "rate_gbps", "buffer_kb", "queue_pkts", "delay_us", NULL
};

#define EMU_TM_MAX_RATE_GBPS 1600.0
#define EMU_TM_MAX_DELAY_US 10000000.0 /* 10 s */

static int
emu_tm_port_parse(const json_t *o, const char *path, struct emu_tm_port_cfg *pc,
		  struct emu_err *err)
{
	double rate_gbps, delay_us;
	int64_t buffer_kb, queue_pkts;
	int rc;

	rc = emu_json_get_num(o, path, "rate_gbps", false, (double)pc->rate_bps / 1e9, 0.0, true,
			      EMU_TM_MAX_RATE_GBPS, &rate_gbps, err);
	if (rc == 0)
		rc = emu_json_get_int(o, path, "buffer_kb", false,
				      (int64_t)(pc->limit_bytes / 1024), 1, 16 * 1024 * 1024,
				      &buffer_kb, err);
	if (rc == 0)
		rc = emu_json_get_int(o, path, "queue_pkts", false, pc->queue_pkts, 16, 1 << 24,
				      &queue_pkts, err);
	if (rc == 0)
		rc = emu_json_get_num(o, path, "delay_us", false, (double)pc->delay_ns / 1e3, 0.0,
				      false, EMU_TM_MAX_DELAY_US, &delay_us, err);
	if (rc != 0)
		return rc;
	pc->rate_bps = (uint64_t)(rate_gbps * 1e9 + 0.5);
	if (pc->rate_bps < 1000)
		return emu_err_set(err, "%s.rate_gbps: must be at least 1e-6 (1 kb/s), got %g",
				   path, rate_gbps);
	pc->limit_bytes = (uint64_t)buffer_kb * 1024;
	pc->queue_pkts = (uint32_t)queue_pkts;
	pc->delay_ns = (uint64_t)(delay_us * 1e3 + 0.5);
	return 0;
}

int
emu_tm_cfg_parse(const json_t *tm, unsigned int n_ports, const char *const *names,
		 struct emu_tm_cfg *cfg, struct emu_err *err)
{
	bool seen[EMU_MAX_PORTS] = { false };
	char path[EMU_JSON_PATH_LEN];
	const json_t *ports, *o;
	const char *name;
	unsigned int i, p;
	size_t idx;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	cfg->n_ports = n_ports;
	for (i = 0; i < n_ports; i++)
		emu_tm_port_cfg_default(&cfg->ports[i]);
	if (tm == NULL)
		return 0;
	rc = emu_json_expect_object(tm, "tm", err);
	if (rc == 0)
		rc = emu_json_check_keys(tm, "tm", emu_tm_keys, err);
	if (rc != 0)
		return rc;
	ports = json_object_get(tm, "ports");
	if (ports == NULL)
		return 0;
	rc = emu_json_expect_array(ports, "tm.ports", err);
	if (rc != 0)
		return rc;
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
		rc = emu_tm_port_parse(o, path, &cfg->ports[p], err);
		if (rc != 0)
			return rc;
	}
	return 0;
}

uint32_t
emu_tm_wire_slots(const struct emu_tm_port_cfg *pc)
{
	uint64_t slots;

	slots = (uint64_t)((double)pc->rate_bps * (double)pc->delay_ns / 1e9 /
			   (8.0 * (EMU_TM_MIN_FRAME_BYTES + EMU_TM_WIRE_OVERHEAD_BYTES)));
	slots += pc->queue_pkts;
	return slots > (1u << 24) ? 1u << 24 : (uint32_t)slots;
}

struct emu_tm *
emu_tm_create(const struct emu_tm_cfg *cfg, struct emu_err *err)
{
	struct emu_tm *tm;
	unsigned int i;

	tm = calloc(1, sizeof(*tm));
	if (tm == NULL)
		goto nomem;
	tm->n_ports = cfg->n_ports;
	for (i = 0; i < cfg->n_ports; i++) {
		struct emu_tm_port *p = &tm->ports[i];

		p->cfg = cfg->ports[i];
		if (emu_tm_fifo_init(&p->q, p->cfg.queue_pkts) != 0 ||
		    emu_tm_fifo_init(&p->wire, emu_tm_wire_slots(&p->cfg)) != 0)
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
	unsigned int i;

	if (tm == NULL)
		return;
	for (i = 0; i < tm->n_ports; i++) {
		emu_tm_fifo_fini(&tm->ports[i].q);
		emu_tm_fifo_fini(&tm->ports[i].wire);
	}
	free(tm);
}

bool
emu_tm_enqueue(struct emu_tm *tm, uint16_t port, struct rte_mbuf *m, uint64_t now_ns)
{
	struct emu_tm_port *p = &tm->ports[port];
	uint32_t len = rte_pktmbuf_pkt_len(m);

	if (emu_tm_fifo_count(&p->q) > p->q.mask ||
	    p->q_bytes + len > p->cfg.limit_bytes) {
		rte_pktmbuf_free(m);
		p->ctr[EMU_TM_CTR_DROP_QUEUE_FULL] += 1;
		return false;
	}
	emu_meta(m)->ts_ns = now_ns;
	p->q.slots[p->q.tail++ & p->q.mask] = m;
	p->q_bytes += len;
	p->ctr[EMU_TM_CTR_ENQ_PKTS] += 1;
	p->ctr[EMU_TM_CTR_ENQ_BYTES] += len;
	if (p->q_bytes > p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES])
		p->ctr[EMU_TM_CTR_MAX_QUEUE_BYTES] = p->q_bytes;
	return true;
}

/* Start time of a frame arriving at @p arrival_ns: max(link free, arrival), as ns + ps. */
static inline void
emu_tm_start(const struct emu_tm_port *p, uint64_t arrival_ns, uint64_t *ns, uint32_t *ps)
{
	if (arrival_ns > p->link_free_ns || (arrival_ns == p->link_free_ns && p->link_free_ps == 0)) {
		*ns = arrival_ns;
		*ps = 0;
	} else {
		*ns = p->link_free_ns;
		*ps = p->link_free_ps;
	}
}

/* Start serialising every queued packet whose start time has come. */
static void
emu_tm_port_advance(struct emu_tm_port *p, uint64_t now_ns)
{
	while (emu_tm_fifo_count(&p->q) > 0 && emu_tm_fifo_count(&p->wire) <= p->wire.mask) {
		struct rte_mbuf *m = p->q.slots[p->q.head & p->q.mask];
		struct emu_pkt_meta *meta = emu_meta(m);
		uint64_t start_ns, wire_ps, sum_ps;
		uint32_t start_ps, len;

		emu_tm_start(p, meta->ts_ns, &start_ns, &start_ps);
		if (start_ns > now_ns || (start_ns == now_ns && start_ps > 0))
			break;
		len = rte_pktmbuf_pkt_len(m);
		wire_ps = emu_tm_wire_ps(len, p->cfg.rate_bps);
		sum_ps = start_ps + wire_ps;
		p->link_free_ns = start_ns + sum_ps / 1000;
		p->link_free_ps = (uint32_t)(sum_ps % 1000);
		p->q.head++;
		p->q_bytes -= len;
		p->busy_ps += wire_ps;
		p->ctr[EMU_TM_CTR_BUSY_NS] = p->busy_ps / 1000;
		/* departure = finish rounded up to the ns, plus the propagation delay */
		meta->ts_ns = p->link_free_ns + (p->link_free_ps != 0) + p->cfg.delay_ns;
		p->wire.slots[p->wire.tail++ & p->wire.mask] = m;
	}
}

uint16_t
emu_tm_dequeue(struct emu_tm *tm, uint16_t port, uint64_t now_ns, struct rte_mbuf **out,
	       uint16_t max)
{
	struct emu_tm_port *p = &tm->ports[port];
	uint64_t bytes = 0;
	uint16_t n = 0;

	emu_tm_port_advance(p, now_ns);
	while (n < max && emu_tm_fifo_count(&p->wire) > 0) {
		struct rte_mbuf *m = p->wire.slots[p->wire.head & p->wire.mask];

		if (emu_meta(m)->ts_ns > now_ns)
			break;
		p->wire.head++;
		bytes += rte_pktmbuf_pkt_len(m);
		out[n++] = m;
	}
	/* Packets the delay line could not take before may start now. */
	if (n > 0)
		emu_tm_port_advance(p, now_ns);
	p->ctr[EMU_TM_CTR_DEQ_PKTS] += n;
	p->ctr[EMU_TM_CTR_DEQ_BYTES] += bytes;
	return n;
}

uint64_t
emu_tm_next_event_ns(const struct emu_tm *tm)
{
	uint64_t next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < tm->n_ports; i++) {
		const struct emu_tm_port *p = &tm->ports[i];

		if (emu_tm_fifo_count(&p->wire) > 0)
			next = RTE_MIN(next, emu_meta(p->wire.slots[p->wire.head & p->wire.mask])->ts_ns);
		if (emu_tm_fifo_count(&p->q) > 0 && emu_tm_fifo_count(&p->wire) <= p->wire.mask) {
			uint64_t start_ns;
			uint32_t start_ps;

			emu_tm_start(p, emu_meta(p->q.slots[p->q.head & p->q.mask])->ts_ns,
				     &start_ns, &start_ps);
			next = RTE_MIN(next, start_ns + (start_ps != 0));
		}
	}
	return next;
}

uint64_t
emu_tm_port_held(const struct emu_tm *tm, uint16_t port)
{
	const struct emu_tm_port *p = &tm->ports[port];

	return emu_tm_fifo_count(&p->q) + emu_tm_fifo_count(&p->wire);
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

const struct emu_tm_port_cfg *
emu_tm_port_cfg(const struct emu_tm *tm, uint16_t port)
{
	return &tm->ports[port].cfg;
}

int
emu_tm_set(struct emu_tm *tm, uint16_t port, const char *key, const json_t *val, bool apply,
	   const char *path, struct emu_err *err)
{
	struct emu_tm_port *p = &tm->ports[port];
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
		if (rc == 0 && apply)
			p->cfg.limit_bytes = (uint64_t)i * 1024;
		return rc;
	}
	return emu_err_set(err, "%s: unknown key (known: rate_gbps, delay_us, buffer_kb)", path);
}
