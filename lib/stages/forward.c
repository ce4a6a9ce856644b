/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * forward: chooses each packet's egress port.
 *   "pairs"    bump in the wire: each listed pair of ports forwards to each other.
 *   "static"   a MAC table from the file; unknown destinations flood or drop.
 *   "learning" a learning bridge: source MACs are learned per port with ageing;
 *              broadcast, multicast and unknown unicast flood to every other port;
 *              a frame whose destination sits behind its own ingress port is filtered.
 * The MAC table is an rte_hash (EAL memory, O(1)); the entry position it returns
 * indexes our own port/last-seen arrays.
 *
 * With several workers (live --workers) a learning table is one, shared by every replica of
 * the stage: an rte_hash with lock-free readers and several writers (RW_CONCURRENCY_LF,
 * MULTI_WRITER_ADD), so a MAC learned on one worker's RX is known to every worker. Its
 * entries are never deleted while shared (a position is then never reused under a reader,
 * with no RCU to run): an aged entry is marked (last-seen 1) and comes back when its MAC is
 * seen again; a new entry's port is stored before its last-seen value (a release store), and a
 * reader that finds last-seen 0 treats the MAC as still unknown. Last-seen is refreshed at most
 * every FORWARD_SHARED_REFRESH_NS, so that frames do not write a line other workers read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>

#include "lib/base/emu_json.h"
#include "lib/stages/stages.h"

/* A shared table's last-seen refresh period: entries age at most this much early. */
#define FORWARD_SHARED_REFRESH_NS 100000000ULL
/* A shared table's last-seen values that are not times: being added, aged */
#define FORWARD_SEEN_ADDING 0
#define FORWARD_SEEN_AGED 1

#define FORWARD_FOREACH_CTR(_) \
	_(FORWARDED, "forwarded") \
	_(FLOODED, "flooded") \
	_(LEARNED, "learned") \
	_(MOVED, "moved") \
	_(AGED, "aged") \
	_(TABLE_FULL, "learn_table_full") \
	_(DROP_NO_PAIR, "drop_no_pair") \
	_(DROP_UNKNOWN, "drop_unknown_dst") \
	_(DROP_SAME_PORT, "drop_same_port")

enum forward_ctr {
#define FORWARD_CTR_ENUM(e, s) FORWARD_CTR_##e,
	FORWARD_FOREACH_CTR(FORWARD_CTR_ENUM)
#undef FORWARD_CTR_ENUM
	FORWARD_CTR_MAX
};

static const char *const forward_ctr_names[] = {
#define FORWARD_CTR_NAME(e, s) s,
	FORWARD_FOREACH_CTR(FORWARD_CTR_NAME)
#undef FORWARD_CTR_NAME
};

static const char *const forward_keys[] = { "mode", "pairs", "macs", "unknown", "ageing_s",
					    "max_macs", NULL };

enum forward_mode { FORWARD_PAIRS, FORWARD_STATIC, FORWARD_LEARNING };

