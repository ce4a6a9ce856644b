/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The parser's fast path against its general path: random RoCEv2 frames from roce_build()
 * (IPv4/IPv6, tagged or not, every opcode, random fields), some with bits flipped in the
 * headers, some with a frame length or the bytes at hand cut short. Whenever the fast path
 * takes a frame, its struct roce_pkt must equal, byte for byte, what the general parser
 * makes of the same bytes. The parser's source is included to reach its static functions.
 * And roce_parse_partial_dp(), _min(), _qp(), roce_parse_partial_min_inline() and
 * roce_parse_partial_dp_inline() (the parse stage's, roce_parse_fast.h) against
 * roce_parse_partial(): the fields each lists equal, no other byte written; and
 * roce_opcode_ext_len_tab[] against roce_ext_len() of every opcode.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lib/proto/roce_parse.c"
#include "lib/proto/roce_build.h"

static uint64_t rs = 88172645463325252ULL;

static uint32_t
rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)rs;
}

static uint64_t
rnd64(void)
{
	return (uint64_t)rnd() << 32 | rnd();
}

/* A random RoCEv2 frame into buf; returns its length (<= 0 when roce_build() refuses). */
static int
random_frame(uint8_t *buf, size_t cap)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	unsigned int k;

	hp.has_vlan = rnd() & 1;
	hp.pcp = rnd() & 7;
	hp.vlan_id = rnd() & 0xfff;
	hp.ip_version = (rnd() & 1) ? 4 : 6;
	hp.dscp = rnd() & 63;
	hp.ecn = rnd() & 3;
	hp.ttl = (uint8_t)rnd();
	hp.udp_sport = (uint16_t)rnd();
	hp.opcode = (uint8_t)rnd();
	hp.se = rnd() & 1;
	hp.migreq = rnd() & 1;
	hp.tver = rnd() & 15;
	hp.fecn = rnd() & 1;
	hp.becn = rnd() & 1;
	hp.ackreq = rnd() & 1;
	hp.pkey = (uint16_t)rnd();
	hp.dest_qp = rnd() & 0xffffff;
	hp.psn = rnd() & 0xffffff;
	hp.deth_qkey = rnd();
	hp.deth_src_qp = rnd() & 0xffffff;
	hp.reth_va = rnd64();
	hp.reth_rkey = rnd();
	hp.reth_len = rnd();
	hp.atomic_va = rnd64();
	hp.atomic_swap_add = rnd64();
	hp.atomic_compare = rnd64();
	for (k = 0; k < 16; k++) {
		hp.src_ip[k] = (uint8_t)rnd();
		hp.dst_ip[k] = (uint8_t)rnd();
	}
	if (hp.ip_version == 4) {
		memset(hp.src_ip + 4, 0, 12);
		memset(hp.dst_ip + 4, 0, 12);
	}
	return roce_build(buf, cap, &hp, NULL, rnd() % 300);
}

/* The fields roce_parse_partial_dp() fills on its fast path (roce_proto.h lists them). */
#define DP_FIELDS(_) \
	_(cls) _(reason) _(n_vlans) _(pcp) _(vlan_id) _(ethertype) _(l3_off) _(l4_off) \
	_(bth_off) _(payload_off) _(icrc_off) _(payload_len) _(ip_version) _(dscp) _(ecn) \
	_(ttl) _(src_ip) _(dst_ip) _(udp_sport) _(udp_dport) _(opcode) _(transport) _(dest_qp) \
	_(psn) _(dp_only)

/* The fields roce_parse_partial_min() fills on the same fast path. */
#define MIN_FIELDS(_) \
	_(cls) _(reason) _(n_vlans) _(pcp) _(vlan_id) _(ethertype) _(l3_off) _(ip_version) \
	_(dscp) _(ecn) _(dp_only)

