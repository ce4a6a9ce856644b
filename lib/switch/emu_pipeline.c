/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "lib/base/emu_json.h"
#include "lib/base/emu_keys.h"
#include "lib/base/emu_tsan.h"
#include "lib/switch/emu_schema.h"
#include "lib/tm/emu_tm_keys.h"
#include "lib/switch/emu_switch.h"

#define EMU_MTU_MIN 68
#define EMU_MTU_MAX 9216
#define EMU_MTU_DEFAULT 9216

static const struct emu_key emu_pipeline_port_entries[] = {
	{ .name = "name", .type = EMU_KEY_STR, .required = true,
	  .schema = "{\"pattern\": \"^[A-Za-z0-9_-]{1,31}$\"}",
	  .desc = "the port's name (unique): 1-31 characters of [A-Za-z0-9_-]" },
	EMU_K_STR("dev", NULL, "the DPDK device (an EAL --vdev or PCI address) in live mode"),
	EMU_K_INT("mtu", EMU_MTU_DEFAULT, EMU_MTU_MIN, EMU_MTU_MAX, "L3 MTU (bytes)"),
};
const struct emu_key_table emu_pipeline_port_table =
	EMU_KEY_TABLE("ports[]", "a switch port", emu_pipeline_port_entries);

/* ingress and egress: arrays of stage objects, one schema per stage type (emu_schema.c) */
static const struct emu_key emu_pipeline_entries[] = {
	EMU_K_SCHEMA_URI,
	{ .name = "description", .type = EMU_KEY_STR, .schema = "{\"minLength\": 0}",
	  .desc = "free text" },
	EMU_K_ARR_REQ("ports", EMU_KEY_OBJ, &emu_pipeline_port_table,
		  "{\"minItems\": 1, \"maxItems\": " EMU_KEYS_STR(EMU_MAX_PORTS) "}",
		  "the switch's ports, 1-16"),
	EMU_K_ANY("ingress", "{\"type\": \"array\"}", "stages run on the way in, in order"),
	EMU_K_ANY("egress", "{\"type\": \"array\"}", "stages run on the way out, in order"),
	EMU_K_OBJ("tm", &emu_tm_table, "the traffic manager"),
	{ .name = "mbufs", .type = EMU_KEY_INT, .has_def = true, .imin = 0, .imax = 1 << 26,
	  .schema = "{\"not\": {\"exclusiveMinimum\": 0, \"exclusiveMaximum\": 1024}}",
	  .desc = "packet buffers; 0: derived from the TM, else at least 1024" },
	EMU_K_ARR("incast", EMU_KEY_OBJ, &emu_incast_table,
		  "{\"maxItems\": " EMU_KEYS_STR(EMU_MAX_INCAST) "}",
		  "synthetic incast sources, up to 8"),
	EMU_K_OBJ("fabric", &fab_table, "an emulated fabric between the ports: switches and links"),
};
const struct emu_key_table emu_pipeline_table =
	EMU_KEY_TABLE("rocemu pipeline", "a switch: ports, stages, TM, incast sources",
		      emu_pipeline_entries);
#define T (&emu_pipeline_port_table)

