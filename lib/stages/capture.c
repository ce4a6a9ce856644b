/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture: a tap. Copies (up to snaplen bytes of) every packet it sees, or those of
 * the listed ports, into a ring; the main lcore writes the pcap (nanosecond
 * timestamps: arrival time on ingress, emulated departure time on egress).
 * Packets always pass on unchanged.
 */
/* rte_bpf_convert() (a libpcap filter to eBPF) is experimental in every DPDK up to 24.11. */
#define ALLOW_EXPERIMENTAL_API 1
#include <string.h>

#include <pcap/pcap.h>
#include <rte_bpf.h>

#include <rte_common.h>

#include "lib/capture/emu_capture.h"
#include "lib/capture/emu_pcapw.h"
#include "lib/base/emu_out.h"
#include <rte_errno.h>
#include <rte_malloc.h>
#include "lib/base/emu_json.h"
#include "lib/stages/stages.h"

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

static const char *const capture_keys[] = { "file", "snaplen", "ring_size", "ports", "enabled",
					    "annotate", "drops", "filter", "rotate_mb", "rotate_files",
					    "max_frames", "max_seconds", "max_mb", "virtual",
					    NULL };

#define CAPTURE_MAX_DROP_NAMES 16

static const char *const capture_annotate_vals[] = { "none", "events", "all", NULL };
static const struct emu_key capture_key_entries[] = {
	EMU_K_STR_REQ("file", "output file: .pcapng (interfaces, comments) or .pcap; relative "
		      "names resolve against the pipeline's directory"),
	EMU_K_INT("snaplen", 65535, 64, 65535, "bytes kept of each frame"),
	EMU_K_INT("ring_size", 4096, 64, 1 << 26, "frames the ring to the writer holds"),
	EMU_K_ARR("ports", EMU_KEY_STR, NULL, "{\"minItems\": 1}",
		  "port names whose packets are captured; default: every port"),
	EMU_K_BOOL("enabled", true, "capture from the start (a profile can change it)"),
	EMU_K_ENUM("annotate", "events", capture_annotate_vals,
		   "pcapng comments: none, the events of each packet's trace, or all of it"),
	EMU_K_ANY("drops", "{\"oneOf\": [{\"type\": \"boolean\"}, {\"type\": \"array\", "
		  "\"minItems\": 1, \"maxItems\": 16, \"items\": {\"type\": \"string\", "
		  "\"pattern\": \"drop_\", \"maxLength\": 63}}]}",
		  "also capture dropped packets (pcapng only): true (every reason), false, or "
		  "1-16 reason names such as \"tm.p1.drop_queue_full\". Polymorphic"),
	EMU_K_STR("filter", NULL, "a pcap filter expression (tcpdump syntax); default: none"),
	EMU_K_NUM("rotate_mb", 0.0, 0.0, false, 1e6,
		  "start a new file after this many MB (at least 0.01); 0: never"),
	EMU_K_INT("rotate_files", 0, 0, 100000,
		  "keep at most this many rotated files (needs rotate_mb); 0: all"),
	EMU_K_INT("max_frames", 0, 0, INT64_MAX, "stop after this many frames; 0: no limit"),
	EMU_K_NUM("max_seconds", 0.0, 0.0, false, 1e9,
		  "stop this long after the first frame (s); 0: no limit"),
	EMU_K_NUM("max_mb", 0.0, 0.0, false, 1e9,
		  "stop capturing when the files would grow past this many MB in all (at least "
		  "0.01); the run goes on and exits 1; 0: no cap"),
	EMU_K_BOOL("virtual", false,
		   "also capture the virtual incast senders' dropped frames (they never cross a "
		   "wire; an 8:1 incast drops millions a second)"),
};
static const struct emu_key_table capture_key_table = {
	.title = "capture", .desc = "writes the packets it sees (and drops) to a pcap/pcapng file",
	.keys = capture_key_entries, .n_keys = RTE_DIM(capture_key_entries),
	.names = capture_keys, .extra_names = emu_stage_extra_names,
	/* drops (other than false) and annotate need a pcapng file; virtual needs drops; max_mb is
	 * 0 or at least 0.01 */
	.schema = "{\"allOf\": [{\"anyOf\": [{\"properties\": {\"file\": {\"pattern\": "
		  "\"\\\\.pcapng$\"}}}, {\"properties\": {\"drops\": {\"const\": false}, "
		  "\"annotate\": false}}]}, {\"if\": {\"required\": [\"virtual\"], \"properties\": "
		  "{\"virtual\": {\"const\": true}}}, \"then\": {\"required\": [\"drops\"], "
		  "\"properties\": {\"drops\": {\"not\": {\"const\": false}}}}}, {\"properties\": "
		  "{\"max_mb\": {\"not\": {\"exclusiveMinimum\": 0, \"exclusiveMaximum\": 0.01}}}}]}",
};
static const struct emu_key capture_set_entries[] = {
	EMU_K_BOOL("enabled", true, "start or stop capturing"),
};
static const struct emu_key_table capture_set_table = EMU_KEY_TABLE("capture change",
	"what a profile phase may change on a capture stage", capture_set_entries);
