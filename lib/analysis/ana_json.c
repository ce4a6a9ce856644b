/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The JSON report: docs/rocestat.md names every field. Times are exact integers of ns after the
 * capture's first frame (ana_rel_ns).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "lib/proto/roce_proto.h"

#include "ana_internal.h"

/*
 * A time in the JSON: whole ns after the capture's first frame (exact, and below 2^53 for
 * 104 days, so JavaScript and jq hold it); capture.start gives the first frame's absolute
 * time as a string. A double of absolute us kept ten digits: 102 ms off. A time before the
 * first frame (a capture whose time goes backwards) is negative.
 */
static json_int_t
ana_rel_ns(const struct ana *a, uint64_t t_ns)
{
	return (json_int_t)t_ns - (json_int_t)a->t_first_ns;
}

static json_t *
ana_json_events(const struct ana *a, const struct ana_flow *f)
{
	json_t *arr = json_array();
	uint32_t i;

	for (i = 0; i < f->n_ev; i++) {
		const struct ana_event *e = &f->ev[i];

		json_array_append_new(arr, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "type",
						     ana_ev_name(e->type), "packet", (json_int_t)e->pkt,
						     "packet2", (json_int_t)e->pkt2, "t_ns",
						     ana_rel_ns(a, e->t_ns), "psn", (json_int_t)e->psn,
						     "psn2", (json_int_t)e->psn2, "value",
						     (json_int_t)e->val));
	}
	return arr;
}

