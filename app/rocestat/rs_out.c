/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocestat's outputs (rocestat.h): every file is written under a temporary name (lib/base/
 * emu_out, behind a stdio stream so the analysis library's formatters write to a FILE), and
 * the files of one run are renamed over their targets together once every byte of every one
 * got there (struct rs_batch); on a failure the targets stay as they were and the temporary
 * files are removed.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <jansson.h>
#include <pcap/pcap.h>
#include <rte_version.h>

#include "app/rocestat/rocestat.h"
#include "rs_version.h"

#ifndef RS_PROJECT_VERSION
#define RS_PROJECT_VERSION "?"
#endif
#include "lib/base/emu_out.h"

/* ---- version ---- */

/* DPDK's version as built against (rocestat runs no EAL: its headers, lib/dcqcn's types) */
static const char *
rs_dpdk_version(void)
{
	static char v[32];

	snprintf(v, sizeof(v), "%d.%02d.%d%s", RTE_VER_YEAR, RTE_VER_MONTH, RTE_VER_MINOR,
		 RTE_VER_SUFFIX);
	return v;
}

void
rs_print_version(FILE *f)
{
	fprintf(f, "rocestat %s (git %s); DPDK %s, jansson %s, %s\n", RS_PROJECT_VERSION,
		RS_GIT_DESCRIBE, rs_dpdk_version(), jansson_version_str(), pcap_lib_version());
}

json_t *
rs_version_json(void)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s}", "rocestat", RS_PROJECT_VERSION, "git",
			 RS_GIT_DESCRIBE, "dpdk", rs_dpdk_version(), "jansson",
			 jansson_version_str(), "libpcap", pcap_lib_version());
}

/* ---- outputs: lib/base/emu_out behind a stdio stream ---- */

/* The plot script's outputs in a report directory (scripts/plot.py --index). */
static const char *const rs_plot_files[] = { "rate.png", "pfc.png", "qdepth.png", "bandwidth.png",
					      "index.html" };

#define RS_MAX_FILES 32

/* Every file of a run with its role, for emu_files_check(); the paths are owned. */
struct rs_files {
	struct emu_file_ref refs[RS_MAX_FILES];
	char *own[RS_MAX_FILES];
	unsigned int n;
};

static int
rs_files_add(struct rs_files *fs, const char *role, const char *dir, const char *name,
	     bool input)
{
	char *p;

	if (fs->n == RS_MAX_FILES)
		return -ENOSPC;
	if (name != NULL ? asprintf(&p, "%s/%s", dir, name) < 0 : (p = strdup(dir)) == NULL)
		return -ENOMEM;
	fs->own[fs->n] = p;
	fs->refs[fs->n] = (struct emu_file_ref){ role, p, input };
	fs->n++;
	return 0;
}

static void
rs_files_free(struct rs_files *fs)
{
	unsigned int i;

	for (i = 0; i < fs->n; i++)
		free(fs->own[i]);
	fs->n = 0;
}

/*
 * Can the files of @p dir be created? An existing directory: by one of them; a new one: by
 * the directory itself (its parent must be writable); anything else is not a directory.
 */
static int
rs_probe_dir(const char *role, const char *dir, const char *name)
{
	struct emu_err err;
	struct stat st;
	char path[PATH_MAX], bare[PATH_MAX];
	bool exists = stat(dir, &st) == 0;
	size_t n = strlen(dir);

	if (exists && !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "rocestat: %s %s: not a directory\n", role, dir);
		return -1;
	}
	/* a new directory is probed as a file of its parent: its name without a trailing / */
	while (n > 1 && dir[n - 1] == '/')
		n--;
	snprintf(bare, sizeof(bare), "%.*s", (int)n, dir);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (emu_out_probe(exists ? path : bare, &err) != 0) {
		fprintf(stderr, "rocestat: %s %s\n", role, err.msg);
		return -1;
	}
	return 0;
}

/*
 * Before anything is read: refuse an output that is the same file as an input or another
 * output (rocestat --json cx.pcap cx.pcap replaced the capture with its own report), and an
 * output that could not be created, rather than after a long analysis.
 */
