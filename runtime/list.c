/* ward list [-f|--format table|json] [-q|--quiet]: the containers of the state root. */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "container.h"
#include "state.h"
#include "util.h"

/* User name of uid from /etc/passwd (no NSS: ward is linked statically). */
static void user_name(uid_t uid, char *buf, size_t len)
{
	FILE *f = fopen("/etc/passwd", "re");
	char line[512];
	snprintf(buf, len, "%u", (unsigned)uid);
	while (f && fgets(line, sizeof(line), f)) {
		char *name = strtok(line, ":");
		char *pw = name ? strtok(NULL, ":") : NULL;
		char *id = pw ? strtok(NULL, ":") : NULL;
		if (id && (uid_t)strtoul(id, NULL, 10) == uid) {
			snprintf(buf, len, "%s", name);
			break;
		}
	}
	if (f)
		fclose(f);
}

struct row {
	struct ward_state st;
	enum ward_status status;
	char owner[64];
};

static int cmp_rows(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->st.id, ((const struct row *)b)->st.id);
}

int cmd_list(struct ward_cli *cli, int argc, char **argv)
{
	bool quiet = false, json = false;
	const char *format = NULL;
	const struct cli_opt opts[] = {
	    {"format", 'f', "table|json", "a table (the default) or a JSON array", .arg = &format},
	    {"quiet", 'q', NULL, "the ids only, one a line", .flag = &quiet},
	};
	struct row *rows = NULL;
	size_t n = 0;
	int rootfd, rc = cli_options(argc, argv, argv[0], opts, ARRAY_SIZE(opts),
				     "usage: ward list [-f|--format table|json] [-q|--quiet]\n");
	DIR *d;
	struct dirent *de;

	if (rc >= 0)
		return rc;
	if (!cli_format_json(argv[0], format, &json))
		return 1;
	rootfd = cli_root(cli);
	if (rootfd < 0)
		return 1;
	d = fdopendir(dup(rootfd));
	while (d && (de = readdir(d))) {
		struct ward_err err = {0};
		struct row r = {0};
		struct stat sb;
		int dirfd;
		if (!ward_id_valid(de->d_name))
			continue;
		dirfd = ward_state_open(rootfd, de->d_name, false, &err);
		if (dirfd < 0)
			continue;
		if (ward_state_read(dirfd, &r.st, &err) < 0) {
			close(dirfd);
			continue;
		}
		r.status = ward_state_status(dirfd, &r.st);
		if (fstat(dirfd, &sb) == 0)
			user_name(sb.st_uid, r.owner, sizeof(r.owner));
		close(dirfd);
		rows = xrealloc(rows, (n + 1) * sizeof(*rows));
		rows[n++] = r;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_rows);

	if (quiet) {
		for (size_t i = 0; i < n; i++)
			printf("%s\n", rows[i].st.id);
	} else if (json) {
		json_t *arr = json_array();
		char *text;
		for (size_t i = 0; i < n; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "ociVersion", json_string(rows[i].st.oci_version));
			json_object_set_new(o, "id", json_string(rows[i].st.id));
			json_object_set_new(
			    o, "pid",
			    json_integer(rows[i].status == WARD_STOPPED ? 0 : rows[i].st.pid));
			json_object_set_new(o, "status",
					    json_string(ward_status_name(rows[i].status)));
			json_object_set_new(o, "bundle", json_string(rows[i].st.bundle));
			json_object_set_new(o, "rootfs", json_string(rows[i].st.rootfs));
			json_object_set_new(o, "created", json_string(rows[i].st.created));
			json_object_set_new(o, "owner", json_string(rows[i].owner));
			json_array_append_new(arr, o);
		}
		text = json_dumps(arr, JSON_PRESERVE_ORDER | JSON_COMPACT);
		printf("%s\n", text);
		free(text);
		json_decref(arr);
	} else {
		printf("%-20s %-8s %-10s %-40s %-32s %s\n", "ID", "PID", "STATUS", "BUNDLE",
		       "CREATED", "OWNER");
		for (size_t i = 0; i < n; i++)
			printf("%-20s %-8d %-10s %-40s %-32s %s\n", rows[i].st.id,
			       rows[i].status == WARD_STOPPED ? 0 : (int)rows[i].st.pid,
			       ward_status_name(rows[i].status), rows[i].st.bundle,
			       rows[i].st.created, rows[i].owner);
	}
	for (size_t i = 0; i < n; i++)
		ward_state_clear(&rows[i].st);
	free(rows);
	return 0;
}
