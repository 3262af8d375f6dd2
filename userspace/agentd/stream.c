// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's live audit stream (docs/AUDIT.md, "Stream"): a Unix socket, root only unless
 * --stream-group names a group of readers, where subscribers receive every committed record
 * that passes their filter. The writer hands each fsynced batch to audit_stream_publish(); a
 * subscriber that falls behind is disconnected by the library, and the next pass of the loop
 * turns that into a loss record. Neither the writer nor the kernel ever waits for a subscriber.
 */
#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "daemon.h"
#include "log.h"
#include "stream.h"
#include "wire/unixsock.h"

struct stream {
	int fd;
	struct audit_stream *subs;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static int group_id(const char *name, gid_t *gid)
{
	struct group *g = getgrnam(name);
	char *end;

	if (g) {
		*gid = g->gr_gid;
		return 0;
	}
	*gid = strtoul(name, &end, 10);
	return name[0] && !*end ? 0 : -ENOENT;
}

/* The socket's directory: created 0700 (0750 and the group's, with a group) when missing. */
static int make_dir(const char *path, const char *group, gid_t gid)
{
	char copy[PATH_MAX], *dir;
	struct stat st;

	snprintf(copy, sizeof(copy), "%s", path);
	dir = dirname(copy);
	if (!mkdir(dir, group ? 0750 : 0700)) {
		if (group && chown(dir, 0, gid))
			return -errno;
		return 0;
	}
	if (errno != EEXIST)
		return -errno;
	if (group && !stat(dir, &st) &&
	    !((st.st_mode & S_IXOTH) || ((st.st_mode & S_IXGRP) && st.st_gid == gid)))
		log_warn("audit stream: members of group %s cannot reach %s: its directory %s is "
			 "mode %04o, group %u; give the stream a directory of its own\n",
			 group, path, dir, st.st_mode & 07777, st.st_gid);
	return 0;
}

/* Created 0600 from the start (as the control socket), then opened to the group if asked. */
static int listen_on(const char *path, const char *group)
{
	gid_t gid = 0;
	int fd, err;

	if (group && group_id(group, &gid)) {
		log_err("audit stream: no group %s\n", group);
		return -ENOENT;
	}
	err = make_dir(path, group, gid);
	if (err)
		return err;
	fd = unix_listen(path, 0600, 64);
	if (fd < 0 || !group)
		return fd;
	if (chown(path, 0, gid) || chmod(path, 0660)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static void on_ready(void *ctx, int fd, uint32_t events)
{
	struct stream *s = ctx;
	int err;

	(void)fd, (void)events;
	err = audit_stream_service(s->subs);
	if (err)
		log_warn("audit stream %s: %s, ignoring\n", s->path, strerror(-err));
}

void stream_committed(void *ctx, const char *lines, size_t len, const struct audit_key *keys,
		      size_t n)
{
	struct daemon *d = ctx;

	if (d->stream)
		audit_stream_publish(d->stream->subs, lines, len, keys, n);
}

/* No agent and no tool subscribes, whatever its uid or group (peer.c). */
static int admit_peer(void *ctx, int fd, char *why, size_t whysz)
{
	if (!daemon_peer_refused(ctx, fd, why, whysz))
		return 0;
	log_warn("audit stream: refusing %s\n", why);
	return 1;
}

int stream_open(struct daemon *d)
{
	struct stream *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	if (!d->o->stream)
		err = path_beside(d->o->control, PATH_AUDIT_SOCK_NAME, s->path, sizeof(s->path));
	else if ((size_t)snprintf(s->path, sizeof(s->path), "%s", d->o->stream) >= sizeof(s->path))
		err = -ENAMETOOLONG;
	else
		err = 0;
	s->fd = err ? err : listen_on(s->path, d->o->stream_group);
	err = s->fd < 0 ? s->fd : audit_stream_open(&s->subs, s->fd, 0);
	if (!err) {
		audit_stream_set_admit(s->subs, admit_peer, d);
		err = loop_add(d->loop, audit_stream_fd(s->subs), EPOLLIN, on_ready, s);
	}
	if (err) {
		log_err("audit stream socket %s: %s\n", s->path, strerror(-err));
		audit_stream_close(s->subs);
		if (s->fd >= 0) {
			close(s->fd);
			unlink(s->path);
		}
		free(s);
		return err;
	}
	d->stream = s;
	log_info("audit stream on %s (%s)\n", s->path,
		 d->o->stream_group ? "mode 0660, its group may subscribe" : "root only");
	return 0;
}

const char *stream_path(const struct daemon *d)
{
	return d->stream ? d->stream->path : "";
}

void stream_tick(struct daemon *d)
{
	struct audit_record r;
	int err;

	if (!d->stream || !audit_stream_pop_loss(d->stream->subs, &r))
		return;
	err = audit_writer_append(d->sink.audit, &r);
	if (err)
		log_err("audit log: subscriber-dropped record: %s\n", strerror(-err));
}

void stream_close(struct daemon *d)
{
	struct stream *s = d->stream;

	if (!s)
		return;
	loop_del(d->loop, audit_stream_fd(s->subs));
	audit_stream_close(s->subs);
	close(s->fd);
	unlink(s->path);
	free(s);
	d->stream = NULL;
}
