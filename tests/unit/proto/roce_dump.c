/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roce-dump: print what roce_parse() finds in a pcap, one line per RoCEv2 frame, in the
 * format of `tshark -T fields -E occurrence=f` with the columns of tshark_compare.py, so
 * that the two can be diffed. Exits 1 if any RoCE frame has a wrong ICRC or is malformed.
 *
 * Usage: roce-dump FILE.pcap            tshark columns for each frame to UDP port 4791
 *        roce-dump --summary FILE.pcap  one line per frame: class, reason, opcode, ICRC ok
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "lib/proto/roce_proto.h"
#include "test_util.h"

static void
print_tshark_line(uint32_t no, const uint8_t *f, const struct roce_pkt *p)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	printf("%u\t", no);
	if (p->n_vlans > 0)
		printf("%u\t%u\t", p->vlan_id, p->pcp);
	else
		printf("\t\t");
	if (p->ip_version == 4) {
		inet_ntop(AF_INET, p->src_ip, a, sizeof(a));
		inet_ntop(AF_INET, p->dst_ip, b, sizeof(b));
		printf("%s\t%s\t%u\t%u\t%u\t\t\t\t\t\t", a, b, p->dscp, p->ecn, p->ttl);
	} else {
		inet_ntop(AF_INET6, p->src_ip, a, sizeof(a));
		inet_ntop(AF_INET6, p->dst_ip, b, sizeof(b));
		printf("\t\t\t\t\t%s\t%s\t%u\t%u\t%u\t", a, b, p->dscp, p->ecn, p->ttl);
	}
	printf("%u\t%u\t", p->udp_sport, p->udp_dport);
	printf("%u\t%u\t%u\t%u\t%u\t%u\t0x%06x\t%u\t%u\t", p->opcode, p->se, p->migreq,
		p->padcnt, p->tver, p->pkey, p->dest_qp, p->ackreq, p->psn);
	if (p->has_reth)
		printf("0x%016" PRIx64 "\t0x%08x\t%u\t", p->reth_va, p->reth_rkey, p->reth_len);
	else if (p->has_atomiceth)	/* tshark files the AtomicETH VA and R_Key there too */
		printf("0x%016" PRIx64 "\t0x%08x\t\t", p->atomic_va, p->atomic_rkey);
	else
		printf("\t\t\t");
	if (p->has_aeth)
		printf("%u\t%u\t", p->aeth_syndrome, p->msn);
	else
		printf("\t\t");
	if (p->has_imm)
		printf("%08x\t", p->imm);
	else
		printf("\t");
	if (p->has_deth)
		printf("0x%06x\t", p->deth_src_qp);
	else
		printf("\t");
	/* tshark decodes no ICRC for opcodes it does not know (e.g. the CNP). */
	if (roce_opcode_is_valid(p->opcode) && p->opcode != ROCE_OPCODE_CNP)
		printf("0x%08x\n", roce_get_be32(f + p->icrc_off));
	else
		printf("\n");
}

int
main(int argc, char **argv)
{
	struct test_pcap pc;
	int summary = 0, bad = 0;
	uint32_t i, n_roce = 0, n_ok = 0;

	if (argc == 3 && strcmp(argv[1], "--summary") == 0) {
		summary = 1;
		argv++;
	} else if (argc != 2) {
		fprintf(stderr, "usage: roce-dump [--summary] FILE.pcap\n");
		return 2;
	}
	test_pcap_load(argv[1], &pc);
	for (i = 0; i < pc.n; i++) {
		const uint8_t *f = pc.frames[i].data;
		uint32_t len = pc.frames[i].len;
		struct roce_pkt p;
		int ok = 0;

		roce_parse(f, len, ROCE_UDP_PORT, &p);
		if (p.cls == ROCE_CLASS_ROCEV2 || p.cls == ROCE_CLASS_ROCEV1 ||
				p.cls == ROCE_CLASS_INVALID) {
			n_roce++;
			ok = p.reason == ROCE_REASON_OK && roce_icrc_verify(f, len, &p);
			n_ok += ok;
			if (!ok) {
				fprintf(stderr, "frame %u: %s/%s, ICRC stored %08x computed %08x\n",
					i + 1, roce_class_name(p.cls), roce_reason_name(p.reason),
					p.reason == ROCE_REASON_OK ?
					roce_get_le32(f + p.icrc_off) : 0,
					roce_icrc_compute(f, len, &p));
				bad = 1;
			}
		}
		if (summary)
			printf("%u\t%s\t%s\t%s\t%s\n", i + 1, roce_class_name(p.cls),
				roce_reason_name(p.reason),
				p.cls == ROCE_CLASS_ROCEV2 ? roce_opcode_name(p.opcode) : "-",
				p.cls == ROCE_CLASS_ROCEV2 ? (ok ? "icrc_ok" : "icrc_bad") : "-");
		else if (p.cls == ROCE_CLASS_ROCEV2)
			print_tshark_line(i + 1, f, &p);
	}
	fprintf(stderr, "roce-dump: %s: %u frames, %u RoCE, %u with a valid ICRC\n", argv[1],
		pc.n, n_roce, n_ok);
	test_pcap_free(&pc);
	return bad;
}
