/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocemu check: load and validate a pipeline (and a profile against it) as a run would,
 * without taking its memory or opening its files; warn of what a run would regret (no
 * route, a profile's paths, lossless inputs PFC cannot pause, a capture's volume); exit.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "app.h"

int
app_check_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		APP_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct app_opts o = { 0 };
	struct app_ctx ctx = { 0 };
	struct app_prep prep;
	struct emu_err err;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int h = app_common_opt(&o, c, optarg);

		if (h < 0)
			return APP_EXIT_CONFIG;
		if (h > 0)
			continue;
		if (c == APP_OPT_HELP) {
			printf("usage: rocemu check [--pipeline] FILE [--profile FILE] [--max-mem MB]\n"
			       "Validates a pipeline (and a profile against it) as a run would, "
			       "without taking its memory or opening its files, and exits: 0 when "
			       "a run with it would start, 2 with the first error otherwise.\n");
			return APP_EXIT_OK;
		}
		fprintf(stderr, "rocemu check: see rocemu check --help\n");
		return APP_EXIT_CONFIG;
	}
	if (optind < argc) {
		if (o.pipeline != NULL || optind + 1 < argc) {
			fprintf(stderr, "rocemu check: unexpected argument \"%s\" (one pipeline: "
				"FILE or --pipeline FILE)\n", argv[optind + (o.pipeline == NULL)]);
			return APP_EXIT_CONFIG;
		}
		o.pipeline = argv[optind];
	}
	if (app_load_pipeline(&ctx, &o) != 0)
		return APP_EXIT_CONFIG;
	if (app_prepare(&ctx, &o, NULL, 0, &prep) != 0) {
		emu_pipeline_free(ctx.pl);
		return APP_EXIT_CONFIG;
	}
	ctx.pl->check_only = true;
	/* builds nothing that holds packets: little memory whatever the pipeline needs */
	if (app_eal_init_portless("rocemu", 512, &err) != 0) {
		fprintf(stderr, "rocemu check: %s\n", err.msg);
		emu_pipeline_free(ctx.pl);
		return APP_EXIT_FAIL;
	}
	rc = app_build(&ctx, &o, &err);
	if (rc != 0)
		fprintf(stderr, "%s: %s\n", app_prog, err.msg);
	if (rc == 0) {
		emu_switch_route_warnings(ctx.sw, stderr);
		emu_profile_path_warnings(ctx.prof, ctx.sw, stderr);
		app_unpausable_warnings(ctx.pl, NULL, stderr);
		app_capture_estimate(ctx.pl, o.pipeline, o.profile, stderr);
		printf("%s%s%s: OK (needs %.0f MB)\n", o.pipeline, o.profile ? " + " : "",
		       o.profile ? o.profile : "", (double)prep.needs.total_bytes / 1e6);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "rocemu check: the verdict could not be written to "
				"standard output: %s\n", strerror(errno));
			app_teardown(&ctx);
			app_eal_cleanup();
			return APP_EXIT_FAIL;
		}
	}
	app_teardown(&ctx);
	app_eal_cleanup();
	return rc == 0 ? APP_EXIT_OK : APP_EXIT_CONFIG;
}