static const char *const forward_mode_vals[] = { "pairs", "static", "learning", NULL };
static const char *const forward_unknown_vals[] = { "flood", "drop", NULL };
static const char *const forward_mac_keys[] = { "mac", "port", NULL };
static const struct emu_key forward_mac_entries[] = {
	{ .name = "mac", .type = EMU_KEY_STR, .required = true,
	  .schema = "{\"pattern\": \"^[0-9A-Fa-f]{1,2}(:[0-9A-Fa-f]{1,2}){5}$\"}",
	  .desc = "a unicast MAC address, aa:bb:cc:dd:ee:ff" },
	EMU_K_STR_REQ("port", "the port (a ports[] name) frames to it leave by"),
};
static const struct emu_key_table forward_mac_table = {
	.title = "forward mac", .desc = "a static MAC table entry",
	.keys = forward_mac_entries, .n_keys = RTE_DIM(forward_mac_entries),
	.names = forward_mac_keys,
};
static const struct emu_key forward_key_entries[] = {
	EMU_K_ENUM("mode", "pairs", forward_mode_vals,
		   "pairs of ports wired together, a static MAC table, or MAC learning"),
	EMU_K_ANY("pairs", "{\"type\": \"array\", \"items\": {\"type\": \"array\", "
		  "\"minItems\": 2, \"maxItems\": 2, \"items\": {\"type\": \"string\"}}}",
		  "mode pairs: [[\"A\", \"B\"], ...] port names; default with 2 ports: the two"),
	EMU_K_ARR("macs", EMU_KEY_OBJ, &forward_mac_table, NULL,
		  "static MAC entries (required in mode static; learning starts from them)"),
	EMU_K_ENUM("unknown", "flood", forward_unknown_vals,
		   "frames to an unknown MAC: flood or drop (not in mode pairs)"),
	EMU_K_NUM("ageing_s", 300, 0, true, 1e6, "learned entries expire after (s)"),
	EMU_K_INT("max_macs", 4096, 8, 1 << 20, "MAC table size"),
};
static const struct emu_key_rule forward_rules[] = {
	{ "mode", EMU_KEY_LIST("pairs"), NULL,
	  EMU_KEY_LIST("macs", "unknown", "ageing_s", "max_macs") },
	{ "mode", EMU_KEY_LIST("static", "learning"), NULL, EMU_KEY_LIST("pairs") },
	{ "mode", EMU_KEY_LIST("static"), EMU_KEY_LIST("macs"), NULL },
};
static const struct emu_key_table forward_key_table = {
	.title = "forward", .desc = "chooses each packet's egress port",
	.keys = forward_key_entries, .n_keys = RTE_DIM(forward_key_entries),
	.names = forward_keys, .extra_names = emu_stage_extra_names,
	.rules = forward_rules, .n_rules = RTE_DIM(forward_rules),
};
#define T (&forward_key_table)

struct forward_priv {
	enum forward_mode mode;
	bool flood_unknown;
	uint16_t pair_of[EMU_MAX_PORTS];
	uint64_t ageing_ns; /* 0 = never (static entries) */
	struct rte_hash *macs;
	uint16_t *entry_port;
	uint64_t *entry_seen_ns;
	bool *entry_static;
	uint32_t max_macs;
	bool shared;      /* one table for every replica (learning, several workers) */
	bool table_owner; /* frees the table: the primary's stage, or a stage alone */
};

static uint32_t forward_seq;

static inline uint64_t
forward_mac_key(const uint8_t *mac)
{
	uint64_t k = 0;

	memcpy(&k, mac, 6);
	return k;
}

static void
forward_table_free(struct forward_priv *fp)
{
	if (!fp->table_owner)
		return;
	rte_hash_free(fp->macs);
	free(fp->entry_port);
	free(fp->entry_seen_ns);
	free(fp->entry_static);
	fp->macs = NULL;
	fp->entry_port = NULL;
	fp->entry_seen_ns = NULL;
	fp->entry_static = NULL;
}

static int
forward_table_create(struct forward_priv *fp, const char *path, bool shared, struct emu_err *err)
{
	struct rte_hash_parameters hp;
	char name[RTE_HASH_NAMESIZE];
	size_t n;

	snprintf(name, sizeof(name), "emu_fwd_%u",
		 __atomic_fetch_add(&forward_seq, 1, __ATOMIC_RELAXED));
	memset(&hp, 0, sizeof(hp));
	hp.name = name;
	hp.entries = fp->max_macs < 8 ? 8 : fp->max_macs;
	hp.key_len = sizeof(uint64_t);
	hp.hash_func = rte_jhash;
	hp.socket_id = (int)rte_socket_id();
	if (shared)
		hp.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
				RTE_HASH_EXTRA_FLAGS_MULTI_WRITER_ADD;
	fp->table_owner = true;
	fp->shared = shared;
	fp->macs = rte_hash_create(&hp);
	/* positions go up to rte_hash_max_key_id(): past entries with several writers (each
	 * lcore's cache of free slots) */
	n = fp->macs != NULL ? (size_t)rte_hash_max_key_id(fp->macs) + 1 : 0;
	if (n < (size_t)hp.entries * 2 + 64)
		n = (size_t)hp.entries * 2 + 64;
	fp->entry_port = calloc(n, sizeof(*fp->entry_port));
	fp->entry_seen_ns = calloc(n, sizeof(*fp->entry_seen_ns));
	fp->entry_static = calloc(n, sizeof(*fp->entry_static));
	if (fp->macs == NULL || fp->entry_port == NULL || fp->entry_seen_ns == NULL ||
	    fp->entry_static == NULL)
		return emu_err_setrc(err, -ENOMEM, "%s: cannot create a MAC table of %u entries",
				     path, hp.entries);
	return 0;
}

