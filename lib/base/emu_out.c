/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/emu_out.h"

static char *emu_out_dirname(const char *path);

/* "-", or a name of this process's standard output: written to it as a stream (a name
 * opened anew would start at offset 0, and a rename over it would replace the link) */
static bool
emu_out_is_stdout(const char *path)
{
	return strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0 ||
	       strcmp(path, "/dev/fd/1") == 0 || strcmp(path, "/proc/self/fd/1") == 0;
}

bool
emu_out_names_stdout(const char *path)
{
	return path != NULL && emu_out_is_stdout(path);
}

/*
 * The file a symbolic link @p path leads to, as a new string (NULL when @p path is not a link
 * or on error): the temporary file goes beside it and is renamed over it, so the link stays
 * a link (renamed over the link itself, it would become a regular file and its target keep
 * the old data). A dangling link gives the name it points to.
 */
static char *
emu_out_link_target(const char *path)
{
	char real[PATH_MAX], link[PATH_MAX];
	struct stat st;
	ssize_t n;
	char *dir, *t;

	if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
		return NULL;
	if (realpath(path, real) != NULL)
		return strdup(real);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return NULL;
	link[n] = '\0';
	if (link[0] == '/')
		return strdup(link);
	dir = emu_out_dirname(path);
	if (dir == NULL || asprintf(&t, "%s/%s", dir, link) < 0)
		t = NULL;
	free(dir);
	return t;
}

/* The directory part of @p path, as a new string ("." for a bare name). */
static char *
emu_out_dirname(const char *path)
{
	char *copy = strdup(path), *d;

	if (copy == NULL)
		return NULL;
	d = strdup(dirname(copy));
	free(copy);
	return d;
}

int
emu_out_probe(const char *path, struct emu_err *err)
{
	struct stat st;
	char *dir;
	int rc = 0;

	if (path[0] == '\0')
		return emu_err_setrc(err, -EINVAL, "empty file name");
	if (emu_out_is_stdout(path))
		return 0;
	if (path[strlen(path) - 1] == '/')
		/* a directory's name, existing or not: refused now, not after the run */
		return emu_err_setrc(err, -EISDIR, "%s: is a directory name (ends in /), not a file",
				     path);
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return emu_err_setrc(err, -EISDIR, "%s: is a directory", path);
		if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
			return access(path, W_OK) == 0 ? 0 :
			       emu_err_setrc(err, -errno, "%s: cannot write: %s", path,
					     strerror(errno));
		if (!S_ISREG(st.st_mode))
			return emu_err_setrc(err, -EINVAL,
					     "%s: not a regular file, device or FIFO", path);
	}
	dir = emu_out_dirname(path);
	if (dir == NULL)
		return emu_err_setrc(err, -ENOMEM, "%s: out of memory", path);
	if (stat(dir, &st) != 0)
		rc = emu_err_setrc(err, -errno, "%s: directory %s: %s", path, dir,
				   strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		rc = emu_err_setrc(err, -ENOTDIR, "%s: %s is not a directory", path, dir);
	else if (access(dir, W_OK | X_OK) != 0)
		rc = emu_err_setrc(err, -errno, "%s: cannot create files in %s: %s", path, dir,
				   strerror(errno));
	free(dir);
	return rc;
}