/* The fields roce_parse_partial_qp() fills on the same fast path. */
#define QP_FIELDS(_) MIN_FIELDS(_) _(dst_ip) _(opcode) _(transport) _(dest_qp) _(psn)
/* X() over the fields of parse level `level` (1 dp, 2 min, 3 qp, 4 min inline, 5 dp inline) */
#define LEVEL_FIELDS(X) do { \
		if (level == 1 || level == 5) { DP_FIELDS(X) } \
		else if (level == 2 || level == 4) { MIN_FIELDS(X) } \
		else { QP_FIELDS(X) } \
	} while (0)

typedef enum roce_class (*parse_fn)(const uint8_t *, uint32_t, uint32_t, uint16_t,
				    struct roce_pkt *);

/*
 * roce_parse_partial_dp() (@p level 1), roce_parse_partial_min() (2), _qp() (3) or
 * roce_parse_partial_min_inline() (4, whose dp_only is _min()'s: 2) or
 * roce_parse_partial_dp_inline() (5, dp_only 1) against
 * roce_parse_partial() on the same bytes: on its fast path every field it lists equal
 * (dp_only aside, which must be the level) and every other byte of the result as it was
 * before the call; otherwise the whole result equal. Returns 0 when they agree.
 */
static int
check_level(const uint8_t *buf, uint32_t avail, uint32_t flen, unsigned int level,
	    unsigned long *n_fast)
{
	static uint8_t written[6][sizeof(struct roce_pkt)];
	const parse_fn fn = level == 1 ? roce_parse_partial_dp :
			    level == 2 ? roce_parse_partial_min :
			    level == 3 ? roce_parse_partial_qp :
			    level == 4 ? roce_parse_partial_min_inline : roce_parse_partial_dp_inline;
	struct roce_pkt full, dp, before;
	unsigned int i;
	int cls;

	if (written[level][0] == 0) {
#define DP_MARK(f) memset(written[level] + offsetof(struct roce_pkt, f), 1, sizeof(dp.f));
		LEVEL_FIELDS(DP_MARK);
#undef DP_MARK
	}
	for (i = 0; i < sizeof(before); i++)
		((uint8_t *)&before)[i] = (uint8_t)rnd();
	dp = before;
	roce_parse_partial(buf, avail, flen, ROCE_UDP_PORT, &full);
	cls = fn(buf, avail, flen, ROCE_UDP_PORT, &dp);
	if (cls != full.cls)
		return 1;
	if (!dp.dp_only)
		return memcmp(&dp, &full, sizeof(dp)) != 0;
	(*n_fast)++;
	if (dp.dp_only != (level == 4 ? 2 : level == 5 ? 1 : level) || full.dp_only != 0 ||
	    full.cls != ROCE_CLASS_ROCEV2)
		return 1;
#define DP_CMP(f) if (memcmp(&dp.f, &full.f, sizeof(dp.f)) != 0 && \
		      offsetof(struct roce_pkt, f) != offsetof(struct roce_pkt, dp_only)) return 1;
	LEVEL_FIELDS(DP_CMP);
#undef DP_CMP
	for (i = 0; i < sizeof(dp); i++)
		if (!written[level][i] && ((uint8_t *)&dp)[i] != ((uint8_t *)&before)[i])
			return 1;
	return 0;
}