static int
forward_parse_pairs(struct forward_priv *fp, const json_t *cfg, const struct emu_stage_env *env,
		    struct emu_err *err)
{
	char path[EMU_JSON_PATH_LEN], p2[EMU_JSON_PATH_LEN], p3[EMU_JSON_PATH_LEN];
	const json_t *pairs = json_object_get(cfg, "pairs");
	const json_t *pair, *v;
	size_t i, j;
	int idx[2];

	emu_json_path(path, sizeof(path), env->path, "pairs");
	if (pairs == NULL) {
		/* Default: a two-port switch is a wire between its ports. */
		if (env->n_ports != 2)
			return emu_err_set(err,
					   "%s: required when the pipeline has %u ports (only a "
					   "2-port pipeline pairs its ports by default)",
					   path, env->n_ports);
		fp->pair_of[0] = 1;
		fp->pair_of[1] = 0;
		return 0;
	}
	if (emu_json_expect_array(pairs, path, err) != 0)
		return -EINVAL;
	json_array_foreach(pairs, i, pair) {
		emu_json_path_idx(p2, sizeof(p2), path, i);
		if (!json_is_array(pair) || json_array_size(pair) != 2)
			return emu_err_set(err, "%s: must be an array of two port names", p2);
		json_array_foreach(pair, j, v) {
			emu_json_path_idx(p3, sizeof(p3), p2, j);
			if (!json_is_string(v))
				return emu_err_set(err, "%s: must be a port name, got %s", p3,
						   emu_json_type_name(v));
			idx[j] = emu_stage_env_port(env, json_string_value(v));
			if (idx[j] < 0)
				return emu_err_set(err, "%s: no port named \"%s\"", p3,
						   json_string_value(v));
			if (fp->pair_of[idx[j]] != EMU_PORT_NONE)
				return emu_err_set(err, "%s: port \"%s\" is already in a pair", p3,
						   json_string_value(v));
		}
		if (idx[0] == idx[1])
			return emu_err_set(err, "%s: a port cannot be paired with itself", p2);
		fp->pair_of[idx[0]] = (uint16_t)idx[1];
		fp->pair_of[idx[1]] = (uint16_t)idx[0];
	}
	return 0;
}

static int
forward_parse_macs(struct forward_priv *fp, const json_t *cfg, const struct emu_stage_env *env,
		   struct emu_err *err)
{
	char path[EMU_JSON_PATH_LEN], p2[EMU_JSON_PATH_LEN];
	const json_t *macs = json_object_get(cfg, "macs"), *o;
	const char *mac_s, *port_s;
	uint8_t mac[6];
	uint64_t key;
	size_t i;
	int port, pos, rc;

	emu_json_path(path, sizeof(path), env->path, "macs");
	if (macs == NULL)
		return fp->mode == FORWARD_STATIC ?
			       emu_err_set(err, "%s: required in mode \"static\"", path) : 0;
	rc = emu_json_expect_array(macs, path, err);
	if (rc != 0)
		return rc;
	json_array_foreach(macs, i, o) {
		emu_json_path_idx(p2, sizeof(p2), path, i);
		rc = emu_json_expect_object(o, p2, err);
		if (rc == 0)
			rc = emu_keys_check(o, p2, &forward_mac_table, err);
		if (rc == 0)
			rc = emu_key_str(o, p2, &forward_mac_table, "mac", &mac_s, err);
		if (rc == 0)
			rc = emu_key_str(o, p2, &forward_mac_table, "port", &port_s, err);
		if (rc != 0)
			return rc;
		if (emu_parse_mac(mac_s, mac) != 0)
			return emu_err_set(err, "%s.mac: must look like aa:bb:cc:dd:ee:ff, got \"%s\"",
					   p2, mac_s);
		if (mac[0] & 1)
			return emu_err_set(err, "%s.mac: %s is a multicast address", p2, mac_s);
		port = emu_stage_env_port(env, port_s);
		if (port < 0)
			return emu_err_set(err, "%s.port: no port named \"%s\"", p2, port_s);
		key = forward_mac_key(mac);
		if (rte_hash_lookup(fp->macs, &key) >= 0)
			return emu_err_set(err, "%s.mac: %s is listed twice", p2, mac_s);
		pos = rte_hash_add_key(fp->macs, &key);
		if (pos < 0)
			return emu_err_set(err, "%s: more entries than max_macs (%u)", p2,
					   fp->max_macs);
		fp->entry_port[pos] = (uint16_t)port;
		fp->entry_static[pos] = true;
	}
	return 0;
}