int
emu_out_open(struct emu_out *o, const char *path, struct emu_err *err)
{
	struct stat st;
	mode_t mask;
	int rc;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	rc = emu_out_probe(path, err);
	if (rc != 0)
		return rc;
	o->path = strdup(path);
	if (o->path == NULL)
		return emu_err_setrc(err, -ENOMEM, "%s: out of memory", path);
	if (emu_out_is_stdout(path)) {
		o->fd = STDOUT_FILENO;
		o->stream = true;
		return 0;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (o->fd < 0) {
			rc = -errno;
			emu_err_setrc(err, rc, "%s: cannot open for writing: %s", path,
				      strerror(errno));
			goto fail;
		}
		o->stream = true;
		return 0;
	}
	o->target = emu_out_link_target(path);
	if (asprintf(&o->tmp, "%s.rocemu-XXXXXX", o->target != NULL ? o->target : path) < 0) {
		o->tmp = NULL;
		rc = emu_err_setrc(err, -ENOMEM, "%s: out of memory", path);
		goto fail;
	}
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		rc = -errno;
		emu_err_setrc(err, rc, "%s: cannot create %s: %s", path, o->tmp, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		goto fail;
	}
	/* mkstemp makes 0600; the file gets what an ordinary create would give it */
	mask = umask(0);
	umask(mask);
	if (fchmod(o->fd, 0666 & ~mask) != 0) {
		/* not fatal: the data is what matters */
	}
	return 0;
fail:
	free(o->target);
	free(o->path);
	o->target = NULL;
	o->path = NULL;
	return rc;
}

#define EMU_OUT_RESERVE_MIN (1u << 20)
#define EMU_OUT_RESERVE_MAX (16u << 20)

/*
 * Reserve the blocks of a regular file ahead of a write of @p len bytes (the header says
 * why); the first refusal turns it off for good: the write itself then says what is wrong.
 */
static void
emu_out_reserve(struct emu_out *o, size_t len)
{
	uint64_t chunk;

	if (o->stream || o->no_reserve || o->bytes + len <= o->reserved)
		return;
	if (o->reserved < o->bytes)
		o->reserved = o->bytes;
	/* as much again as was written, 1-16 MB, and at least this write */
	chunk = o->bytes < EMU_OUT_RESERVE_MIN ? EMU_OUT_RESERVE_MIN :
		o->bytes > EMU_OUT_RESERVE_MAX ? EMU_OUT_RESERVE_MAX : o->bytes;
	if (chunk < o->bytes + len - o->reserved)
		chunk = o->bytes + len - o->reserved;
	if (fallocate(o->fd, FALLOC_FL_KEEP_SIZE, (off_t)o->reserved, (off_t)chunk) == 0)
		o->reserved += chunk;
	else
		o->no_reserve = true;
}

/* Give back the blocks reserved past the end of a regular file. */
static int
emu_out_unreserve(struct emu_out *o)
{
	if (o->stream || o->reserved <= o->bytes)
		return 0;
	if (ftruncate(o->fd, (off_t)o->bytes) != 0)
		return errno;
	o->reserved = o->bytes;
	return 0;
}

int
emu_out_write(struct emu_out *o, const void *buf, size_t len)
{
	const char *p = buf;

	if (o->error != 0)
		return -o->error;
	emu_out_reserve(o, len);
	while (len > 0) {
		ssize_t w = write(o->fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->error = w < 0 ? errno : EIO;
			return -o->error;
		}
		p += w;
		len -= (size_t)w;
		o->bytes += (uint64_t)w;
	}
	return 0;
}

void
emu_out_truncate(struct emu_out *o, uint64_t size)
{
	if (!o->stream && o->fd >= 0 && size <= o->bytes && ftruncate(o->fd, (off_t)size) == 0) {
		o->bytes = size;
		o->reserved = size; /* and the blocks reserved past it are given back */
	}
}

int
emu_out_finish(struct emu_out *o)
{
	int e;

	if (o->path == NULL || o->fd < 0)
		return -o->error;
	/* the reserved blocks past the end go back, the output complete or not */
	e = emu_out_unreserve(o);
	if (o->error == 0)
		o->error = e;
	if (o->fd != STDOUT_FILENO && close(o->fd) != 0 && o->error == 0)
		o->error = errno;
	o->fd = -1;
	return -o->error;
}

