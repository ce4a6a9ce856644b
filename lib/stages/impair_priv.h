/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef EMU_IMPAIR_PRIV_H
#define EMU_IMPAIR_PRIV_H

/* The impair stage's internals, shared by impair.c (its packet path) and impair_config.c. */

#include <stdbool.h>
#include <stdint.h>

#include "lib/pkt/emu_heldq.h"
#include "lib/stage/emu_match.h"
#include "lib/stages/stages.h"
#include "lib/stages/impair_keys.h"

#define IMPAIR_EV_CTRS 3
#define IMPAIR_EV_CTR_MAX (IMPAIR_MAX_EVENTS * IMPAIR_EV_CTRS)
#define IMPAIR_CTR_RELEASED IMPAIR_EV_CTR_MAX
#define IMPAIR_CTR_DROP_DELAY_FULL (IMPAIR_EV_CTR_MAX + 1)
#define IMPAIR_CTR_MAX (IMPAIR_EV_CTR_MAX + 2)
#define IMPAIR_NAME_LEN 48 /* event names are at most 31 characters */

enum impair_ev_ctr { IMPAIR_EV_MATCHED, IMPAIR_EV_ACTED, IMPAIR_EV_SKIPPED };

enum impair_action {
	IMPAIR_DROP,
	IMPAIR_ECN_MARK,
	IMPAIR_CORRUPT_ICRC,
	IMPAIR_CORRUPT_PAYLOAD,
	IMPAIR_DUPLICATE,
	IMPAIR_REWRITE_DSCP,
	IMPAIR_REWRITE_SPORT,
	IMPAIR_DELAY,
};

enum impair_model { IMPAIR_MODEL_NONE, IMPAIR_MODEL_BERNOULLI, IMPAIR_MODEL_GILBERT,
		    IMPAIR_MODEL_4STATE };

struct impair_event {
	char name[32];
	struct emu_match match;
	uint8_t action;
	uint8_t model;
	uint8_t state;     /* loss model state: GE 0 good 1 bad; 4-state 1..4 */
	bool enabled;
	uint16_t value;    /* rewrite value */
	uint64_t delay_ns; /* delay action */
	double p, r, one_h, one_k;            /* bernoulli p; Gilbert-Elliott */
	double p13, p31, p32, p23, p14;       /* 4-state */
};

struct impair_priv {
	unsigned int n_events;
	struct impair_event events[IMPAIR_MAX_EVENTS];
	bool tracks_iterations;
	struct emu_iter iter;
	bool has_delay;
	struct emu_heldq held; /* delay action */
	bool owns_names;
};

/* impair_config.c */
extern const char *impair_ctr_names[IMPAIR_CTR_MAX];
int impair_init(void *priv, const json_t *cfg, const struct emu_stage_env *env, struct emu_err *err);
void impair_free(void *priv);

#endif
