// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "agentd/abi.h"
#include "kernel/state.h"

#define STATE_FILE_MAX (1 << 20)

json_t *agent_state_json(const struct agent_state *s)
{
	json_t *vars = json_object(), *doc;
	size_t i;

	for (i = 0; vars && i < s->nvars; i++)
		json_object_set_new(vars, s->vars[i].name, json_string(s->vars[i].value));
	doc = json_pack("{s:s, s:I, s:s, s:s, s:o, s:I}", "name", s->name, "id", (json_int_t)s->id,
			"policy", s->policy, "tools", s->tools, "vars", vars, "generation",
			(json_int_t)s->generation);
	if (doc && s->ncgroups) {
		json_t *cgroups = json_array();

		for (i = 0; cgroups && i < s->ncgroups; i++)
			json_array_append_new(cgroups, json_string(s->cgroups[i]));
		json_object_set_new(doc, "cgroups", cgroups);
	}
	if (doc && s->started_ns)
		json_object_set_new(doc, "started_ns", json_integer((json_int_t)s->started_ns));
	if (doc && s->mode[0])
		json_object_set_new(doc, "mode", json_string(s->mode));
	return doc;
}

/* The request codec checks names, paths and vars: a state file is an agent.add plus an id. */
static int parse_request_part(json_t *root, struct agent_state *s)
{
	struct control_request req;
	struct control_error err = { "", "" };
	json_t *add;
	char *text;
	int e;

	add = json_pack("{s:i, s:s, s:O, s:O, s:O}", "id", 0, "cmd", "agent.add", "name",
			json_object_get(root, "name"), "policy", json_object_get(root, "policy"),
			"vars", json_object_get(root, "vars"));
	if (!add)
		return -EINVAL;
	if (json_string_length(json_object_get(root, "tools")))
		json_object_set(add, "tools", json_object_get(root, "tools"));
	text = json_dumps(add, JSON_COMPACT);
	json_decref(add);
	if (!text)
		return -ENOMEM;
	e = control_request_parse(text, strlen(text), &req, &err);
	free(text);
	if (e)
		return e;
	memcpy(s->name, req.name, sizeof(s->name));
	memcpy(s->policy, req.policy, sizeof(s->policy));
	memcpy(s->tools, req.tools, sizeof(s->tools));
	memcpy(s->vars, req.vars, sizeof(s->vars));
	s->nvars = req.nvars;
	return 0;
}

/* "cgroups" (optional): at most STATE_CGROUPS_MAX distinct absolute paths. */
static int parse_cgroups(json_t *v, struct agent_state *s)
{
	size_t i, j;
	json_t *p;

	if (!v)
		return 0;
	if (!json_is_array(v) || !json_array_size(v) || json_array_size(v) > STATE_CGROUPS_MAX)
		return -EINVAL;
	json_array_foreach(v, i, p)
	{
		const char *str = json_string_value(p);

		if (!str || json_string_length(p) > CONTROL_PATH_MAX ||
		    strlen(str) != json_string_length(p) || str[0] != '/')
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (!strcmp(s->cgroups[j], str))
				return -EINVAL;
		memcpy(s->cgroups[i], str, json_string_length(p) + 1);
	}
	s->ncgroups = json_array_size(v);
	return 0;
}

/* "mode" (optional): agentctl agent mode's "shadow" or "enforce". */
static int parse_mode(json_t *v, struct agent_state *s)
{
	const char *m = json_string_value(v);

	if (!v)
		return 0;
	if (!m || (strcmp(m, "shadow") && strcmp(m, "enforce")))
		return -EINVAL;
	snprintf(s->mode, sizeof(s->mode), "%s", m);
	return 0;
}

int agent_state_parse(const char *buf, size_t len, struct agent_state *s)
{
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL), *id, *gen, *tools, *cgs,
	       *started, *mode;
	int e = -EINVAL;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(root))
		goto out;
	cgs = json_object_get(root, "cgroups");
	started = json_object_get(root, "started_ns");
	mode = json_object_get(root, "mode");
	if (json_object_size(root) != 6 + (size_t) !!cgs + (size_t) !!started + (size_t) !!mode ||
	    parse_cgroups(cgs, s) || parse_mode(mode, s))
		goto out;
	if (started && (!json_is_integer(started) || json_integer_value(started) <= 0))
		goto out;
	if (started)
		s->started_ns = json_integer_value(started);
	id = json_object_get(root, "id");
	gen = json_object_get(root, "generation");
	tools = json_object_get(root, "tools");
	if (!json_is_integer(id) || json_integer_value(id) < 1 ||
	    json_integer_value(id) >= AGENTD_MAX_AGENTS || !json_is_integer(gen) ||
	    json_integer_value(gen) < 0 || json_integer_value(gen) > UINT32_MAX ||
	    !json_is_string(tools))
		goto out;
	e = parse_request_part(root, s);
	if (e)
		goto out;
	s->id = json_integer_value(id);
	s->generation = json_integer_value(gen);
out:
	json_decref(root);
	return e;
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

static int agents_dir(const char *dir, char *out, size_t sz)
{
	snprintf(out, sz, "%s/agents", dir);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (mkdir(out, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int agent_state_save(const char *dir, const struct agent_state *s)
{
	char adir[PATH_MAX], path[PATH_MAX + 80], tmp[PATH_MAX + 96];
	json_t *doc = agent_state_json(s);
	char *text = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
	int fd = -1, err;

	json_decref(doc);
	if (!text)
		return -ENOMEM;
	err = agents_dir(dir, adir, sizeof(adir));
	if (err)
		goto out;
	snprintf(path, sizeof(path), "%s/%s.json", adir, s->name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.json.tmp", adir, s->name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = write_all(fd, text, strlen(text));
	if (!err && (write_all(fd, "\n", 1) || fsync(fd)))
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	if (fd >= 0)
		close(fd);
	free(text);
	return err;
}

int agent_state_remove(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/agents/%s.json", dir, name);
	if (unlink(path) && errno != ENOENT)
		return -errno;
	return 0;
}

static int load_one(int dirfd, const char *file, struct agent_state *s)
{
	char *buf = malloc(STATE_FILE_MAX);
	int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), err = -EINVAL;
	ssize_t n;

	if (fd >= 0 && buf) {
		n = read(fd, buf, STATE_FILE_MAX);
		if (n > 0 && n < STATE_FILE_MAX)
			err = agent_state_parse(buf, n, s);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

/* "<name>.json" and the name inside must agree: the file name is the agent's key. */
static bool state_file_matches(const char *file, const struct agent_state *s)
{
	size_t n = strlen(s->name);

	return !strncmp(file, s->name, n) && !strcmp(file + n, ".json");
}

int agent_state_each(const char *dir, int (*fn)(void *ctx, const struct agent_state *s), void *ctx,
		     int *bad)
{
	char adir[PATH_MAX];
	struct agent_state *s = malloc(sizeof(*s));
	struct dirent *de;
	int err = 0;
	DIR *d;

	*bad = 0;
	if (!s)
		return -ENOMEM;
	snprintf(adir, sizeof(adir), "%s/agents", dir);
	d = opendir(adir);
	if (!d) {
		free(s);
		return errno == ENOENT ? 0 : -errno;
	}
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (load_one(dirfd(d), de->d_name, s) || !state_file_matches(de->d_name, s)) {
			(*bad)++;
			continue;
		}
		err = fn(ctx, s);
	}
	closedir(d);
	free(s);
	return err;
}
