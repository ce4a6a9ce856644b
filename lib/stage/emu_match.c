/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/emu_hash.h"
#include "lib/base/emu_json.h"
#include "lib/stage/emu_match.h"

/* emu_match_keys and emu_match_table: emu_match_keys.c */
#define T (&emu_match_table)

static const char *const emu_opclass_names[] = {
	[EMU_OPCLASS_DATA] = "data", [EMU_OPCLASS_ACK] = "ack",	    [EMU_OPCLASS_NAK] = "nak",
	[EMU_OPCLASS_CNP] = "cnp",   [EMU_OPCLASS_READ] = "read",   [EMU_OPCLASS_SEND] = "send",
	[EMU_OPCLASS_WRITE] = "write",
};

#define EMU_OPCLASS_MAX ((int)(sizeof(emu_opclass_names) / sizeof(emu_opclass_names[0])))

static int
emu_match_prefix_parse(const json_t *v, const char *path, struct emu_match_prefix *pf,
		       struct emu_err *err)
{
	char buf[64], *slash, *end;
	long plen;

	if (!json_is_string(v))
		return emu_err_set(err, "%s: must be an address or CIDR prefix string, got %s",
				   path, emu_json_type_name(v));
	if (strlen(json_string_value(v)) >= sizeof(buf))
		return emu_err_set(err, "%s: not an IPv4/IPv6 address or prefix: \"%s\"", path,
				   json_string_value(v));
	snprintf(buf, sizeof(buf), "%s", json_string_value(v));
	memset(pf, 0, sizeof(*pf));
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	if (inet_pton(AF_INET, buf, pf->addr) == 1)
		pf->version = 4;
	else if (inet_pton(AF_INET6, buf, pf->addr) == 1)
		pf->version = 6;
	else
		return emu_err_set(err, "%s: not an IPv4/IPv6 address or prefix: \"%s\"", path,
				   json_string_value(v));
	pf->plen = pf->version == 4 ? 32 : 128;
	if (slash != NULL) {
		errno = 0;
		plen = strtol(slash + 1, &end, 10);
		if (slash[1] == '\0' || *end != '\0' || errno != 0 || plen < 0 || plen > pf->plen)
			return emu_err_set(err, "%s: prefix length must be in [0, %u]: \"%s\"",
					   path, pf->plen, json_string_value(v));
		pf->plen = (uint8_t)plen;
	}
	return 0;
}

