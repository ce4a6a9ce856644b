/* SPDX-License-Identifier: BSD-3-Clause */
/* Match expressions and transmission iterations (lib/stage/emu_match.c): pure, no EAL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/stage/emu_match.h"

#define NO_PORT 0xffff /* EMU_PORT_NONE: no egress port decided */

static const char *const ports[] = { "p0", "p1", "p2" };

static void
parse_ok(const char *json, struct emu_match *m)
{
	json_error_t jerr;
	json_t *o = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
	struct emu_err err;

	assert_non_null(o);
	if (emu_match_parse(o, "m", ports, 3, true, m, &err) != 0)
		fail_msg("%s: %s", json, err.msg);
	json_decref(o);
}

static void
parse_bad(const char *json, const char *want)
{
	json_error_t jerr;
	json_t *o = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
	struct emu_match m;
	struct emu_err err;

	assert_non_null(o);
	assert_int_not_equal(emu_match_parse(o, "m", ports, 3, true, &m, &err), 0);
	assert_string_equal(err.msg, want);
	json_decref(o);
}

/* A parsed RC packet: 10.0.0.<src> -> 10.0.0.<dst>, DestQP, PSN, opcode. */
static struct roce_pkt
pkt(uint8_t src, uint8_t dst, uint8_t opcode, uint32_t qp, uint32_t psn)
{
	struct roce_pkt p;

	memset(&p, 0, sizeof(p));
	p.cls = ROCE_CLASS_ROCEV2;
	p.reason = ROCE_REASON_OK;
	p.ip_version = 4;
	p.src_ip[0] = 10;
	p.src_ip[3] = src;
	p.dst_ip[0] = 10;
	p.dst_ip[3] = dst;
	p.udp_sport = 49152;
	p.udp_dport = 4791;
	p.opcode = opcode;
	p.dest_qp = qp;
	p.psn = psn;
	p.ecn = 2;
	return p;
}

static void
test_fields(void **state)
{
	struct emu_match m;
	struct roce_pkt p = pkt(1, 2, 0x0A, 0x45, 17);

	(void)state;
	parse_ok("{}", &m);
	assert_true(emu_match_test(&m, NULL, 0, NO_PORT, 0, 0, 0));
	parse_ok("{\"ports\": [\"p1\"], \"src_ip\": \"10.0.0.0/24\", \"dst_ip\": \"10.0.0.2\","
		 " \"udp_sport\": 49152, \"opcode\": \"write\", \"dest_qp\": 69, \"psn\": 17,"
		 " \"ackreq\": false, \"priority\": 3, \"ecn\": 2}", &m);
	assert_true(emu_match_test(&m, &p, 1, NO_PORT, 3, 0, 0));
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 3, 0, 0));  /* port */
	assert_false(emu_match_test(&m, &p, 1, NO_PORT, 2, 0, 0));  /* priority */
	assert_false(emu_match_test(&m, NULL, 1, NO_PORT, 3, 0, 0)); /* unparsed */
	p.psn = 18;
	assert_false(emu_match_test(&m, &p, 1, NO_PORT, 3, 0, 0));
	p = pkt(1, 3, 0x0A, 0x45, 17);
	assert_false(emu_match_test(&m, &p, 1, NO_PORT, 3, 0, 0)); /* dst */
	p = pkt(1, 2, 0x04, 0x45, 17);
	assert_false(emu_match_test(&m, &p, 1, NO_PORT, 3, 0, 0)); /* a SEND is not a write */
	/* CIDR edges, v4 and v6. */
	parse_ok("{\"src_ip\": \"10.0.0.0/31\"}", &m);
	p = pkt(1, 2, 0x0A, 1, 1);
	assert_true(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0));
	p = pkt(2, 2, 0x0A, 1, 1);
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0));
	parse_ok("{\"dst_ip\": \"fd00::/16\"}", &m);
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0)); /* v4 never matches a v6 prefix */
	p.ip_version = 6;
	memset(p.dst_ip, 0, 16);
	p.dst_ip[0] = 0xfd;
	p.dst_ip[15] = 2;
	assert_true(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0));
	p.dst_ip[1] = 1;
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0));
}