static int
forward_init(void *priv, const json_t *cfg, const struct emu_stage_env *env, struct emu_err *err)
{
	struct forward_priv *fp = priv;
	char path[EMU_JSON_PATH_LEN];
	const char *mode, *unknown;
	double ageing_s;
	int64_t max_macs;
	unsigned int i;
	int rc;

	for (i = 0; i < EMU_MAX_PORTS; i++)
		fp->pair_of[i] = EMU_PORT_NONE;
	rc = emu_key_str(cfg, env->path, T, "mode", &mode, err);
	if (rc == 0)
		rc = emu_key_str(cfg, env->path, T, "unknown", &unknown, err);
	if (rc == 0)
		rc = emu_key_num(cfg, env->path, T, "ageing_s", &ageing_s, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "max_macs", &max_macs, err);
	if (rc != 0)
		return rc;
	fp->mode = strcmp(mode, "static") == 0	 ? FORWARD_STATIC :
		   strcmp(mode, "learning") == 0 ? FORWARD_LEARNING :
						   FORWARD_PAIRS;
	fp->flood_unknown = strcmp(unknown, "flood") == 0;
	fp->ageing_ns = (uint64_t)(ageing_s * 1e9);
	fp->max_macs = (uint32_t)max_macs;
	if (fp->mode == FORWARD_PAIRS) {
		static const char *const bad[] = { "macs", "unknown", "ageing_s", "max_macs" };

		for (i = 0; i < RTE_DIM(bad); i++)
			if (json_object_get(cfg, bad[i]) != NULL) {
				emu_json_path(path, sizeof(path), env->path, bad[i]);
				return emu_err_set(err, "%s: not used in mode \"pairs\"", path);
			}
		return forward_parse_pairs(fp, cfg, env, err);
	}
	if (json_object_get(cfg, "pairs") != NULL) {
		emu_json_path(path, sizeof(path), env->path, "pairs");
		return emu_err_set(err, "%s: only used in mode \"pairs\"", path);
	}
	if (env->primary != NULL && fp->mode == FORWARD_LEARNING) {
		/* a replica (live --workers): one table for all, the primary's */
		struct forward_priv *pp = env->primary;

		if (!pp->shared) {
			/* the first replica: a table safe for several workers replaces the
			 * primary's (before any frame: it holds only the static entries, which
			 * this stage's configuration, the same, gives again) */
			rc = forward_table_create(fp, env->path, true, err);
			if (rc == 0)
				rc = forward_parse_macs(fp, cfg, env, err);
			if (rc != 0)
				return rc;
			forward_table_free(pp);
			pp->macs = fp->macs;
			pp->entry_port = fp->entry_port;
			pp->entry_seen_ns = fp->entry_seen_ns;
			pp->entry_static = fp->entry_static;
			pp->shared = true;
		}
		fp->macs = pp->macs;
		fp->entry_port = pp->entry_port;
		fp->entry_seen_ns = pp->entry_seen_ns;
		fp->entry_static = pp->entry_static;
		fp->shared = true;
		fp->table_owner = false; /* the primary frees it */
		return 0;
	}
	rc = forward_table_create(fp, env->path, false, err);
	if (rc == 0)
		rc = forward_parse_macs(fp, cfg, env, err);
	return rc;
}

