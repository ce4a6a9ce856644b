/* SPDX-License-Identifier: BSD-3-Clause */
/* A pipeline's memory: its mbufs and their pool, what its queues and stages need, the limit. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "lib/base/emu_json.h"
#include "lib/base/emu_tsan_pool.h"
#include "lib/switch/emu_switch.h"

uint32_t
emu_pipeline_mbufs_needed(const struct emu_pipeline *pl, uint32_t n_rxd, uint32_t n_txd)
{
	uint64_t n = 0;
	unsigned int i;

	if (pl->mbufs != 0)
		return pl->mbufs;
	/* what the queues can hold (slots, or the shared buffer plus headroom in minimum
	 * frames, whichever is less) */
	n = emu_tm_max_queued_pkts(&pl->tm);
	for (i = 0; i < pl->n_ports; i++)
		/* delay line beyond the queue + control frames + rings + TX staging */
		n += 64 + n_rxd + n_txd + EMU_TX_STAGE_PKTS + EMU_TM_CTRL_SLOTS +
		     (emu_tm_wire_slots(&pl->tm.ports[i]) - pl->tm.ports[i].queue_pkts -
		      EMU_TM_CTRL_SLOTS);
	n += 4096; /* stages' created frames, flood copies, per-lcore caches */
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

uint16_t
emu_pipeline_data_room(const struct emu_pipeline *pl)
{
	/* L3 MTU + Ethernet + two VLAN tags, rounded up to a cache line. */
	return (uint16_t)RTE_ALIGN_CEIL(pl->max_mtu + 14 + 8, 64) + RTE_PKTMBUF_HEADROOM;
}


struct rte_mempool *
emu_pool_create(const char *name, uint32_t n, uint16_t data_room, int socket, struct emu_err *err)
{
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create_by_ops(name, n, n >= 4096 ? 256 : 0, EMU_MBUF_PRIV_SIZE,
					    data_room, socket, emu_tsan_pool_ops());
	if (mp == NULL) {
		double mb = (double)n * (data_room + EMU_MBUF_PRIV_SIZE + sizeof(struct rte_mbuf) +
					 64) / (1024.0 * 1024.0);

		emu_err_setrc(err, -ENOMEM,
			      "mbuf pool %s: cannot allocate %u mbufs of %u bytes (about %.0f MB): %s; "
			      "give EAL more memory (-m MB with --no-huge, or more hugepages), "
			      "lower tm.ports[].queue_pkts or the ports' mtu",
			      name, n, data_room, mb, rte_strerror(rte_errno));
	}
	return mp;
}

/* JSON path of the tm.ports[] entry of switch port @p port, or "tm" when it has none. */
static void
emu_pipeline_tm_path(const struct emu_pipeline *pl, unsigned int port, const char *key,
		     char *buf, size_t len)
{
	const json_t *ports = json_object_get(json_object_get(pl->root, "tm"), "ports");
	const json_t *o;
	size_t idx;

	json_array_foreach(ports, idx, o) {
		const char *name = json_string_value(json_object_get(o, "port"));

		if (name != NULL && strcmp(name, pl->port_names[port]) == 0 &&
		    json_object_get(o, key) != NULL) {
			snprintf(buf, len, "tm.ports[%zu].%s", idx, key);
			return;
		}
	}
	snprintf(buf, len, "tm.ports (port %s).%s", pl->port_names[port], key);
}

static void
emu_pipeline_needs_item(struct emu_pipeline_needs *nd, const char *path, uint64_t bytes)
{
	nd->total_bytes += bytes;
	if (bytes > nd->biggest_bytes) {
		nd->biggest_bytes = bytes;
		snprintf(nd->biggest, sizeof(nd->biggest), "%s", path);
	}
}

int
emu_pipeline_needs(const struct emu_pipeline *pl, struct emu_pipeline_needs *nd,
		   struct emu_err *err)
{
	static const char *const lists[] = { "ingress", "egress" };
	uint64_t per_mbuf, other_mbufs;
	char path[EMU_JSON_PATH_LEN];
	unsigned int i, l;
	int rc;