static bool
emu_match_prefix_has(const struct emu_match_prefix *pf, const struct roce_pkt *p,
		     const uint8_t *ip)
{
	unsigned int full = pf->plen / 8, rest = pf->plen % 8;

	if (p->ip_version != pf->version)
		return false;
	if (memcmp(ip, pf->addr, full) != 0)
		return false;
	if (rest == 0)
		return true;
	return ((ip[full] ^ pf->addr[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static int
emu_match_opcode_parse(const json_t *v, const char *path, struct emu_match *m, struct emu_err *err)
{
	int64_t op;
	int i;

	if (json_is_string(v)) {
		for (i = 1; i < EMU_OPCLASS_MAX; i++)
			if (strcmp(json_string_value(v), emu_opclass_names[i]) == 0) {
				m->opclass = (uint8_t)i;
				m->flags |= EMU_MATCH_OPCLASS;
				return 0;
			}
		return emu_err_set(err, "%s: unknown opcode class \"%s\" (data, ack, nak, cnp, "
				   "read, send, write, or a number 0-255)", path,
				   json_string_value(v));
	}
	if (emu_json_int_value(v, path, 0, 255, &op, err) != 0)
		return -EINVAL;
	m->opcode = (uint8_t)op;
	m->flags |= EMU_MATCH_OPCODE;
	return 0;
}

static int
emu_match_psn_parse(const json_t *v, const char *path, struct emu_match *m, struct emu_err *err)
{
	char p2[EMU_JSON_PATH_LEN];
	int64_t lo, hi;

	if (json_is_array(v)) {
		if (json_array_size(v) != 2)
			return emu_err_set(err, "%s: a PSN range is [lo, hi], got %zu elements",
					   path, json_array_size(v));
		emu_json_path_idx(p2, sizeof(p2), path, 0);
		if (emu_json_int_value(json_array_get(v, 0), p2, 0, ROCE_PSN_MASK, &lo, err) != 0)
			return -EINVAL;
		emu_json_path_idx(p2, sizeof(p2), path, 1);
		if (emu_json_int_value(json_array_get(v, 1), p2, 0, ROCE_PSN_MASK, &hi, err) != 0)
			return -EINVAL;
		if (((uint32_t)(hi - lo) & ROCE_PSN_MASK) >= (1u << 23))
			return emu_err_set(err, "%s: range [%lld, %lld] spans 2^23 PSNs or more "
					   "(mod 2^24): half the PSN space is ambiguous",
					   path, (long long)lo, (long long)hi);
	} else {
		if (emu_json_int_value(v, path, 0, ROCE_PSN_MASK, &lo, err) != 0)
			return -EINVAL;
		hi = lo;
	}
	m->psn_lo = (uint32_t)lo;
	m->psn_hi = (uint32_t)hi;
	m->flags |= EMU_MATCH_PSN;
	return 0;
}

/* Index of port @p name, or -1. */
static int
emu_match_port(const char *const *port_names, unsigned int n_ports, const char *name)
{
	unsigned int port;

	for (port = 0; port < n_ports && port < 32; port++)
		if (strcmp(port_names[port], name) == 0)
			return (int)port;
	return -1;
}

/* An array of port names at @p path into a mask. */
static int
emu_match_ports_parse(const json_t *v, const char *path, const char *const *port_names,
		      unsigned int n_ports, uint32_t *mask, struct emu_err *err)
{
	char p2[EMU_JSON_PATH_LEN];
	const json_t *e;
	size_t idx;
	int rc, port;

	rc = emu_json_expect_array(v, path, err);
	if (rc != 0)
		return rc;
	if (json_array_size(v) == 0)
		return emu_err_set(err, "%s: must name at least one port", path);
	json_array_foreach(v, idx, e) {
		emu_json_path_idx(p2, sizeof(p2), path, idx);
		if (!json_is_string(e))
			return emu_err_set(err, "%s: must be a port name, got %s", p2,
					   emu_json_type_name(e));
		port = emu_match_port(port_names, n_ports, json_string_value(e));
		if (port < 0)
			return emu_err_set(err, "%s: no port named \"%s\"", p2,
					   json_string_value(e));
		*mask |= 1u << port;
	}
	return 0;
}

/* "direction": "A->B": ingress port A, egress port B. */
static int
emu_match_direction_parse(const json_t *v, const char *path, const char *const *port_names,
			  unsigned int n_ports, struct emu_match *m, struct emu_err *err)
{
	char buf[80], *arrow;
	int a, b;

	if (!json_is_string(v))
		return emu_err_set(err, "%s: must be a string \"IN->OUT\" (two port names), got %s",
				   path, emu_json_type_name(v));
	snprintf(buf, sizeof(buf), "%s", json_string_value(v));
	arrow = strstr(buf, "->");
	if (strlen(json_string_value(v)) >= sizeof(buf) || arrow == NULL)
		return emu_err_set(err, "%s: must be \"IN->OUT\" (two port names), got \"%s\"",
				   path, json_string_value(v));
	*arrow = '\0';
	a = emu_match_port(port_names, n_ports, buf);
	if (a < 0)
		return emu_err_set(err, "%s: no port named \"%s\" (before \"->\")", path, buf);
	b = emu_match_port(port_names, n_ports, arrow + 2);
	if (b < 0)
		return emu_err_set(err, "%s: no port named \"%s\" (after \"->\")", path,
				   arrow + 2);
	if (a == b)
		return emu_err_set(err, "%s: a frame never leaves by the port it came in on, got "
				   "\"%s\"", path, json_string_value(v));
	m->port_mask = 1u << a;
	m->out_port_mask = 1u << b;
	m->flags |= EMU_MATCH_PORTS | EMU_MATCH_OUT_PORTS;
	return 0;
}

int
emu_match_parse(const json_t *obj, const char *path, const char *const *port_names,
		unsigned int n_ports, bool out_port_known, struct emu_match *m,
		struct emu_err *err)
{
	char p1[EMU_JSON_PATH_LEN];
	const json_t *v;
	double from_s, until_s;
	int64_t x;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = emu_json_expect_object(obj, path, err);
	if (rc == 0)
		rc = emu_keys_check(obj, path, T, err);
	if (rc != 0)
		return rc;
	v = json_object_get(obj, "ports");
	if (v != NULL) {
		emu_json_path(p1, sizeof(p1), path, "ports");
		rc = emu_match_ports_parse(v, p1, port_names, n_ports, &m->port_mask, err);
		if (rc != 0)
			return rc;
		m->flags |= EMU_MATCH_PORTS;
	}
	v = json_object_get(obj, "out_ports");
	if (v != NULL) {
		emu_json_path(p1, sizeof(p1), path, "out_ports");
		rc = emu_match_ports_parse(v, p1, port_names, n_ports, &m->out_port_mask, err);
		if (rc != 0)
			return rc;
		m->flags |= EMU_MATCH_OUT_PORTS;
	}
	v = json_object_get(obj, "direction");
	if (v != NULL) {
		emu_json_path(p1, sizeof(p1), path, "direction");
		if (m->flags & (EMU_MATCH_PORTS | EMU_MATCH_OUT_PORTS))
			return emu_err_set(err, "%s: not with \"ports\" or \"out_ports\" (it sets "
					   "both)", p1);
		rc = emu_match_direction_parse(v, p1, port_names, n_ports, m, err);
		if (rc != 0)
			return rc;
	}
	if ((m->flags & EMU_MATCH_OUT_PORTS) && !out_port_known) {
		emu_json_path(p1, sizeof(p1), path,
			      json_object_get(obj, "direction") != NULL ? "direction" : "out_ports");
		return emu_err_set(err, "%s: the egress port is chosen by \"forward\": place this "
				   "stage after forward in the ingress list, or in the egress list",
				   p1);
	}
	v = json_object_get(obj, "src_ip");
	if (v != NULL) {
		emu_json_path(p1, sizeof(p1), path, "src_ip");
		if (emu_match_prefix_parse(v, p1, &m->src, err) != 0)
			return -EINVAL;
		m->flags |= EMU_MATCH_SRC_IP;
	}
	v = json_object_get(obj, "dst_ip");
	if (v != NULL) {
		emu_json_path(p1, sizeof(p1), path, "dst_ip");
		if (emu_match_prefix_parse(v, p1, &m->dst, err) != 0)
			return -EINVAL;
		m->flags |= EMU_MATCH_DST_IP;
	}
	v = json_object_get(obj, "opcode");
	if (v != NULL) {
		emu_json_path(p1, sizeof(p1), path, "opcode");
		if (emu_match_opcode_parse(v, p1, m, err) != 0)
			return -EINVAL;
	}
	v = json_object_get(obj, "psn");
	if (v != NULL) {
		emu_json_path(p1, sizeof(p1), path, "psn");
		if (emu_match_psn_parse(v, p1, m, err) != 0)
			return -EINVAL;
	}
	if (json_object_get(obj, "udp_sport") != NULL) {
		rc = emu_key_int_req(obj, path, T, "udp_sport", &x, err);
		if (rc != 0)
			return rc;
		m->udp_sport = (uint16_t)x;
		m->flags |= EMU_MATCH_UDP_SPORT;
	}
	if (json_object_get(obj, "dest_qp") != NULL) {
		rc = emu_key_int_req(obj, path, T, "dest_qp", &x, err);
		if (rc != 0)
			return rc;
		m->dest_qp = (uint32_t)x;
		m->flags |= EMU_MATCH_DEST_QP;
	}
	if (json_object_get(obj, "ackreq") != NULL) {
		bool b;

		rc = emu_key_bool_req(obj, path, T, "ackreq", &b, err);
		if (rc != 0)
			return rc;
		m->ackreq = b;
		m->flags |= EMU_MATCH_ACKREQ;
	}
	if (json_object_get(obj, "priority") != NULL) {
		rc = emu_key_int_req(obj, path, T, "priority", &x, err);
		if (rc != 0)
			return rc;
		m->priority = (uint8_t)x;
		m->flags |= EMU_MATCH_PRIORITY;
	}
	if (json_object_get(obj, "ecn") != NULL) {
		rc = emu_key_int_req(obj, path, T, "ecn", &x, err);
		if (rc != 0)
			return rc;
		m->ecn = (uint8_t)x;
		m->flags |= EMU_MATCH_ECN;
	}
	if (json_object_get(obj, "iteration") != NULL) {
		rc = emu_key_int_req(obj, path, T, "iteration", &x, err);
		if (rc != 0)
			return rc;
		m->iteration = (uint32_t)x;
		m->flags |= EMU_MATCH_ITERATION;
	}
	rc = emu_key_int_def(obj, path, T, "every_nth", 0, &x, err);
	if (rc != 0)
		return rc;
	m->every_nth = (uint64_t)x;
	rc = emu_key_int_def(obj, path, T, "nth", 0, &x, err);
	if (rc != 0)
		return rc;
	m->nth = (uint64_t)x;
	if (m->nth != 0 && m->every_nth != 0) {
		emu_json_path(p1, sizeof(p1), path, "nth");
		return emu_err_set(err, "%s: \"nth\" and \"every_nth\" exclude each other", p1);
	}
	rc = emu_key_num(obj, path, T, "from_s", &from_s, err);
	if (rc == 0)
		rc = emu_key_num(obj, path, T, "until_s", &until_s, err);
	if (rc != 0)
		return rc;
	if (until_s <= from_s) {
		emu_json_path(p1, sizeof(p1), path, "until_s");
		return emu_err_set(err, "%s: must be > from_s (%g), got %g", p1, from_s, until_s);
	}
	if (json_object_get(obj, "from_s") != NULL || json_object_get(obj, "until_s") != NULL) {
		m->from_ns = (uint64_t)llround(from_s * 1e9);
		m->until_ns = (uint64_t)llround(until_s * 1e9);
		m->flags |= EMU_MATCH_TIME;
	}
	return 0;
}

bool
emu_match_opclass_has(uint8_t cls, const struct roce_pkt *p)
{
	uint8_t tr = p->opcode & ROCE_TRANSPORT_MASK, op = p->opcode & ROCE_OP_MASK;
	bool send, write, rresp;

	if (cls == EMU_OPCLASS_CNP)
		return p->opcode == ROCE_OPCODE_CNP;
	if (tr == ROCE_TRANSPORT_CNP)
		return false;
	/* manufacturer-specific opcodes: no IBA operation; rocegen's SRD data and SACK only */
	if (p->opcode >= ROCE_OPCODE_VENDOR_FIRST)
		return (cls == EMU_OPCLASS_DATA && p->opcode == ROCE_OPCODE_SRD_DATA) ||
		       (cls == EMU_OPCLASS_ACK && p->opcode == ROCE_OPCODE_SRD_SACK);
	send = op <= ROCE_OP_SEND_ONLY_WITH_IMMEDIATE || op == ROCE_OP_SEND_LAST_WITH_INVALIDATE ||
	       op == ROCE_OP_SEND_ONLY_WITH_INVALIDATE;
	write = op >= ROCE_OP_RDMA_WRITE_FIRST && op <= ROCE_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
	rresp = op >= ROCE_OP_RDMA_READ_RESPONSE_FIRST && op <= ROCE_OP_RDMA_READ_RESPONSE_ONLY;
	switch (cls) {
	case EMU_OPCLASS_DATA:
		return send || write || rresp;
	case EMU_OPCLASS_ACK:
		return (op == ROCE_OP_ACKNOWLEDGE || op == ROCE_OP_ATOMIC_ACKNOWLEDGE) &&
		       p->has_aeth && p->aeth_kind == ROCE_AETH_KIND_ACK;
	case EMU_OPCLASS_NAK:
		return op == ROCE_OP_ACKNOWLEDGE && p->has_aeth &&
		       (p->aeth_kind == ROCE_AETH_KIND_NAK ||
			p->aeth_kind == ROCE_AETH_KIND_RNR_NAK);
	case EMU_OPCLASS_READ:
		return op == ROCE_OP_RDMA_READ_REQUEST || rresp;
	case EMU_OPCLASS_SEND:
		return send;
	case EMU_OPCLASS_WRITE:
		return write;
	default:
		return false;
	}
}

/* Is @p psn in [lo, hi] walking up mod 2^24? */
static inline bool
emu_match_psn_in(uint32_t psn, uint32_t lo, uint32_t hi)
{
	return ((psn - lo) & ROCE_PSN_MASK) <= ((hi - lo) & ROCE_PSN_MASK);
}

bool
emu_match_reads_dp_fields(const struct emu_match *m)
{
	if (m->flags & (EMU_MATCH_ACKREQ | EMU_MATCH_ITERATION))
		return false;
	return !(m->flags & EMU_MATCH_OPCLASS) ||
	       (m->opclass != EMU_OPCLASS_ACK && m->opclass != EMU_OPCLASS_NAK);
}

bool
emu_match_test(struct emu_match *m, const struct roce_pkt *p, uint16_t in_port, uint16_t out_port,
	       uint8_t prio, uint32_t iteration, uint64_t now_ns)
{
	uint32_t f = m->flags;

	if (!m->t0_set) {
		m->t0_set = true;
		m->t0_ns = now_ns;
	}
	if ((f & EMU_MATCH_PORTS) && (in_port >= 32 || !(m->port_mask & (1u << in_port))))
		return false;
	if ((f & EMU_MATCH_OUT_PORTS) &&
	    (out_port >= 32 || !(m->out_port_mask & (1u << out_port))))
		return false;
	if ((f & EMU_MATCH_PRIORITY) && prio != m->priority)
		return false;
	if ((f & (EMU_MATCH_SRC_IP | EMU_MATCH_DST_IP | EMU_MATCH_UDP_SPORT | EMU_MATCH_ECN)) &&
	    (p == NULL || (p->ip_version != 4 && p->ip_version != 6) ||
	     (p->cls != ROCE_CLASS_ROCEV2 && p->cls != ROCE_CLASS_IPV4_OTHER &&
	      p->cls != ROCE_CLASS_IPV6_OTHER)))
		return false;
	if ((f & EMU_MATCH_SRC_IP) && !emu_match_prefix_has(&m->src, p, p->src_ip))
		return false;
	if ((f & EMU_MATCH_DST_IP) && !emu_match_prefix_has(&m->dst, p, p->dst_ip))
		return false;
	if ((f & EMU_MATCH_UDP_SPORT) && p->udp_sport != m->udp_sport)
		return false;
	if ((f & EMU_MATCH_ECN) && p->ecn != m->ecn)
		return false;
	if (f & EMU_MATCH_NEEDS_ROCE) {
		if (p == NULL || p->cls != ROCE_CLASS_ROCEV2 || p->reason != ROCE_REASON_OK)
			return false;
		/* The most selective fields first: a targeted event rejects on its QP. */
		if ((f & EMU_MATCH_DEST_QP) && p->dest_qp != m->dest_qp)
			return false;
		if ((f & EMU_MATCH_PSN) && !emu_match_psn_in(p->psn, m->psn_lo, m->psn_hi))
			return false;
		if ((f & EMU_MATCH_OPCODE) && p->opcode != m->opcode)
			return false;
		if ((f & EMU_MATCH_OPCLASS) && !emu_match_opclass_has(m->opclass, p))
			return false;
		if ((f & EMU_MATCH_ACKREQ) && p->ackreq != m->ackreq)
			return false;
		if ((f & EMU_MATCH_ITERATION) && iteration != m->iteration)
			return false;
	}
	if (f & EMU_MATCH_TIME) {
		uint64_t rel = now_ns - m->t0_ns;

		if (now_ns < m->t0_ns || rel < m->from_ns || rel >= m->until_ns)
			return false;
	}
	m->seen++;
	if (m->nth != 0)
		return m->seen == m->nth;
	if (m->every_nth != 0)
		return m->seen % m->every_nth == 0;
	return true;
}

void
emu_match_reset(struct emu_match *m)
{
	m->seen = 0;
	m->t0_set = false;
	m->t0_ns = 0;
}

/* ---- iterations ---- */

int
emu_iter_init(struct emu_iter *it, uint32_t max_qps)
{
	uint32_t nb = 1;

	memset(it, 0, sizeof(*it));
	while ((uint64_t)nb * EMU_ITER_WAYS < max_qps)
		nb <<= 1;
	it->qps = calloc((size_t)nb * EMU_ITER_WAYS, sizeof(*it->qps));
	if (it->qps == NULL)
		return -ENOMEM;
	it->bucket_mask = nb - 1;
	return 0;
}

void
emu_iter_free(struct emu_iter *it)
{
	if (it == NULL)
		return;
	free(it->qps);
	it->qps = NULL;
}

bool
emu_iter_tracks(const struct roce_pkt *p)
{
	uint8_t tr = p->opcode & ROCE_TRANSPORT_MASK, op = p->opcode & ROCE_OP_MASK;

	if (p->cls != ROCE_CLASS_ROCEV2 || p->reason != ROCE_REASON_OK)
		return false;
	if (tr != ROCE_TRANSPORT_RC && tr != ROCE_TRANSPORT_UC)
		return false;
	/* ACKs repeat PSNs by design (coalescing, duplicate NAKs): not a retransmission. */
	return op != ROCE_OP_ACKNOWLEDGE && op != ROCE_OP_ATOMIC_ACKNOWLEDGE;
}

uint32_t
emu_iter_track(struct emu_iter *it, const struct roce_pkt *p)
{
	uint32_t sig, ahead, behind, k, psn = p->psn & ROCE_PSN_MASK;
	struct emu_iter_qp *b, *e = NULL, *victim = NULL;
	unsigned int i;

	if (it->qps == NULL || !emu_iter_tracks(p))
		return 0;
	sig = emu_ip_qpn_sig(p->dst_ip, p->dest_qp);
	b = &it->qps[(size_t)(sig & it->bucket_mask) * EMU_ITER_WAYS];
	it->stamp++;
	for (i = 0; i < EMU_ITER_WAYS; i++) {
		if (b[i].sig == sig && b[i].qpn == p->dest_qp &&
		    memcmp(b[i].ip, p->dst_ip, 16) == 0) {
			e = &b[i];
			break;
		}
		if (victim == NULL || b[i].sig == 0 ||
		    (victim->sig != 0 && b[i].used < victim->used))
			victim = &b[i];
	}
	if (e == NULL) {
		if (victim->sig != 0)
			it->evicted++;
		e = victim;
		memset(e->count, 0, sizeof(e->count));
		memcpy(e->ip, p->dst_ip, 16);
		e->qpn = p->dest_qp;
		e->sig = sig;
		e->highest = psn;
		e->used = it->stamp;
		e->count[psn % EMU_ITER_WINDOW] = 1;
		return 1;
	}
	e->used = it->stamp;
	ahead = (psn - e->highest) & ROCE_PSN_MASK;
	if (ahead != 0 && ahead < (1u << 23)) {
		/* New PSNs: forget the window slots they take over. */
		if (ahead >= EMU_ITER_WINDOW)
			memset(e->count, 0, sizeof(e->count));
		else
			for (k = 1; k <= ahead; k++)
				e->count[(e->highest + k) % EMU_ITER_WINDOW] = 0;
		e->highest = psn;
		e->count[psn % EMU_ITER_WINDOW] = 1;
		return 1;
	}
	behind = (e->highest - psn) & ROCE_PSN_MASK;
	if (behind >= EMU_ITER_WINDOW)
		return 2;
	if (e->count[psn % EMU_ITER_WINDOW] < 255)
		e->count[psn % EMU_ITER_WINDOW]++;
	/* A PSN inside the window never seen (count was 0) is a first send that came late. */
	return e->count[psn % EMU_ITER_WINDOW];
}