#define T (&capture_key_table)

struct capture_priv {
	struct emu_capture *cap;
	bool egress;
	bool enabled;
	bool pcapng;
	bool drops;
	bool virtual_frames; /* "virtual": the incast senders' frames too */
	struct rte_bpf *bpf; /* "filter": frames it returns 0 for are not captured */
	uint64_t max_frames;  /* 0: no limit */
	uint64_t max_ns;      /* 0: no limit; from the first frame captured */
	uint64_t first_ns;
	uint64_t taken;       /* frames handed to the capture (worker) */
	uint16_t n_ports;
	uint64_t drops_seen; /* worker: dropped frames handed to the capture */
	uint64_t *ctr;       /* the stage's counters, for the drop hook */
	uint32_t port_mask; /* bit per switch port; all ones = every port */
	bool annotating;    /* the writer formats each record's trace: the switch must write it */
	char if_names[EMU_MAX_PORTS + 1][40];
	const char *if_ptrs[EMU_MAX_PORTS + 2];
	char drop_names[CAPTURE_MAX_DROP_NAMES][64];
	const char *drop_ptrs[CAPTURE_MAX_DROP_NAMES + 1];
};

/*
 * "filter": a tcpdump expression compiled by libpcap and converted to eBPF by DPDK (as
 * dpdk-dumpcap does), run on the worker before the copy. Checked also by rocemu check.
 */
static int
capture_filter(struct capture_priv *cp, const char *expr, uint32_t snaplen,
	       const struct emu_stage_env *env, struct emu_err *err)
{
	char path[EMU_JSON_PATH_LEN];
	struct bpf_program prog;
	struct rte_bpf_prm *prm;
	pcap_t *pd;
	int rc = 0;

	emu_json_path(path, sizeof(path), env->path, "filter");
	pd = pcap_open_dead(DLT_EN10MB, (int)snaplen);
	if (pd == NULL)
		return emu_err_setrc(err, -ENOMEM, "%s: out of memory", path);
	if (pcap_compile(pd, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		rc = emu_err_set(err, "%s: %s", path, pcap_geterr(pd));
		pcap_close(pd);
		return rc;
	}
	pcap_close(pd);
	if (env->check_only) {
		pcap_freecode(&prog);
		return 0;
	}
	prm = rte_bpf_convert(&prog);
	pcap_freecode(&prog);
	if (prm == NULL)
		return emu_err_set(err, "%s: DPDK cannot convert it to eBPF: %s", path,
				   rte_strerror(rte_errno));
	cp->bpf = rte_bpf_load(prm);
	rte_free(prm);
	if (cp->bpf == NULL)
		return emu_err_set(err, "%s: DPDK cannot load it: %s", path, rte_strerror(rte_errno));
	return 0;
}

/* "max_frames" / "max_seconds" reached (worker): the capture takes no more. */
static inline bool
capture_limited(struct capture_priv *cp, uint64_t now_ns)
{
	if (cp->taken == 0)
		cp->first_ns = now_ns;
	if ((cp->max_frames != 0 && cp->taken >= cp->max_frames) ||
	    (cp->max_ns != 0 && now_ns - cp->first_ns >= cp->max_ns))
		return true;
	cp->taken++;
	return false;
}

/* Drop hook (worker): a copy of every dropped frame on the "drop" interface. */
static void
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

/* "drops": true (every reason), false, or a list of reason names ("impair.drop_x"). */
static int
capture_read_drops(struct capture_priv *cp, const json_t *cfg, const char *spath,
		   struct emu_err *err)
{
	const json_t *v = json_object_get(cfg, "drops"), *o;
	char path[EMU_JSON_PATH_LEN], p2[EMU_JSON_PATH_LEN];
	size_t i;

	emu_json_path(path, sizeof(path), spath, "drops");
	if (v == NULL || json_is_false(v))
		return 0;
	cp->drops = true;
	if (json_is_true(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) == 0 ||
	    json_array_size(v) > CAPTURE_MAX_DROP_NAMES)
		return emu_err_set(err, "%s: must be true, false or a list of 1-%d drop reasons "
				   "as the summary names them (\"impair.drop_x\", "
				   "\"tm.p1.drop_queue_full\")", path, CAPTURE_MAX_DROP_NAMES);
	json_array_foreach(v, i, o) {
		const char *s = json_string_value(o);

		emu_json_path_idx(p2, sizeof(p2), path, i);
		if (s == NULL || strstr(s, "drop_") == NULL || strlen(s) >= 64)
			return emu_err_set(err, "%s: must be a drop reason name such as "
					   "\"tm.p1.drop_queue_full\"", p2);
		snprintf(cp->drop_names[i], sizeof(cp->drop_names[i]), "%s", s);
		cp->drop_ptrs[i] = cp->drop_names[i];
	}
	cp->drop_ptrs[i] = NULL;
	return 0;
}

/* The keys that size the capture, read the same way by needs() and init(). */
struct capture_cfg {
	const char *file;
	int64_t snaplen;
	int64_t ring_size;
};

static int
capture_read(const json_t *cfg, const struct emu_stage_env *env, struct capture_cfg *c,
	     struct emu_err *err)
{
	char path[EMU_JSON_PATH_LEN];
	int rc;

	rc = emu_key_str(cfg, env->path, T, "file", &c->file, err);
	if (rc == 0 && c->file[0] == '\0') {
		emu_json_path(path, sizeof(path), env->path, "file");
		return emu_err_set(err, "%s: must not be empty", path);
	}
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "snaplen", &c->snaplen, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "ring_size", &c->ring_size, err);
	return rc;
}