int
emu_out_commit(struct emu_out *o, struct emu_err *err)
{
	int rc = 0;

	if (o->path == NULL)
		return 0;
	emu_out_finish(o);
	if (o->error != 0) {
		if (o->tmp != NULL)
			rc = emu_err_setrc(err, -o->error,
					   "%s: write failed: %s; %s was left as it was, the %llu bytes "
					   "written are in %s",
					   o->path, strerror(o->error), o->path,
					   (unsigned long long)o->bytes, o->tmp);
		else
			rc = emu_err_setrc(err, -o->error, "%s: write failed after %llu bytes: %s",
					   o->path, (unsigned long long)o->bytes,
					   strerror(o->error));
	} else if (o->tmp != NULL &&
		   rename(o->tmp, o->target != NULL ? o->target : o->path) != 0) {
		rc = emu_err_setrc(err, -errno, "%s: cannot rename %s over it: %s; the data is in %s",
				   o->path, o->tmp, strerror(errno), o->tmp);
	}
	free(o->tmp);
	free(o->target);
	free(o->path);
	o->tmp = NULL;
	o->target = NULL;
	o->path = NULL;
	return rc;
}

void
emu_out_abort(struct emu_out *o)
{
	if (o->fd >= 0 && o->fd != STDOUT_FILENO)
		close(o->fd);
	o->fd = -1;
	if (o->tmp != NULL)
		unlink(o->tmp);
	free(o->tmp);
	free(o->target);
	free(o->path);
	o->tmp = NULL;
	o->target = NULL;
	o->path = NULL;
}

struct emu_file_key {
	bool exists;
	dev_t dev;
	ino_t ino;
	char abs[PATH_MAX * 2];
};

/* Identify @p path: device and inode when it exists, else its absolute path. "-" is standard
 * input for an input and standard output for an output: a regular file behind it is that
 * file (so --in f --out - >>f is refused), anything else (a pipe, a terminal) the stream. */
