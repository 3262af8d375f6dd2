// SPDX-License-Identifier: GPL-2.0
#include "broker/broker.h"
#include "daemon.h"
#include "proxy.h"
#include "layers_status.h"
#include "mount_watch.h"
#include "services.h"

int services_start(struct daemon *d)
{
	int err = mount_watch_start(d);

	if (!err)
		err = proxy_start(d);
	if (!err) {
		err = broker_start(d);
		if (err)
			proxy_stop(d);
	}
	if (err)
		mount_watch_stop(d);
	return err;
}

void services_stop(struct daemon *d)
{
	broker_stop(d);
	proxy_stop(d);
	mount_watch_stop(d);
}

int services_agent_up(struct daemon *d, struct agent *a, char *why, size_t whysz)
{
	int err;

	mount_watch_agent(d, a);
	err = proxy_agent_up(d, a, why, whysz);

	if (!err) {
		err = broker_agent_up(d, a, why, whysz);
		if (err)
			proxy_agent_down(d, a);
	}
	return err;
}

void services_agent_reloaded(struct daemon *d, struct agent *a)
{
	proxy_agent_reloaded(d, a);
	broker_agent_reloaded(d, a);
}

void services_agent_down(struct daemon *d, struct agent *a)
{
	broker_agent_down(d, a);
	proxy_agent_down(d, a);
}

void services_agent_json(struct daemon *d, const struct agent *a, json_t *obj)
{
	broker_agent_json(d, a, obj);
	proxy_agent_json(d, a, obj);
	layers_status_agent_json(d, a, obj);
}

void services_status_json(struct daemon *d, json_t *reply)
{
	broker_status_json(d, reply);
	proxy_status_json(d, reply);
	layers_status_json(d, reply);
}
