// SPDX-License-Identifier: GPL-2.0
#include "broker.h"
#include "daemon.h"
#include "services.h"

int services_start(struct daemon *d)
{
	return broker_start(d);
}

void services_stop(struct daemon *d)
{
	broker_stop(d);
}

int services_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz)
{
	return broker_agent_up(d, a, why, whysz);
}

void services_agent_reloaded(struct daemon *d, struct agent *a)
{
	(void)d, (void)a;
}

void services_agent_down(struct daemon *d, struct agent *a)
{
	broker_agent_down(d, a);
}

void services_agent_json(struct daemon *d, const struct agent *a, json_t *obj)
{
	broker_agent_json(d, a, obj);
}

void services_status_json(struct daemon *d, json_t *reply)
{
	broker_status_json(d, reply);
}
