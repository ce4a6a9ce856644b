/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocestat: the capture analyser and DCQCN validator. Reads pcap or pcapng (us or ns) in one
 * streaming pass (rs_read.c: classic pcap in place, libpcap for the rest, pcapng comments by a
 * block walker beside it). Never writes to its input.
 *
 *   rocestat [OPTIONS] CAPTURE             text report on stdout
 *   rocestat report [OPTIONS] CAPTURE DIR  report.txt, report.json, csv/, PNGs, index.html
 *
 * Exit status: 0 every check passed, 1 a check FAILED, 2 bad input (a capture without a
 * RoCE, PFC or PAUSE frame included: "no RoCE frames") or a failed write. `report` prints a
 * summary on standard output (the capture's counts, every FAIL line, the verdict) whatever
 * its exit status.
 *
 * Every output file is written under a temporary name and renamed over its target only when
 * every byte got there (lib/base/emu_out); before anything is read, an output naming the
 * same file as an input or another output is refused (emu_files_check).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <pcap/pcap.h>

#include "app/rocestat/rocestat.h"
#include "lib/analysis/ana.h"
#include "lib/base/emu_out.h"

#ifndef ROCESTAT_PLOT
#define ROCESTAT_PLOT "scripts/plot.py"
#endif


static void
rs_usage(FILE *f)
{
	fprintf(f,
		"usage: rocestat [OPTIONS] CAPTURE\n"
		"       rocestat report [OPTIONS] CAPTURE DIR\n"
		"  --json FILE|-                  the JSON report (-: stdout, the text to stderr)\n"
		"  --csv DIR                      time series as CSV files\n"
		"  --quiet                        no text report\n"
		"  --link-gbps G                  link rate (PFC quanta, DCQCN line rate) [100]\n"
		"  --line-rate-gbps G             the same (the line rate the bandwidth is measured against)\n"
		"  --expect-qps N                 QPs expected per IP pair (NCCL channels x QPs)\n"
		"  --nccl-log FILE                NCCL_DEBUG=INFO log: ranks and rails of the addresses\n"
		"  --rocegen-json FILE            rocegen's --json report: the same for its addresses\n"
		"  --np-min-time-between-cnps US  CNP pacing to check [--dcqcn FILE's, else 4]\n"
		"  --timeout-us US                silence before a resend = timeout [100]\n"
		"  --bin-us US                    rate bin [1]\n"
		"  --window-us US                 sliding window for rates [10]\n"
		"  --pfc-storm-us US              continuous pause = storm [10000]\n"
		"  --idle-gap-us US               idle time between iterations [1000]\n"
		"  --dcqcn nvidia|paper|FILE      parameters to validate against [nvidia]\n"
		"  --fit                          fit the DCQCN parameters to the trace\n"
		"  --tol-cut F  --tol-traj F      verdict tolerances (relative) [0.10 0.10]\n"
		"  --collective X --ranks N       allreduce|allgather|reducescatter|broadcast|alltoall\n"
		"  --app-log FILE                 nccl-tests or rocegen output to compare with\n"
		"  --png WxH                      plot size for report [1000x500]\n"
		"  --version                      version, git commit, DPDK/jansson/libpcap versions\n");
}

static int
rs_num(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < lo || v > hi) {
		fprintf(stderr, "rocestat: %s: expected a number in [%g, %g], got '%s'\n", opt, lo,
			hi, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int
rs_parse(int argc, char **argv, struct rs_opts *o)
{
	enum { O_JSON = 256, O_CSV, O_QUIET, O_LINK, O_NPMIN, O_TIMEOUT, O_BIN, O_WINDOW, O_STORM,
	       O_IDLE, O_DCQCN, O_FIT, O_TOLCUT, O_TOLTRAJ, O_COLL, O_RANKS, O_APPLOG, O_PNG,
	       O_HELP, O_VERSION, O_EXPQPS, O_NCCL, O_LINERATE, O_RGJSON };
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, O_JSON },
		{ "csv", required_argument, NULL, O_CSV },
		{ "quiet", no_argument, NULL, O_QUIET },
		{ "link-gbps", required_argument, NULL, O_LINK },
		{ "line-rate-gbps", required_argument, NULL, O_LINERATE },
		{ "expect-qps", required_argument, NULL, O_EXPQPS },
		{ "nccl-log", required_argument, NULL, O_NCCL },
		{ "rocegen-json", required_argument, NULL, O_RGJSON },
		{ "np-min-time-between-cnps", required_argument, NULL, O_NPMIN },
		{ "timeout-us", required_argument, NULL, O_TIMEOUT },
		{ "bin-us", required_argument, NULL, O_BIN },
		{ "window-us", required_argument, NULL, O_WINDOW },
		{ "pfc-storm-us", required_argument, NULL, O_STORM },
		{ "idle-gap-us", required_argument, NULL, O_IDLE },
		{ "dcqcn", required_argument, NULL, O_DCQCN },
		{ "fit", no_argument, NULL, O_FIT },
		{ "tol-cut", required_argument, NULL, O_TOLCUT },
		{ "tol-traj", required_argument, NULL, O_TOLTRAJ },
		{ "collective", required_argument, NULL, O_COLL },
		{ "ranks", required_argument, NULL, O_RANKS },
		{ "app-log", required_argument, NULL, O_APPLOG },
		{ "png", required_argument, NULL, O_PNG },
		{ "help", no_argument, NULL, O_HELP },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	bool report = argc > 1 && strcmp(argv[1], "report") == 0;
	double v;
	int c;

	ana_opts_default(&o->ana);
	o->dcqcn = "nvidia";
	o->png_w = 1000;
	o->png_h = 500;
	if (report) {
		argv++;
		argc--;
	}
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		const char *n = optind > 0 && optind <= argc ? argv[optind - 1] : "?";

		switch (c) {
		case O_JSON: o->json_path = optarg; break;
		case O_CSV: o->csv_dir = optarg; break;
		case O_QUIET: o->quiet = true; break;
		case O_FIT: o->ana.fit = true; break;
		case O_DCQCN: o->dcqcn = optarg; break;
		case O_APPLOG: o->app_log = optarg; break;
		case O_NCCL: o->nccl_log = optarg; break;
		case O_RGJSON: o->rocegen_json = optarg; break;
		case O_EXPQPS:
			if (rs_num("--expect-qps", optarg, 1, 1024, &v) || v != floor(v)) {
				if (v != floor(v))
					fprintf(stderr, "rocestat: --expect-qps: expected an integer\n");
				return -EINVAL;
			}
			o->ana.expect_qps = (unsigned int)v;
			break;
		case O_LINK:
		case O_LINERATE:
			if (rs_num(c == O_LINK ? "--link-gbps" : "--line-rate-gbps", optarg, 0.001,
				   10000, &o->ana.link_gbps))
				return -EINVAL;
			break;
		case O_NPMIN:
			if (rs_num("--np-min-time-between-cnps", optarg, 0, 1e6, &v))
				return -EINVAL;
			o->ana.np_min_time_between_cnps_ns = (uint64_t)(v * 1000 + 0.5);
			snprintf(o->ana.np_min_source, sizeof(o->ana.np_min_source), "flag");
			break;
		case O_TIMEOUT:
			if (rs_num("--timeout-us", optarg, 0.001, 1e9, &v))
				return -EINVAL;
			o->ana.timeout_ns = (uint64_t)(v * 1000 + 0.5);
			break;
		case O_BIN:
			if (rs_num("--bin-us", optarg, 0.001, 1e6, &v))
				return -EINVAL;
			o->ana.bin_ns = (uint64_t)(v * 1000 + 0.5);
			break;
		case O_WINDOW:
			if (rs_num("--window-us", optarg, 0.001, 1e9, &v))
				return -EINVAL;
			o->ana.window_ns = (uint64_t)(v * 1000 + 0.5);
			o->window_given = true;
			break;
		case O_STORM:
			if (rs_num("--pfc-storm-us", optarg, 0.001, 1e12, &v))
				return -EINVAL;
			o->ana.pfc_storm_ns = (uint64_t)(v * 1000 + 0.5);
			break;
		case O_IDLE:
			if (rs_num("--idle-gap-us", optarg, 0.001, 1e12, &v))
				return -EINVAL;
			o->ana.idle_gap_ns = (uint64_t)(v * 1000 + 0.5);
			break;
		case O_TOLCUT:
			if (rs_num("--tol-cut", optarg, 0, 10, &o->ana.tol_cut))
				return -EINVAL;
			break;
		case O_TOLTRAJ:
			if (rs_num("--tol-traj", optarg, 0, 10, &o->ana.tol_traj))
				return -EINVAL;
			break;
		case O_COLL: {
			if (!ana_collective_known(optarg)) {
				fprintf(stderr, "rocestat: --collective: unknown '%s' (allreduce, "
					"allgather, reducescatter, broadcast, alltoall)\n", optarg);
				return -EINVAL;
			}
			snprintf(o->ana.collective, sizeof(o->ana.collective), "%s", optarg);
			break;
		}
		case O_RANKS:
			if (rs_num("--ranks", optarg, 2, 65536, &v) || v != floor(v)) {
				if (v != floor(v))
					fprintf(stderr, "rocestat: --ranks: expected an integer\n");
				return -EINVAL;
			}
			o->ana.ranks = (unsigned int)v;
			break;
		case O_PNG:
			if (sscanf(optarg, "%ux%u", &o->png_w, &o->png_h) != 2 || o->png_w < 100 ||
			    o->png_h < 100 || o->png_w > 10000 || o->png_h > 10000) {
				fprintf(stderr, "rocestat: --png: expected WxH (100..10000), got '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case O_HELP:
			rs_usage(stdout);
			exit(0);
		case O_VERSION:
			rs_print_version(stdout);
			exit(0);
		default:
			fprintf(stderr, "rocestat: bad option %s\n", n);
			rs_usage(stderr);
			return -EINVAL;
		}
	}
	if (argc - optind != (report ? 2 : 1)) {
		fprintf(stderr, "rocestat: expected %s\n", report ? "CAPTURE DIR" : "one CAPTURE");
		rs_usage(stderr);
		return -EINVAL;
	}
	o->capture = argv[optind];
	if (report)
		o->report_dir = argv[optind + 1];
	return 0;
}

static int
rs_run(const char *const *argv)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "rocestat: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* DIR/report.txt, report.json, csv/, PNGs by scripts/plot.py, index.html */
static int
rs_report(struct ana *a, const struct rs_opts *o)
{
	char path[PATH_MAX], csv[PATH_MAX], js[PATH_MAX], size[64], win[64];
	const char *plot = getenv("ROCESTAT_PLOT") ? getenv("ROCESTAT_PLOT") : ROCESTAT_PLOT;
	const char *argv[14];
	struct rs_batch b = { .n = 0 };
	int rc;

	if (mkdir(o->report_dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "rocestat: report %s: %s\n", o->report_dir, strerror(errno));
		return -errno;
	}
	/* the text, JSON and CSV files of one run are replaced together or not at all; the
	 * plot script then replaces each PNG whole */
	snprintf(path, sizeof(path), "%s/report.txt", o->report_dir);
	snprintf(js, sizeof(js), "%s/report.json", o->report_dir);
	snprintf(csv, sizeof(csv), "%s/csv", o->report_dir);
	rc = rs_write_text(&b, a, "report", path);
	if (rc == 0)
		rc = rs_write_json(&b, a, "report", js);
	if (rc == 0)
		rc = rs_write_csv(&b, a, "report", csv);
	if (rc != 0) {
		rs_batch_abort(&b);
		return rc;
	}
	rc = rs_batch_commit(&b);
	if (rc != 0)
		return rc;
	snprintf(size, sizeof(size), "%ux%u", o->png_w, o->png_h);
	argv[0] = "/usr/bin/python3";
	argv[1] = plot;
	argv[2] = "--csv";
	argv[3] = csv;
	argv[4] = "--json";
	argv[5] = js;
	argv[6] = "--out";
	argv[7] = o->report_dir;
	argv[8] = "--size";
	argv[9] = size;
	argv[10] = "--index";
	argv[11] = NULL;
	if (o->window_given) {
		/* the rate plot averages over the window the analysis used */
		snprintf(win, sizeof(win), "%.3f", o->ana.window_ns / 1000.0);
		argv[11] = "--window-us";
		argv[12] = win;
		argv[13] = NULL;
	}
	rc = rs_run(argv);
	if (rc != 0) {
		fprintf(stderr, "rocestat: report: %s failed\n", plot);
		return rc;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct rs_opts o;
	struct rs_batch b = { .n = 0 };
	char err[1024];
	struct ana_totals tot;
	struct ana *a;
	unsigned int fails;
	int rc;

	memset(&o, 0, sizeof(o));
	if (rs_parse(argc, argv, &o) != 0)
		return 2;
	if (rs_check_files(&o) != 0)
		return 2;
	if (strcmp(o.dcqcn, "nvidia") == 0 || strcmp(o.dcqcn, "paper") == 0) {
		dcqcn_params_by_name(&o.ana.dcqcn, o.dcqcn, o.ana.link_gbps * 1000);
	} else {
		uint64_t dflt;

		dcqcn_params_nvidia(&o.ana.dcqcn, o.ana.link_gbps * 1000);
		/* a marker: did the file set min_time_between_cnps? */
		dflt = o.ana.dcqcn.min_time_between_cnps_ns;
		o.ana.dcqcn.min_time_between_cnps_ns = UINT64_MAX;
		if (ana_dcqcn_load(&o.ana.dcqcn, o.dcqcn, err, sizeof(err)) != 0) {
			fprintf(stderr, "rocestat: %s\n", err);
			return 2;
		}
		if (o.ana.dcqcn.min_time_between_cnps_ns == UINT64_MAX) {
			o.ana.dcqcn.min_time_between_cnps_ns = dflt;
		} else if (strcmp(o.ana.np_min_source, "flag") != 0) {
			/* the CNP check: the flag, else the file, else 4 us */
			o.ana.np_min_time_between_cnps_ns = o.ana.dcqcn.min_time_between_cnps_ns;
			snprintf(o.ana.np_min_source, sizeof(o.ana.np_min_source), "dcqcn");
		}
	}
	o.ana.dcqcn.line_rate_mbps = o.ana.link_gbps * 1000;
	snprintf(o.ana.dcqcn_name, sizeof(o.ana.dcqcn_name), "%s", o.dcqcn);
	a = ana_create(&o.ana, err, sizeof(err));
	if (a == NULL) {
		fprintf(stderr, "rocestat: %s\n", err);
		return 2;
	}
	if (o.app_log != NULL && ana_app_log(a, o.app_log, err, sizeof(err)) != 0) {
		fprintf(stderr, "rocestat: %s\n", err);
		ana_free(a);
		return 2;
	}
	if ((o.nccl_log != NULL && ana_nccl_log(a, o.nccl_log, err, sizeof(err)) != 0) ||
	    (o.rocegen_json != NULL && ana_rocegen_json(a, o.rocegen_json, err, sizeof(err)) != 0)) {
		fprintf(stderr, "rocestat: %s\n", err);
		ana_free(a);
		return 2;
	}
	if (rs_read(a, o.capture) != 0) {
		ana_free(a);
		return 2;
	}
	ana_finish(a);
	ana_totals(a, &tot);
	if (tot.roce == 0 && tot.pfc == 0) {
		/* nothing to analyse: say so rather than pass "0 checks" with empty plots */
		fprintf(stderr, "rocestat: %s: no RoCE frames (%lu frames: %lu not RoCE, %lu "
			"malformed RoCE, no PFC or PAUSE); nothing to analyse\n", o.capture,
			(unsigned long)tot.frames, (unsigned long)tot.other,
			(unsigned long)tot.malformed);
		ana_free(a);
		return 2;
	}
	rc = 0;
	if (o.report_dir != NULL) {
		rc = rs_report(a, &o);
		rs_print_summary(a, o.report_dir, rc == 0, stdout);
	} else {
		/* standard output holds the JSON alone when it goes there: the text to stderr */
		bool json_stdout = emu_out_names_stdout(o.json_path);
		FILE *text = json_stdout ? stderr : stdout;

		errno = 0;
		if (!o.quiet && (ana_write_text(a, text) != 0 || fflush(text) != 0)) {
			fprintf(stderr, "rocestat: %s: write failed: %s\n",
				json_stdout ? "stderr" : "stdout", strerror(errno ? errno : EIO));
			rc = -EIO;
		}
		/* the CSVs first: a JSON on standard output is written in place, so it comes
		 * only once everything else is ready to be put in place */
		if (rc == 0 && o.csv_dir != NULL)
			rc = rs_write_csv(&b, a, "--csv", o.csv_dir);
		if (rc == 0 && o.json_path != NULL)
			rc = rs_write_json(&b, a, "--json", o.json_path);
		if (rc == 0)
			rc = rs_batch_commit(&b);
		else
			rs_batch_abort(&b);
	}
	fails = ana_failures(a);
	ana_free(a);
	if (rc != 0)
		return 2;
	return fails ? 1 : 0;
}
