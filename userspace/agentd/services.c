// SPDX-License-Identifier: GPL-2.0
#include "daemon.h"
#include "layers_status.h"
#include "services.h"

int services_start(struct daemon *d)
{
	(void)d;
	return 0;
}

void services_stop(struct daemon *d)
{
	(void)d;
}

int services_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz)
{
	(void)d, (void)a, (void)why, (void)whysz;
	return 0;
}

void services_agent_reloaded(struct daemon *d, struct agent *a)
{
	(void)d, (void)a;
}

void services_agent_down(struct daemon *d, struct agent *a)
{
	(void)d, (void)a;
}

void services_agent_json(struct daemon *d, const struct agent *a, json_t *obj)
{
	layers_status_agent_json(d, a, obj);
}

void services_status_json(struct daemon *d, json_t *reply)
{
	layers_status_json(d, reply);
}
