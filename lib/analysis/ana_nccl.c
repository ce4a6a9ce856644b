/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --nccl-log: an NCCL_DEBUG=INFO log (every process's lines in one file, as mpirun gathers
 * them), read for the "where the bandwidth went" report. Lines start
 * `host:pid:tid [dev] NCCL INFO `; three kinds are used (../shared ANALYSIS.md):
 *
 *   NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>    the process's address, NIC
 *   comm 0x... rank 0 nranks 2 cudaDev 0 ... - Init COMPLETE        the process's rank
 *   Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA          the rail of rank 0 -> 1
 *
 * The address is the OOB (bootstrap) one: it names the RoCE address when NCCL_SOCKET_IFNAME is
 * the RoCE interface, as in a lab where one interface carries both. Other lines are skipped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ana_internal.h"

#define ANA_RAILS_MAX 65536

struct ana_nccl_proc {
	char key[64];             /* host:pid */
	uint8_t ip[16];
	bool have_ip;
	int32_t rank;
	char nic[32];
};

static int
ana_nccl_ip(const char *s, size_t n, uint8_t *ip)
{
	char buf[64];

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	memset(ip, 0, 16);
	if (inet_pton(AF_INET, buf, ip) == 1)
		return 0;
	return inet_pton(AF_INET6, buf, ip) == 1 ? 0 : -1;
}

static struct ana_nccl_proc *
ana_nccl_proc(struct ana_nccl_proc *ps, uint32_t *n, const char *key, size_t kl)
{
	uint32_t i;

	if (kl >= sizeof(ps[0].key))
		kl = sizeof(ps[0].key) - 1;
	for (i = 0; i < *n; i++)
		if (strlen(ps[i].key) == kl && memcmp(ps[i].key, key, kl) == 0)
			return &ps[i];
	if (*n == ANA_RANKS_MAX)
		return NULL;
	memset(&ps[*n], 0, sizeof(ps[0]));
	memcpy(ps[*n].key, key, kl);
	ps[*n].rank = -1;
	return &ps[(*n)++];
}

/* One INFO line: its process key (host:pid) and the text after "NCCL INFO ". */
static const char *
ana_nccl_split(const char *line, size_t *kl)
{
	const char *info = strstr(line, " NCCL INFO "), *c1, *c2;

	if (info == NULL)
		return NULL;
	c1 = strchr(line, ':');
	c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
	if (c2 == NULL || c2 > info)
		return NULL;
	*kl = (size_t)(c2 - line);
	return info + 11;
}

static void
ana_nccl_line(struct ana *a, struct ana_nccl_proc *ps, uint32_t *n, const char *line)
{
	size_t kl;
	const char *t = ana_nccl_split(line, &kl), *s;
	struct ana_nccl_proc *p;
	int from, to, rail;

	if (t == NULL)
		return;
	if (strncmp(t, "NET/IB : Using ", 15) == 0) {
		const char *oob = strstr(t, "OOB "), *colon, *end;

		p = ana_nccl_proc(ps, n, line, kl);
		if (p == NULL)
			return;
		s = strchr(t + 15, ']');
		if (s != NULL) {
			size_t l = strcspn(s + 1, ":/ ");

			snprintf(p->nic, sizeof(p->nic), "%.*s", (int)l, s + 1);
		}
		if (oob == NULL || (colon = strchr(oob, ':')) == NULL)
			return;
		end = colon + 1 + strcspn(colon + 1, "<; \n");
		if (ana_nccl_ip(colon + 1, (size_t)(end - colon - 1), p->ip) == 0)
			p->have_ip = true;
		return;
	}
	if (sscanf(t, "Channel %*d/%*d : %d[%*d] -> %d[%*d] [send] via NET/%*[^/]/%d", &from, &to,
		   &rail) == 3) {
		uint32_t i;

		for (i = 0; i < a->n_rails; i++)
			if (a->rails[i].from == from && a->rails[i].to == to)
				return; /* the first channel's rail names the pair */
		a->rails = ana_grow(a->rails, &a->cap_rails, a->n_rails, sizeof(*a->rails), 16,
				    ANA_RAILS_MAX);
		if (a->n_rails < a->cap_rails)
			a->rails[a->n_rails++] = (struct ana_rank_rail){ from, to, rail };
		return;
	}
	s = strstr(t, " rank ");
	if (strncmp(t, "comm ", 5) == 0 && s != NULL &&
	    (strstr(s, " nranks ") != NULL || strstr(s, " nRanks ") != NULL)) {
		int r;

		if (sscanf(s, " rank %d", &r) == 1 && r >= 0 && (p = ana_nccl_proc(ps, n, line, kl)))
			p->rank = r;
	}
}

