/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_out.h"
#include "lib/switch/emu_switch_int.h"
#include "lib/switch/emu_timeline.h"

#define TL_BUF (64 * 1024)

/* What a row shows, to write a row only when it changed. */
struct tl_prio {
	uint64_t queue_bytes, queue_pkts, max_queue_bytes;
	bool paused, xoff;
};
struct tl_port {
	uint64_t max_queue_bytes, tx_pkts, tx_bytes, ecn_marked, drops;
};

struct emu_timeline {
	struct emu_out out;
	char *buf;
	size_t used;
	uint64_t rows;
	bool first;
	struct tl_prio prio[EMU_MAX_PORTS][EMU_TM_N_PRIO];
	struct tl_port port[EMU_MAX_PORTS];
};

static void
tl_flush(struct emu_timeline *tl)
{
	if (tl->used > 0)
		emu_out_write(&tl->out, tl->buf, tl->used); /* the first error is kept */
	tl->used = 0;
}

static void
tl_row(struct emu_timeline *tl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
tl_row(struct emu_timeline *tl, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (tl->used + 512 > TL_BUF)
		tl_flush(tl);
	va_start(ap, fmt);
	n = vsnprintf(tl->buf + tl->used, TL_BUF - tl->used, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < TL_BUF - tl->used)
		tl->used += (size_t)n;
	tl->rows++;
}

struct emu_timeline *
emu_timeline_open(const char *path, const struct emu_switch *sw, struct emu_err *err)
{
	struct emu_timeline *tl = calloc(1, sizeof(*tl));

	(void)sw;
	if (tl == NULL || (tl->buf = malloc(TL_BUF)) == NULL) {
		free(tl);
		emu_err_setrc(err, -ENOMEM, "%s: out of memory", path);
		return NULL;
	}
	if (emu_out_open(&tl->out, path, err) != 0) {
		free(tl->buf);
		free(tl);
		return NULL;
	}
	tl->first = true;
	tl->used = (size_t)snprintf(tl->buf, TL_BUF, "t_ns,port,prio,queue_bytes,queue_pkts,"
				    "max_queue_bytes,paused,xoff,tx_pkts,tx_bytes,ecn_marked,drops\n");
	return tl;
}

void
emu_timeline_sample(struct emu_timeline *tl, const struct emu_switch *sw,
		    const struct emu_snap *sn, uint64_t t_ns)
{
	unsigned int p, q, k;

	for (p = 0; p < sw->n_ports; p++) {
		const char *name = sw->pl->port_names[p];
		struct tl_port np = { 0 };

		np.max_queue_bytes = sn->tm_ctr[p][EMU_TM_CTR_MAX_QUEUE_BYTES];
		np.tx_pkts = sn->ports[p].tx_pkts;
		np.tx_bytes = sn->ports[p].tx_bytes;
		np.ecn_marked = sn->tm_ctr[p][EMU_TM_CTR_ECN_MARKED];
		for (k = 0; k < EMU_TM_CTR_MAX; k++)
			if (emu_is_drop_name(emu_tm_ctr_names[k]))
				np.drops += sn->tm_ctr[p][k];
		if (tl->first || memcmp(&np, &tl->port[p], sizeof(np)) != 0) {
			tl_row(tl, "%" PRIu64 ",%s,all,,,%" PRIu64 ",,,%" PRIu64 ",%" PRIu64 ",%" PRIu64
			       ",%" PRIu64 "\n", t_ns, name, np.max_queue_bytes, np.tx_pkts,
			       np.tx_bytes, np.ecn_marked, np.drops);
			tl->port[p] = np;
		}
		for (q = 0; q < EMU_TM_N_PRIO; q++) {
			const struct emu_tm_prio_stats *ps = &sn->prio[p][q];
			struct tl_prio nq = { ps->queue_bytes, ps->queue_pkts, ps->max_queue_bytes,
					      ps->paused, ps->xoff };

			if (!tl->first && memcmp(&nq, &tl->prio[p][q], sizeof(nq)) == 0)
				continue;
			if (tl->first && nq.max_queue_bytes == 0 && !nq.paused && !nq.xoff) {
				tl->prio[p][q] = nq; /* an idle queue gets its first row when it moves */
				continue;
			}
			tl_row(tl, "%" PRIu64 ",%s,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d,%d,,,,\n",
			       t_ns, name, q, nq.queue_bytes, nq.queue_pkts, nq.max_queue_bytes,
			       nq.paused, nq.xoff);
			tl->prio[p][q] = nq;
		}
	}
	tl->first = false;
}

int
emu_timeline_close(struct emu_timeline *tl, struct emu_err *err)
{
	int rc;

	if (tl == NULL)
		return 0;
	tl_flush(tl);
	rc = emu_out_commit(&tl->out, err);
	free(tl->buf);
	free(tl);
	return rc;
}

void
emu_timeline_abort(struct emu_timeline *tl)
{
	if (tl == NULL)
		return;
	emu_out_abort(&tl->out);
	free(tl->buf);
	free(tl);
}

uint64_t
emu_timeline_rows(const struct emu_timeline *tl)
{
	return tl->rows;
}
