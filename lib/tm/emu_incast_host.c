/* SPDX-License-Identifier: BSD-3-Clause */
/* Closed-loop incast senders: the model is described in emu_incast_host.h. */
#include <math.h>
#include <string.h>

#include "lib/tm/emu_incast_host.h"

void
emu_incast_hosts_init(struct emu_incast_hosts *hs, const struct emu_incast_cfg *c,
		      uint64_t xoff_bytes, uint64_t xon_bytes)
{
	unsigned int j;

	memset(hs, 0, sizeof(*hs));
	hs->pfc = c->honour_pfc;
	hs->dcqcn = c->dcqcn != EMU_INCAST_DCQCN_OFF;
	hs->xoff_bytes = xoff_bytes;
	hs->xon_bytes = xon_bytes;
	hs->wire_bits = emu_incast_wire_bits(c->frame_bytes);
	hs->cnp_delay_ns = c->cnp_delay_ns;
	hs->n = c->senders < EMU_INCAST_MAX_HOSTS ? c->senders : EMU_INCAST_MAX_HOSTS;
	hs->rate_bps = c->rate_bps;
	for (j = 0; j < EMU_INCAST_MAX_HOSTS; j++)
		hs->h[j].next_ns = UINT64_MAX;
	emu_incast_hosts_start(hs, c, 0);
}

void
emu_incast_hosts_start(struct emu_incast_hosts *hs, const struct emu_incast_cfg *c,
		       uint64_t epoch_ns)
{
	unsigned int j;

	if (!c->enabled) {
		/* stopped: rates and DCQCN state stay as they were, for the reports */
		emu_incast_hosts_stop(hs);
		return;
	}
	hs->n = c->senders < EMU_INCAST_MAX_HOSTS ? c->senders : EMU_INCAST_MAX_HOSTS;
	hs->running = true;
	hs->rate_bps = c->rate_bps;
	dcqcn_params_by_name(&hs->dp, c->dcqcn == EMU_INCAST_DCQCN_PAPER ? "paper" : "nvidia",
			     (double)c->rate_bps / 1e6);
	for (j = 0; j < EMU_INCAST_MAX_HOSTS; j++) {
		struct emu_incast_host *h = &hs->h[j];
		/* staggered by 1/N of a frame time at the line rate */
		uint64_t t = epoch_ns + (uint64_t)((unsigned __int128)j * hs->wire_bits *
						   1000000000ULL /
						   ((unsigned __int128)hs->n * hs->rate_bps));

		h->cuts_before += h->rp.decreases;
		dcqcn_rp_init(&h->rp, &hs->dp, epoch_ns);
		h->np_last_ns = UINT64_MAX;
		h->cnp_head = h->cnp_tail = 0;
		h->sent_any = false;
		if (j >= hs->n) {
			h->next_ns = UINT64_MAX;
			h->want_ns = UINT64_MAX;
		} else if (h->paused) {
			h->want_ns = t;
		} else {
			h->next_ns = t;
		}
	}
}

void
emu_incast_hosts_stop(struct emu_incast_hosts *hs)
{
	unsigned int j;

	hs->running = false;
	for (j = 0; j < EMU_INCAST_MAX_HOSTS; j++)
		hs->h[j].next_ns = hs->h[j].want_ns = UINT64_MAX;
}

int
emu_incast_hosts_next(const struct emu_incast_hosts *hs, uint64_t *t_ns)
{
	uint64_t best = UINT64_MAX;
	int bj = -1;
	unsigned int j;

	for (j = 0; j < hs->n; j++)
		if (hs->h[j].next_ns < best) {
			best = hs->h[j].next_ns;
			bj = (int)j;
		}
	*t_ns = best;
	return bj;
}

/* The CNPs that reached sender @p h by @p t_ns, in order, then its reaction point to t_ns. */
static void
emu_incast_host_react(struct emu_incast_hosts *hs, struct emu_incast_host *h, uint64_t t_ns)
{
	while (h->cnp_head != h->cnp_tail &&
	       h->cnp_at[h->cnp_head & (EMU_INCAST_CNP_RING - 1)] <= t_ns) {
		uint64_t at = h->cnp_at[h->cnp_head++ & (EMU_INCAST_CNP_RING - 1)];

		dcqcn_rp_advance(&h->rp, &hs->dp, at);
		dcqcn_rp_on_cnp(&h->rp, &hs->dp, at);
		h->cnps++;
	}
	dcqcn_rp_advance(&h->rp, &hs->dp, t_ns);
}