int
ana_nccl_log(struct ana *a, const char *path, char *err, size_t err_len)
{
	struct ana_nccl_proc *ps = calloc(ANA_RANKS_MAX, sizeof(*ps));
	char *line = NULL;
	size_t cap = 0;
	uint32_t n = 0, i;
	FILE *f;

	if (ps == NULL) {
		snprintf(err, err_len, "--nccl-log %s: out of memory", path);
		return -ENOMEM;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		int e = errno;

		snprintf(err, err_len, "--nccl-log %s: %s", path, strerror(e));
		free(ps);
		return -e;
	}
	while (getline(&line, &cap, f) > 0)
		ana_nccl_line(a, ps, &n, line);
	free(line);
	fclose(f);
	free(a->rank_ips);
	a->rank_ips = calloc(n ? n : 1, sizeof(*a->rank_ips));
	a->n_rank_ips = 0;
	for (i = 0; a->rank_ips != NULL && i < n; i++) {
		struct ana_rank_ip *r;

		if (!ps[i].have_ip || ps[i].rank < 0)
			continue;
		r = &a->rank_ips[a->n_rank_ips++];
		memcpy(r->ip, ps[i].ip, 16);
		r->rank = ps[i].rank;
		snprintf(r->host, sizeof(r->host), "%s", ps[i].key);
		snprintf(r->nic, sizeof(r->nic), "%s", ps[i].nic);
	}
	free(ps);
	if (a->n_rank_ips == 0) {
		snprintf(err, err_len, "--nccl-log %s: no process with both an address ('NET/IB : "
			 "Using ... OOB IF:ADDR') and a rank ('comm ... rank R nranks N'): is it "
			 "an NCCL_DEBUG=INFO log?", path);
		return -EINVAL;
	}
	a->nccl_seen = true;
	return 0;
}

int
ana_rocegen_json(struct ana *a, const char *path, char *err, size_t err_len)
{
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je), *hosts, *v;
	json_int_t per, rails;
	size_t i, k;
	int rc = -EINVAL;

	if (root == NULL) {
		snprintf(err, err_len, "--rocegen-json %s: line %d: %s", path, je.line, je.text);
		return -EINVAL;
	}
	hosts = json_object_get(root, "hosts");
	v = json_object_get(root, "ranks_per_process");
	per = json_is_integer(v) ? json_integer_value(v) : -1;
	v = json_object_get(root, "rails");
	rails = json_is_integer(v) ? json_integer_value(v) : -1;
	if (!json_is_array(hosts) || json_array_size(hosts) < 1 ||
	    json_array_size(hosts) > ANA_RANKS_MAX) {
		snprintf(err, err_len, "--rocegen-json %s: hosts: an array of 1..%d addresses "
			 "expected (is it rocegen's --json report?)", path, ANA_RANKS_MAX);
		goto out;
	}
	if (per < 1 || (size_t)per * json_array_size(hosts) > ANA_RANKS_MAX) {
		snprintf(err, err_len, "--rocegen-json %s: ranks_per_process: an integer 1..%zu "
			 "expected", path, ANA_RANKS_MAX / json_array_size(hosts));
		goto out;
	}
	if (rails < 1 || rails > per) {
		snprintf(err, err_len, "--rocegen-json %s: rails: an integer 1..%lld expected", path,
			 (long long)per);
		goto out;
	}
	free(a->rank_ips);
	a->rank_ips = calloc((size_t)per * json_array_size(hosts), sizeof(*a->rank_ips));
	a->n_rank_ips = 0;
	if (a->rank_ips == NULL) {
		snprintf(err, err_len, "--rocegen-json %s: out of memory", path);
		rc = -ENOMEM;
		goto out;
	}
	json_array_foreach(hosts, i, v) {
		const char *s = json_string_value(v);
		uint8_t ip[16];

		if (s == NULL || ana_nccl_ip(s, strlen(s), ip) != 0 || ip[4] != 0 ||
		    ip[3] + (unsigned int)per > 256) {
			snprintf(err, err_len, "--rocegen-json %s: hosts[%zu]: an IPv4 address with "
				 "room for %lld ranks expected", path, i, (long long)per);
			goto out;
		}
		for (k = 0; k < (size_t)per; k++) {
			struct ana_rank_ip *r = &a->rank_ips[a->n_rank_ips++];

			memcpy(r->ip, ip, 16);
			r->ip[3] = (uint8_t)(ip[3] + k);
			r->rank = (int32_t)(i * (size_t)per + k);
			snprintf(r->host, sizeof(r->host), "rocegen process %zu", i);
			snprintf(r->nic, sizeof(r->nic), "rail %zu", k % (size_t)rails);
		}
	}
	a->rg_per_process = (uint32_t)per;
	a->rg_rails = (uint32_t)rails;
	a->rocegen_seen = true;
	rc = 0;
out:
	json_decref(root);
	return rc;
}
