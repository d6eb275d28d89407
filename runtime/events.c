/* ward events: runc-shaped JSON lines with a container's cgroup statistics and OOM kills. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util.h"
#include "container_res.h"

/* A Go time.Duration string ("5s", "1.5s", "1m30s", "250ms") in milliseconds. */
static int parse_duration(const char *s, long *ms)
{
	static const struct {
		const char *unit;
		double ms;
	} units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"ms", 1},
		     {"s", 1e3},   {"m", 60e3},	 {"h", 3600e3}};
	double total = 0;
	if (!*s)
		return -1;
	while (*s) {
		char *end;
		double v;
		size_t best = 0, i, k = 0;
		if (!isdigit((unsigned char)*s) && *s != '.')
			return -1;
		v = strtod(s, &end);
		if (end == s)
			return -1;
		s = end;
		/* the longest unit that matches ("ms" before "m") */
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t len = strlen(units[i].unit);
			if (!strncmp(s, units[i].unit, len) && len > best) {
				best = len;
				k = i;
			}
		}
		if (!best)
			return -1;
		total += v * units[k].ms;
		s += best;
	}
	if (total <= 0 || total > 86400e3 * 365)
		return -1;
	*ms = total < 1 ? 1 : (long)total;
	return 0;
}

static int print_line(const char *json, void *arg)
{
	(void)arg;
	if (printf("%s\n", json) < 0 || fflush(stdout) == EOF)
		return 1;
	return 0;
}

int cmd_events(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_err err = {0};
	bool once = false;
	long interval = 5000;
	const char *id, *every = NULL;
	const struct cli_opt opts[] = {
	    {"stats", 0, NULL, "print the statistics once and exit", .flag = &once},
	    {"interval", 0, "DURATION",
	     "time between statistics (Go syntax: 5s, 500ms, 1m;\n"
	     "default 5s); also prints {\"type\":\"oom\"} on an OOM kill,\n"
	     "until the container stops",
	     .arg = &every},
	};
	int rootfd, rc = cli_options(argc, argv, argv[0], opts, ARRAY_SIZE(opts),
				     "usage: ward events [--stats] [--interval DURATION] ID\n");

	if (rc >= 0)
		return rc;
	if (every && parse_duration(every, &interval) < 0)
		return cli_usage(
		    argv[0], "--interval: \"%s\" is not a duration greater than 0 (5s, 500ms, 1m)",
		    cli_printable(every));
	if (!cli_id_root(cli, argc, argv, &id, &rootfd))
		return 1;
	if (ward_container_events(rootfd, id, once, interval, print_line, NULL, &err) < 0)
		return cli_fail(&err);
	return 0;
}
