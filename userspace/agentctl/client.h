/* SPDX-License-Identifier: GPL-2.0 */
/* agentctl's side of the control protocol (docs/CONTROL.md). */
#ifndef AGENTCTL_CLIENT_H
#define AGENTCTL_CLIENT_H

#include <stdbool.h>
#include "wire/control.h"

#define CLIENT_TIMEOUT_MS 30000

/* Options every daemon command takes: --control PATH (or $AGENTD_CONTROL), --json. */
struct ctl {
	const char *control;
	bool json;
};

/* Takes --control and --json out of argv (up to a "--"); returns the new argc. */
int ctl_args(int argc, char **argv, struct ctl *c);

/*
 * Sends req and waits for its reply. Returns 0 with *reply (the whole reply object) when ok;
 * otherwise prints the error (as JSON on stdout with --json, else on stderr) and returns the
 * exit status: EXIT_NO when the daemon said no, EXIT_FAIL when it could not be asked.
 */
int ctl_call(const struct ctl *c, const struct control_request *req, json_t **reply);

/* Prints the reply as JSON (for --json). */
void ctl_print_json(const json_t *reply);

#endif