static void
test_opcode_classes(void **state)
{
	struct roce_pkt p = pkt(1, 2, 0x11, 1, 1);

	(void)state;
	p.has_aeth = 1;
	p.aeth_kind = ROCE_AETH_KIND_ACK;
	assert_true(emu_match_opclass_has(EMU_OPCLASS_ACK, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_NAK, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_DATA, &p));
	p.aeth_kind = ROCE_AETH_KIND_NAK;
	assert_true(emu_match_opclass_has(EMU_OPCLASS_NAK, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_ACK, &p));
	p = pkt(1, 2, 0x81, 1, 0);
	assert_true(emu_match_opclass_has(EMU_OPCLASS_CNP, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_DATA, &p));
	p.opcode = 0x0C;
	assert_true(emu_match_opclass_has(EMU_OPCLASS_READ, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_DATA, &p));
	p.opcode = 0x10;
	assert_true(emu_match_opclass_has(EMU_OPCLASS_READ, &p));
	assert_true(emu_match_opclass_has(EMU_OPCLASS_DATA, &p));
	p.opcode = 0x24; /* UC SEND_ONLY */
	assert_true(emu_match_opclass_has(EMU_OPCLASS_SEND, &p));
	p.opcode = 0x17;
	assert_true(emu_match_opclass_has(EMU_OPCLASS_SEND, &p));
	p.opcode = 0x09;
	assert_true(emu_match_opclass_has(EMU_OPCLASS_WRITE, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_SEND, &p));
	/* manufacturer-specific opcodes: not their low five bits' IBA operation (0xC1 is not a
	 * SEND MIDDLE); rocegen's SRD data is data, its SACK an ack, anything else nothing */
	p.opcode = 0xC0;
	assert_true(emu_match_opclass_has(EMU_OPCLASS_DATA, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_SEND, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_ACK, &p));
	p.opcode = 0xC1;
	assert_false(emu_match_opclass_has(EMU_OPCLASS_DATA, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_SEND, &p));
	assert_true(emu_match_opclass_has(EMU_OPCLASS_ACK, &p));
	p.opcode = 0xE6;
	assert_false(emu_match_opclass_has(EMU_OPCLASS_DATA, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_WRITE, &p));
	assert_false(emu_match_opclass_has(EMU_OPCLASS_ACK, &p));
}

static void
test_psn_range_wraps(void **state)
{
	struct emu_match m;
	struct roce_pkt p = pkt(1, 2, 0x0A, 1, 0);

	(void)state;
	parse_ok("{\"psn\": [16777214, 1]}", &m);
	p.psn = 16777214;
	assert_true(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0));
	p.psn = 16777215;
	assert_true(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0));
	p.psn = 0;
	assert_true(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0));
	p.psn = 1;
	assert_true(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0));
	p.psn = 2;
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0));
	p.psn = 16777213;
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0));
}

static void
test_counting_and_time(void **state)
{
	struct emu_match m;
	struct roce_pkt p = pkt(1, 2, 0x0A, 1, 0);
	unsigned int i, hits;

	(void)state;
	parse_ok("{\"every_nth\": 3, \"opcode\": 10}", &m);
	hits = 0;
	for (i = 1; i <= 9; i++) {
		struct roce_pkt ack = pkt(2, 1, 0x11, 1, 0);

		/* Non-matching packets in between do not count. */
		assert_false(emu_match_test(&m, &ack, 0, NO_PORT, 0, 0, i));
		if (emu_match_test(&m, &p, 0, NO_PORT, 0, 0, i)) {
			hits++;
			assert_int_equal(i % 3, 0);
		}
	}
	assert_int_equal(hits, 3);
	parse_ok("{\"nth\": 4}", &m);
	for (i = 1; i <= 10; i++)
		assert_int_equal(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, i), i == 4);
	/* Window [1 ms, 2 ms) from the first packet seen (time zero = 5 s here). */
	parse_ok("{\"from_s\": 0.001, \"until_s\": 0.002}", &m);
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 5000000000ULL));
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 5000999999ULL));
	assert_true(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 5001000000ULL));
	assert_true(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 5001999999ULL));
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 5002000000ULL));
	emu_match_reset(&m);
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 7001000000ULL)); /* new time zero */
	assert_true(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 7001000000ULL + 1000000));
}