int
main(void)
{
	static uint8_t buf[9000];
	unsigned long taken = 0, total = 0, bad = 0, n_dp = 0, bad_dp = 0, n_min = 0, bad_min = 0;
	unsigned long n_qp = 0, bad_qp = 0, n_inl = 0, bad_inl = 0, bad_tab = 0;
	unsigned long n_dpi = 0, bad_dpi = 0;
	struct roce_pkt a, b;
	uint32_t flen, avail;
	int it, k, len;

	for (k = 0; k < 256; k++)
		if (roce_opcode_ext_len_tab[k] != roce_ext_len(roce_opcode_ext[k]) && ++bad_tab <= 5)
			printf("opcode 0x%02x: roce_opcode_ext_len_tab %u, roce_ext_len %u\n", k,
			       roce_opcode_ext_len_tab[k], roce_ext_len(roce_opcode_ext[k]));
	for (it = 0; it < 300000; it++) {
		len = random_frame(buf, sizeof(buf));
		if (len <= 0)
			continue;
		/* up to three bits flipped in the headers */
		for (k = rnd() % 4; k > 0; k--)
			buf[rnd() % (len < 120 ? len : 120)] ^= (uint8_t)(1u << (rnd() & 7));
		/* a third of the frames 4 bytes shorter to 3 longer than built, a quarter of them
		 * with only some of their bytes at hand */
		flen = (uint32_t)len;
		if (rnd() % 3 == 0)
			flen = (uint32_t)(len + (int)(rnd() % 8) - 4);
		avail = (rnd() % 4 == 0) ? rnd() % (flen + 1) : flen;
		if (check_level(buf, avail, flen, 1, &n_dp) != 0 && ++bad_dp <= 5)
			printf("frame %d (%u of %u bytes): roce_parse_partial_dp() differs\n", it,
			       avail, flen);
		if (check_level(buf, avail, flen, 2, &n_min) != 0 && ++bad_min <= 5)
			printf("frame %d (%u of %u bytes): roce_parse_partial_min() differs\n", it,
			       avail, flen);
		if (check_level(buf, avail, flen, 4, &n_inl) != 0 && ++bad_inl <= 5)
			printf("frame %d (%u of %u bytes): roce_parse_partial_min_inline() differs\n",
			       it, avail, flen);
		if (check_level(buf, avail, flen, 5, &n_dpi) != 0 && ++bad_dpi <= 5)
			printf("frame %d (%u of %u bytes): roce_parse_partial_dp_inline() differs\n",
			       it, avail, flen);
		if (check_level(buf, avail, flen, 3, &n_qp) != 0 && ++bad_qp <= 5)
			printf("frame %d (%u of %u bytes): roce_parse_partial_qp() differs\n", it,
			       avail, flen);
		memset(&a, 0xAA, sizeof(a));
		memset(&b, 0x55, sizeof(b));
		total++;
		if (!parse_fast(buf, avail, flen, ROCE_UDP_PORT, &a))
			continue;
		taken++;
		parse_general(buf, avail, flen, ROCE_UDP_PORT, &b);
		if (memcmp(&a, &b, sizeof(a)) != 0 && ++bad <= 5)
			printf("frame %d (opcode 0x%02x, %u of %u bytes): fast path differs\n", it,
			       a.opcode, avail, flen);
	}
	printf("fast path: %lu of %lu frames taken, %lu differ from the general parser\n", taken,
	       total, bad);
	printf("datapath parse: %lu of %lu frames on its fast path, %lu differ from the full "
	       "parse\n", n_dp, total, bad_dp);
	printf("class-only parse: %lu of %lu frames on its fast path, %lu differ from the full "
	       "parse\n", n_min, total, bad_min);
	printf("QP parse: %lu of %lu frames on its fast path, %lu differ from the full parse\n",
	       n_qp, total, bad_qp);
	printf("class-only parse inline: %lu of %lu frames on a fast path, %lu differ from the "
	       "full parse; %lu opcodes' extension lengths differ\n", n_inl, total, bad_inl,
	       bad_tab);
	printf("datapath parse inline: %lu of %lu frames on a fast path, %lu differ from the full "
	       "parse\n", n_dpi, total, bad_dpi);
	/* most frames are valid RoCEv2: a fast path that takes none would test nothing */
	/* and the datapath parse's fast path takes the same frames as parse_fast() */
	return bad != 0 || taken < total / 4 || bad_dp != 0 || n_dp != taken || bad_min != 0 ||
	       n_min != taken || bad_qp != 0 || n_qp != taken || bad_inl != 0 ||
	       n_inl != taken || bad_tab != 0 || bad_dpi != 0 || n_dpi != taken;
}
