/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The names a profile's "tm" gives: a port or a fabric link of the pipeline, and when it names
 * none, a hint for the message (emu_profile_int.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/ctl/emu_profile_int.h"

/* Index of TM port @p name of pipeline @p pl (a port, then the fabric's links), or -1. */
static int
emu_profile_port_index_pl(const struct emu_pipeline *pl, const char *name)
{
	unsigned int port;

	for (port = 0; port < pl->tm.n_ports; port++)
		if (strcmp(pl->tm_port_names[port], name) == 0)
			return (int)port;
	return -1;
}

int
emu_profile_port_index(const struct emu_switch *sw, const char *name)
{
	return emu_profile_port_index_pl(emu_switch_pipeline(sw), name);
}

/* Whether link name @p ln (FROM-TO[.K]) leaves or reaches switch @p name (@p nl bytes). */
static bool
emu_profile_link_touches(const char *ln, const char *name, size_t nl)
{
	const char *dash = strchr(ln, '-');

	if (dash == NULL)
		return false;
	if ((size_t)(dash - ln) == nl && strncmp(ln, name, nl) == 0)
		return true;
	return strncmp(dash + 1, name, nl) == 0 && (dash[1 + nl] == '\0' || dash[1 + nl] == '.');
}

/*
 * Why "tm" of a profile names no port of the pipeline: a hint that starts with "; " for the
 * message. Link names are FROM-TO[.K] (the telemetry writes them with "_"), so an underscore
 * form or a switch's name are the likely mistakes; else the names there are, up to 12.
 */
void
emu_profile_port_hint(const struct emu_pipeline *pl, const char *name, char *buf, size_t len)
{
	char dashed[64], names[768];
	size_t at = 0, nl = strlen(name), i;
	unsigned int port, shown = 0;
	int w;

	buf[0] = '\0';
	names[0] = '\0';
	if (nl < sizeof(dashed) && strchr(name, '_') != NULL) {
		for (i = 0; i <= nl; i++)
			dashed[i] = name[i] == '_' ? '-' : name[i];
		if (emu_profile_port_index_pl(pl, dashed) >= 0) {
			snprintf(buf, len, "; did you mean \"%s\"?", dashed);
			return;
		}
	}
	/* a switch's name: the links that leave or reach it */
	for (port = pl->n_ports; port < pl->tm.n_ports && at < sizeof(names); port++) {
		if (!emu_profile_link_touches(pl->tm_port_names[port], name, nl))
			continue;
		w = snprintf(names + at, sizeof(names) - at, "%s%s", shown == 0 ? "" : ", ",
			     pl->tm_port_names[port]);
		at += w > 0 ? (size_t)w : 0;
		shown++;
	}
	if (shown > 0) {
		snprintf(buf, len, "; \"%s\" is a fabric switch: a profile changes its links (%.700s)",
			 name, names);
		return;
	}
	for (port = 0; port < pl->tm.n_ports && at < sizeof(names); port++) {
		w = snprintf(names + at, sizeof(names) - at, "%s%s", shown == 0 ? "" : ", ",
			     shown == 12 ? "..." : pl->tm_port_names[port]);
		at += w > 0 ? (size_t)w : 0;
		if (++shown > 12)
			break;
	}
	snprintf(buf, len, "; the pipeline has %.700s", names);
}