static int
capture_needs(const json_t *cfg, const struct emu_stage_env *env, struct emu_stage_needs *needs,
	      struct emu_err *err)
{
	struct capture_cfg c;
	int rc = capture_read(cfg, env, &c, err);

	if (rc != 0)
		return rc;
	needs->mem_bytes = emu_capture_bytes((uint32_t)c.snaplen, env->max_frame_bytes,
					     (uint32_t)c.ring_size);
	snprintf(needs->mem_key, sizeof(needs->mem_key), "ring_size");
	needs->files[0] = c.file;
	snprintf(needs->file_keys[0], sizeof(needs->file_keys[0]), "file");
	needs->n_files = 1;
	{
		/* rotated names are outputs too: checked against every other file of the run */
		double rotate_mb = 0;
		int64_t rotate_files = 0;

		rc = emu_key_num(cfg, env->path, T, "rotate_mb", &rotate_mb, err);
		if (rc == 0)
			rc = emu_key_int(cfg, env->path, T, "rotate_files", &rotate_files, err);
		if (rc == 0 && rotate_mb > 0)
			needs->file_rotates[0] = rotate_files > 0 ? (uint32_t)rotate_files :
					         UINT32_MAX;
	}
	return rc;
}

static int
capture_init(void *priv, const json_t *cfg, const struct emu_stage_env *env, struct emu_err *err)
{
	struct capture_priv *cp = priv;
	struct capture_cfg c;
	char path[EMU_JSON_PATH_LEN];
	int rc;

	const char *ann;
	unsigned int i;

	const char *filter;
	double rotate_mb = 0, max_s = 0, max_mb = 0;
	int64_t rotate_files = 0, max_frames = 0;

	rc = capture_read(cfg, env, &c, err);
	if (rc == 0)
		rc = emu_key_bool(cfg, env->path, T, "enabled", &cp->enabled, err);
	if (rc == 0)
		rc = emu_key_str(cfg, env->path, T, "annotate", &ann, err);
	if (rc == 0)
		rc = emu_key_str(cfg, env->path, T, "filter", &filter, err);
	if (rc == 0 && filter != NULL)
		rc = capture_filter(cp, filter, (uint32_t)c.snaplen, env, err);
	if (rc == 0)
		rc = emu_key_num(cfg, env->path, T, "rotate_mb", &rotate_mb, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "rotate_files", &rotate_files, err);
	if (rc == 0)
		rc = emu_key_int(cfg, env->path, T, "max_frames", &max_frames, err);
	if (rc == 0)
		rc = emu_key_num(cfg, env->path, T, "max_seconds", &max_s, err);
	if (rc == 0)
		rc = emu_key_bool(cfg, env->path, T, "virtual", &cp->virtual_frames, err);
	if (rc == 0)
		rc = emu_key_num(cfg, env->path, T, "max_mb", &max_mb, err);
	if (rc == 0 && max_mb != 0 && max_mb < 0.01) {
		emu_json_path(path, sizeof(path), env->path, "max_mb");
		rc = emu_err_set(err, "%s: at least 0.01 (10 kB), got %g", path, max_mb);
	}
	if (rc == 0 && rotate_files != 0 && rotate_mb == 0) {
		emu_json_path(path, sizeof(path), env->path, "rotate_files");
		rc = emu_err_set(err, "%s: needs \"rotate_mb\"", path);
	}
	if (rc == 0 && rotate_mb != 0 && rotate_mb < 0.01) {
		emu_json_path(path, sizeof(path), env->path, "rotate_mb");
		rc = emu_err_set(err, "%s: at least 0.01 (10 kB), got %g", path, rotate_mb);
	}
	cp->max_frames = (uint64_t)max_frames;
	cp->max_ns = (uint64_t)(max_s * 1e9);
	if (rc == 0)
		rc = capture_read_drops(cp, cfg, env->path, err);
	if (rc != 0)
		return rc;
	if (cp->virtual_frames && !cp->drops) {
		emu_json_path(path, sizeof(path), env->path, "virtual");
		return emu_err_set(err, "%s: needs \"drops\" (virtual incast frames reach a capture "
				   "only when dropped)", path);
	}
	cp->pcapng = emu_pcapw_fmt_for(c.file) == EMU_PCAPW_PCAPNG;
	if (!cp->pcapng && (json_object_get(cfg, "annotate") != NULL || cp->drops)) {
		emu_json_path(path, sizeof(path), env->path,
			      cp->drops ? "drops" : "annotate");
		return emu_err_set(err, "%s: needs a pcapng file (a name ending in .pcapng): a "
				   "pcap file has no interfaces or comments", path);
	}
	cp->n_ports = (uint16_t)env->n_ports;
	for (i = 0; i < env->n_ports; i++) {
		snprintf(cp->if_names[i], sizeof(cp->if_names[i]), "%s", env->port_names[i]);
		cp->if_ptrs[i] = cp->if_names[i];
	}
	snprintf(cp->if_names[i], sizeof(cp->if_names[i]), "drop");
	cp->if_ptrs[i] = cp->if_names[i];
	cp->egress = env->egress;
	rc = emu_stage_port_mask(cfg, env, "ports", &cp->port_mask, err);
	if (rc != 0)
		return rc;
	emu_json_path(path, sizeof(path), env->path, "file");
	if (env->check_only) {
		/* what the run would find: the directory must exist and be writable */
		rc = emu_out_probe(c.file, err);
		if (rc != 0)
			emu_err_prefix(err, path);
		return rc;
	}
	cp->cap = emu_capture_create_ng(c.file, (uint32_t)c.snaplen, env->max_frame_bytes,
					(uint32_t)c.ring_size, env->n_ports + cp->drops, cp->if_ptrs,
					err);
	if (cp->cap == NULL) {
		emu_err_prefix(err, path);
		return -1;
	}
	if (rotate_mb > 0)
		emu_capture_set_rotation(cp->cap, (uint64_t)(rotate_mb * 1e6), (uint32_t)rotate_files);
	if (max_mb > 0)
		emu_capture_set_max_bytes(cp->cap, (uint64_t)(max_mb * 1e6));
	/* a list of drop reasons is applied by the writer to the annotation, even with "none" */
	if (cp->pcapng && (strcmp(ann, "none") != 0 || cp->drop_ptrs[0] != NULL) &&
	    env->annotate != NULL) {
		if (emu_capture_set_annotate(cp->cap, env->annotate, env->annotate_arg,
					     strcmp(ann, "all") == 0,
					     cp->drop_ptrs[0] != NULL ? cp->drop_ptrs : NULL,
					     err) != 0) {
			emu_json_path(path, sizeof(path), env->path, "ring_size");
			emu_err_prefix(err, path);
			return -1;
		}
		cp->annotating = true;
		if (strcmp(ann, "none") == 0)
			emu_capture_set_no_comments(cp->cap);
	}
	cp->ctr = env->ctr;
	if (cp->drops && (env->ctr == NULL || env->add_drop_hook == NULL ||
			  env->add_drop_hook(env->sw, capture_on_drop, cp) != 0)) {
		emu_json_path(path, sizeof(path), env->path, "drops");
		return emu_err_set(err, "%s: no room for another drop capture (at most %d)", path,
				   EMU_DROP_MAX_HOOKS);
	}
	return 0;
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

	if (cp->cap == NULL) {
		buf[0] = '\0';
		return;
	}
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
				 "not of the listed reasons)", (unsigned long)cp->drops_seen,
				 (unsigned long)s.filtered_drops);
		else
			snprintf(buf + u, len - u, " (%lu dropped frames handed to it)",
				 (unsigned long)cp->drops_seen);
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
	.summary = capture_summary,
	.needs = capture_needs,
	.failed = capture_failed,
};
