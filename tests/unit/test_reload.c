/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Profile reload under traffic, the way live mode does it: a worker thread owns the switch
 * and forwards RoCE frames on its clock while the main thread loads profiles against the same
 * switch, offers them and frees the ones given back. Built with -Db_sanitize=thread
 * (scripts/tsan.sh) this is the proof that loading and validating a profile never reads state
 * the worker writes: ThreadSanitizer reports any such access as a data race and fails the run.
 * Without TSan it still checks that every reload was taken, that the changes of each program
 * were applied on the worker, and that conservation holds.
 */
#include <pthread.h>

#include "test_common.h"

#include "lib/ctl/emu_profile.h"

static struct rte_mempool *pool;

#define N_RELOADS 40
#define BURST 16

struct worker {
	struct emu_switch *sw;
	volatile int stop;
	uint64_t now_ns;
	uint64_t sent, txd;
	bool alloc_failed;
};

/* One RoCE RDMA WRITE ONLY on p0, to p1 (forward pairs), PSN @p psn. */
static struct rte_mbuf *
frame(uint32_t psn)
{
	struct roce_hdr_params hp = roce_hdr_params_default();
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t buf[256], payload[128];
	int len;

	if (m == NULL)
		return NULL;
	hp.src_ip[0] = 10;
	hp.src_ip[3] = 1;
	hp.dst_ip[0] = 10;
	hp.dst_ip[3] = 2;
	hp.udp_sport = 49152;
	hp.opcode = 0x0A;
	hp.dest_qp = 0x45;
	hp.psn = psn & 0xffffff;
	hp.ecn = 2;
	memset(payload, 0x5a, sizeof(payload));
	len = roce_build(buf, sizeof(buf), &hp, payload, sizeof(payload));
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, (size_t)len);
	return m;
}

/* The worker: rx a burst on p0 every 10 us of its own clock, transmit what p1 releases. */
static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	struct rte_mbuf *rx[BURST], **tx;
	uint32_t psn = 0;
	uint16_t i, n;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < BURST; i++) {
			rx[i] = frame(psn++);
			if (rx[i] == NULL) {
				w->alloc_failed = true;
				break;
			}
		}
		w->now_ns += 10000;
		emu_switch_rx(w->sw, 0, rx, i, w->now_ns);
		w->sent += i;
		n = emu_switch_tx_prepare(w->sw, 1, w->now_ns, &tx);
		rte_pktmbuf_free_bulk(tx, n);
		emu_switch_tx_done(w->sw, 1, n);
		w->txd += n;
	}
	/* drain what the TM still holds */
	for (i = 0; i < 100; i++) {
		w->now_ns += 100000;
		n = emu_switch_tx_prepare(w->sw, 1, w->now_ns, &tx);
		rte_pktmbuf_free_bulk(tx, n);
		emu_switch_tx_done(w->sw, 1, n);
		w->txd += n;
	}
	return NULL;
}

static const char *const profiles[] = {
	/* a timed loss phase and a rate change, both put back */
	"{\"phases\": [{\"at_s\": 0, \"duration_s\": 0.0002, "
	"\"stages\": {\"impair\": {\"loss\": {\"enabled\": true, \"p\": 0.5}}}},"
	" {\"at_s\": 0.0001, \"duration_s\": 0.0001, \"tm\": {\"p1\": {\"rate_gbps\": 1}}}]}",
	/* the event off, the link down and up */
	"{\"phases\": [{\"at_s\": 0, \"stages\": {\"impair\": {\"loss\": {\"enabled\": false}}}},"
	" {\"at_s\": 0.00005, \"duration_s\": 0.00005, \"tm\": {\"p1\": {\"link\": \"down\"}}}]}",
};

static void
test_reload_under_traffic(void **state)
{
	struct emu_pipeline *pl = test_pipeline(
		"{\"ports\": [{\"name\": \"p0\"}, {\"name\": \"p1\"}],"
		" \"ingress\": [{\"type\": \"parse\"}, {\"type\": \"forward\", \"mode\": \"pairs\"},"
		"  {\"type\": \"impair\", \"events\": [{\"name\": \"loss\", \"enabled\": false,"
		"   \"action\": \"drop\","
		"   \"loss\": {\"model\": \"bernoulli\", \"p\": 0.1}}]}],"
		" \"tm\": {\"ports\": [{\"port\": \"p1\", \"rate_gbps\": 100, \"buffer_kb\": 256}]}}");
	struct worker w = { 0 };
	struct emu_profile *prof[N_RELOADS] = { NULL };
	struct emu_program *old;
	struct emu_conservation c;
	pthread_t th;
	struct emu_err err;
	json_error_t jerr;
	unsigned int i, taken = 0;
	uint64_t changes = 0;

	(void)state;
	w.sw = test_switch(pool, pl);
	assert_int_equal(pthread_create(&th, NULL, worker_main, &w), 0);
	for (i = 0; i < N_RELOADS; i++) {
		json_t *doc = json_loads(profiles[i % 2], 0, &jerr);

		assert_non_null(doc);
		/* loaded and validated while the worker forwards */
		assert_int_equal(emu_profile_from_json(doc, w.sw, &prof[i], &err), 0);
		json_decref(doc);
		emu_switch_offer_program(w.sw, emu_profile_prog(prof[i]));
		while (!emu_switch_program_taken(w.sw, &old))
			usleep(50);
		taken++;
		if (old != NULL) {
			assert_ptr_equal(old->owner, prof[i - 1]);
			/* given back: the worker no longer touches it */
			changes += old->next;
			emu_profile_free(old->owner);
			prof[i - 1] = NULL;
		}
		usleep(2000); /* let the worker run this program's timeline */
	}
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_false(w.alloc_failed);
	assert_int_equal(taken, N_RELOADS);
	changes += emu_profile_prog(prof[N_RELOADS - 1])->next;
	/* every program starts with a change at 0, applied when taken; more as its timeline ran */
	assert_true(changes >= N_RELOADS);
	emu_switch_conservation(w.sw, &c);
	assert_int_equal(c.unaccounted, 0);
	assert_true(c.rx == w.sent);
	assert_true(w.txd > 0);
	print_message("reload: %u programs taken, %" PRIu64 " changes applied, rx %" PRIu64
		      " tx %" PRIu64 " drops %" PRIu64 " held %" PRIu64 "\n", taken, changes,
		      c.rx, c.tx, c.drops, c.held);
	emu_profile_free(prof[N_RELOADS - 1]);
	emu_switch_free(w.sw);
	emu_pipeline_free(pl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reload_under_traffic),
	};

	pool = test_eal_pool("test_reload", 8192);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
