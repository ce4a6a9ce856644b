/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/base/emu_rundir.h"

void
emu_runtime_dir_remove(const char *dir)
{
	char cfg[PATH_MAX + 16];
	struct dirent *de;
	DIR *d;
	int fd;

	if (dir == NULL || dir[0] == '\0')
		return;
	snprintf(cfg, sizeof(cfg), "%s/config", dir);
	fd = open(cfg, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		int busy = fcntl(fd, F_SETLK, &lk) != 0;

		close(fd);
		if (busy)
			return;
	}
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char path[PATH_MAX + 256];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}
