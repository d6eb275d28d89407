/* ward ps: json = host pids of the container; table = the host's ps, filtered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "container.h"
#include "util.h"

static bool has_pid(const pid_t *pids, size_t n, long pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static int ps_table(const pid_t *pids, size_t n, char **ps_args)
{
	int fds[2];
	pid_t child;
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int col = -1, status;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return 1;
	child = fork();
	if (child == 0) {
		char **args = strv_append(NULL, "ps");
		if (!ps_args[0])
			args = strv_append(args, "-ef");
		for (size_t i = 0; ps_args[i]; i++)
			args = strv_append(args, ps_args[i]);
		dup2(fds[1], 1);
		execvp("ps", args);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && getline(&line, &cap, f) > 0) {
		if (col < 0) {
			/* Header: find the PID column. */
			char *save = NULL, *copy = xstrdup(line);
			int i = 0;
			for (char *t = strtok_r(copy, " \t\n", &save); t;
			     t = strtok_r(NULL, " \t\n", &save), i++)
				if (!strcmp(t, "PID"))
					col = i;
			free(copy);
			fputs(line, stdout);
			if (col < 0) {
				fprintf(stderr, "ward: ps: no PID column in ps output\n");
				break;
			}
			continue;
		}
		{
			char *save = NULL, *copy = xstrdup(line);
			char *t = strtok_r(copy, " \t\n", &save);
			for (int i = 0; t && i < col; i++)
				t = strtok_r(NULL, " \t\n", &save);
			if (t && has_pid(pids, n, strtol(t, NULL, 10)))
				fputs(line, stdout);
			free(copy);
		}
	}
	free(line);
	if (f)
		fclose(f);
	waitpid(child, &status, 0);
	return col < 0 ? 1 : 0;
}

int cmd_ps(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_err err = {0};
	bool json = false;
	const char *format = NULL;
	const struct cli_opt opts[] = {
	    {"format", 'f', "table|json",
	     "table: ps(1) with PS_ARGS (default -ef); json: the host pids", .arg = &format},
	};
	pid_t *pids = NULL;
	size_t n = 0;
	int rootfd, rc = cli_options(argc, argv, argv[0], opts, ARRAY_SIZE(opts),
				     "usage: ward ps [-f|--format table|json] ID [PS_ARGS...]\n");

	if (rc >= 0)
		return rc;
	if (!cli_format_json(argv[0], format, &json))
		return 1;
	if (optind >= argc)
		return cli_usage(argv[0], "container ID required");
	if (!cli_id_ok(argv[optind]))
		return 1;
	if (json && argc - optind > 1)
		return cli_usage(argv[0], "ps arguments are not allowed with --format json");
	rootfd = cli_root(cli);
	if (rootfd < 0)
		return 1;
	if (ward_container_pids(rootfd, argv[optind], &pids, &n, &err) < 0)
		return cli_fail(&err);
	if (json) {
		printf("[");
		for (size_t i = 0; i < n; i++)
			printf("%s%d", i ? "," : "", (int)pids[i]);
		printf("]\n");
		rc = 0;
	} else {
		fflush(stdout);
		rc = ps_table(pids, n, argv + optind + 1);
	}
	free(pids);
	return rc;
}