	memset(nd, 0, sizeof(*nd));
	nd->pool_mbufs = emu_pipeline_mbufs_needed(pl, 1024, 1024);
	per_mbuf = (uint64_t)emu_pipeline_data_room(pl) + EMU_MBUF_PRIV_SIZE +
		   sizeof(struct rte_mbuf) + 64;
	nd->pool_bytes = (uint64_t)nd->pool_mbufs * per_mbuf;
	other_mbufs = nd->pool_mbufs;
	/* each port's delay line: its mbufs and its slot array, named by delay_us */
	for (i = 0; i < pl->n_ports && pl->mbufs == 0; i++) {
		const struct emu_tm_port_cfg *pc = &pl->tm.ports[i];
		uint64_t wire = emu_tm_wire_slots(pc);
		uint64_t beyond = wire - pc->queue_pkts - EMU_TM_CTRL_SLOTS;

		emu_pipeline_tm_path(pl, i, "delay_us", path, sizeof(path));
		emu_pipeline_needs_item(nd, path, beyond * per_mbuf +
					rte_align32pow2((uint32_t)wire) * sizeof(void *));
		other_mbufs -= beyond < other_mbufs ? beyond : other_mbufs;
		/* the queues' slot arrays */
		nd->total_bytes += (uint64_t)EMU_TM_N_PRIO *
				   rte_align32pow2(pc->queue_pkts < 2 ? 2 : pc->queue_pkts) *
				   sizeof(void *);
	}
	emu_pipeline_needs_item(nd, pl->mbufs != 0 ? "mbufs" : "tm.ports[].queue_pkts",
				other_mbufs * per_mbuf);
	for (l = 0; l < 2; l++) {
		const json_t *list = json_object_get(pl->root, lists[l]);
		const json_t *o;
		size_t idx;

		json_array_foreach(list, idx, o) {
			const struct emu_stage_ops *ops =
				emu_stage_find(json_string_value(json_object_get(o, "type")));
			struct emu_stage_needs sn;
			struct emu_stage_env env;
			unsigned int f;

			if (ops == NULL || ops->needs == NULL)
				continue;
			emu_json_path_idx(path, sizeof(path), lists[l], idx);
			memset(&sn, 0, sizeof(sn));
			memset(&env, 0, sizeof(env));
			env.path = path;
			env.n_ports = pl->n_ports;
			env.port_names = pl->port_names;
			env.egress = l == 1;
			env.check_only = true;
			env.max_frame_bytes = pl->max_mtu + 14 + 8;
			rc = ops->needs(o, &env, &sn, err);
			if (rc != 0)
				return rc;
			if (sn.mem_bytes > 0) {
				char kp[EMU_JSON_PATH_LEN];

				emu_json_path(kp, sizeof(kp), path, sn.mem_key);
				emu_pipeline_needs_item(nd, kp, sn.mem_bytes);
				nd->eal_bytes += sn.mem_bytes;
			}
			for (f = 0; f < sn.n_files && nd->n_files < EMU_PIPELINE_MAX_FILES; f++) {
				emu_json_path(nd->file_roles[nd->n_files],
					      sizeof(nd->file_roles[0]), path, sn.file_keys[f]);
				nd->file_input[nd->n_files] = sn.file_input[f];
				nd->file_rotates[nd->n_files] = sn.file_rotates[f];
				nd->files[nd->n_files++] = sn.files[f];
			}
		}
	}
	nd->eal_bytes += nd->pool_bytes;
	return 0;
}

uint64_t
emu_mem_limit_bytes(uint64_t max_mem_mb)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t phys = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : UINT64_MAX;

	if (max_mem_mb != 0 && max_mem_mb * 1024 * 1024 < phys)
		return max_mem_mb * 1024 * 1024;
	return phys;
}

/* "123 MB" below a GB, "1.6 GB" above. */
static void
emu_fmt_bytes(char *buf, size_t len, uint64_t b)
{
	if (b < 1000000000ULL)
		snprintf(buf, len, "%.0f MB", (double)b / 1e6);
	else
		snprintf(buf, len, "%.1f GB", (double)b / 1e9);
}

int
emu_pipeline_check_mem(const struct emu_pipeline_needs *nd, uint64_t limit_bytes,
		       bool limit_given, struct emu_err *err)
{
	char total[32], key[32], limit[32];

	if (nd->total_bytes <= limit_bytes)
		return 0;
	emu_fmt_bytes(total, sizeof(total), nd->total_bytes);
	emu_fmt_bytes(key, sizeof(key), nd->biggest_bytes);
	emu_fmt_bytes(limit, sizeof(limit), limit_bytes);
	return emu_err_setrc(err, -E2BIG,
			     "%s: the switch would need %s of memory (%s for this key), more than "
			     "%s %s; lower it", nd->biggest, total, key,
			     limit_given ? "--max-mem" : "this machine's", limit);
}