static int
emu_pipeline_port_name_ok(const char *s)
{
	size_t i;

	if (strlen(s) > 31)
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

static int
emu_pipeline_ports(struct emu_pipeline *pl, struct emu_err *err)
{
	const json_t *ports = json_object_get(pl->root, "ports");
	char path[EMU_JSON_PATH_LEN];
	const json_t *o;
	size_t idx;
	unsigned int j;
	int64_t mtu;
	int rc;

	if (ports == NULL)
		return emu_err_set(err, "ports: required key is missing");
	rc = emu_json_expect_array(ports, "ports", err);
	if (rc != 0)
		return rc;
	if (json_array_size(ports) < 1 || json_array_size(ports) > EMU_MAX_PORTS)
		return emu_err_set(err, "ports: must list 1 to %d ports, got %zu", EMU_MAX_PORTS,
				   json_array_size(ports));
	pl->max_mtu = 0;
	json_array_foreach(ports, idx, o) {
		struct emu_pipeline_port *p = &pl->ports[idx];

		emu_json_path_idx(path, sizeof(path), "ports", idx);
		rc = emu_json_expect_object(o, path, err);
		if (rc == 0)
			rc = emu_keys_check(o, path, T, err);
		if (rc == 0)
			rc = emu_key_str(o, path, T, "name", &p->name, err);
		if (rc == 0)
			rc = emu_key_str(o, path, T, "dev", &p->dev, err);
		if (rc == 0)
			rc = emu_key_int(o, path, T, "mtu", &mtu, err);
		if (rc != 0)
			return rc;
		if (!emu_pipeline_port_name_ok(p->name))
			return emu_err_set(err,
					   "%s.name: must be 1-31 characters of [A-Za-z0-9_-], got \"%s\"",
					   path, p->name);
		for (j = 0; j < idx; j++)
			if (strcmp(pl->ports[j].name, p->name) == 0)
				return emu_err_set(err, "%s.name: \"%s\" is already ports[%u]",
						   path, p->name, j);
		p->mtu = (uint32_t)mtu;
		if (p->mtu > pl->max_mtu)
			pl->max_mtu = p->mtu;
		pl->port_names[idx] = p->name;
	}
	pl->n_ports = json_array_size(ports);
	pl->port_names[pl->n_ports] = NULL;
	return 0;
}

static int
emu_pipeline_stage_list(struct emu_pipeline *pl, const char *key, struct emu_err *err)
{
	const json_t *list = json_object_get(pl->root, key);
	char path[EMU_JSON_PATH_LEN];
	const char *type;
	const json_t *o;
	size_t idx;
	int rc;

	if (list == NULL)
		return 0;
	rc = emu_json_expect_array(list, key, err);
	if (rc != 0)
		return rc;
	json_array_foreach(list, idx, o) {
		emu_json_path_idx(path, sizeof(path), key, idx);
		rc = emu_json_expect_object(o, path, err);
		if (rc == 0)
			rc = emu_json_get_str(o, path, "type", true, NULL, &type, err);
		if (rc != 0)
			return rc;
		if (emu_stage_find(type) == NULL) {
			char known[256];
			size_t used = 0;
			unsigned int i;

			known[0] = '\0';
			for (i = 0; emu_stage_registry[i] != NULL && used < sizeof(known); i++)
				used += snprintf(known + used, sizeof(known) - used, "%s%s",
						 i ? ", " : "", emu_stage_registry[i]->type);
			return emu_err_set(err, "%s.type: unknown stage type \"%s\" (known: %s)",
					   path, type, known);
		}
	}
	return 0;
}

/* The fabric's links become TM ports after the real ones; every TM port gets its name. */
static int
emu_pipeline_fabric(struct emu_pipeline *pl, const uint32_t *mtus, struct emu_err *err)
{
	unsigned int i;
	int rc;

	for (i = 0; i < pl->n_ports; i++)
		pl->tm_port_names[i] = pl->port_names[i];
	pl->tm_port_names[pl->n_ports] = NULL;
	rc = fab_cfg_parse(json_object_get(pl->root, "fabric"), pl->n_ports, pl->port_names,
			   mtus, &pl->fabric, err);
	if (rc != 0 || pl->fabric == NULL)
		return rc;
	for (i = 0; i < pl->fabric->n_links; i++) {
		pl->tm.ports[pl->n_ports + i] = pl->fabric->links[i].tm;
		pl->tm_port_names[pl->n_ports + i] = pl->fabric->links[i].name;
	}
	pl->tm.n_ports = pl->n_ports + pl->fabric->n_links;
	pl->tm_port_names[pl->tm.n_ports] = NULL;
	return 0;
}

/* Whether ingress has a parse stage (the stage list was checked: every entry has a type). */
static bool
emu_pipeline_has_parse(const struct emu_pipeline *pl)
{
	const json_t *o;
	size_t idx;

	json_array_foreach(json_object_get(pl->root, "ingress"), idx, o)
		if (strcmp(json_string_value(json_object_get(o, "type")), "parse") == 0)
			return true;
	return false;
}

/*
 * A reorder or cnp stage acts on RoCE fields only a parse stage in ingress fills: without one
 * it would pass every frame through untouched (reorder: no QP, no PSN; cnp: no CE-marked
 * data). Refused, naming the stage.
 */
static int
emu_pipeline_stages_parsed(const struct emu_pipeline *pl, struct emu_err *err)
{
	static const char *const lists[] = { "ingress", "egress" };
	const json_t *o;
	unsigned int l;
	size_t idx;

	if (emu_pipeline_has_parse(pl))
		return 0;
	for (l = 0; l < RTE_DIM(lists); l++)
		json_array_foreach(json_object_get(pl->root, lists[l]), idx, o) {
			const char *type = json_string_value(json_object_get(o, "type"));

			if (strcmp(type, "reorder") == 0 || strcmp(type, "cnp") == 0)
				return emu_err_set(err, "%s[%zu]: a %s stage needs a \"parse\" stage in "
						   "ingress (unparsed, it would pass every frame "
						   "through untouched)", lists[l], idx, type);
		}
	return 0;
}

/*
 * A fabric switch that hashes flows (ecmp), tells them apart (flowlet) or matches them
 * (spray_match) reads fields only a parse stage in ingress fills: without one every flow looks
 * alike and takes one path. Refused where such a switch has a choice of next hops to a leaf.
 */
static int
emu_pipeline_fabric_parsed(const struct emu_pipeline *pl, struct emu_err *err)
{
	const struct fab_cfg *fc = pl->fabric;
	unsigned int s, k;

	if (fc == NULL || emu_pipeline_has_parse(pl))
		return 0;
	for (s = 0; s < fc->n_switches; s++) {
		const struct fab_switch_cfg *sc = &fc->sw[s];
		const json_t *o = json_array_get(json_object_get(json_object_get(pl->root,
							"fabric"), "switches"), s);

		if (sc->mode != FAB_ROUTE_ECMP && sc->mode != FAB_ROUTE_FLOWLET &&
		    !sc->has_spray_match)
			continue;
		for (k = 0; k < pl->n_ports; k++) {
			if (fc->port_leaf[k] == FAB_NONE || fc->n_next[s][fc->port_leaf[k]] <= 1)
				continue;
			if (sc->has_spray_match)
				return emu_err_set(err, "fabric.switches[%u].spray_match: needs a "
						   "\"parse\" stage in ingress (unparsed, it would read "
						   "fields no stage filled)", s);
			return emu_err_set(err, "fabric.switches[%u]%s: route \"%s\"%s needs a "
					   "\"parse\" stage in ingress (unparsed, every flow looks "
					   "alike and takes one path)", s,
					   json_object_get(o, "route") != NULL ? ".route" : "",
					   sc->mode == FAB_ROUTE_ECMP ? "ecmp" : "flowlet",
					   json_object_get(o, "route") != NULL ? "" : " (the default)");
		}
	}
	return 0;
}

/* Incast sources "attach"ed to a fabric leaf: the leaf's index, which must hold real ports. */
static int
emu_pipeline_incast_attach(struct emu_pipeline *pl, struct emu_err *err)
{
	const struct fab_cfg *fc = pl->fabric;
	unsigned int i, s, p;

	for (i = 0; i < pl->n_incast; i++) {
		struct emu_incast_cfg *c = &pl->incast[i];

		if (c->attach == NULL)
			continue;
		if (fc == NULL)
			return emu_err_set(err, "incast[%u].attach: only with a \"fabric\" section",
					   i);
		for (s = 0; s < fc->n_switches && strcmp(fc->sw[s].name, c->attach) != 0; s++)
			;
		if (s == fc->n_switches)
			return emu_err_set(err, "incast[%u].attach: no fabric switch named \"%s\"",
					   i, c->attach);
		for (p = 0; p < pl->n_ports && fc->port_leaf[p] != s; p++)
			;
		if (p == pl->n_ports)
			return emu_err_set(err,
					   "incast[%u].attach: \"%s\" is not a leaf (no port of "
					   "ports[] attaches to it)",
					   i, c->attach);
		if (fc->port_leaf[c->port] == FAB_NONE)
			return emu_err_set(err,
					   "incast[%u].port: \"%s\" is not on a fabric leaf: an "
					   "attached source's frames cross the fabric to it",
					   i, pl->port_names[c->port]);
		c->attach_leaf = (uint16_t)s;
	}
	return 0;
}

int
emu_pipeline_from_json(json_t *root, const char *file, struct emu_pipeline **out,
		       struct emu_err *err)
{
	uint32_t mtus[EMU_MAX_PORTS];
	struct emu_pipeline *pl;
	const char *schema;
	unsigned int i;
	char *tmp;
	int64_t mbufs;
	int rc;

	pl = calloc(1, sizeof(*pl));
	if (pl == NULL)
		return emu_err_setrc(err, -ENOMEM, "out of memory");
	pl->root = json_incref(root);
	pl->file = strdup(file != NULL ? file : "(pipeline)");
	tmp = strdup(pl->file);
	pl->dir = tmp != NULL ? strdup(dirname(tmp)) : NULL;
	free(tmp);
	if (pl->file == NULL || pl->dir == NULL) {
		rc = emu_err_setrc(err, -ENOMEM, "out of memory");
		goto fail;
	}
	rc = emu_json_expect_object(root, "", err);
	if (rc == 0)
		rc = emu_keys_check(root, "", &emu_pipeline_table, err);
	if (rc == 0)
		rc = emu_key_str(root, "", &emu_pipeline_table, "$schema", &schema, err);
	if (rc == 0 && json_object_get(root, "description") != NULL &&
	    !json_is_string(json_object_get(root, "description")))
		rc = emu_err_set(err, "description: must be a string, got %s",
				 emu_json_type_name(json_object_get(root, "description")));
	if (rc == 0)
		rc = emu_pipeline_ports(pl, err);
	if (rc == 0)
		rc = emu_pipeline_stage_list(pl, "ingress", err);
	if (rc == 0)
		rc = emu_pipeline_stage_list(pl, "egress", err);
	if (rc == 0) {
		for (i = 0; i < pl->n_ports; i++)
			mtus[i] = pl->ports[i].mtu;
		rc = emu_tm_cfg_parse(json_object_get(root, "tm"), pl->n_ports, pl->port_names,
				      mtus, &pl->tm, err);
	}
	if (rc == 0)
		rc = emu_pipeline_fabric(pl, mtus, err);
	if (rc == 0)
		rc = emu_pipeline_fabric_parsed(pl, err);
	if (rc == 0)
		rc = emu_pipeline_stages_parsed(pl, err);
	if (rc == 0)
		rc = emu_incast_parse(json_object_get(root, "incast"), pl->n_ports, pl->port_names,
				      mtus, pl->incast, &pl->n_incast, err);
	if (rc == 0)
		rc = emu_incast_check_tm(pl->incast, pl->n_incast, &pl->tm, err);
	if (rc == 0)
		rc = emu_pipeline_incast_attach(pl, err);
	if (rc == 0)
		rc = emu_key_int(root, "", &emu_pipeline_table, "mbufs", &mbufs, err);
	if (rc != 0)
		goto fail;
	if (mbufs != 0 && mbufs < 1024) {
		rc = emu_err_set(err, "mbufs: must be 0 (derive from the TM) or >= 1024, got %lld",
				 (long long)mbufs);
		goto fail;
	}
	pl->mbufs = (uint32_t)mbufs;
	*out = pl;
	return 0;
fail:
	emu_pipeline_free(pl);
	return rc;
}

int
emu_pipeline_load(const char *file, struct emu_pipeline **out, struct emu_err *err)
{
	json_t *root;
	int rc;

	rc = emu_json_load_file(file, &root, err);
	if (rc != 0)
		return rc;
	rc = emu_pipeline_from_json(root, file, out, err);
	json_decref(root);
	return rc;
}

void
emu_pipeline_free(struct emu_pipeline *pl)
{
	if (pl == NULL)
		return;
	fab_cfg_free(pl->fabric);
	json_decref(pl->root);
	free(pl->file);
	free(pl->dir);
	free(pl);
}

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

static const char *
emu_pool_ops(void)
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
static const char *
emu_pool_ops(void)
{
	return NULL; /* DPDK's default (rte_mbuf_best_mempool_ops()) */
}
#endif

struct rte_mempool *
emu_pool_create(const char *name, uint32_t n, uint16_t data_room, int socket, struct emu_err *err)
{
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create_by_ops(name, n, n >= 4096 ? 256 : 0, EMU_MBUF_PRIV_SIZE,
					    data_room, socket, emu_pool_ops());
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