static void
emu_file_key(const char *path, bool input, struct emu_file_key *k)
{
	struct stat st;
	char *dir, *copy, *base;
	char real[PATH_MAX];

	memset(k, 0, sizeof(*k));
	if (input ? strcmp(path, "-") == 0 : emu_out_is_stdout(path)) {
		if (fstat(input ? STDIN_FILENO : STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
			k->exists = true;
			k->dev = st.st_dev;
			k->ino = st.st_ino;
		} else {
			snprintf(k->abs, sizeof(k->abs), "%s", input ? "<stdin>" : "-");
		}
		return;
	}
	if (stat(path, &st) == 0) {
		k->exists = true;
		k->dev = st.st_dev;
		k->ino = st.st_ino;
		return;
	}
	dir = emu_out_dirname(path);
	copy = strdup(path);
	base = copy != NULL ? basename(copy) : NULL;
	if (dir != NULL && base != NULL && realpath(dir, real) != NULL)
		snprintf(k->abs, sizeof(k->abs), "%s/%s", real, base);
	else
		snprintf(k->abs, sizeof(k->abs), "%s", path);
	free(dir);
	free(copy);
}

static bool
emu_file_key_eq(const struct emu_file_key *a, const struct emu_file_key *b)
{
	if (a->exists != b->exists)
		return false;
	if (a->exists)
		return a->dev == b->dev && a->ino == b->ino;
	return strcmp(a->abs, b->abs) == 0;
}

void
emu_out_rotated_name(const char *file, uint32_t idx, char *buf, size_t len)
{
	const char *dot = strrchr(file, '.'), *slash = strrchr(file, '/');

	if (idx == 0)
		snprintf(buf, len, "%s", file);
	else if (dot != NULL && (slash == NULL || dot > slash))
		snprintf(buf, len, "%.*s-%u%s", (int)(dot - file), file, idx, dot);
	else
		snprintf(buf, len, "%s-%u", file, idx);
}

/* The directory of @p path made absolute and its last component, in @p dir and *@p base
 * (pointing into @p path); a symbolic link is followed first (into @p tmp). */
static void
emu_out_split(const char *path, char *tmp, size_t tmp_len, char *dir, size_t dir_len,
	      const char **base)
{
	char real[PATH_MAX];
	const char *slash;
	char *d;

	if (realpath(path, real) != NULL) {
		snprintf(tmp, tmp_len, "%s", real);
		path = tmp;
	}
	slash = strrchr(path, '/');
	*base = slash != NULL ? slash + 1 : path;
	d = emu_out_dirname(path);
	if (d != NULL && realpath(d, real) != NULL)
		snprintf(dir, dir_len, "%s", real);
	else
		snprintf(dir, dir_len, "%s", d != NULL ? d : ".");
	free(d);
}

/* Whether @p path is one of the later names (1 .. @p rotates - 1) of rotating output @p file. */
static bool
emu_out_rotated_of(const char *file, uint32_t rotates, const char *path)
{
	char ft[PATH_MAX], pt[PATH_MAX], fd[PATH_MAX], pd[PATH_MAX];
	const char *fb, *pb, *dot, *p;
	size_t stem;
	uint64_t idx = 0;

	if (rotates == 0 || emu_out_is_stdout(file) || emu_out_is_stdout(path))
		return false;
	emu_out_split(file, ft, sizeof(ft), fd, sizeof(fd), &fb);
	emu_out_split(path, pt, sizeof(pt), pd, sizeof(pd), &pb);
	if (strcmp(fd, pd) != 0)
		return false;
	dot = strrchr(fb, '.');
	stem = dot != NULL ? (size_t)(dot - fb) : strlen(fb);
	if (strncmp(pb, fb, stem) != 0 || pb[stem] != '-' || pb[stem + 1] < '1' ||
	    pb[stem + 1] > '9')
		return false;
	for (p = pb + stem + 1; *p >= '0' && *p <= '9' && idx < UINT32_MAX; p++)
		idx = idx * 10 + (uint64_t)(*p - '0');
	return strcmp(p, dot != NULL ? dot : "") == 0 &&
	       (rotates == UINT32_MAX || idx < rotates);
}

int
emu_files_check(const struct emu_file_ref *refs, unsigned int n, struct emu_err *err)
{
	struct emu_file_key *keys;
	unsigned int i, j;
	int rc = 0;

	if (n == 0)
		return 0;
	keys = calloc(n, sizeof(*keys));
	if (keys == NULL)
		return emu_err_setrc(err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		emu_file_key(refs[i].path, refs[i].input, &keys[i]);
	for (i = 0; i < n && rc == 0; i++)
		for (j = 0; j < i && rc == 0; j++) {
			struct stat st;
			bool ri;

			if (refs[i].input && refs[j].input)
				continue;
			ri = emu_out_rotated_of(refs[i].path, refs[i].rotates, refs[j].path);

			if (ri || emu_out_rotated_of(refs[j].path, refs[j].rotates, refs[i].path)) {
				/* r rotates, and x is one of the names it rotates to */
				const struct emu_file_ref *r = ri ? &refs[i] : &refs[j];
				const struct emu_file_ref *x = ri ? &refs[j] : &refs[i];

				rc = emu_err_setrc(err, -EEXIST,
						   "%s %s: is one of the files %s %s rotates to (%s)",
						   x->role, x->path, r->role, r->path,
						   x->input ? "an output never overwrites an input" :
						   "two outputs would overwrite each other");
				continue;
			}
			if (!emu_file_key_eq(&keys[i], &keys[j]))
				continue;
			/* /dev/null and other devices may take any number of outputs */
			if (keys[i].exists && stat(refs[i].path, &st) == 0 && S_ISCHR(st.st_mode) &&
			    !refs[i].input && !refs[j].input)
				continue;
			rc = emu_err_setrc(err, -EEXIST,
					   "%s %s: is the same file as %s %s (%s)", refs[i].role,
					   refs[i].path, refs[j].role, refs[j].path,
					   refs[i].input || refs[j].input ?
					   "an output never overwrites an input" :
					   "two outputs would overwrite each other");
		}
	free(keys);
	return rc;
}
