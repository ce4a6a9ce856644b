/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the profile loader: the first byte of the input picks one of the shipped pipelines
 * below (byte % FUZZ_N_PIPELINES: '0'..'7' in the seed files), the rest is a profile document,
 * loaded by emu_profile_from_json() against a switch built from that pipeline (once, at start,
 * with EAL up: fuzz_config.h; a new switch per input). Checks: a refusal is a negative errno
 * with a message; a loaded profile has its actions in time order; loading is a pure function
 * of the document and the switch (a second load gives the same result and message); the
 * loaded timeline then plays onto the switch action by action, as the worker applies it;
 * the switch, freed, gives back to the DPDK heap every byte it took.
 */
#include "lib/ctl/emu_profile.h"
#include "fuzz_config.h"

static const char *const fuzz_pipeline_files[] = {
	"pipelines/bump-in-wire.json",
	"pipelines/capture-10g.json",
	"pipelines/dcqcn-lab.json",
	"pipelines/impair-lab.json",
	"pipelines/learning-switch.json",
	"pipelines/long-rtt.json",
	"pipelines/switch-cnp.json",
	"tests/unit/invalid/base-pipeline.json",
};
#define FUZZ_N_PIPELINES RTE_DIM(fuzz_pipeline_files)

static struct emu_pipeline *fuzz_pls[FUZZ_N_PIPELINES];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsigned int i;

	(void)argc;
	(void)argv;
	fuzz_eal_init("fuzz_profile");
	for (i = 0; i < FUZZ_N_PIPELINES; i++) {
		char path[PATH_MAX];
		struct emu_err err;
		json_error_t jerr;
		json_t *root;

		snprintf(path, sizeof(path), "%s/%s", ROCEMU_SOURCE_DIR, fuzz_pipeline_files[i]);
		root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
		if (root == NULL) {
			fprintf(stderr, "fuzz_profile: %s: %s\n", path, jerr.text);
			exit(1);
		}
		fuzz_json_no_files(root, 0);
		if (emu_pipeline_from_json(root, path, &fuzz_pls[i], &err) != 0) {
			fprintf(stderr, "fuzz_profile: %s: %s\n", path, err.msg);
			exit(1);
		}
		json_decref(root);
	}
	return 0;
}

/* Load @p root against @p sw; when @p apply, then play the whole timeline onto @p sw. */
static int
fuzz_load(json_t *root, struct emu_switch *sw, bool apply, struct emu_err *err)
{
	struct emu_profile *prof = NULL;
	uint64_t prev = 0, t;
	unsigned int i;
	int rc;

	memset(err, 0, sizeof(*err));
	rc = emu_profile_from_json(root, sw, &prof, err);
	if (rc != 0) {
		FUZZ_CHECK_REFUSAL(rc, *err);
		FUZZ_CHECK(prof == NULL);
		return rc;
	}
	FUZZ_CHECK(prof != NULL);
	for (i = 1; i < prof->n_actions; i++)
		FUZZ_CHECK(prof->actions[i - 1].at_ns <= prof->actions[i].at_ns);
	/* the worker's walk: every action applied once, in order ("cannot fail": validated) */
	while (apply && (t = emu_profile_next_ns(prof)) != UINT64_MAX) {
		FUZZ_CHECK(t >= prev);
		prev = t;
		FUZZ_CHECK(emu_switch_apply_due(sw, emu_profile_prog(prof), t, t) > 0);
	}
	emu_profile_free(prof);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct emu_err err1, err2;
	struct emu_switch *sw;
	json_error_t jerr;
	size_t heap0;
	json_t *root;
	int rc1, rc2;

	if (size < 1)
		return 0;
	root = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return 0;
	heap0 = fuzz_heap_used();
	/* a switch per input: applying the profile changes it */
	sw = emu_switch_create(fuzz_pls[data[0] % FUZZ_N_PIPELINES], fuzz_pool, 1, &err1);
	FUZZ_CHECK(sw != NULL);
	rc1 = fuzz_load(root, sw, false, &err1);
	rc2 = fuzz_load(root, sw, true, &err2);
	FUZZ_CHECK(rc1 == rc2);
	FUZZ_CHECK(strcmp(err1.msg, err2.msg) == 0);
	emu_switch_free(sw);
	FUZZ_CHECK(fuzz_heap_used() == heap0);
	json_decref(root);
	return 0;
}