int
rs_check_files(const struct rs_opts *o)
{
	struct rs_files fs = { .n = 0 };
	struct emu_err err;
	unsigned int i;
	int rc = 0;

	rc |= rs_files_add(&fs, "CAPTURE", o->capture, NULL, true);
	if (strcmp(o->dcqcn, "nvidia") != 0 && strcmp(o->dcqcn, "paper") != 0)
		rc |= rs_files_add(&fs, "--dcqcn", o->dcqcn, NULL, true);
	if (o->app_log != NULL)
		rc |= rs_files_add(&fs, "--app-log", o->app_log, NULL, true);
	if (o->nccl_log != NULL)
		rc |= rs_files_add(&fs, "--nccl-log", o->nccl_log, NULL, true);
	if (o->rocegen_json != NULL)
		rc |= rs_files_add(&fs, "--rocegen-json", o->rocegen_json, NULL, true);
	if (o->report_dir != NULL) {
		char csv[PATH_MAX];

		snprintf(csv, sizeof(csv), "%s/csv", o->report_dir);
		rc |= rs_files_add(&fs, "report", o->report_dir, "report.txt", false);
		rc |= rs_files_add(&fs, "report", o->report_dir, "report.json", false);
		for (i = 0; ana_csv_files[i] != NULL; i++)
			rc |= rs_files_add(&fs, "report", csv, ana_csv_files[i], false);
		for (i = 0; i < sizeof(rs_plot_files) / sizeof(rs_plot_files[0]); i++)
			rc |= rs_files_add(&fs, "report", o->report_dir, rs_plot_files[i], false);
	} else {
		if (o->json_path != NULL)
			rc |= rs_files_add(&fs, "--json", o->json_path, NULL, false);
		for (i = 0; o->csv_dir != NULL && ana_csv_files[i] != NULL; i++)
			rc |= rs_files_add(&fs, "--csv", o->csv_dir, ana_csv_files[i], false);
	}
	if (rc != 0) {
		fprintf(stderr, "rocestat: out of memory\n");
		rs_files_free(&fs);
		return -1;
	}
	rc = emu_files_check(fs.refs, fs.n, &err);
	rs_files_free(&fs);
	if (rc != 0) {
		fprintf(stderr, "rocestat: %s\n", err.msg);
		return -1;
	}
	if (o->report_dir != NULL)
		return rs_probe_dir("report", o->report_dir, "report.txt");
	if (o->json_path != NULL && emu_out_probe(o->json_path, &err) != 0) {
		fprintf(stderr, "rocestat: --json %s\n", err.msg);
		return -1;
	}
	if (o->csv_dir != NULL)
		return rs_probe_dir("--csv", o->csv_dir, ana_csv_files[0]);
	return 0;
}

/* The stream's writes go to emu_out_write(), which keeps the first error and its errno. */
static ssize_t
rs_out_cookie_write(void *cookie, const char *buf, size_t len)
{
	int rc = emu_out_write(cookie, buf, len);

	if (rc != 0) {
		errno = -rc;
		return 0; /* fopencookie: 0 is the error, never a negative value */
	}
	return (ssize_t)len;
}

static FILE *
rs_out_open(struct emu_out *o, const char *role, const char *path)
{
	cookie_io_functions_t io = { .write = rs_out_cookie_write };
	struct emu_err err;
	FILE *f;

	if (emu_out_open(o, path, &err) != 0) {
		fprintf(stderr, "rocestat: %s %s\n", role, err.msg);
		return NULL;
	}
	f = fopencookie(o, "w", io);
	if (f == NULL) {
		fprintf(stderr, "rocestat: %s: %s\n", path, strerror(errno));
		emu_out_abort(o);
	}
	return f;
}

/*
 * Flush and close @p f and its file (whose reserved blocks go back now, not at the commit:
 * the files of a run would otherwise hold theirs all at once); the file waits under its
 * temporary name in @p b until rs_batch_commit(). @p rc is the formatter's verdict. On a
 * failure this file's temporary is removed and the message printed.
 */
static int
rs_out_close(struct rs_batch *b, struct emu_out *o, FILE *f, int rc)
{
	int e;

	if (fclose(f) != 0 && rc == 0)
		rc = -(errno ? errno : EIO);
	if (emu_out_finish(o) == 0 && rc == 0) {
		b->n++;
		return 0;
	}
	e = o->error != 0 ? o->error : rc < 0 ? -rc : EIO;
	fprintf(stderr, "rocestat: %s: write failed: %s\n",
		emu_out_names_stdout(o->path) ? "stdout" : o->path, strerror(e));
	emu_out_abort(o);
	return -e;
}

void
rs_batch_abort(struct rs_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->n; i++)
		emu_out_abort(&b->o[i]);
	b->n = 0;
}

/*
 * Put every file of @p b in place, in the order written. Every file is already written and
 * closed (rs_out_close()), so only renames are left, which fail only when the directory
 * itself changed under the run. Unlike a capture, a partial report is of no use and on a full
 * disk would hold the space the next try needs: a file that cannot be put in place loses its
 * temporary file, and so do the ones not yet renamed; the message names those already in
 * place.
 */
int
rs_batch_commit(struct rs_batch *b)
{
	char tmp[PATH_MAX], *done[RS_BATCH_MAX];
	struct emu_err err;
	unsigned int i, j;
	int rc = 0;

	for (i = 0; i < b->n; i++) {
		struct emu_out *o = &b->o[i];

		done[i] = strdup(o->path); /* for the message, if a later one fails */
		snprintf(tmp, sizeof(tmp), "%s", o->tmp != NULL ? o->tmp : "");
		rc = emu_out_commit(o, &err);
		if (rc == 0)
			continue;
		/* emu_out keeps the temporary file of a failed rename: not ours */
		if (tmp[0] != '\0')
			unlink(tmp);
		fprintf(stderr, "rocestat: %s; removed, with the files after it", err.msg);
		for (j = 0; j < i; j++)
			fprintf(stderr, "%s %s", j == 0 ? "; already replaced:" : ",",
				done[j] != NULL ? done[j] : "(out of memory)");
		fputc('\n', stderr);
		for (j = i + 1; j < b->n; j++)
			emu_out_abort(&b->o[j]);
		i++;
		break;
	}
	for (j = 0; j < i; j++)
		free(done[j]);
	b->n = 0;
	return rc;
}

