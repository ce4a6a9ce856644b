/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives from the wire: iterations are bursts of RoCE data separated by at least
 * --idle-gap of silence or by a barrier (packets of at most 64 payload bytes, such as barriers
 * and credit returns, neither start nor extend one; one on a QP that never carried bulk data
 * ends the iteration, which then lasts until the barrier's last packet); per iteration the time (first to last data
 * packet) and the payload bytes of every QP, each PSN once. For --collective X --ranks N the buffer size S follows from the bytes on
 * the wire of a ring schedule (all ranks together): all-reduce 2 (N-1) S, all-gather and
 * reduce-scatter (N-1) S, broadcast (N-1) S, all-to-all (N-1) S; then as nccl-tests:
 * algbw = S / t, busbw = algbw x 2 (N-1) / N (all-reduce), (N-1) / N (all-gather,
 * reduce-scatter, all-to-all), 1 (broadcast). The app log (nccl-tests or rocegen output) gives
 * the application's busbw to put next to the wire's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

void
ana_coll_data(struct ana *a, struct ana_flow *f, uint64_t t_ns, uint64_t bytes)
{
	struct ana_iter *it;
	bool barrier;

	/* tiny messages (barriers, credit returns) are control, not the collective's data; on
	 * a QP that never carried bulk data (a control QP, as rocegen's barrier QPs) one ends
	 * the iteration: the next bulk packet starts a new one */
	if (bytes <= 64) {
		if (f->bulk_pkts == 0 && a->in_iter && a->n_iters > 0) {
			/* the barrier completes the iteration: its time counts, as the
			 * application's timer counts it */
			it = &a->iters[a->n_iters - 1];
			a->barrier_seen = true;
			if (t_ns > it->end_ns)
				it->end_ns = t_ns;
		}
		return;
	}
	f->bulk_pkts++;
	barrier = a->barrier_seen;
	a->barrier_seen = false;
	if (a->iters == NULL) {
		a->iters = calloc(ANA_ITERS_CAP, sizeof(*a->iters));
		if (a->iters == NULL)
			return;
	}
	/* (capture times of two ports may interleave slightly out of order) */
	if (!a->in_iter || barrier ||
	    (t_ns > a->last_data_ns && t_ns - a->last_data_ns >= a->o.idle_gap_ns)) {
		if (a->n_iters >= ANA_ITERS_CAP) {
			a->iters_dropped++;
			a->last_data_ns = t_ns;
			return;
		}
		it = &a->iters[a->n_iters++];
		/* after a barrier the iteration starts when the barrier ended, as the
		 * application's loop does (nccl-tests times iterations back to back) */
		it->start_ns = barrier && a->n_iters > 1 ? a->iters[a->n_iters - 2].end_ns : t_ns;
		a->in_iter = true;
	}
	it = &a->iters[a->n_iters - 1];
	if (t_ns > a->last_data_ns)
		a->last_data_ns = t_ns;
	if (t_ns > it->end_ns)
		it->end_ns = t_ns;
	it->bytes += bytes;
	it->pkts++;
}

void
ana_coll_finish(struct ana *a)
{
	(void)a;
}

/*
 * Wire bytes per buffer byte (all ranks) for a collective on a ring of n ranks; *bus gets the
 * nccl-tests bus factor. 0 if the collective is unknown.
 */
double
ana_coll_factor(const char *c, unsigned int n, double *bus)
{
	double nm1 = n > 1 ? (double)(n - 1) : 1.0;

	if (strcmp(c, "allreduce") == 0 || strcmp(c, "all_reduce") == 0) {
		*bus = 2.0 * nm1 / n;
		return 2.0 * nm1;
	}
	if (strcmp(c, "allgather") == 0 || strcmp(c, "all_gather") == 0 ||
	    strcmp(c, "reducescatter") == 0 || strcmp(c, "reduce_scatter") == 0 ||
	    strcmp(c, "alltoall") == 0 || strcmp(c, "all_to_all") == 0) {
		*bus = nm1 / n;
		return nm1;
	}
	if (strcmp(c, "broadcast") == 0) {
		*bus = 1.0;
		return nm1;
	}
	*bus = 0;
	return 0;
}

/*
 * nccl-tests rows (size count type redop root time algbw busbw #wrong ...) or rocegen's
 * (size count type redop time algbw busbw); '#' lines skipped; the largest size's row is kept.
 */
int
ana_app_log(struct ana *a, const char *path, char *err, size_t err_len)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	bool any = false;

	if (f == NULL) {
		snprintf(err, err_len, "--app-log %s: %s", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *tok[32], *s = line, *save = NULL;
		unsigned int n = 0, i;
		double num[32];
		unsigned long long size;
		char *end;

		if (line[0] == '#')
			continue;
		while (n < 32 && (tok[n] = strtok_r(s, " \t\r\n", &save)) != NULL) {
			s = NULL;
			n++;
		}
		unsigned int t0;

		/* nccl-tests: size count type redop root time algbw busbw #wrong ...;
		 * rocegen: size count type redop time algbw busbw */
		if (n == 7)
			t0 = 4;
		else if (n >= 8)
			t0 = 5;
		else
			continue;
		size = strtoull(tok[0], &end, 10);
		if (*end != '\0' || size == 0)
			continue;
		for (i = t0; i < t0 + 3; i++) {
			num[i] = strtod(tok[i], &end);
			if (*end != '\0')
				break;
		}
		if (i < t0 + 3)
			continue;
		if (!any || size >= a->app_size) {
			a->app_size = size;
			a->app_time_us = num[t0];
			a->app_algbw_gbs = num[t0 + 1];
			a->app_busbw_gbs = num[t0 + 2];
			snprintf(a->app_kind, sizeof(a->app_kind), "%s", tok[2]);
		}
		any = true;
	}
	if (ferror(f)) {
		snprintf(err, err_len, "--app-log %s: read error", path);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	if (!any) {
		snprintf(err, err_len, "--app-log %s: no nccl-tests or rocegen result row found",
			 path);
		return -EINVAL;
	}
	a->app_seen = true;
	return 0;
}

bool
ana_collective_known(const char *name)
{
	double bus;

	return ana_coll_factor(name, 2, &bus) > 0;
}
