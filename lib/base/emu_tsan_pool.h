/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_TSAN_POOL_H
#define EMU_TSAN_POOL_H

/**
 * @file
 * The mempool ops a DPDK program gives rte_pktmbuf_pool_create_by_ops(): NULL (DPDK's default)
 * in a normal build; in a ThreadSanitizer build, DPDK's ring ops wrapped so that TSan sees an
 * mbuf freed on one lcore and allocated on another as handed over (lib/base/emu_tsan.h).
 * Header only, for the programs that use DPDK (rocemu's pipelines, rocegen's pool); one
 * translation unit of a program includes it.
 */
#include <string.h>

#include <rte_mempool.h>

#include "lib/base/emu_tsan.h"

#if defined(__SANITIZE_THREAD__)
/*
 * ThreadSanitizer builds: the pool's ring handed through ops that say what the ring does for
 * TSan, which cannot see it (librte_mempool_ring is not instrumented): an mbuf one lcore puts
 * back (the PMD after sending, a drop) is acquired by the lcore that takes it next. Objects a
 * lcore frees into its own cache and takes back never cross threads.
 */
static const struct rte_mempool_ops *emu_tsan_base;

static int
emu_tsan_alloc(struct rte_mempool *mp)
{
	return emu_tsan_base->alloc(mp);
}

static void
emu_tsan_free(struct rte_mempool *mp)
{
	emu_tsan_base->free(mp);
}

static int
emu_tsan_enqueue(struct rte_mempool *mp, void *const *objs, unsigned int n)
{
	EMU_TSAN_RELEASE(mp);
	return emu_tsan_base->enqueue(mp, objs, n);
}

static int
emu_tsan_dequeue(struct rte_mempool *mp, void **objs, unsigned int n)
{
	int rc = emu_tsan_base->dequeue(mp, objs, n);

	EMU_TSAN_ACQUIRE(mp);
	return rc;
}

static unsigned int
emu_tsan_get_count(const struct rte_mempool *mp)
{
	return emu_tsan_base->get_count(mp);
}

static struct rte_mempool_ops emu_tsan_ops = {
	.name = "emu_tsan_ring", .alloc = emu_tsan_alloc, .free = emu_tsan_free,
	.enqueue = emu_tsan_enqueue, .dequeue = emu_tsan_dequeue,
	.get_count = emu_tsan_get_count,
};

static inline const char *
emu_tsan_pool_ops(void)
{
	unsigned int i;

	if (emu_tsan_base == NULL) {
		for (i = 0; i < rte_mempool_ops_table.num_ops; i++)
			if (strcmp(rte_mempool_ops_table.ops[i].name, "ring_mp_mc") == 0)
				emu_tsan_base = &rte_mempool_ops_table.ops[i];
		if (emu_tsan_base == NULL || rte_mempool_register_ops(&emu_tsan_ops) < 0)
			return NULL; /* the default ops */
	}
	return emu_tsan_ops.name;
}
#else
static inline const char *
emu_tsan_pool_ops(void)
{
	return NULL; /* DPDK's default (rte_mbuf_best_mempool_ops()) */
}
#endif

#endif