static struct emu_out *
rs_batch_next(struct rs_batch *b)
{
	if (b->n == RS_BATCH_MAX) {
		fprintf(stderr, "rocestat: too many output files\n");
		return NULL;
	}
	return &b->o[b->n];
}

/* json_dumpf() hands stdio every token apart (one locked fwrite each: a tenth of rocestat's
 * time on a large report); this gathers them and writes 64 KiB at a time */
struct rs_jbuf {
	FILE *f;
	size_t n;
	char b[64 << 10];
};

static int
rs_jbuf_flush(struct rs_jbuf *jb)
{
	if (jb->n > 0 && fwrite(jb->b, 1, jb->n, jb->f) != jb->n)
		return -1;
	jb->n = 0;
	return 0;
}

static int
rs_jbuf_put(const char *buf, size_t len, void *arg)
{
	struct rs_jbuf *jb = arg;

	if (len > sizeof(jb->b) - jb->n) {
		if (rs_jbuf_flush(jb) != 0)
			return -1;
		if (len > sizeof(jb->b))
			return fwrite(buf, 1, len, jb->f) == len ? 0 : -1;
	}
	memcpy(jb->b + jb->n, buf, len);
	jb->n += len;
	return 0;
}

int
rs_write_json(struct rs_batch *b, struct ana *a, const char *role, const char *path)
{
	struct rs_jbuf *jb;
	struct emu_out *o = rs_batch_next(b);
	json_t *j;
	FILE *f;
	int rc;

	if (o == NULL)
		return -ENOSPC;
	j = ana_json(a);
	if (j != NULL && json_object_set_new(j, "version", rs_version_json()) != 0) {
		json_decref(j);
		j = NULL;
	}
	if (j == NULL) {
		fprintf(stderr, "rocestat: out of memory building the JSON report\n");
		return -ENOMEM;
	}
	f = rs_out_open(o, role, path);
	if (f == NULL) {
		json_decref(j);
		return -EIO;
	}
	jb = malloc(sizeof(*jb));
	if (jb == NULL) {
		rc = -1;
	} else {
		jb->f = f;
		jb->n = 0;
		rc = json_dump_callback(j, rs_jbuf_put, jb,
					JSON_INDENT(1) | JSON_REAL_PRECISION(10));
		if (rc == 0)
			rc = rs_jbuf_put("\n", 1, jb);
		if (rc == 0)
			rc = rs_jbuf_flush(jb);
		free(jb);
	}
	json_decref(j);
	return rs_out_close(b, o, f, rc != 0 ? -EIO : 0);
}

int
rs_write_text(struct rs_batch *b, struct ana *a, const char *role, const char *path)
{
	struct emu_out *o = rs_batch_next(b);
	FILE *f;

	if (o == NULL)
		return -ENOSPC;
	f = rs_out_open(o, role, path);
	if (f == NULL)
		return -EIO;
	return rs_out_close(b, o, f, ana_write_text(a, f));
}

/* The CSV time series into @p dir (created if missing), each file through emu_out. */
int
rs_write_csv(struct rs_batch *b, struct ana *a, const char *role, const char *dir)
{
	char path[PATH_MAX];
	unsigned int i;
	int rc;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "rocestat: %s %s: %s\n", role, dir, strerror(errno));
		return -EIO;
	}
	for (i = 0; ana_csv_files[i] != NULL; i++) {
		struct emu_out *o = rs_batch_next(b);
		FILE *f;

		if (o == NULL)
			return -ENOSPC;
		snprintf(path, sizeof(path), "%s/%s", dir, ana_csv_files[i]);
		f = rs_out_open(o, role, path);
		if (f == NULL)
			return -EIO;
		rc = rs_out_close(b, o, f, ana_write_csv_file(a, ana_csv_files[i], f));
		if (rc != 0)
			return rc;
	}
	return 0;
}

void
rs_print_summary(struct ana *a, const char *dir, bool written, FILE *f)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	fputs("# ", f);
	rs_print_version(f);
	if (m != NULL) {
		int rc = ana_write_text(a, m);

		if (fclose(m) == 0 && rc == 0 && text != NULL) {
			for (line = strtok_r(text, "\n", &save); line != NULL;
			     line = strtok_r(NULL, "\n", &save))
				if (strncmp(line, "# rocestat:", 11) == 0 ||
				    strncmp(line, "  FAIL", 6) == 0 ||
				    strncmp(line, "  FINDING", 9) == 0 ||
				    strstr(line, "checks FAILED") != NULL)
					fprintf(f, "%s\n", line);
		}
		free(text);
	}
	if (written)
		fprintf(f, "# report in %s/ (index.html, report.txt, report.json, csv/)\n", dir);
	else
		fprintf(f, "# report in %s/ NOT written (the reason is above)\n", dir);
	fflush(f);
}