bool
emu_incast_hosts_poll(struct emu_incast_hosts *hs, unsigned int j, uint32_t len, uint64_t t_ns)
{
	struct emu_incast_host *h = &hs->h[j];
	double rate_mbps = (double)hs->rate_bps / 1e6, due;
	uint64_t wake;

	if (hs->dcqcn) {
		emu_incast_host_react(hs, h, t_ns);
		rate_mbps = h->rp.rc_mbps;
	}
	/* the rate now decides when the frame after the last one may go */
	due = h->sent_any ? h->last_ns + (double)hs->wire_bits * 1000.0 / rate_mbps : 0;
	if (due > (double)t_ns) {
		/* not yet: wake at its time, or at the next rate increase, which may bring it
		 * closer (a cut only pushes it later: seen at the wake-up) */
		wake = (uint64_t)ceil(due);
		if (hs->dcqcn && h->rp.next_timer_ns < wake)
			wake = h->rp.next_timer_ns > t_ns ? h->rp.next_timer_ns : t_ns + 1;
		h->next_ns = wake;
		return false;
	}
	/* the frame goes at its due time when that was this instant (exact spacing at a steady
	 * rate), else now (the first frame, after a pause or a wake-up) */
	h->last_ns = due > (double)t_ns - 1.0 && h->sent_any ? due : (double)t_ns;
	h->sent_any = true;
	if (hs->dcqcn)
		dcqcn_rp_on_bytes(&h->rp, &hs->dp, len, t_ns);
	h->next_ns = (uint64_t)ceil(h->last_ns + (double)hs->wire_bits * 1000.0 /
				    (hs->dcqcn ? h->rp.rc_mbps : rate_mbps));
	h->frames++;
	h->bytes += len;
	h->queued_bytes += len;
	return true;
}

void
emu_incast_hosts_check(struct emu_incast_hosts *hs, unsigned int j, uint64_t t_ns)
{
	struct emu_incast_host *h = &hs->h[j];

	if (!hs->pfc || h->paused || h->queued_bytes <= hs->xoff_bytes)
		return;
	h->paused = true;
	h->pause_start_ns = t_ns;
	h->want_ns = h->next_ns;
	h->next_ns = UINT64_MAX;
	h->pauses++;
}

void
emu_incast_hosts_gone(struct emu_incast_hosts *hs, unsigned int j, uint32_t len, uint64_t t_ns)
{
	struct emu_incast_host *h = &hs->h[j];

	h->queued_bytes -= len;
	if (!h->paused || h->queued_bytes >= hs->xon_bytes)
		return;
	h->paused = false;
	if (t_ns > h->pause_start_ns)
		h->paused_ns += t_ns - h->pause_start_ns;
	if (h->want_ns != UINT64_MAX)
		h->next_ns = h->want_ns > t_ns ? h->want_ns : t_ns;
	h->want_ns = UINT64_MAX;
}

void
emu_incast_hosts_left(struct emu_incast_hosts *hs, unsigned int j, uint32_t len, bool ce,
		      uint64_t t_ns)
{
	struct emu_incast_host *h = &hs->h[j];

	h->left_bytes += len;
	if (ce) {
		h->marked++;
		if (hs->dcqcn && hs->running && dcqcn_np_may_send(&h->np_last_ns, &hs->dp, t_ns)) {
			if (h->cnp_tail - h->cnp_head >= EMU_INCAST_CNP_RING)
				hs->cnp_ring_full++;
			else
				h->cnp_at[h->cnp_tail++ & (EMU_INCAST_CNP_RING - 1)] =
					t_ns + hs->cnp_delay_ns;
		}
	}
	emu_incast_hosts_gone(hs, j, len, t_ns);
}

void
emu_incast_host_stats(const struct emu_incast_hosts *hs, unsigned int j, uint64_t now_ns,
		      struct emu_incast_host_stats *out)
{
	const struct emu_incast_host *h = &hs->h[j];

	out->frames = h->frames;
	out->bytes = h->bytes;
	out->left_bytes = h->left_bytes;
	out->marked = h->marked;
	out->cnps = h->cnps;
	out->rate_cuts = h->rp.decreases + h->cuts_before;
	out->pauses = h->pauses;
	out->paused_ns = h->paused_ns +
			 (h->paused && now_ns > h->pause_start_ns ? now_ns - h->pause_start_ns : 0);
	out->queued_bytes = h->queued_bytes;
	out->rate_mbps = hs->dcqcn ? h->rp.rc_mbps : (double)hs->rate_bps / 1e6;
	out->paused = h->paused;
}