/* Learn (or refresh) source MAC @p src behind @p port. */
static void
forward_learn(struct forward_priv *fp, const uint8_t *src, uint16_t port, uint64_t now_ns,
	      uint64_t *ctr)
{
	uint64_t key = forward_mac_key(src);
	int pos;

	if (src[0] & 1)
		return; /* never learn a group address */
	pos = rte_hash_lookup(fp->macs, &key);
	if (pos >= 0 && fp->shared) {
		uint64_t seen = __atomic_load_n(&fp->entry_seen_ns[pos], __ATOMIC_ACQUIRE);

		if (fp->entry_static[pos])
			return;
		if (seen == FORWARD_SEEN_ADDING) {
			/* another worker is adding it this moment: the same MAC, learned here */
			__atomic_store_n(&fp->entry_port[pos], port, __ATOMIC_RELAXED);
		} else if (__atomic_load_n(&fp->entry_port[pos], __ATOMIC_RELAXED) != port) {
			__atomic_store_n(&fp->entry_port[pos], port, __ATOMIC_RELAXED);
			ctr[FORWARD_CTR_MOVED] += 1;
		} else if (seen > FORWARD_SEEN_AGED && now_ns > seen &&
			   now_ns - seen < FORWARD_SHARED_REFRESH_NS) {
			return; /* refreshed lately: leave the line to the readers */
		}
		__atomic_store_n(&fp->entry_seen_ns[pos], now_ns, __ATOMIC_RELEASE);
		return;
	}
	if (pos >= 0) {
		if (fp->entry_static[pos])
			return;
		if (fp->entry_port[pos] != port) {
			fp->entry_port[pos] = port;
			ctr[FORWARD_CTR_MOVED] += 1;
		}
		fp->entry_seen_ns[pos] = now_ns;
		return;
	}
	pos = rte_hash_add_key(fp->macs, &key);
	if (pos < 0) {
		ctr[FORWARD_CTR_TABLE_FULL] += 1;
		return;
	}
	if (fp->shared) {
		/* the port first, then the time that makes the entry valid to readers; static
		 * stays false from the start (a position is never reused while shared) */
		__atomic_store_n(&fp->entry_port[pos], port, __ATOMIC_RELAXED);
		__atomic_store_n(&fp->entry_seen_ns[pos], now_ns, __ATOMIC_RELEASE);
	} else {
		fp->entry_port[pos] = port;
		fp->entry_seen_ns[pos] = now_ns;
		fp->entry_static[pos] = false;
	}
	ctr[FORWARD_CTR_LEARNED] += 1;
}