static void
test_iterations(void **state)
{
	struct emu_iter it;
	struct roce_pkt p = pkt(1, 2, 0x07, 0x45, 0);
	struct roce_pkt other = pkt(1, 3, 0x07, 0x45, 0);
	struct roce_pkt ack = pkt(2, 1, 0x11, 0x45, 5);
	uint32_t psn;

	(void)state;
	assert_int_equal(emu_iter_init(&it, 16), 0);
	/* 0..19 first sends; NAK at 15: go-back-N 15..19 twice more; then 20.. new. */
	for (psn = 0; psn < 20; psn++) {
		p.psn = psn;
		assert_int_equal(emu_iter_track(&it, &p), 1);
	}
	for (psn = 15; psn < 20; psn++) {
		p.psn = psn;
		assert_int_equal(emu_iter_track(&it, &p), 2);
	}
	/* Another QP (same QPN, other destination) is independent; ACKs are not tracked. */
	other.psn = 17;
	assert_int_equal(emu_iter_track(&it, &other), 1);
	assert_int_equal(emu_iter_track(&it, &ack), 0);
	for (psn = 17; psn < 22; psn++) {
		p.psn = psn;
		assert_int_equal(emu_iter_track(&it, &p), psn < 20 ? 3 : 1);
	}
	/* PSN wrap: 2^24 - 2 .. 1 are first sends, then 2^24 - 1 again is the second. */
	p.dest_qp = 0x46;
	for (psn = 16777214; psn != 2; psn = (psn + 1) & 0xFFFFFF) {
		p.psn = psn;
		assert_int_equal(emu_iter_track(&it, &p), 1);
	}
	p.psn = 16777215;
	assert_int_equal(emu_iter_track(&it, &p), 2);
	p.psn = 1;
	assert_int_equal(emu_iter_track(&it, &p), 2);
	/* Far behind the window (more than EMU_ITER_WINDOW): counted as a retransmission. */
	p.psn = 5000;
	assert_int_equal(emu_iter_track(&it, &p), 1);
	p.psn = 1;
	assert_int_equal(emu_iter_track(&it, &p), 2);
	emu_iter_free(&it);
}

static void
test_invalid(void **state)
{
	(void)state;
	parse_bad("[]", "m: must be an object, got an array");
	parse_bad("{\"psn\": [1]}", "m.psn: a PSN range is [lo, hi], got 1 elements");
	parse_bad("{\"psn\": 16777216}", "m.psn: must be in [0, 16777215], got 16777216");
	parse_bad("{\"psn\": [0, 8388608]}", "m.psn: range [0, 8388608] spans 2^23 PSNs or more "
		  "(mod 2^24): half the PSN space is ambiguous");
	parse_bad("{\"opcode\": \"bogus\"}", "m.opcode: unknown opcode class \"bogus\" (data, ack, "
		  "nak, cnp, read, send, write, or a number 0-255)");
	parse_bad("{\"src_ip\": \"10.0.0.1/33\"}",
		  "m.src_ip: prefix length must be in [0, 32]: \"10.0.0.1/33\"");
	parse_bad("{\"dst_ip\": \"10.0.0\"}", "m.dst_ip: not an IPv4/IPv6 address or prefix: "
		  "\"10.0.0\"");
	parse_bad("{\"ports\": [\"p9\"]}", "m.ports[0]: no port named \"p9\"");
	parse_bad("{\"nth\": 2, \"every_nth\": 3}", "m.nth: \"nth\" and \"every_nth\" exclude each "
		  "other");
	parse_bad("{\"from_s\": 2, \"until_s\": 1}", "m.until_s: must be > from_s (2), got 1");
}

