/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>

#include "lib/pkt/emu_heldq.h"

int
emu_heldq_init(struct emu_heldq *q, uint32_t cap)
{
	q->heap = calloc(cap, sizeof(*q->heap));
	if (q->heap == NULL)
		return -ENOMEM;
	q->cap = cap;
	q->n = 0;
	q->seq = 0;
	return 0;
}

void
emu_heldq_free(struct emu_heldq *q)
{
	uint32_t k;

	for (k = 0; q->heap != NULL && k < q->n; k++)
		rte_pktmbuf_free(q->heap[k].m);
	free(q->heap);
	q->heap = NULL;
	q->n = 0;
	q->cap = 0;
}

static inline bool
emu_heldq_before(const struct emu_heldq_item *a, const struct emu_heldq_item *b)
{
	return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->seq < b->seq);
}

void
emu_heldq_push(struct emu_heldq *q, uint64_t due_ns, struct rte_mbuf *m)
{
	struct emu_heldq_item h = { .due_ns = due_ns, .seq = q->seq++, .m = m };
	uint32_t i = q->n++;

	while (i > 0 && emu_heldq_before(&h, &q->heap[(i - 1) / 2])) {
		q->heap[i] = q->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->heap[i] = h;
}

static struct rte_mbuf *
emu_heldq_pop(struct emu_heldq *q)
{
	struct rte_mbuf *m = q->heap[0].m;
	struct emu_heldq_item last = q->heap[--q->n];
	uint32_t i = 0, c;

	while ((c = 2 * i + 1) < q->n) {
		if (c + 1 < q->n && emu_heldq_before(&q->heap[c + 1], &q->heap[c]))
			c++;
		if (!emu_heldq_before(&q->heap[c], &last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (q->n > 0)
		q->heap[i] = last;
	return m;
}

uint16_t
emu_heldq_release(struct emu_heldq *q, uint64_t now_ns, struct rte_mbuf **pkts, uint16_t cap)
{
	uint16_t n = 0;

	while (n < cap && q->n > 0 && q->heap[0].due_ns <= now_ns)
		pkts[n++] = emu_heldq_pop(q);
	return n;
}