/* Egress port for destination @p dst, EMU_PORT_NONE when unknown (aged entries are removed). */
static uint16_t
forward_lookup(struct forward_priv *fp, const uint8_t *dst, uint64_t now_ns, uint64_t *ctr)
{
	uint64_t key = forward_mac_key(dst);
	int pos = rte_hash_lookup(fp->macs, &key);

	if (pos < 0)
		return EMU_PORT_NONE;
	if (fp->shared && !fp->entry_static[pos]) {
		uint64_t seen = __atomic_load_n(&fp->entry_seen_ns[pos], __ATOMIC_ACQUIRE);

		if (seen <= FORWARD_SEEN_AGED)
			return EMU_PORT_NONE; /* being added, or aged */
		/* another worker's time may be a little ahead of this one's */
		if (fp->ageing_ns != 0 && now_ns > seen && now_ns - seen > fp->ageing_ns) {
			/* marked, not deleted: one worker counts it */
			if (__atomic_compare_exchange_n(&fp->entry_seen_ns[pos], &seen,
							FORWARD_SEEN_AGED, false, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				ctr[FORWARD_CTR_AGED] += 1;
			return EMU_PORT_NONE;
		}
		return __atomic_load_n(&fp->entry_port[pos], __ATOMIC_RELAXED);
	}
	if (!fp->entry_static[pos] && fp->ageing_ns != 0 &&
	    now_ns - fp->entry_seen_ns[pos] > fp->ageing_ns) {
		rte_hash_del_key(fp->macs, &key);
		ctr[FORWARD_CTR_AGED] += 1;
		return EMU_PORT_NONE;
	}
	return fp->entry_port[pos];
}

static uint16_t
forward_process(void *priv, struct rte_mbuf **pkts, uint16_t n, struct emu_burst_ctx *ctx)
{
	struct forward_priv *fp = priv;
	uint64_t *ctr = ctx->ctr;
	uint16_t i, kept = 0;

	if (fp->mode == FORWARD_PAIRS) {
		/* a received burst (one port, ctx->in_port_plus1) whose port has a pair: one
		 * lookup for all of it */
		if (ctx->in_port_plus1 != 0 && ctx->in_port_plus1 <= EMU_MAX_PORTS &&
		    fp->pair_of[ctx->in_port_plus1 - 1] != EMU_PORT_NONE) {
			const uint16_t out = fp->pair_of[ctx->in_port_plus1 - 1];

			for (i = 0; i < n; i++)
				emu_meta(pkts[i])->out_port = out;
			ctr[FORWARD_CTR_FORWARDED] += n;
			return n;
		}
		/* else one table load per packet, the counter once per burst; the burst is
		 * compacted only from its first drop on */
		for (i = 0; i < n; i++) {
			struct emu_pkt_meta *meta = emu_meta(pkts[i]);
			uint16_t out = meta->in_port < EMU_MAX_PORTS ? fp->pair_of[meta->in_port] :
								       EMU_PORT_NONE;

			if (unlikely(out == EMU_PORT_NONE))
				break;
			meta->out_port = out;
		}
		for (kept = i; i < n; i++) {
			struct rte_mbuf *m = pkts[i];
			struct emu_pkt_meta *meta = emu_meta(m);
			uint16_t out = meta->in_port < EMU_MAX_PORTS ? fp->pair_of[meta->in_port] :
								       EMU_PORT_NONE;

			if (out == EMU_PORT_NONE) {
				emu_stage_drop(ctx, m, FORWARD_CTR_DROP_NO_PAIR);
				continue;
			}
			meta->out_port = out;
			pkts[kept++] = m;
		}
		ctr[FORWARD_CTR_FORWARDED] += kept;
		return kept;
	}
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct emu_pkt_meta *meta = emu_meta(m);
		const uint8_t *eth = rte_pktmbuf_mtod(m, const uint8_t *);
		uint16_t out;

		if (fp->mode == FORWARD_PAIRS) {
			out = meta->in_port < EMU_MAX_PORTS ? fp->pair_of[meta->in_port] :
							      EMU_PORT_NONE;
			if (out == EMU_PORT_NONE) {
				emu_stage_drop(ctx, m, FORWARD_CTR_DROP_NO_PAIR);
				continue;
			}
			ctr[FORWARD_CTR_FORWARDED] += 1;
		} else {
			if (rte_pktmbuf_data_len(m) < 12) {
				emu_stage_drop(ctx, m, FORWARD_CTR_DROP_UNKNOWN);
				continue;
			}
			if (fp->mode == FORWARD_LEARNING && meta->in_port < EMU_MAX_PORTS)
				forward_learn(fp, eth + 6, meta->in_port, ctx->now_ns, ctr);
			out = (eth[0] & 1) ? EMU_PORT_NONE : forward_lookup(fp, eth, ctx->now_ns, ctr);
			if (out == EMU_PORT_NONE) {
				if (!fp->flood_unknown && !(eth[0] & 1)) {
					emu_stage_drop(ctx, m, FORWARD_CTR_DROP_UNKNOWN);
					continue;
				}
				out = EMU_PORT_FLOOD;
				ctr[FORWARD_CTR_FLOODED] += 1;
			} else if (out == meta->in_port) {
				emu_stage_drop(ctx, m, FORWARD_CTR_DROP_SAME_PORT);
				continue;
			} else {
				ctr[FORWARD_CTR_FORWARDED] += 1;
			}
		}
		meta->out_port = out;
		pkts[kept++] = m;
	}
	return kept;
}

static void
forward_free(void *priv)
{
	forward_table_free(priv);
}

static void
forward_routes(const void *priv, unsigned int n_ports, uint32_t *out_masks)
{
	const struct forward_priv *fp = priv;
	uint32_t all = n_ports >= 32 ? UINT32_MAX : (1u << n_ports) - 1;
	unsigned int i;

	for (i = 0; i < n_ports && i < 32; i++) {
		if (fp->mode == FORWARD_PAIRS)
			out_masks[i] = fp->pair_of[i] < n_ports ? 1u << fp->pair_of[i] : 0;
		else
			/* a MAC table (static or learnt) can send a frame to any other port */
			out_masks[i] = all & ~(1u << i);
	}
}

/* It reads the frame's MACs, the ingress port and the metadata: no field of the parse. */
static enum emu_parse_need
forward_parse_need(const void *priv)
{
	(void)priv;
	return EMU_PARSE_CLASS;
}

const struct emu_stage_ops emu_stage_forward = {
	.type = "forward",
	.priv_size = sizeof(struct forward_priv),
	.ctr_names = forward_ctr_names,
	.n_ctr = FORWARD_CTR_MAX,
	.keys = forward_keys,
	.key_table = &forward_key_table,
	.sets_out_port = true,
	.parse_need = forward_parse_need,
	.init = forward_init,
	.routes = forward_routes,
	.process = forward_process,
	.free = forward_free,
	/* replicas of a learning stage share the primary's table */
	.replicable = true,
};
