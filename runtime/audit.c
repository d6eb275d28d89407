/* ward audit [--tenant T] [--since TIME] [--container ID] [--json]: the audit trail read
 * back (one tenant's log, or every tenant's merged by time), one line per event. */
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "cli.h"
#include "config.h"
#include "util.h"

struct filter {
	const char *tenant, *container;
	bool since_set;
	struct timespec since;
};

struct line {
	struct timespec t;
	char *text;  /* the raw line */
	json_t *obj; /* parsed */
};

struct lines {
	struct line *v;
	size_t n;
};

static bool keep(const struct filter *f, json_t *o, struct timespec *t)
{
	const char *time = json_string_value(json_object_get(o, "time"));
	const char *c = json_string_value(json_object_get(o, "container"));
	struct timespec now = {0};
	struct ward_err e;

	if (!time || ward_audit_parse_time(time, &now, t, &e) < 0)
		return false;
	if (f->container && (!c || strcmp(c, f->container)))
		return false;
	if (f->since_set && (t->tv_sec < f->since.tv_sec ||
			     (t->tv_sec == f->since.tv_sec && t->tv_nsec < f->since.tv_nsec)))
		return false;
	return true;
}

static int read_log(int dfd, const char *file, const struct filter *f, struct lines *out,
		    struct ward_err *err)
{
	size_t len;
	cleanup_free char *text = read_file_at(dfd, file, &len, err);
	char *save = NULL;

	if (!text)
		return -1;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_t *o = json_loads(l, 0, NULL);
		struct timespec t;
		if (!json_is_object(o) || !keep(f, o, &t)) {
			json_decref(o);
			continue;
		}
		out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		out->v[out->n++] = (struct line){.t = t, .text = xstrdup(l), .obj = o};
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	if (x->t.tv_sec != y->t.tv_sec)
		return x->t.tv_sec < y->t.tv_sec ? -1 : 1;
	if (x->t.tv_nsec != y->t.tv_nsec)
		return x->t.tv_nsec < y->t.tv_nsec ? -1 : 1;
	return 0;
}

/* time event tenant container key=value... */
static void print_text(json_t *o)
{
	static const char *const first[] = {"time", "event", "tenant", "container"};
	const char *k;
	json_t *v;

	for (size_t i = 0; i < ARRAY_SIZE(first); i++) {
		const char *s = json_string_value(json_object_get(o, first[i]));
		printf("%s%s", i ? " " : "", s ? s : "-");
	}
	json_object_foreach(o, k, v)
	{
		bool skip = false;
		for (size_t i = 0; i < ARRAY_SIZE(first); i++)
			skip |= !strcmp(k, first[i]);
		if (skip)
			continue;
		if (json_is_string(v)) {
			printf(" %s=%s", k, json_string_value(v));
		} else {
			char *d =
			    json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
			printf(" %s=%s", k, d ? d : "?");
			free(d);
		}
	}
	putchar('\n');
}

static int show(const struct filter *f, bool as_json)
{
	struct ward_err err = {0};
	const struct ward_config *cfg = ward_config_get(&err);
	struct lines all = {0};
	cleanup_fd int dfd = -1;
	int rc = 0;

	if (!cfg)
		return cli_fail(&err);
	dfd = ward_audit_dir_open(cfg->audit_dir, false, &err);
	if (dfd < 0)
		return cli_fail(&err);
	if (f->tenant) {
		char file[256];
		if (!*f->tenant || strchr(f->tenant, '/') || f->tenant[0] == '.' ||
		    strlen(f->tenant) > 200)
			return cli_usage("audit", "--tenant \"%s\": not a tenant name",
					 cli_printable(f->tenant));
		snprintf(file, sizeof(file), "%s.log", f->tenant);
		if (faccessat(dfd, file, F_OK, 0) == 0 && read_log(dfd, file, f, &all, &err) < 0)
			rc = -1;
	} else {
		DIR *d = fdopendir(dup(dfd));
		struct dirent *e;
		if (!d) {
			ward_fail_errno(&err, "audit directory %s", cfg->audit_dir);
			return cli_fail(&err);
		}
		while (rc == 0 && (e = readdir(d))) {
			size_t l = strlen(e->d_name);
			if (e->d_name[0] == '.' || l <= 4 || strcmp(e->d_name + l - 4, ".log"))
				continue;
			if (read_log(dfd, e->d_name, f, &all, &err) < 0)
				rc = -1;
		}
		closedir(d);
	}
	if (rc == 0) {
		if (all.n)
			qsort(all.v, all.n, sizeof(*all.v), by_time);
		for (size_t i = 0; i < all.n; i++) {
			if (as_json)
				puts(all.v[i].text);
			else
				print_text(all.v[i].obj);
		}
	}
	for (size_t i = 0; i < all.n; i++) {
		free(all.v[i].text);
		json_decref(all.v[i].obj);
	}
	free(all.v);
	if (rc < 0) {
		ward_wrap(&err, "audit");
		return cli_fail(&err);
	}
	return 0;
}

int cmd_audit(struct ward_cli *cli, int argc, char **argv)
{
	static const char usage[] =
	    "usage: ward audit [--tenant T] [--since TIME] [--container ID] [--json]\n"
	    "TIME: RFC 3339 (2026-11-21T09:38:08Z) or a duration back from now (90s, 10m, 2h, "
	    "1d)\n";
	struct filter f = {0};
	bool as_json = false;
	const char *since = NULL;
	const struct cli_opt opts[] = {
	    {"tenant", 0, "T", "only this tenant's events", .arg = &f.tenant},
	    {"since", 0, "TIME", "only the events at TIME or later", .arg = &since},
	    {"container", 0, "ID", "only this container's events", .arg = &f.container},
	    {"json", 0, NULL, "the log's own JSON lines", .flag = &as_json},
	};
	int rc = cli_options_no_args(argc, argv, "audit", opts, ARRAY_SIZE(opts), usage);

	(void)cli;
	if (rc >= 0)
		return rc;
	if (since) {
		struct ward_err err = {0};
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		if (ward_audit_parse_time(since, &now, &f.since, &err) < 0)
			return cli_usage("audit", "--since %s", err.msg);
		f.since_set = true;
	}
	return show(&f, as_json);
}