static json_t *
ana_json_flow(const struct ana *a, const struct ana_flow *f, uint32_t idx)
{
	json_t *o = json_object(), *ctr = json_object(), *ops = json_object();
	char lbl[192], ip[64];
	unsigned int k;

	ana_flow_label(a, f, lbl, sizeof(lbl));
	json_object_set_new(o, "id", json_integer(idx));
	json_object_set_new(o, "label", json_string(lbl));
	ana_ip_str(f->src_ip, f->ip_version, ip, sizeof(ip));
	json_object_set_new(o, "src_ip", json_string(ip));
	ana_ip_str(f->dst_ip, f->ip_version, ip, sizeof(ip));
	json_object_set_new(o, "dst_ip", json_string(ip));
	json_object_set_new(o, "dest_qp", json_integer(f->dqp));
	json_object_set_new(o, "src_qp", f->sqp_known ? json_integer(f->sqp) : json_null());
	json_object_set_new(o, "peer", f->peer >= 0 ? json_integer(f->peer) : json_null());
	json_object_set_new(o, "udp_sport", json_integer(f->sport));
	json_object_set_new(o, "udp_sport_varies", json_boolean(f->sport_varies));
	json_object_set_new(o, "first_packet", json_integer((json_int_t)f->first_pkt));
	json_object_set_new(o, "t_first_ns", json_integer(ana_rel_ns(a, f->t_first_ns)));
	json_object_set_new(o, "t_last_ns", json_integer(ana_rel_ns(a, f->t_last_ns)));
	json_object_set_new(o, "active_ns", json_integer((json_int_t)(f->t_last_ns -
									 f->t_first_ns)));
	json_object_set_new(o, "mean_mbps", json_real(ana_flow_mean_mbps(f)));
	json_object_set_new(o, "peak_mbps", json_real(ana_flow_peak_mbps(a, f)));
	json_object_set_new(o, "psn_first", f->have_psn ? json_integer(f->psn_first) : json_null());
	json_object_set_new(o, "psn_max", f->have_psn ? json_integer(f->psn_max) : json_null());
	for (k = 0; k < ANA_C_MAX; k++)
		json_object_set_new(ctr, ana_ctr_name(k), json_integer((json_int_t)f->c[k]));
	json_object_set_new(o, "counters", ctr);
	for (k = 0; k < 256; k++)
		if (f->ops[k])
			json_object_set_new(ops, roce_opcode_name((uint8_t)k),
					    json_integer((json_int_t)f->ops[k]));
	json_object_set_new(o, "opcodes", ops);
	json_object_set_new(o, "acked_psns_per_ack", json_real(f->c[ANA_C_ACKS] ?
			    (double)f->c[ANA_C_ACKED_PSNS] / (double)f->c[ANA_C_ACKS] : 0));
	json_object_set_new(o, "retx_latency_us", f->retx_lat_n ?
			    json_pack("{s:f,s:f,s:f,s:I}", "min", f->retx_lat_min_ns / 1000.0,
				      "mean", f->retx_lat_sum_ns / 1000.0 / (double)f->retx_lat_n,
				      "max", f->retx_lat_max_ns / 1000.0, "n",
				      (json_int_t)f->retx_lat_n) : json_null());
	json_object_set_new(o, "nak_latency_us", f->nak_gen_n ?
			    json_pack("{s:f,s:f,s:I}", "mean",
				      f->nak_gen_sum_ns / 1000.0 / (double)f->nak_gen_n, "max",
				      f->nak_gen_max_ns / 1000.0, "n", (json_int_t)f->nak_gen_n) :
			    json_null());
	json_object_set_new(o, "reorder_degree_max", json_integer(f->reorder_max));
	json_object_set_new(o, "ce_to_cnp_latency_us", f->cnp_lat_n ?
			    json_pack("{s:f,s:f,s:f,s:I}", "first",
				      f->cnp_lat_first_ns / 1000.0, "mean",
				      f->cnp_lat_sum_ns / 1000.0 / (double)f->cnp_lat_n, "max",
				      f->cnp_lat_max_ns / 1000.0, "n", (json_int_t)f->cnp_lat_n) :
			    json_null());
	if (f->n_cnp)
		json_object_set_new(o, "cnp", json_pack("{s:I,s:f,s:i,s:i,s:i,s:b,s:i}", "count",
			(json_int_t)f->n_cnp, "min_gap_us", f->n_cnp > 1 ?
			f->cnp_min_gap_ns / 1000.0 : 0.0, "dscp", f->cnp_dscp, "pcp", f->cnp_pcp,
			"ecn", f->cnp_ecn, "fields_vary", f->cnp_fields_vary, "udp_sport",
			(int)f->cnp_sport));
	else
		json_object_set_new(o, "cnp", json_null());
	json_object_set_new(o, "checks", json_pack("{s:s,s:s,s:s,s:s,s:s}",
		"one_nak_per_gap", f->c[ANA_C_NAKS_SEQ] == 0 ? "n/a" :
			f->c[ANA_C_DOUBLE_NAKS] ? "FAIL" : "PASS",
		"ack_psn_monotonic", f->c[ANA_C_ACKS] == 0 ? "n/a" :
			f->c[ANA_C_ACK_BACK] ? "FAIL" : "PASS",
		"gbn_restart_at_nak", f->c[ANA_C_RETX_ROUNDS] == 0 ? "n/a" :
			f->c[ANA_C_RESTART_BAD] ? "FAIL" : "PASS",
		"cnp_spacing", f->n_cnp == 0 ? "n/a" : f->c[ANA_C_CNPS_FAST] ? "FAIL" : "PASS",
		"cnp_becn", f->n_cnp == 0 ? "n/a" : f->c[ANA_C_CNPS_NO_BECN] ? "FAIL" : "PASS"));
	json_object_set_new(o, "events", ana_json_events(a, f));
	json_object_set_new(o, "events_dropped", json_integer((json_int_t)f->ev_dropped));
	return o;
}

static json_t *
ana_json_params(const struct dcqcn_params *p)
{
	return json_pack("{s:f,s:f,s:I,s:i,s:f,s:f,s:i,s:f,s:f,s:f,s:f,s:f,s:b,s:b,s:f}",
		"line_rate_mbps", p->line_rate_mbps,
		"rpg_time_reset_us", p->rpg_time_reset_ns / 1000.0,
		"rpg_byte_reset", (json_int_t)p->rpg_byte_reset,
		"rpg_threshold", (int)p->rpg_threshold,
		"rpg_ai_rate_mbps", p->rpg_ai_rate_mbps,
		"rpg_hai_rate_mbps", p->rpg_hai_rate_mbps,
		"rpg_min_dec_fac_pct", (int)p->rpg_min_dec_fac_pct,
		"rpg_min_rate_mbps", p->rpg_min_rate_mbps,
		"dce_tcp_g", 1024 - p->g * 1024,
		"dce_tcp_rtt_us", p->alpha_period_ns / 1000.0,
		"rate_reduce_monitor_period_us", p->rate_reduce_monitor_period_ns / 1000.0,
		"initial_alpha_value", p->initial_alpha * 1024,
		"clamp_tgt_rate", p->clamp_tgt_rate,
		"clamp_tgt_rate_after_time_inc", p->clamp_tgt_rate_after_time_inc,
		"min_time_between_cnps_us", p->min_time_between_cnps_ns / 1000.0);
}

