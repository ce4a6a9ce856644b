/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocemu check: how much a run's capture stages may write, from the pipeline and the profile
 * alone, and a WARNING above 1 GB unless the capture is bounded (max_mb, or rotate_mb with
 * rotate_files). The figure is an upper estimate, not a prediction: every captured port busy
 * at its line rate with 1082-byte frames (RoCE at PMTU 1024), for the profile's length (its
 * last phase; one minute without a profile; max_seconds and max_frames shorten it), plus, with "drops" and "virtual", every frame the
 * incast sources offer. A capture of 6,000 frames under incast-8to1 once filled a disk.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "app.h"

#define EST_FRAME_BYTES 1082.0   /* RoCE RDMA WRITE at PMTU 1024 */
#define EST_WIRE_EXTRA 24.0      /* preamble, SFD, IFG, FCS: per frame on the wire */
#define EST_RECORD_BYTES 32.0    /* pcapng EPB header, flags option and trailer */
#define EST_COMMENT_BYTES 120.0  /* an annotation */
#define EST_WARN_BYTES 1e9

/* The profile's length (s): its last phase's time, at least 1 s; 60 s without a profile. */
static double
est_duration_s(const char *profile, bool *from_profile)
{
	json_t *root, *phases, *ph;
	double t = 0;
	size_t i;

	*from_profile = false;
	if (profile == NULL)
		return 60;
	root = json_load_file(profile, JSON_REJECT_DUPLICATES, NULL);
	phases = root != NULL ? json_object_get(root, "phases") : NULL;
	json_array_foreach(phases, i, ph) {
		json_t *at = json_object_get(ph, "at_s");

		if (json_is_number(at) && json_number_value(at) > t)
			t = json_number_value(at);
	}
	json_decref(root);
	*from_profile = true;
	return t < 1 ? 1 : t;
}

static double
est_num(const json_t *o, const char *key, double dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

/* One capture stage: its estimate, and a warning when it is large and unbounded. */
static unsigned int
est_capture(const struct emu_pipeline *pl, const json_t *cap, const char *where, double secs,
	    bool from_profile, FILE *f)
{
	const json_t *ports = json_object_get(cap, "ports"), *drops = json_object_get(cap, "drops");
	const char *file = json_string_value(json_object_get(cap, "file"));
	const char *ann = json_string_value(json_object_get(cap, "annotate"));
	double snap = est_num(cap, "snaplen", 65535), max_mb = est_num(cap, "max_mb", 0);
	double rot_mb = est_num(cap, "rotate_mb", 0), rot_files = est_num(cap, "rotate_files", 0);
	double max_frames = est_num(cap, "max_frames", 0), max_s = est_num(cap, "max_seconds", 0);
	bool pcapng = file != NULL && strlen(file) > 7 &&
		      strcmp(file + strlen(file) - 7, ".pcapng") == 0;
	bool virt = json_is_true(json_object_get(cap, "virtual")) && drops != NULL &&
		    !json_is_false(drops);
	double fps = 0, bytes, per_frame;
	unsigned int i, k;

	if (max_mb > 0 || (rot_mb > 0 && rot_files > 0))
		return 0; /* bounded: the user chose how much */
	for (i = 0; i < pl->n_ports; i++) {
		bool taken = !json_is_array(ports);
		const json_t *p;
		size_t j;

		json_array_foreach(ports, j, p)
			taken |= json_is_string(p) &&
				 strcmp(json_string_value(p), pl->port_names[i]) == 0;
		if (taken)
			fps += (double)pl->tm.ports[i].rate_bps /
			       (8 * (EST_FRAME_BYTES + EST_WIRE_EXTRA));
	}
	per_frame = EST_RECORD_BYTES + (snap < EST_FRAME_BYTES ? snap : EST_FRAME_BYTES) +
		    (pcapng && ann != NULL && strcmp(ann, "all") == 0 ? EST_COMMENT_BYTES : 0);
	if (max_s > 0 && max_s < secs)
		secs = max_s; /* "max_seconds" shortens it */
	bytes = fps * per_frame * secs;
	for (k = 0; virt && k < pl->n_incast; k++) {
		const struct emu_incast_cfg *ic = &pl->incast[k];
		double fb = ic->frame_bytes;

		/* every frame the senders offer may be dropped and captured, with its comment */
		bytes += ic->senders * ic->rate_bps / (8 * (fb + EST_WIRE_EXTRA)) * secs *
			 (EST_RECORD_BYTES + (snap < fb ? snap : fb) + EST_COMMENT_BYTES);
	}
	if (max_frames > 0 && max_frames * (per_frame + EST_COMMENT_BYTES) < bytes)
		bytes = max_frames * (per_frame + EST_COMMENT_BYTES); /* "max_frames" bounds it */
	if (bytes <= EST_WARN_BYTES)
		return 0;
	fprintf(f, "%s: WARNING: %s (%s) may write about %.1f GB in %s%.0f s (its ports busy at "
		"line rate with %.0f-byte frames%s): bound it with \"max_mb\", or \"rotate_mb\" "
		"with \"rotate_files\"\n", app_prog, where, file != NULL ? file : "?", bytes / 1e9,
		from_profile ? "the profile's " : "", secs, EST_FRAME_BYTES,
		virt ? ", and every virtual incast frame dropped" : "");
	return 1;
}

unsigned int
app_capture_estimate(const struct emu_pipeline *pl, const char *pipeline, const char *profile,
		     FILE *f)
{
	static const char *const lists[] = { "ingress", "egress" };
	json_t *root = json_load_file(pipeline, JSON_REJECT_DUPLICATES, NULL);
	bool from_profile;
	double secs = est_duration_s(profile, &from_profile);
	unsigned int n = 0, l;

	for (l = 0; root != NULL && l < RTE_DIM(lists); l++) {
		const json_t *st;
		size_t i;

		json_array_foreach(json_object_get(root, lists[l]), i, st) {
			char where[64];

			if (!json_is_string(json_object_get(st, "type")) ||
			    strcmp(json_string_value(json_object_get(st, "type")), "capture") != 0)
				continue;
			snprintf(where, sizeof(where), "%s[%zu]", lists[l], i);
			n += est_capture(pl, st, where, secs, from_profile, f);
		}
	}
	json_decref(root);
	return n;
}
