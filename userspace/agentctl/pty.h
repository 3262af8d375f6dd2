/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's terminal (run.c): when one of the operator's descriptors 0-2 is a terminal, the
 * agent gets a pseudo-terminal of its own in its place, which agentctl relays (as ssh -t does),
 * never the operator's: a terminal an agent holds lets it type into the operator's shell
 * (TIOCSTI), read what the operator types, and change its modes.
 */
#ifndef AGENTCTL_PTY_H
#define AGENTCTL_PTY_H

#include <stdbool.h>
#include <termios.h>
#include <sys/types.h>

struct pty {
	int master, slave; /* -1 when no descriptor 0-2 is a terminal */
	unsigned int ttys; /* bit n: the operator's descriptor n is a terminal, the slave's in the
			    * agent */
	int in, out; /* the operator's terminal relayed from (0 or -1) and to (1, 2, 0 or -1) */
	struct termios saved; /* in's modes, restored at every exit */
	bool raw; /* in is in raw mode */
};

/* Opens the pair when a descriptor 0-2 is a terminal, with its modes and size (master -1 when
 * none is). Returns 0 or -errno. */
int pty_open(struct pty *t);
/* In the child, after setsid(): the slave becomes its controlling terminal and its descriptors
 * in place of the operator's terminals. Returns 0 or -errno. */
int pty_child(const struct pty *t);
/*
 * In the parent, after the child started (SIGCHLD and SIGWINCH blocked before it did): puts the
 * operator's terminal in raw mode, relays both ways and the window size until exited(arg) says
 * the child is gone (called after each SIGCHLD), then passes on what it left and restores the
 * terminal. Returns 0 or -errno.
 */
int pty_relay(struct pty *t, bool (*exited)(void *), void *arg);
/* Blocks SIGCHLD and SIGWINCH (pty_relay() unblocks them while it waits) into old. */
void pty_block(sigset_t *old);
void pty_close(struct pty *t);

#endif