json_t *
ana_json(struct ana *a)
{
	json_t *root = json_object(), *flows = json_array(), *conns = json_array();
	json_t *pfc = json_array(), *dv = json_array(), *iters = json_array(), *cls = json_object();
	json_t *scope = json_object();
	struct ana_scope sc[ANA_SCOPES];
	char start[48];
	double bus = 0, f = a->o.collective[0] ? ana_coll_factor(a->o.collective, a->o.ranks,
								  &bus) : 0;
	uint32_t i, j;

	if (root == NULL)
		return NULL;
	snprintf(start, sizeof(start), "%lu.%09lu", (unsigned long)(a->t_first_ns / 1000000000),
		 (unsigned long)(a->t_first_ns % 1000000000));
	json_object_set_new(root, "capture", json_pack("{s:I,s:I,s:s,s:I,s:I,s:I,s:I,s:I,s:I,"
		"s:I,s:I}", "packets", (json_int_t)a->pkts, "bytes", (json_int_t)a->bytes,
		"start", start, "duration_ns",
		ana_rel_ns(a, a->t_last_ns), "roce_packets", (json_int_t)a->roce_pkts,
		"pfc_frames", (json_int_t)a->pfc_frames, "pause_frames",
		(json_int_t)a->pause_frames, "ud_packets", (json_int_t)a->ud_pkts,
		"malformed_roce", (json_int_t)a->invalid_pkts, "other_packets",
		(json_int_t)a->other_pkts, "time_backwards", (json_int_t)a->time_back));
	for (i = 0; i < 16 && i < ROCE_CLASS_MAX; i++)
		if (a->cls[i])
			json_object_set_new(cls, roce_class_name(i), json_integer((json_int_t)a->cls[i]));
	json_object_set_new(root, "classes", cls);
	{
		json_t *r = json_object();

		for (i = 1; i < 32 && i < ROCE_REASON_MAX; i++)
			if (a->reasons[i])
				json_object_set_new(r, roce_reason_name(i),
						    json_integer((json_int_t)a->reasons[i]));
		json_object_set_new(root, "malformed_reasons", r);
	}
	for (i = 0; i < a->n_flows; i++)
		json_array_append_new(flows, ana_json_flow(a, &a->flows[i], i));
	json_object_set_new(root, "flows", flows);
	for (i = 0; i < a->n_conns; i++) {
		const struct ana_conn *c = &a->conns[i];

		json_array_append_new(conns, json_pack("{s:i,s:o,s:o,s:o,s:o}", "a", c->a, "b",
			c->b >= 0 ? json_integer(c->b) : json_null(), "udp_sport_linux_rule",
			c->sport_checked ? json_boolean(c->sport_linux) : json_null(),
			"udp_sport_expected", c->sport_checked ? json_integer(c->sport_expected) :
			json_null(), "udp_sport_rule", c->sport_checked && c->sport_rule ?
			json_string(c->sport_rule) : json_null()));
	}
	json_object_set_new(root, "qps", conns);
	for (i = 0; i < ANA_SCOPES; i++) {
		ana_scope(a, (int)i, &sc[i]);
		json_object_set_new(scope, ana_scope_names[i], json_pack("{s:I,s:o,s:I}", "groups",
			(json_int_t)sc[i].groups, "min_gap_us", sc[i].min_gap_ns == UINT64_MAX ?
			json_null() : json_real(sc[i].min_gap_ns / 1000.0), "violations",
			(json_int_t)sc[i].violations));
	}
	json_object_set_new(scope, "inferred", json_string(ana_scope_inferred(sc)));
	json_object_set_new(scope, "min_time_between_cnps_us",
			    json_real(a->o.np_min_time_between_cnps_ns / 1000.0));
	json_object_set_new(scope, "min_time_between_cnps_from", json_string(a->o.np_min_source));
	json_object_set_new(root, "cnp_pacing", scope);
	for (i = 0; i < a->n_pfc; i++)
		for (j = 0; j < ANA_PRIOS; j++) {
			const struct ana_pfc_prio *q = &a->pfc[i].prio[j];
			const uint8_t *m = a->pfc[i].mac;
			char mac[32];
			json_t *iv = json_array();
			uint32_t k;

			if (q->frames == 0) {
				json_decref(iv);
				continue;
			}
			snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
				 m[3], m[4], m[5]);
			for (k = 0; k < q->n_iv; k++)
				json_array_append_new(iv, json_pack("[I,I]",
					ana_rel_ns(a, q->iv[k].start_ns),
					ana_rel_ns(a, q->iv[k].end_ns)));
			json_array_append_new(pfc, json_pack("{s:s,s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:I,"
				"s:o,s:I}", "port", mac, "interface", (int)a->pfc[i].ifindex,
				"priority", (int)j, "frames", (json_int_t)q->frames, "xoff",
				(json_int_t)q->xoff, "xon", (json_int_t)q->xon, "paused_ns",
				(json_int_t)q->paused_ns, "longest_ns", (json_int_t)q->longest_ns,
				"storms", (json_int_t)q->storms, "intervals_ns", iv, "intervals_dropped",
				(json_int_t)q->iv_dropped));
		}
	json_object_set_new(root, "pfc", pfc);
	{
		json_t *drops = json_object();

		for (i = 0; i < a->n_drop_reasons; i++)
			json_object_set_new(drops, a->drop_reason[i],
					    json_integer((json_int_t)a->drop_count[i]));
		json_object_set_new(root, "annotations", json_pack("{s:I,s:I,s:f,s:f,s:f,s:o}",
			"packets", (json_int_t)a->ann_pkts, "unreadable", (json_int_t)a->ann_bad,
			"qdepth_max", a->qdepth_max, "wait_mean_us", a->wait_n ?
			a->wait_sum_ns / 1000.0 / (double)a->wait_n : 0.0, "wait_max_us",
			a->wait_max_ns / 1000.0, "drops", drops));
	}
	for (i = 0; i < a->n_dres; i++) {
		const struct ana_dcqcn_res *r = &a->dres[i];
		json_t *cuts = json_array(), *o;

		for (j = 0; j < r->n_cuts; j++)
			json_array_append_new(cuts, json_pack("{s:I,s:f,s:f,s:f,s:b}", "t_ns",
				ana_rel_ns(a, r->cuts[j].t_ns), "before_mbps", r->cuts[j].before_mbps,
				"measured_mbps", r->cuts[j].meas_after_mbps, "predicted_mbps",
				r->cuts[j].pred_after_mbps, "ok", r->cuts[j].ok));
		o = json_pack("{s:i,s:I,s:f,s:f,s:o,s:I,s:o,s:o,s:{s:I,s:I,s:I},s:s,s:s,s:o}",
			"flow", r->flow, "cnps", (json_int_t)r->n_cnp, "trajectory_error",
			r->err_traj, "trajectory_error_ignoring_cnps", r->err_traj_line, "cuts", cuts,
			"cuts_ok", (json_int_t)r->cuts_ok, "recovery_measured_us",
			r->recovery_meas_ns < 0 ? json_null() : json_real(r->recovery_meas_ns / 1000.0),
			"recovery_predicted_us",
			r->recovery_pred_ns < 0 ? json_null() : json_real(r->recovery_pred_ns / 1000.0),
			"predicted_steps", "fast_recovery",
			(json_int_t)r->pred_fast, "additive", (json_int_t)r->pred_additive, "hyper",
			(json_int_t)r->pred_hyper, "verdict", r->pass ? "PASS" : "FAIL", "why", r->why,
			"params", ana_json_params(&a->o.dcqcn));
		json_object_set_new(o, "idle", json_pack("{s:I,s:I,s:I,s:I,s:f,s:I}", "windows",
			(json_int_t)r->windows, "windows_idle", (json_int_t)r->windows_idle,
			"cuts_idle", (json_int_t)r->cuts_idle, "gaps", (json_int_t)r->idle_gaps,
			"idle_us", r->idle_ns / 1000.0, "gaps_not_kept", (json_int_t)r->idle_unknown));
		json_object_set_new(o, "pfc_paused", json_pack("{s:I,s:f,s:I,s:I,s:i}", "pauses",
			(json_int_t)r->pauses, "paused_us", r->paused_ns / 1000.0, "windows",
			(json_int_t)r->windows_paused, "gaps_in_messages",
			(json_int_t)r->gaps_paused,
			"priority", a->flows[r->flow].have_data_prio ?
			(int)a->flows[r->flow].data_prio : -1));
		{
			json_t *iv = json_array();

			for (j = 0; j < r->n_stall_iv; j++)
				json_array_append_new(iv, json_pack("[I,I]",
					ana_rel_ns(a, r->stall_iv[j].start_ns),
					ana_rel_ns(a, r->stall_iv[j].end_ns)));
			/* the gaps are whole ns (differences of capture times) held in doubles */
			json_object_set_new(o, "stalls", json_pack("{s:I,s:I,s:I,s:o}", "gaps",
				(json_int_t)r->stalls, "total_ns", (json_int_t)llround(r->stall_ns),
				"longest_ns", (json_int_t)llround(r->stall_max_ns), "intervals_ns",
				iv));
		}
		if (r->fitted) {
			json_t *ex = json_array();
			uint32_t k;

			for (k = 0; k < r->n_explained; k++)
				json_array_append_new(ex, json_pack("{s:s,s:f,s:f}", "name",
					r->expl[k].name, "value", r->expl[k].value, "error",
					r->expl[k].error));
			json_object_set_new(o, "fit", json_pack("{s:o,s:f,s:s,s:s,s:o}", "params",
				ana_json_params(&r->fit), "error", r->fit_err, "differs",
				r->fit_differs, "measure", r->fit_on_gaps ? "gaps" : "bytes",
				"explained_by", ex));
		}
		json_array_append_new(dv, o);
	}
	json_object_set_new(root, "dcqcn", dv);
	for (i = 0; i < a->n_iters; i++) {
		const struct ana_iter *it = &a->iters[i];
		double t_s = (double)(it->end_ns - it->start_ns) / 1e9;
		double size = f > 0 ? (double)it->bytes / f : 0;
		double alg = t_s > 0 && f > 0 ? size / 1e9 / t_s : 0;

		json_array_append_new(iters, json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f}", "start_ns",
			ana_rel_ns(a, it->start_ns), "time_ns",
			(json_int_t)(it->end_ns - it->start_ns), "wire_bytes",
			(json_int_t)it->bytes, "packets", (json_int_t)it->pkts, "size_bytes", size,
			"algbw_gbs", alg, "busbw_gbs", alg * bus));
	}
	{
		struct ana_hpair hp[256];
		const char *pattern;
		uint32_t n = ana_host_pairs(a, hp, 256, &pattern), k;
		json_t *pairs = json_array();

		for (k = 0; k < n; k++) {
			char s1[64], s2[64];

			ana_ip_str(hp[k].src, hp[k].version, s1, sizeof(s1));
			ana_ip_str(hp[k].dst, hp[k].version, s2, sizeof(s2));
			json_array_append_new(pairs, json_pack("{s:s,s:s,s:i,s:I}", "src", s1, "dst",
				s2, "qps", (int)hp[k].qps, "goodput_bytes", (json_int_t)hp[k].bytes));
		}
		json_object_set_new(root, "host_pairs", pairs);
		json_object_set_new(root, "pattern", json_string(pattern));
	}
	json_object_set_new(root, "collective", json_pack("{s:s,s:i,s:f,s:o,s:o}", "name",
		a->o.collective, "ranks", (int)a->o.ranks, "idle_gap_us", a->o.idle_gap_ns / 1000.0,
		"iterations", iters, "application", a->app_seen ? json_pack("{s:s,s:I,s:f,s:f,s:f}",
		"type", a->app_kind, "size_bytes", (json_int_t)a->app_size, "time_us",
		a->app_time_us, "algbw_gbs", a->app_algbw_gbs, "busbw_gbs", a->app_busbw_gbs) :
		json_null()));
	json_object_set_new(root, "bandwidth", ana_bw_json(a));
	json_object_set_new(root, "failures", json_integer(ana_failures(a)));
	return root;
}
