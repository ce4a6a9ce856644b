/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture's configuration: its key tables, the "filter" (libpcap to eBPF), the "drops" list,
 * and needs() and init(), which create the capture ring and its file. The stage and its packet
 * path are in capture.c.
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
#include "lib/stages/capture_priv.h"

const char *const capture_keys[] = { "file", "snaplen", "ring_size", "ports", "enabled",
					    "annotate", "drops", "filter", "rotate_mb", "rotate_files",
					    "max_frames", "max_seconds", "max_mb", "virtual",
					    NULL };

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
const struct emu_key_table capture_key_table = {
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
const struct emu_key_table capture_set_table = EMU_KEY_TABLE("capture change",
	"what a profile phase may change on a capture stage", capture_set_entries);
#define T (&capture_key_table)

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

int
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

int
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
	if (env->primary != NULL) {
		/* another worker's replica: a ring of its own into the first replica's file,
		 * whose writer (rotation, cap, annotations, drop filter) serves both */
		struct capture_priv *pcp = env->primary;

		if (pcp->cap == NULL || pcp->n_peers >= CAPTURE_MAX_PEERS)
			return emu_err_set(err, "%s: no first replica to join", path);
		cp->cap = emu_capture_create_peer(pcp->cap, (uint32_t)c.ring_size, err);
		if (cp->cap == NULL) {
			emu_err_prefix(err, path);
			return -1;
		}
		cp->primary = pcp;
		pcp->peers[pcp->n_peers++] = cp;
		cp->annotating = pcp->annotating;
		goto hooks;
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
hooks:
	cp->ctr = env->ctr;
	if (cp->drops && (env->ctr == NULL || env->add_drop_hook == NULL ||
			  env->add_drop_hook(env->sw, capture_on_drop, cp) != 0)) {
		emu_json_path(path, sizeof(path), env->path, "drops");
		return emu_err_set(err, "%s: no room for another drop capture (at most %d)", path,
				   EMU_DROP_MAX_HOOKS);
	}
	return 0;
}

