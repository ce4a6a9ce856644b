/* SPDX-License-Identifier: BSD-3-Clause */
/* rocegen's connection ends over RC or SRD (rg_ep.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rg_ep.h"

_Static_assert((int)EP_CTR_MAX <= RG_EP_MAX_CTRS && (int)EP_SRD_CTR_MAX <= RG_EP_MAX_CTRS,
	       "RG_EP_MAX_CTRS too small");

int
rg_ep_init_rc(struct rg_ep *e, const struct ep_qp_cfg *cfg, struct ep_pfc *pfc, uint64_t now_ns)
{
	e->srd = NULL;
	return ep_qp_init(&e->qp, cfg, pfc, now_ns);
}

int
rg_ep_init_srd(struct rg_ep *e, const struct ep_srd_cfg *cfg, struct ep_pfc *pfc,
	       uint64_t now_ns)
{
	int rc;

	e->srd = malloc(sizeof(*e->srd));
	if (e->srd == NULL)
		return -ENOMEM;
	rc = ep_srd_init(e->srd, cfg, pfc, now_ns);
	if (rc != 0) {
		free(e->srd);
		e->srd = NULL;
	}
	return rc;
}

void
rg_ep_free(struct rg_ep *e)
{
	if (e == NULL)
		return;
	free(e->srd);
	e->srd = NULL;
}

int
rg_ep_tx(struct rg_ep *e, uint64_t now_ns, uint8_t *buf, uint32_t cap)
{
	return e->srd != NULL ? ep_srd_tx(e->srd, now_ns, buf, cap) :
				ep_qp_tx(&e->qp, now_ns, buf, cap);
}

void
rg_ep_rx(struct rg_ep *e, const uint8_t *f, uint32_t len, const struct roce_pkt *p,
	 uint64_t now_ns)
{
	if (e->srd != NULL)
		ep_srd_rx(e->srd, f, len, p, now_ns);
	else
		ep_qp_rx(&e->qp, f, len, p, now_ns);
}

int
rg_ep_post(struct rg_ep *e, const struct ep_wr *wr)
{
	return e->srd != NULL ? ep_srd_post(e->srd, wr) : ep_qp_post(&e->qp, wr);
}

int
rg_ep_poll_sq(struct rg_ep *e, struct ep_cqe *c)
{
	return e->srd != NULL ? ep_srd_poll_sq(e->srd, c) : ep_qp_poll_sq(&e->qp, c);
}

int
rg_ep_poll_rq(struct rg_ep *e, struct ep_cqe *c)
{
	return e->srd != NULL ? ep_srd_poll_rq(e->srd, c) : ep_qp_poll_rq(&e->qp, c);
}

bool
rg_ep_idle(const struct rg_ep *e)
{
	return e->srd != NULL ? ep_srd_idle(e->srd) : ep_qp_idle(&e->qp);
}

bool
rg_ep_failed(const struct rg_ep *e)
{
	return (e->srd != NULL ? e->srd->state : e->qp.state) != EP_QP_RTS;
}

uint32_t
rg_ep_qpn(const struct rg_ep *e)
{
	return e->srd != NULL ? e->srd->cfg.qp.qpn : e->qp.cfg.qpn;
}

static uint32_t
rg_ep_dest_qpn(const struct rg_ep *e)
{
	return e->srd != NULL ? e->srd->cfg.qp.dest_qpn : e->qp.cfg.dest_qpn;
}

void
rg_ep_set_dst_mac(struct rg_ep *e, const uint8_t mac[6])
{
	if (e->srd != NULL)
		ep_srd_set_dst_mac(e->srd, mac);
	else
		ep_qp_set_dst_mac(&e->qp, mac);
}

unsigned int
rg_ep_n_ctrs(const struct rg_ep *e)
{
	return e->srd != NULL ? EP_SRD_CTR_MAX : EP_CTR_MAX;
}

const char *
rg_ep_ctr_name(const struct rg_ep *e, unsigned int i)
{
	return e->srd != NULL ? ep_srd_ctr_name((enum ep_srd_ctr)i) : ep_ctr_name((enum ep_ctr)i);
}

uint64_t
rg_ep_ctr(const struct rg_ep *e, unsigned int i)
{
	return e->srd != NULL ? e->srd->ctrs[i] : e->qp.ctrs[i];
}

bool
rg_ep_carried(const struct rg_ep *e)
{
	if (e->srd != NULL)
		return e->srd->ctrs[EP_SRD_CTR_TX_DATA_PKTS] != 0;
	return e->qp.ctrs[EP_CTR_TX_DATA_PKTS] != 0 || e->qp.ctrs[EP_CTR_CNPS_SENT] != 0;
}

uint64_t
rg_ep_tx_payload(const struct rg_ep *e)
{
	if (e->srd != NULL)
		return e->srd->ctrs[EP_SRD_CTR_TX_PAYLOAD_BYTES];
	return e->qp.ctrs[EP_CTR_TX_PAYLOAD_BYTES];
}

static double
rg_ep_min_rate(const struct rg_ep *e)
{
	return e->srd != NULL ? e->srd->min_rate_seen_mbps : e->qp.min_rate_mbps;
}

static double
rg_ep_rate(const struct rg_ep *e)
{
	return e->srd != NULL ? e->srd->rate_mbps : ep_qp_rate_mbps(&e->qp);
}

json_t *
rg_ep_json(const struct rg_ep *e)
{
	json_t *o = json_object(), *paths;
	unsigned int c;

	if (o == NULL)
		return NULL;
	for (c = 0; c < rg_ep_n_ctrs(e); c++)
		json_object_set_new(o, rg_ep_ctr_name(e, c),
				    json_integer((json_int_t)rg_ep_ctr(e, c)));
	json_object_set_new(o, "transport", json_string(e->srd != NULL ? "srd" : "rc"));
	json_object_set_new(o, "min_rate_mbps", json_real(rg_ep_min_rate(e)));
	json_object_set_new(o, "final_rate_mbps", json_real(rg_ep_rate(e)));
	json_object_set_new(o, "qpn", json_integer(rg_ep_qpn(e)));
	json_object_set_new(o, "dest_qpn", json_integer(rg_ep_dest_qpn(e)));
	json_object_set_new(o, "udp_sport", json_integer(e->srd != NULL ?
		e->srd->cfg.qp.udp_sport : e->qp.cfg.udp_sport));
	if (e->srd != NULL) {
		paths = json_array();
		for (c = 0; c < e->srd->cfg.n_paths; c++)
			json_array_append_new(paths,
				json_integer((json_int_t)e->srd->path_pkts[c]));
		json_object_set_new(o, "path_packets", paths);
		json_object_set_new(o, "srtt_ns", json_integer((json_int_t)e->srd->srtt_ns));
	}
	return o;
}

void
rg_ep_print(const struct rg_ep *e, FILE *f, const char *prefix)
{
	unsigned int c;

	fprintf(f, "%s qp 0x%x -> 0x%x:", prefix, rg_ep_qpn(e), rg_ep_dest_qpn(e));
	for (c = 0; c < rg_ep_n_ctrs(e); c++)
		if (rg_ep_ctr(e, c) != 0)
			fprintf(f, " %s=%" PRIu64, rg_ep_ctr_name(e, c), rg_ep_ctr(e, c));
	if (e->srd != NULL) {
		fprintf(f, " path_packets=");
		for (c = 0; c < e->srd->cfg.n_paths; c++)
			fprintf(f, "%s%" PRIu64, c ? "," : "", e->srd->path_pkts[c]);
		fprintf(f, " srtt_us=%.1f", (double)e->srd->srtt_ns / 1e3);
	}
	fprintf(f, " min_rate_mbps=%.1f final_rate_mbps=%.1f\n", rg_ep_min_rate(e), rg_ep_rate(e));
}

void
rg_ep_dump(const struct rg_ep *e, FILE *f)
{
	const struct ep_qp *qp = &e->qp;
	const struct ep_srd *s = e->srd;

	if (s != NULL) {
		fprintf(f, "rocegen: SRD 0x%x: sender una %u nxt %u (WRs %u..%u, sending %u, %u "
			"queued for retransmission, srtt %" PRIu64 " ns, rate %.0f Mb/s); receiver "
			"expects %u\n", s->cfg.qp.qpn, s->snd_una, s->snd_nxt, s->wr_head,
			s->wr_tail, s->wr_send, s->rtxq_tail - s->rtxq_head, s->srtt_ns,
			s->rate_mbps, s->epsn);
		return;
	}
	fprintf(f, "rocegen: QP 0x%x: requester una %u nxt %u max %u (WRs %u..%u, sending %u, "
		"retries %u); responder expects %u (NAK outstanding %d)\n", qp->cfg.qpn,
		qp->snd_una, qp->snd_nxt, qp->snd_max, qp->wr_head, qp->wr_tail, qp->wr_send,
		qp->retries, qp->epsn, qp->nak_outstanding);
}