/* Egress ports: "out_ports", and "direction" (ingress and egress at once). */
static void
test_directions(void **state)
{
	struct roce_pkt p = pkt(1, 2, 0x0a, 0x45, 17);
	json_error_t jerr;
	struct emu_match m;
	struct emu_err err;
	json_t *o;

	(void)state;
	parse_ok("{\"out_ports\": [\"p1\", \"p2\"]}", &m);
	assert_true(emu_match_test(&m, &p, 0, 1, 0, 0, 0));
	assert_true(emu_match_test(&m, &p, 0, 2, 0, 0, 0));
	assert_false(emu_match_test(&m, &p, 1, 0, 0, 0, 0));
	assert_false(emu_match_test(&m, &p, 0, NO_PORT, 0, 0, 0)); /* not decided */
	assert_false(emu_match_test(&m, &p, 0, 0xfffe, 0, 0, 0));  /* flood */
	/* p0 -> p1 only: not p1 -> p0, not p0 -> p2, not p2 -> p1 */
	parse_ok("{\"direction\": \"p0->p1\"}", &m);
	assert_true(emu_match_test(&m, &p, 0, 1, 0, 0, 0));
	assert_false(emu_match_test(&m, &p, 1, 0, 0, 0, 0));
	assert_false(emu_match_test(&m, &p, 0, 2, 0, 0, 0));
	assert_false(emu_match_test(&m, &p, 2, 1, 0, 0, 0));
	assert_int_equal(m.seen, 1);
	parse_bad("{\"direction\": \"p0\"}", "m.direction: must be \"IN->OUT\" (two port names), "
		  "got \"p0\"");
	parse_bad("{\"direction\": \"p0->p7\"}", "m.direction: no port named \"p7\" (after "
		  "\"->\")");
	parse_bad("{\"direction\": \"x->p1\"}", "m.direction: no port named \"x\" (before \"->\")");
	parse_bad("{\"direction\": \"p1->p1\"}", "m.direction: a frame never leaves by the port it "
		  "came in on, got \"p1->p1\"");
	parse_bad("{\"direction\": 3}", "m.direction: must be a string \"IN->OUT\" (two port "
		  "names), got an integer");
	parse_bad("{\"ports\": [\"p0\"], \"direction\": \"p0->p1\"}",
		  "m.direction: not with \"ports\" or \"out_ports\" (it sets both)");
	parse_bad("{\"out_ports\": []}", "m.out_ports: must name at least one port");
	parse_bad("{\"out_ports\": [\"p5\"]}", "m.out_ports[0]: no port named \"p5\"");
	/* a stage that runs before forward cannot know the egress port */
	o = json_loads("{\"direction\": \"p0->p1\"}", 0, &jerr);
	assert_int_not_equal(emu_match_parse(o, "m", ports, 3, false, &m, &err), 0);
	assert_string_equal(err.msg, "m.direction: the egress port is chosen by \"forward\": place "
			    "this stage after forward in the ingress list, or in the egress list");
	json_decref(o);
	o = json_loads("{\"ports\": [\"p0\"]}", 0, &jerr);
	assert_int_equal(emu_match_parse(o, "m", ports, 3, false, &m, &err), 0);
	json_decref(o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_opcode_classes),
		cmocka_unit_test(test_psn_range_wraps),
		cmocka_unit_test(test_counting_and_time),
		cmocka_unit_test(test_iterations),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_directions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
