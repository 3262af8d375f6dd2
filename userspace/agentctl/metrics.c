// SPDX-License-Identifier: GPL-2.0
/* agentctl metrics: agentd's counters in Prometheus's text format (docs/METRICS.md). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "client.h"
#include "cmds.h"
#include "log.h"
#include "paths.h"
#include "wire/unixsock.h"

/* $AGENTD_METRICS, else metrics.sock beside the control socket. Returns 0 or -ENAMETOOLONG. */
static int metrics_path(const struct ctl *c, char *buf, size_t bufsz)
{
	const char *env = getenv("AGENTD_METRICS");

	if (env)
		return (size_t)snprintf(buf, bufsz, "%s", env) >= bufsz ? -ENAMETOOLONG : 0;
	return path_beside(c->control, PATH_METRICS_SOCK_NAME, buf, bufsz);
}

int do_metrics(int argc, char **argv)
{
	char buf[65536], path[PATH_MAX];
	struct ctl c;
	ssize_t n;
	int fd;

	argc = ctl_args(argc, argv, &c);
	if (argc != 1) {
		log_err("usage: agentctl metrics [--control PATH]\n");
		return EXIT_USAGE;
	}
	fd = metrics_path(&c, path, sizeof(path));
	if (!fd)
		fd = unix_connect(path);
	if (fd < 0) {
		log_err("metrics socket %s: %s\n", path, strerror(-fd));
		return EXIT_FAIL;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, n, stdout);
	close(fd);
	if (n < 0) {
		log_err("metrics socket %s: %s\n", path, strerror(errno));
		return EXIT_FAIL;
	}
	return fflush(stdout) ? EXIT_FAIL : 0;
}
