/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A synthetic DCQCN sender for rocestat's validation and fit: QP 0x100 on 10.0.0.1 sends
 * RDMA WRITE_MIDDLE packets (1024 B payload) to QP 0x200 on 10.0.0.2, always backlogged,
 * paced at the rate lib/dcqcn gives for known parameters (or at line rate with --ignore-cnps);
 * 10.0.0.2 sends CNPs (UDP source port 0, as ConnectX-4 Lx) at a fixed irregular schedule:
 * gaps of 250..1050 us, some followed by a second CNP 30 us later.
 *
 *   gen_dcqcn OUT.pcap TRUTH.txt WRONG.txt [--ignore-cnps | --nvidia | --idle | --stall |
 *                                           --slow-msgs | --pfc | --pfc-own | --pfc-prio5]
 *
 * --nvidia: the sender runs NVIDIA's defaults instead (byte counter on), TRUTH.txt unused.
 * --idle, --stall: messages of 64 packets (WRITE_FIRST, _MIDDLE..., _LAST); at 20 ms the
 * sender stops for 2 ms, after a message's last packet (--idle: it had nothing to send) or
 * in the middle of one (--stall: it fell behind its rate), then goes on at its rate.
 * --pfc: the --stall pause, because the switch (MAC 02:00:00:00:00:0c) paused the sender with
 * PFC for priority 3 (its data's DSCP 26): XOFF (65535 quanta) when it stops, again every
 * 500 us, XON when it goes on. --pfc-own: the same PFC frames from the sender's own MAC
 * (they pause what is sent to it, not its sending); --pfc-prio5: for priority 5.
 * --slow-msgs: one-packet messages (WRITE_ONLY) at half the model's rate: every gap follows a
 * message's end and is twice the model's pacing gap, and none of it is idle time.
 * TRUTH.txt holds the parameters in NVIDIA's names; WRONG.txt the same with rpg_time_reset,
 * rpg_ai_rate, rpg_hai_rate, rpg_threshold, dce_tcp_g and initial_alpha_value changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "lib/dcqcn/dcqcn.h"
#include "lib/proto/roce_proto.h"

#define LINE_MBPS 10000.0
#define DURATION_NS 40000000ULL

static void
gen_params(struct dcqcn_params *p)
{
	dcqcn_params_nvidia(p, LINE_MBPS);
	p->rpg_time_reset_ns = 200000;
	p->rpg_byte_reset = 0;
	p->rpg_threshold = 3;
	p->rpg_ai_rate_mbps = 80;
	p->rpg_hai_rate_mbps = 400;
	p->g = 256.0 / 1024.0;         /* dce_tcp_g 768 */
	p->alpha_period_ns = 55000;    /* dce_tcp_rtt 55 us */
	p->initial_alpha = 1000.0 / 1024.0;
}

static int
gen_write_params(const char *path, unsigned int time_reset_us, double ai, double hai,
		 unsigned int f, unsigned int tcp_g, unsigned int alpha)
{
	FILE *o = fopen(path, "w");
	int bad;

	if (o == NULL)
		return -1;
	fprintf(o, "# DCQCN parameters, NVIDIA names (as /sys/class/net/IF/ecn/roce_rp/*)\n"
		"rpg_time_reset %u\nrpg_byte_reset 0\nrpg_threshold %u\nrpg_ai_rate %g\n"
		"rpg_hai_rate %g\nrpg_min_dec_fac 50\nrpg_min_rate 1\ndce_tcp_g %u\n"
		"dce_tcp_rtt 55\nrate_reduce_monitor_period 4\ninitial_alpha_value %u\n"
		"clamp_tgt_rate 0\nclamp_tgt_rate_after_time_inc 1\n", time_reset_us, f, ai, hai,
		tcp_g, alpha);
	bad = ferror(o);
	return fclose(o) != 0 || bad ? -1 : 0;
}

static void
gen_dump(pcap_dumper_t *d, const uint8_t *frame, int len, uint64_t t_ns)
{
	struct pcap_pkthdr h;

	h.ts.tv_sec = (time_t)(t_ns / 1000000000ULL);
	h.ts.tv_usec = (suseconds_t)(t_ns % 1000000000ULL); /* ns: the dumper's precision */
	h.caplen = (bpf_u_int32)len;
	h.len = (bpf_u_int32)len;
	pcap_dump((u_char *)d, &h, frame);
}

int
main(int argc, char **argv)
{
	static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0x0a }, mac_b[6] = { 2, 0, 0, 0, 0, 0x0b };
	struct dcqcn_params p;
	struct dcqcn_rp rp;
	struct roce_hdr_params hp = roce_hdr_params_default();
	struct roce_cnp_params cp = roce_cnp_params_default();
	uint64_t cnps[256], t0 = 1700000000ULL * 1000000000ULL;
	unsigned int n_cnp = 0, ci = 0;
	uint32_t lcg = 12345, psn = 0;
	bool ignore = argc > 4 && strcmp(argv[4], "--ignore-cnps") == 0;
	bool nvidia = argc > 4 && strcmp(argv[4], "--nvidia") == 0;
	bool idle = argc > 4 && strcmp(argv[4], "--idle") == 0;
	bool stall = argc > 4 && strcmp(argv[4], "--stall") == 0;
	bool slow = argc > 4 && strcmp(argv[4], "--slow-msgs") == 0;
	bool pfc_own = argc > 4 && strcmp(argv[4], "--pfc-own") == 0;
	bool pfc_prio5 = argc > 4 && strcmp(argv[4], "--pfc-prio5") == 0;
	bool pfc = pfc_own || pfc_prio5 || (argc > 4 && strcmp(argv[4], "--pfc") == 0);
	static const uint8_t mac_sw[6] = { 2, 0, 0, 0, 0, 0x0c };
	uint64_t pfc_t[5];
	unsigned int n_pfc = 0, pi = 0;
	uint8_t pbuf[128];
	int plen;
	bool paused = false;
	uint8_t buf[2048], cbuf[128];
	pcap_dumper_t *d;
	pcap_t *dead;
	double t = 0;
	int len, clen;
	uint64_t c;

	if (argc < 4) {
		fprintf(stderr, "usage: gen_dcqcn OUT.pcap TRUTH.txt WRONG.txt [--ignore-cnps]\n");
		return 2;
	}
	gen_params(&p);
	if (nvidia)
		dcqcn_params_nvidia(&p, LINE_MBPS); /* byte counter on: 32767 B */
	if (gen_write_params(argv[2], 200, 80, 400, 3, 768, 1000) != 0 ||
	    gen_write_params(argv[3], 300, 30, 150, 1, 960, 700) != 0) {
		fprintf(stderr, "gen_dcqcn: cannot write the parameter files\n");
		return 1;
	}
	for (c = 1000000; c < DURATION_NS - 8000000 && n_cnp < 250;) {
		cnps[n_cnp++] = c;
		lcg = lcg * 1103515245u + 12345u;
		if ((lcg >> 16) % 3 == 0)
			cnps[n_cnp++] = c + 30000;
		if ((lcg >> 16) % 5 == 0)
			cnps[n_cnp++] = c + 60000;
		c += 250000 + (uint64_t)((lcg >> 8) % 800) * 1000;
	}
	memcpy(hp.src_mac, mac_a, 6);
	memcpy(hp.dst_mac, mac_b, 6);
	hp.src_ip[0] = 10, hp.src_ip[3] = 1;
	hp.dst_ip[0] = 10, hp.dst_ip[3] = 2;
	hp.opcode = ROCE_OP_RDMA_WRITE_MIDDLE;
	hp.dest_qp = 0x200;
	hp.udp_sport = 49160;
	memcpy(cp.src_mac, mac_b, 6);
	memcpy(cp.dst_mac, mac_a, 6);
	cp.src_ip[0] = 10, cp.src_ip[3] = 2;
	cp.dst_ip[0] = 10, cp.dst_ip[3] = 1;
	cp.dest_qp = 0x100;
	clen = roce_build_cnp(cbuf, sizeof(cbuf), &cp);
	{
		uint16_t quanta[8] = { 0 };

		quanta[pfc_prio5 ? 5 : 3] = 0xFFFF;
		plen = roce_build_pfc(pbuf, sizeof(pbuf), pfc_own ? mac_a : mac_sw,
				      (uint16_t)(1u << (pfc_prio5 ? 5 : 3)), quanta);
	}
	if (pfc)
		stall = true;
	dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	d = dead ? pcap_dump_open(dead, argv[1]) : NULL;
	if (d == NULL || clen < 0 || plen < 0) {
		fprintf(stderr, "gen_dcqcn: %s: cannot write\n", argv[1]);
		return 1;
	}
	dcqcn_rp_init(&rp, &p, 0);
	while (t < (double)DURATION_NS) {
		uint64_t now = (uint64_t)t;
		double rate;

		/* CNPs and PFC frames up to now, in time order */
		while ((ci < n_cnp && cnps[ci] <= now) || (pi < n_pfc && pfc_t[pi] <= now)) {
			if (pi < n_pfc && pfc_t[pi] <= now &&
			    (ci >= n_cnp || pfc_t[pi] <= cnps[ci])) {
				/* the last one resumes: quanta 0 */
				if (pi == n_pfc - 1)
					memset(pbuf + 18, 0, 16);
				gen_dump(d, pbuf, plen, t0 + pfc_t[pi++]);
				continue;
			}
			gen_dump(d, cbuf, clen, t0 + cnps[ci]);
			dcqcn_rp_on_cnp(&rp, &p, cnps[ci]);
			ci++;
		}
		dcqcn_rp_advance(&rp, &p, now);
		if ((idle || stall) && !paused && now >= 20000000ULL &&
		    psn % 64 == (idle ? 0u : 32u)) {
			/* the 2 ms pause: after a message's end (idle) or inside one (stall) */
			paused = true;
			if (pfc) {
				for (n_pfc = 0; n_pfc < 5; n_pfc++)
					pfc_t[n_pfc] = now + n_pfc * 500000ULL;
			}
			t += 2000000.0;
			continue;
		}
		if (slow)
			hp.opcode = ROCE_OP_RDMA_WRITE_ONLY;
		else if (idle || stall)
			hp.opcode = psn % 64 == 0 ? ROCE_OP_RDMA_WRITE_FIRST :
				    psn % 64 == 63 ? ROCE_OP_RDMA_WRITE_LAST :
				    ROCE_OP_RDMA_WRITE_MIDDLE;
		hp.psn = psn++ & 0xFFFFFF;
		len = roce_build_data(buf, sizeof(buf), &hp, NULL, 1024);
		if (len < 0) {
			fprintf(stderr, "gen_dcqcn: build failed\n");
			return 1;
		}
		gen_dump(d, buf, len, t0 + now);
		dcqcn_rp_on_bytes(&rp, &p, (uint64_t)len + 24, now);
		rate = ignore ? LINE_MBPS : slow ? rp.rc_mbps / 2 : rp.rc_mbps;
		t += (double)(len + 24) * 8000.0 / rate;
	}
	if (pcap_dump_flush(d) != 0) {
		fprintf(stderr, "gen_dcqcn: %s: write failed\n", argv[1]);
		return 1;
	}
	pcap_dump_close(d);
	pcap_close(dead);
	printf("gen_dcqcn: %u CNPs, %u packets, decreases %lu\n", n_cnp, psn,
	       (unsigned long)rp.decreases);
	return 0;
}
