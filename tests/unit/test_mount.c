/* mount.c, rootfs.c, dev.c: option parsing, then real mounts in throwaway mount (and pid)
 * namespaces whose "/" is made rprivate first, so nothing reaches the host. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dev.h"
#include "mount.h"
#include "path.h"
#include "rootfs.h"
#include "spec.h"
#include "tap.h"
#include "util.h"

#define OPTS(...)  ((char *[]){__VA_ARGS__, NULL})
#define ATIME_MASK ((uint64_t)MOUNT_ATTR__ATIME)

static char tmp[64];	   /* /tmp/ward-mount-XXXXXX */
static char root[128];	   /* tmp/root: hostile rootfs for ward_mount_one */
static char src[128];	   /* tmp/src: bind source with a symlink and a submount point */
static char srcfile[128];  /* tmp/srcfile */
static char outside[128];  /* /tmp/ward-outside-XXXXXX: where hostile symlinks point */
static char devroot[128];  /* tmp/devroot: /dev -> outside-dev */
static char devroot2[128]; /* tmp/devroot2: plain, for in-userns device binds */
static char rootfs[128];   /* tmp/rootfs: busybox rootfs for prepare/pivot/finalize */

/* ---------------------------------------------------------------- helpers */

static bool has_opt(const char *list, const char *opt)
{
	size_t n = strlen(opt);
	for (const char *p = list; p && *p;) {
		const char *e = strchrnul(p, ',');
		if ((size_t)(e - p) == n && strncmp(p, opt, n) == 0)
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

struct mi {
	char mp[512], opts[256], optional[256], fstype[64], super[512];
};

/* The topmost mount at mount point mp, from /proc/self/mountinfo. */
static bool mountinfo_find(const char *mp, struct mi *out)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *tok[64], *save = NULL;
		int n = 0, dash;
		for (char *t = strtok_r(line, " \n", &save); t && n < 64;
		     t = strtok_r(NULL, " \n", &save))
			tok[n++] = t;
		if (n < 10 || strcmp(tok[4], mp) != 0)
			continue;
		for (dash = 6; dash < n && strcmp(tok[dash], "-") != 0; dash++)
			;
		if (dash + 3 >= n)
			continue;
		found = true;
		snprintf(out->mp, sizeof(out->mp), "%s", tok[4]);
		snprintf(out->opts, sizeof(out->opts), "%s", tok[5]);
		out->optional[0] = '\0';
		for (int i = 6; i < dash; i++) {
			strncat(out->optional, tok[i],
				sizeof(out->optional) - strlen(out->optional) - 2);
			strcat(out->optional, " ");
		}
		snprintf(out->fstype, sizeof(out->fstype), "%s", tok[dash + 1]);
		snprintf(out->super, sizeof(out->super), "%s", tok[dash + 3]);
	}
	fclose(f);
	return found;
}

static bool is_mount(const char *mp)
{
	struct mi m;
	return mountinfo_find(mp, &m);
}

/* Any mount point in our mountinfo that starts with prefix. */
static bool any_mount_under(const char *prefix)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *t = strtok_r(line, " ", &save);
		for (int i = 0; t && i < 4; i++)
			t = strtok_r(NULL, " ", &save);
		if (t && strncmp(t, prefix, strlen(prefix)) == 0)
			found = true;
	}
	fclose(f);
	return found;
}

static bool dir_empty(const char *p)
{
	DIR *d = opendir(p);
	struct dirent *de;
	int n = 0;
	if (!d)
		return false;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n == 0;
}

static void write_text(const char *p, const char *text, mode_t mode)
{
	struct ward_err e;
	if (write_file_at(AT_FDCWD, p, O_CREAT | O_TRUNC, mode, text, strlen(text), &e) < 0)
		printf("# setup: %s\n", e.msg);
}

static char *read_text(const char *p)
{
	struct ward_err e;
	return read_file_at(AT_FDCWD, p, NULL, &e);
}

static void mkdirs(const char *base, const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		printf("# setup: mkdir %s: %s\n", p, strerror(errno));
}

static void symlink_at(const char *target, const char *base, const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (symlink(target, p) < 0)
		printf("# setup: symlink %s: %s\n", p, strerror(errno));
}

static int rm_entry(const char *p, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	return remove(p);
}

#define DIAG(err)                                                                                  \
	do {                                                                                       \
		if ((err).msg[0])                                                                  \
			printf("#   err: %s\n", (err).msg);                                        \
	} while (0)

/* Run fn in a child (in new namespaces when flags != 0; with CLONE_NEWPID fn runs as pid 1
 * of the new pid namespace). Its CHECKs print TAP lines numbered after ours; the counts
 * come back over a pipe. */
static void in_child(void (*fn)(void), int ns_flags, const char *what)
{
	int p[2], status = 0, counts[2] = {0, 0};
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		CHECK(0, what);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (ns_flags && unshare(ns_flags) < 0) {
			printf("# unshare: %s\n", strerror(errno));
			_exit(2);
		}
		if (ns_flags & CLONE_NEWPID) {
			pid_t inner = fork();
			if (inner < 0)
				_exit(3);
			if (inner > 0) {
				close(p[1]);
				if (waitpid(inner, &status, 0) < 0 || !WIFEXITED(status))
					_exit(4);
				_exit(WEXITSTATUS(status));
			}
		}
		fn();
		fflush(stdout);
		counts[0] = tap_n;
		counts[1] = tap_failed;
		(void)!write(p[1], counts, sizeof(counts));
		_exit(0);
	}
	close(p[1]);
	n = read_exact(p[0], counts, sizeof(counts));
	close(p[0]);
	waitpid(pid, &status, 0);
	if (n == (ssize_t)sizeof(counts)) {
		tap_n = counts[0];
		tap_failed = counts[1];
	}
	CHECK(n == (ssize_t)sizeof(counts) && WIFEXITED(status) && WEXITSTATUS(status) == 0, what);
}

/* Mount namespace hygiene for every child: nothing we do propagates to the host. */
static bool private_root(void)
{
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0) {
		printf("# make / rprivate: %s\n", strerror(errno));
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------- option parsing */

static bool parse(char *const *opts, struct ward_mount_opts *o)
{
	struct ward_err err = {0};
	if (ward_mount_opts_parse(opts, o, &err) < 0) {
		printf("#   parse: %s\n", err.msg);
		return false;
	}
	return true;
}

static bool strv_eq(char *const *v, char *const *want)
{
	size_t i;
	for (i = 0; want[i]; i++)
		if (!v || !v[i] || strcmp(v[i], want[i]) != 0)
			return false;
	return !v || !v[i];
}

static void test_parse(void)
{
	struct ward_mount_opts o;
	struct ward_err err = {0};

	CHECK(parse(NULL, &o) && !o.attr_set && !o.attr_clr && !o.data && !o.sb_flags && !o.bind &&
		  !o.propagation,
	      "NULL options: nothing set");
	ward_mount_opts_free(&o);

	CHECK(parse(OPTS("ro", "nosuid", "nodev", "noexec"), &o) &&
		  o.attr_set == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				 MOUNT_ATTR_NOEXEC) &&
		  o.attr_clr == 0 && !o.rattr_set && !o.data,
	      "ro nosuid nodev noexec set attributes");
	ward_mount_opts_free(&o);

	CHECK(parse(OPTS("rw", "suid", "dev", "exec"), &o) && o.attr_set == 0 &&
		  o.attr_clr == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				 MOUNT_ATTR_NOEXEC),
	      "rw suid dev exec clear attributes");
	ward_mount_opts_free(&o);

	CHECK(parse(OPTS("ro", "rw"), &o) && o.attr_set == 0 && o.attr_clr == MOUNT_ATTR_RDONLY,
	      "ro then rw: the last wins (rw)");
	ward_mount_opts_free(&o);
	CHECK(parse(OPTS("rw", "ro"), &o) && o.attr_set == MOUNT_ATTR_RDONLY && o.attr_clr == 0,
	      "rw then ro: the last wins (ro)");
	ward_mount_opts_free(&o);

	CHECK(parse(OPTS("nosymfollow", "nodiratime"), &o) &&
		  o.attr_set == (MOUNT_ATTR_NOSYMFOLLOW | MOUNT_ATTR_NODIRATIME),
	      "nosymfollow nodiratime");
	ward_mount_opts_free(&o);
	CHECK(parse(OPTS("symfollow", "diratime"), &o) && o.attr_set == 0 &&
		  o.attr_clr == (MOUNT_ATTR_NOSYMFOLLOW | MOUNT_ATTR_NODIRATIME),
	      "symfollow diratime clear");
	ward_mount_opts_free(&o);

	{
		static const struct {
			const char *opt;
			uint64_t mode;
		} at[] = {
		    {"noatime", MOUNT_ATTR_NOATIME},	     {"atime", MOUNT_ATTR_RELATIME},
		    {"relatime", MOUNT_ATTR_RELATIME},	     {"norelatime", MOUNT_ATTR_STRICTATIME},
		    {"strictatime", MOUNT_ATTR_STRICTATIME}, {"nostrictatime", MOUNT_ATTR_RELATIME},
		};
		for (size_t i = 0; i < ARRAY_SIZE(at); i++) {
			char name[64];
			char *v[] = {(char *)at[i].opt, NULL};
			snprintf(name, sizeof(name), "%s: atime mode, all of __ATIME cleared",
				 at[i].opt);
			CHECK(parse(v, &o) && (o.attr_set & ATIME_MASK) == at[i].mode &&
				  (o.attr_clr & ATIME_MASK) == ATIME_MASK,
			      name);
			ward_mount_opts_free(&o);
		}
	}
	CHECK(parse(OPTS("noatime", "strictatime"), &o) &&
		  (o.attr_set & ATIME_MASK) == MOUNT_ATTR_STRICTATIME,
	      "noatime then strictatime: one atime mode, the last");
	ward_mount_opts_free(&o);

	CHECK(parse(OPTS("sync", "dirsync", "lazytime", "mand", "async", "nolazytime", "nomand"),
		    &o) &&
		  strv_eq(o.sb_flags, OPTS("sync", "dirsync", "lazytime", "mand", "async",
					   "nolazytime", "nomand")) &&
		  !o.data && !o.attr_set,
	      "superblock flags kept in order for fsconfig");
	ward_mount_opts_free(&o);

	CHECK(parse(OPTS("iversion", "noiversion", "loud", "silent", "remount"), &o) && !o.data &&
		  !o.sb_flags && !o.attr_set && !o.attr_clr,
	      "iversion noiversion loud silent remount recognised, nothing to pass");
	ward_mount_opts_free(&o);

	CHECK(parse(OPTS("mode=755", "size=65536k", "newinstance", "gid=5", "nosuid"), &o) &&
		  strv_eq(o.data, OPTS("mode=755", "size=65536k", "newinstance", "gid=5")) &&
		  o.attr_set == MOUNT_ATTR_NOSUID,
	      "unknown options are fs data, in order");
	ward_mount_opts_free(&o);

	CHECK(
	    parse(OPTS("rro", "rnosuid", "rnodev", "rnoexec", "rnodiratime", "rnosymfollow"), &o) &&
		o.rattr_set ==
		    (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |
		     MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_NOSYMFOLLOW) &&
		o.rattr_clr == 0 && o.attr_set == 0,
	    "r* options set recursive attributes only");
	ward_mount_opts_free(&o);
	CHECK(parse(OPTS("rrw", "rsuid", "rdev", "rexec", "rdiratime", "rsymfollow"), &o) &&
		  o.rattr_clr ==
		      (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		       MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_NOSYMFOLLOW) &&
		  o.rattr_set == 0 && o.attr_clr == 0,
	      "r* negations clear recursive attributes only");
	ward_mount_opts_free(&o);
	{
		static const struct {
			const char *opt;
			uint64_t mode;
		} at[] = {
		    {"rnoatime", MOUNT_ATTR_NOATIME},
		    {"ratime", MOUNT_ATTR_RELATIME},
		    {"rrelatime", MOUNT_ATTR_RELATIME},
		    {"rnorelatime", MOUNT_ATTR_STRICTATIME},
		    {"rstrictatime", MOUNT_ATTR_STRICTATIME},
		    {"rnostrictatime", MOUNT_ATTR_RELATIME},
		};
		for (size_t i = 0; i < ARRAY_SIZE(at); i++) {
			char name[64];
			char *v[] = {(char *)at[i].opt, NULL};
			snprintf(name, sizeof(name), "%s: recursive atime mode", at[i].opt);
			CHECK(parse(v, &o) && (o.rattr_set & ATIME_MASK) == at[i].mode &&
				  (o.rattr_clr & ATIME_MASK) == ATIME_MASK && !o.attr_clr,
			      name);
			ward_mount_opts_free(&o);
		}
	}
	CHECK(parse(OPTS("rro", "rw"), &o) && o.rattr_set == MOUNT_ATTR_RDONLY &&
		  o.attr_clr == MOUNT_ATTR_RDONLY,
	      "rro and rw are independent (recursive vs this mount)");
	ward_mount_opts_free(&o);

	{
		static const struct {
			const char *opt;
			uint64_t prop;
			bool rec;
		} pr[] = {
		    {"private", MS_PRIVATE, false},	  {"rprivate", MS_PRIVATE, true},
		    {"shared", MS_SHARED, false},	  {"rshared", MS_SHARED, true},
		    {"slave", MS_SLAVE, false},		  {"rslave", MS_SLAVE, true},
		    {"unbindable", MS_UNBINDABLE, false}, {"runbindable", MS_UNBINDABLE, true},
		};
		for (size_t i = 0; i < ARRAY_SIZE(pr); i++) {
			char name[64];
			char *v[] = {(char *)pr[i].opt, NULL};
			snprintf(name, sizeof(name), "propagation %s", pr[i].opt);
			CHECK(parse(v, &o) && o.propagation == pr[i].prop &&
				  o.propagation_recursive == pr[i].rec && !o.attr_set && !o.data,
			      name);
			ward_mount_opts_free(&o);
		}
	}
	CHECK(parse(OPTS("rshared", "private"), &o) && o.propagation == MS_PRIVATE &&
		  !o.propagation_recursive,
	      "propagation: the last wins");
	ward_mount_opts_free(&o);

	CHECK(parse(OPTS("bind"), &o) && o.bind && !o.rbind, "bind");
	ward_mount_opts_free(&o);
	CHECK(parse(OPTS("rbind"), &o) && o.rbind && !o.bind, "rbind");
	ward_mount_opts_free(&o);
	CHECK(parse(OPTS("idmap"), &o) && o.idmap && !o.ridmap, "idmap");
	ward_mount_opts_free(&o);
	CHECK(parse(OPTS("ridmap"), &o) && o.ridmap && !o.idmap, "ridmap");
	ward_mount_opts_free(&o);
	CHECK(parse(OPTS("tmpcopyup"), &o) && o.tmpcopyup && !o.data, "tmpcopyup");
	ward_mount_opts_free(&o);

	CHECK(ward_mount_opts_parse(OPTS(""), &o, &err) < 0 && !o.data, "empty option refused");
	CHECK_STR_CONTAINS(err.msg, "mount option", "error names the option");
	CHECK(ward_mount_opts_parse(OPTS("nosuid", "mode=1", "=x"), &o, &err) < 0,
	      "option without a name refused");
	CHECK_STR_CONTAINS(err.msg, "\"=x\"", "error quotes the option");

	/* Every runtime-spec option is recognised (not fs data), and only those. */
	{
		static const char *const spec_opts[] = {"ro",		"rw",
							"nosuid",	"suid",
							"nodev",	"dev",
							"noexec",	"exec",
							"sync",		"async",
							"dirsync",	"remount",
							"mand",		"nomand",
							"atime",	"noatime",
							"diratime",	"nodiratime",
							"relatime",	"norelatime",
							"strictatime",	"nostrictatime",
							"lazytime",	"nolazytime",
							"iversion",	"noiversion",
							"loud",		"silent",
							"bind",		"rbind",
							"private",	"rprivate",
							"shared",	"rshared",
							"slave",	"rslave",
							"unbindable",	"runbindable",
							"nosymfollow",	"symfollow",
							"rro",		"rrw",
							"rnosuid",	"rsuid",
							"rnodev",	"rdev",
							"rnoexec",	"rexec",
							"rnoatime",	"ratime",
							"rnodiratime",	"rdiratime",
							"rrelatime",	"rnorelatime",
							"rstrictatime", "rnostrictatime",
							"rnosymfollow", "rsymfollow",
							"idmap",	"ridmap",
							"tmpcopyup"};
		const char *const *names = ward_mount_option_names();
		size_t n_names = strv_len((char *const *)names);
		bool all_listed = true, all_recognised = true;
		for (size_t i = 0; i < ARRAY_SIZE(spec_opts); i++) {
			bool listed = false;
			for (size_t k = 0; k < n_names; k++)
				listed |= strcmp(names[k], spec_opts[i]) == 0;
			if (!listed)
				printf("#   not listed: %s\n", spec_opts[i]);
			all_listed &= listed;
		}
		for (size_t k = 0; k < n_names; k++) {
			char *v[] = {(char *)names[k], NULL};
			bool ok = parse(v, &o) && !o.data;
			if (!ok)
				printf("#   not recognised: %s\n", v[0]);
			all_recognised &= ok;
			ward_mount_opts_free(&o);
		}
		CHECK(all_listed, "ward_mount_option_names lists every runtime-spec option");
		CHECK(all_recognised, "every listed name is recognised by the parser");
		CHECK(n_names == ARRAY_SIZE(spec_opts), "and nothing else is listed");
	}
}

/* ---------------------------------------------------------------- mounts (child) */

static int mount_at(int rootfd, struct ward_mount *m, struct ward_err *err)
{
	ward_err_clear(err);
	return ward_mount_one(rootfd, m, -1, err);
}

static void e2e_hostile(int rootfd)
{
	struct ward_err err = {0};
	struct mi mi = {0};
	char p[512];
	struct ward_mount m = {.destination = "/hostile/x",
			       .type = "tmpfs",
			       .source = "tmpfs",
			       .options = OPTS("nosuid", "nodev", "mode=700", "size=1m")};

	CHECK(mount_at(rootfd, &m, &err) == 0, "tmpfs at /hostile/x where hostile -> /tmp/outside");
	DIAG(err);
	snprintf(p, sizeof(p), "%s%s/x", root, outside);
	CHECK(mountinfo_find(p, &mi) && strcmp(mi.fstype, "tmpfs") == 0,
	      "it landed inside the rootfs (root/tmp/outside/x)");
	CHECK(has_opt(mi.opts, "nosuid") && has_opt(mi.opts, "nodev") &&
		  !has_opt(mi.opts, "noexec") && has_opt(mi.opts, "rw"),
	      "mount flags nosuid,nodev");
	CHECK(has_opt(mi.super, "mode=700") && has_opt(mi.super, "size=1024k"),
	      "fs data mode=700,size=1m passed to tmpfs");
	snprintf(p, sizeof(p), "%s/x", outside);
	CHECK(!is_mount(p) && !any_mount_under(outside) && dir_empty(outside),
	      "nothing appeared at the host's /tmp/outside");

	/* "../../.." as a destination and inside symlinks. */
	m.destination = "../../../escape/../dots";
	m.options = OPTS("size=1m");
	CHECK(mount_at(rootfd, &m, &err) == 0, "destination ../../../escape/../dots");
	DIAG(err);
	snprintf(p, sizeof(p), "%s/dots", root);
	CHECK(is_mount(p), "mounted at root/dots");
	m.destination = "/up/deep";
	CHECK(mount_at(rootfd, &m, &err) == 0, "destination through up -> ../../../..");
	DIAG(err);
	snprintf(p, sizeof(p), "%s/deep", root);
	CHECK(is_mount(p), "mounted at root/deep");

	/* proc and sysfs are never mounted through a symlink (CVE-2019-16884 class). */
	m.destination = "/proc";
	m.type = "proc";
	m.source = "proc";
	m.options = NULL;
	CHECK(mount_at(rootfd, &m, &err) < 0, "proc on a symlinked /proc is refused");
	CHECK_STR_CONTAINS(err.msg,
			   "mount /proc (type proc): must be mounted on ordinary directory "
			   "(destination is a symlink)",
			   "error says why, in runc's words");
	snprintf(p, sizeof(p), "%s/host-etc", root);
	CHECK(!is_mount(p) && !is_mount("/host-etc"), "and nothing was mounted");
}

static void e2e_binds(int rootfd)
{
	struct ward_err err = {0};
	struct mi mi = {0};
	char p[512], q[1024];
	int fd;
	cleanup_free char *content = NULL;
	struct ward_mount m = {.destination = "/data/b",
			       .type = "bind",
			       .source = src,
			       .options = OPTS("rbind", "ro", "nosymfollow")};

	CHECK(mount_at(rootfd, &m, &err) == 0, "rbind with ro,nosymfollow");
	DIAG(err);
	snprintf(p, sizeof(p), "%s/data/b", root);
	CHECK(mountinfo_find(p, &mi) && has_opt(mi.opts, "ro") && has_opt(mi.opts, "nosymfollow"),
	      "mountinfo shows ro,nosymfollow");
	snprintf(q, sizeof(q), "%s/lnk", p);
	fd = open(q, O_RDONLY | O_CLOEXEC);
	CHECK(fd < 0 && errno == ELOOP, "nosymfollow: following lnk fails with ELOOP");
	if (fd >= 0)
		close(fd);
	snprintf(q, sizeof(q), "%s/new", p);
	fd = open(q, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd < 0 && errno == EROFS, "ro: creating a file fails with EROFS");
	if (fd >= 0)
		close(fd);
	snprintf(q, sizeof(q), "%s/sub", p);
	CHECK(mountinfo_find(q, &mi) && !has_opt(mi.opts, "ro"),
	      "plain ro is not recursive: the submount stays rw");

	m.destination = "/data/rec";
	m.options = OPTS("rbind", "rro", "rnosuid");
	CHECK(mount_at(rootfd, &m, &err) == 0, "rbind with rro,rnosuid");
	DIAG(err);
	snprintf(p, sizeof(p), "%s/data/rec/sub", root);
	CHECK(mountinfo_find(p, &mi) && has_opt(mi.opts, "ro") && has_opt(mi.opts, "nosuid"),
	      "rro,rnosuid reach the submount");

	m.destination = "/data/plain";
	m.options = OPTS("bind");
	CHECK(mount_at(rootfd, &m, &err) == 0, "plain bind");
	snprintf(p, sizeof(p), "%s/data/plain", root);
	snprintf(q, sizeof(q), "%s/data/plain/sub", root);
	CHECK(is_mount(p) && !is_mount(q), "bind is not recursive");

	m.destination = "/etc/hostname";
	m.type = NULL;
	m.source = srcfile;
	m.options = OPTS("bind", "ro");
	CHECK(mount_at(rootfd, &m, &err) == 0, "file bind creates a file destination");
	DIAG(err);
	snprintf(p, sizeof(p), "%s/etc/hostname", root);
	content = read_text(p);
	CHECK(is_mount(p) && content && strcmp(content, "srcfile\n") == 0,
	      "file bind mounted over /etc/hostname");

	m.destination = "/data/missing";
	m.source = "/nonexistent/ward-src";
	m.options = OPTS("rbind");
	CHECK(mount_at(rootfd, &m, &err) < 0 && err.errnum == ENOENT, "missing bind source");
	CHECK_STR_CONTAINS(err.msg, "mount /data/missing (bind /nonexistent/ward-src): open_tree",
			   "error names destination, source and step");
	snprintf(p, sizeof(p), "%s/data/missing", root);
	CHECK(access(p, F_OK) < 0, "no destination created for a failed source");

	m.source = NULL;
	CHECK(mount_at(rootfd, &m, &err) < 0, "bind without source refused");

	m.destination = "/data/tcu-bind";
	m.source = src;
	m.options = OPTS("bind", "tmpcopyup");
	CHECK(mount_at(rootfd, &m, &err) < 0, "tmpcopyup on a bind refused");
	CHECK_STR_CONTAINS(err.msg, "tmpcopyup", "error names tmpcopyup");

	m.options = OPTS("bind", "idmap");
	CHECK(mount_at(rootfd, &m, &err) < 0, "idmap without user namespace or mappings refused");
	CHECK_STR_CONTAINS(err.msg, "idmap", "error names idmap");

	/* ward_mount_setattr_fd: a read-only bind of a directory over itself. */
	{
		cleanup_fd int dfd = ward_path_open(rootfd, "/srv", O_PATH | O_DIRECTORY, &err);
		CHECK(dfd >= 0 && ward_mount_setattr_fd(dfd, MOUNT_ATTR_RDONLY, 0, true, &err) == 0,
		      "ward_mount_setattr_fd ro");
		snprintf(p, sizeof(p), "%s/srv", root);
		CHECK(mountinfo_find(p, &mi) && has_opt(mi.opts, "ro"), "srv is now a ro mount");
	}
}

static void e2e_fs(int rootfd)
{
	struct ward_err err = {0};
	struct mi mi = {0};
	char p[512];
	struct stat st;
	struct statfs sfs;
	cleanup_free char *content = NULL;
	struct ward_mount m = {.destination = "/shared",
			       .type = "tmpfs",
			       .source = "tmpfs",
			       .options = OPTS("shared")};

	CHECK(mount_at(rootfd, &m, &err) == 0, "tmpfs with shared propagation");
	snprintf(p, sizeof(p), "%s/shared", root);
	CHECK(mountinfo_find(p, &mi) && strstr(mi.optional, "shared:"), "mountinfo: shared:N");

	m.destination = "/unb";
	m.options = OPTS("runbindable");
	CHECK(mount_at(rootfd, &m, &err) == 0, "tmpfs with runbindable");
	snprintf(p, sizeof(p), "%s/unb", root);
	CHECK(mountinfo_find(p, &mi) && strstr(mi.optional, "unbindable"), "mountinfo: unbindable");

	m.destination = "/noatime";
	m.options = OPTS("noatime", "noexec", "sync");
	CHECK(mount_at(rootfd, &m, &err) == 0, "tmpfs noatime,noexec,sync");
	snprintf(p, sizeof(p), "%s/noatime", root);
	CHECK(mountinfo_find(p, &mi) && has_opt(mi.opts, "noatime") && has_opt(mi.opts, "noexec") &&
		  has_opt(mi.super, "sync"),
	      "noatime,noexec on the mount, sync on the superblock");

	m.destination = "/strict";
	m.options = OPTS("strictatime", "nodiratime");
	CHECK(mount_at(rootfd, &m, &err) == 0, "tmpfs strictatime,nodiratime");
	snprintf(p, sizeof(p), "%s/strict", root);
	CHECK(mountinfo_find(p, &mi) && !has_opt(mi.opts, "relatime") &&
		  !has_opt(mi.opts, "noatime") && has_opt(mi.opts, "nodiratime"),
	      "strictatime: neither relatime nor noatime");

	m.destination = "/cg";
	m.type = "cgroup";
	m.source = "cgroup";
	m.options = OPTS("nosuid", "noexec", "nodev", "relatime", "ro");
	CHECK(mount_at(rootfd, &m, &err) == 0, "type cgroup");
	DIAG(err);
	snprintf(p, sizeof(p), "%s/cg", root);
	CHECK(mountinfo_find(p, &mi) && strcmp(mi.fstype, "cgroup2") == 0 && has_opt(mi.opts, "ro"),
	      "cgroup means cgroup2, ro");

	m.destination = "/bad";
	m.type = "tmpfs";
	m.source = "tmpfs";
	m.options = OPTS("mode=xyz");
	CHECK(mount_at(rootfd, &m, &err) < 0 && err.errnum == EINVAL, "bad fs option fails");
	CHECK_STR_CONTAINS(err.msg, "mount /bad (type tmpfs): fsconfig mode=xyz",
			   "error names destination, type, step and option");
	snprintf(p, sizeof(p), "%s/bad", root);
	CHECK(access(p, F_OK) < 0, "no destination created for a failed mount");

	m.type = "wardnosuchfs";
	m.options = NULL;
	CHECK(mount_at(rootfd, &m, &err) < 0 && err.errnum == ENODEV, "unknown fs type fails");
	CHECK_STR_CONTAINS(err.msg, "mount /bad (type wardnosuchfs): fsopen: No such device",
			   "fsopen error");

	m.type = NULL;
	CHECK(mount_at(rootfd, &m, &err) < 0, "no type and no bind refused");

	/* tmpcopyup: the tmpfs starts with a copy of what the image had there. */
	m.destination = "/tcu";
	m.type = "tmpfs";
	m.options = OPTS("tmpcopyup", "mode=755");
	CHECK(mount_at(rootfd, &m, &err) == 0, "tmpfs with tmpcopyup");
	DIAG(err);
	snprintf(p, sizeof(p), "%s/tcu", root);
	CHECK(statfs(p, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC, "tcu is a tmpfs");
	snprintf(p, sizeof(p), "%s/tcu/f", root);
	content = read_text(p);
	CHECK(content && strcmp(content, "hello\n") == 0 && stat(p, &st) == 0 &&
		  st.st_uid == 1234 && (st.st_mode & 07777) == 0640,
	      "file copied with content, owner and mode");
	snprintf(p, sizeof(p), "%s/tcu/l", root);
	{
		char t[64] = {0};
		CHECK(readlink(p, t, sizeof(t) - 1) == 1 && t[0] == 'f',
		      "symlink copied as symlink");
	}
	snprintf(p, sizeof(p), "%s/tcu/d/g", root);
	CHECK(stat(p, &st) == 0 && S_ISREG(st.st_mode), "subdirectory copied");
}

static void e2e_idmap(int rootfd)
{
	struct ward_err err = {0};
	struct ward_idmap u = {0, 1000, 1}, g = {0, 2000, 1};
	struct ward_mount m = {.destination = "/idm",
			       .type = "bind",
			       .source = src,
			       .options = OPTS("bind", "idmap"),
			       .uid_mappings = {&u, 1},
			       .gid_mappings = {&g, 1}};
	char p[512];
	struct stat st;

	if (!ward_mount_idmap_supported()) {
		tap_n++;
		printf("ok %d # skip idmapped mounts not supported here\n", tap_n);
		return;
	}
	CHECK(mount_at(rootfd, &m, &err) == 0, "idmap bind with mount-level mappings");
	DIAG(err);
	snprintf(p, sizeof(p), "%s/idm/file", root);
	CHECK(stat(p, &st) == 0 && st.st_uid == 1000 && st.st_gid == 2000,
	      "on-disk 0:0 appears as 1000:2000 through the idmapped mount");
}

static void write_map(pid_t pid, const char *file)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, file);
	write_text(p, "0 0 65536\n", 0);
}

/* The split the runtime needs for idmap in a user namespace: the host side opens the
 * idmapped mount, an init inside a new user+mount namespace attaches it; idmapping from
 * inside fails with EPERM. */
static void e2e_idmap_userns(void)
{
	struct ward_err err = {0};
	struct ward_idmap u = {0, 1000, 1}, g = {0, 2000, 1};
	struct ward_mount m = {.destination = "/idm2",
			       .type = "bind",
			       .source = src,
			       .options = OPTS("bind", "idmap"),
			       .uid_mappings = {&u, 1},
			       .gid_mappings = {&g, 1}};
	int ready[2], done[2], counts[2] = {0, 0}, status = -1;
	cleanup_fd int mnt = -1;
	char c = 0, p[512];
	pid_t pid;

	if (!ward_mount_idmap_supported())
		return;
	mnt = ward_mount_open(&m, -1, -1, &err);
	CHECK(mnt >= 0, "ward_mount_open: detached idmapped mount, host side");
	DIAG(err);
	if (mnt < 0 || pipe2(ready, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0)
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(done[1]);
		c = unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1 || c != 'y' || read(done[0], &c, 1) != 1)
			_exit(2);
		{
			cleanup_fd int r = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
			CHECK(ward_mount_attach(r, &m, mnt, &err) == 0,
			      "ward_mount_attach inside a new user namespace");
			DIAG(err);
			snprintf(p, sizeof(p), "%s/idm2", root);
			CHECK(is_mount(p),
			      "the idmapped mount is attached in the userns' mount ns");
			m.destination = "/idm3";
			CHECK(ward_mount_one(r, &m, -1, &err) < 0 && err.errnum == EINVAL,
			      "bind (not rbind) of a source with locked submounts fails");
			CHECK_STR_CONTAINS(err.msg, "rbind", "error suggests rbind");
			m.options = OPTS("rbind", "idmap");
			CHECK(ward_mount_one(r, &m, -1, &err) < 0 && err.errnum == EPERM,
			      "idmapping from inside a user namespace fails with EPERM");
			CHECK_STR_CONTAINS(err.msg, "mount_setattr idmap", "at mount_setattr");
		}
		fflush(stdout);
		counts[0] = tap_n;
		counts[1] = tap_failed;
		(void)!write(ready[1], counts, sizeof(counts));
		_exit(0);
	}
	close(ready[1]);
	close(done[0]);
	if (pid > 0 && read(ready[0], &c, 1) == 1 && c == 'y') {
		write_map(pid, "uid_map");
		write_map(pid, "gid_map");
		(void)!write(done[1], "x", 1);
		if (read_exact(ready[0], counts, sizeof(counts)) == (ssize_t)sizeof(counts)) {
			tap_n = counts[0];
			tap_failed = counts[1];
		}
	}
	close(done[1]);
	close(ready[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	CHECK(c == 'y' && WIFEXITED(status) && WEXITSTATUS(status) == 0, "user namespace child");
}

static void e2e_dev(void)
{
	struct ward_err err = {0};
	struct ward_spec spec = {0};
	struct ward_device devs[] = {
	    {.type = 'c',
	     .path = "/dev/sub/mynull",
	     .major = 1,
	     .minor = 3,
	     .has_file_mode = true,
	     .file_mode = 0600,
	     .has_uid = true,
	     .uid = 123,
	     .has_gid = true,
	     .gid = 456},
	    {.type = 'p', .path = "/dev/fifo"},
	};
	char target[512], p[1024];
	struct stat st;
	struct mi mi;
	cleanup_fd int fd = open(devroot, O_PATH | O_DIRECTORY | O_CLOEXEC);

	/* devroot/dev -> /tmp/ward-outside-XXXX-dev (CVE-2026-41579 shape). */
	snprintf(target, sizeof(target), "%s%s-dev", devroot, outside);
	spec.linux.devices = devs;
	spec.linux.n_devices = ARRAY_SIZE(devs);
	CHECK(ward_dev_setup(fd, &spec, false, &err) == 0, "dev setup with /dev -> /tmp/outside");
	DIAG(err);
	CHECK(mountinfo_find(target, &mi) && strcmp(mi.fstype, "tmpfs") == 0 &&
		  has_opt(mi.opts, "nosuid") && has_opt(mi.super, "size=65536k"),
	      "default /dev tmpfs inside the root");
	snprintf(p, sizeof(p), "%s-dev", outside);
	CHECK(!any_mount_under(p) && dir_empty(p), "nothing at the host's /tmp/outside-dev");
	snprintf(p, sizeof(p), "%s/null", target);
	/* Outside a user namespace default devices are mknod'ed (no mount needed). */
	CHECK(stat(p, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3) &&
		  (st.st_mode & 0777) == 0666 && !is_mount(p),
	      "/dev/null is a char 1:3 node made with mknod, mode 0666");
	snprintf(p, sizeof(p), "%s/tty", target);
	CHECK(stat(p, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0),
	      "/dev/tty char 5:0");
	snprintf(p, sizeof(p), "%s/pts", target);
	CHECK(mountinfo_find(p, &mi) && strcmp(mi.fstype, "devpts") == 0 &&
		  has_opt(mi.super, "ptmxmode=666"),
	      "devpts at /dev/pts (newinstance, ptmxmode=0666)");
	snprintf(p, sizeof(p), "%s/shm", target);
	CHECK(mountinfo_find(p, &mi) && strcmp(mi.fstype, "tmpfs") == 0 &&
		  has_opt(mi.opts, "nodev"),
	      "tmpfs at /dev/shm");
	{
		char t[64] = {0};
		snprintf(p, sizeof(p), "%s/ptmx", target);
		CHECK(readlink(p, t, sizeof(t) - 1) > 0 && strcmp(t, "pts/ptmx") == 0,
		      "/dev/ptmx -> pts/ptmx");
		memset(t, 0, sizeof(t));
		snprintf(p, sizeof(p), "%s/stderr", target);
		CHECK(readlink(p, t, sizeof(t) - 1) > 0 && strcmp(t, "/proc/self/fd/2") == 0,
		      "/dev/stderr -> /proc/self/fd/2");
		snprintf(p, sizeof(p), "%s/core", target);
		CHECK(lstat(p, &st) < 0, "no /dev/core");
	}
	snprintf(p, sizeof(p), "%s/sub/mynull", target);
	CHECK(stat(p, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3) &&
		  (st.st_mode & 07777) == 0600 && st.st_uid == 123 && st.st_gid == 456 &&
		  !is_mount(p),
	      "linux.devices: mknod with mode/uid/gid, parent created");
	snprintf(p, sizeof(p), "%s/fifo", target);
	CHECK(stat(p, &st) == 0 && S_ISFIFO(st.st_mode) && (st.st_mode & 0777) == 0666,
	      "linux.devices: fifo, default mode 0666");

	/* In a user namespace devices are binds of the host nodes, checked first. */
	{
		struct ward_device d = {.type = 'c', .path = "/dev/full", .major = 1, .minor = 7};
		struct ward_spec s2 = {0};
		cleanup_fd int fd2 = open(devroot2, O_PATH | O_DIRECTORY | O_CLOEXEC);
		s2.linux.devices = &d;
		s2.linux.n_devices = 1;
		CHECK(ward_dev_setup(fd2, &s2, true, &err) == 0, "dev setup as if in a userns");
		DIAG(err);
		snprintf(p, sizeof(p), "%s/dev/full", devroot2);
		CHECK(stat(p, &st) == 0 && st.st_rdev == makedev(1, 7) && is_mount(p),
		      "linux.devices in a userns: bind of the host node");
		d.path = "/dev/wardnull";
		d.minor = 5;
		s2.mounts = &(struct ward_mount){
		    .destination = "/dev", .type = "bind", .source = "/nonexistent"};
		s2.n_mounts = 1;
		CHECK(ward_dev_setup(fd2, &s2, true, &err) == 0,
		      "/dev bind-mounted by the spec: left alone");
		s2.n_mounts = 0;
		d.path = "/dev/null";
		CHECK(ward_dev_setup(fd2, &s2, true, &err) < 0,
		      "host node of the wrong type refused");
		CHECK_STR_CONTAINS(err.msg, "host node is not c 1:5",
				   "error says what was expected");
	}
}

static void mount_e2e(void)
{
	cleanup_fd int rootfd = -1;
	struct ward_err err = {0};
	char p[512];

	if (!private_root())
		return;
	/* A submount inside the bind source, for the recursive tests. */
	snprintf(p, sizeof(p), "%s/sub", src);
	if (mount("tmpfs", p, "tmpfs", 0, "size=1m") < 0)
		printf("# setup: mount %s: %s\n", p, strerror(errno));

	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	e2e_hostile(rootfd);
	e2e_binds(rootfd);
	e2e_fs(rootfd);
	e2e_idmap(rootfd);
	e2e_idmap_userns();
	e2e_dev();
	(void)err;
}

/* ---------------------------------------------------------------- rootfs (pid 1 child) */

static struct ward_spec *rootfs_spec(void)
{
	static char *proc_opts[] = {"nosuid", "noexec", "nodev", NULL};
	static char *dev_opts[] = {"nosuid", "strictatime", "mode=755", "size=65536k", NULL};
	static struct ward_mount mounts[] = {
	    {.destination = "/proc", .type = "proc", .source = "proc", .options = proc_opts},
	    {.destination = "/dev", .type = "tmpfs", .source = "tmpfs", .options = dev_opts},
	};
	static struct ward_device devs[] = {
	    {.type = 'c',
	     .path = "/dev/mynull",
	     .major = 1,
	     .minor = 3,
	     .has_file_mode = true,
	     .file_mode = 0600,
	     .has_uid = true,
	     .uid = 123},
	};
	static char *masked[] = {"/proc/kcore", "/proc/uptime",	  "/proc/scsi",
				 "/proc/acpi",	"/nonexistent/x", NULL};
	static char *readonly[] = {"/proc/sys", "/proc/bus", "/nonexistent", NULL};
	static char *sysctl_keys[] = {"kernel.msgmax", NULL};
	static char *sysctl_values[] = {"12345", NULL};
	static struct ward_spec spec;

	spec.root_path = rootfs;
	spec.root_readonly = true;
	spec.mounts = mounts;
	spec.n_mounts = ARRAY_SIZE(mounts);
	spec.linux.devices = devs;
	spec.linux.n_devices = ARRAY_SIZE(devs);
	spec.linux.masked_paths = masked;
	spec.linux.readonly_paths = readonly;
	spec.linux.sysctl_keys = sysctl_keys;
	spec.linux.sysctl_values = sysctl_values;
	return &spec;
}

static void check_console(void)
{
	struct ward_err err = {0};
	struct mi mi;
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	int slave = -1;

	if (master >= 0 && unlockpt(master) == 0)
		slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	CHECK(slave >= 0, "pty from the container's /dev/ptmx");
	CHECK(slave >= 0 && ward_dev_console(slave, &err) == 0, "ward_dev_console");
	DIAG(err);
	CHECK(mountinfo_find("/dev/console", &mi) && strcmp(mi.fstype, "devpts") == 0,
	      "/dev/console is a bind of the pty");
	{
		cleanup_fd int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		CHECK(ward_dev_console(null, &err) < 0, "ward_dev_console refuses a non-pty fd");
	}
	if (slave >= 0)
		close(slave);
	if (master >= 0)
		close(master);
}

static void rootfs_pid1(void)
{
	struct ward_spec *spec = rootfs_spec();
	struct ward_err err = {0};
	struct mi mi;
	struct stat st;
	char cwd[256];
	int rootfd, fd, status = -1;
	pid_t pid;
	cleanup_free char *msgmax = NULL;

	if (!private_root())
		return;
	CHECK(getpid() == 1, "running as pid 1 of a new pid namespace");
	rootfd = ward_rootfs_prepare(spec, -1, false, NULL, &err);
	CHECK(rootfd >= 0, "ward_rootfs_prepare");
	DIAG(err);
	if (rootfd < 0)
		return;
	CHECK(ward_rootfs_pivot(rootfd, false, &err) == 0, "ward_rootfs_pivot");
	DIAG(err);
	close(rootfd);
	check_console();
	CHECK(ward_rootfs_finalize(spec, &err) == 0, "ward_rootfs_finalize");
	DIAG(err);

	CHECK(getcwd(cwd, sizeof(cwd)) && strcmp(cwd, "/") == 0, "cwd is /");
	CHECK(stat("/bin/busybox", &st) == 0 && lstat(tmp, &st) < 0 &&
		  access("/etc/passwd", F_OK) < 0,
	      "the rootfs is /, host paths are gone");
	CHECK(!any_mount_under(tmp) && !any_mount_under("/tmp"), "no host mount left in mountinfo");
	CHECK(mountinfo_find("/", &mi) && has_opt(mi.opts, "ro"), "root.readonly: / is ro");
	fd = open("/newfile", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd < 0 && errno == EROFS, "writing to / fails with EROFS");
	if (fd >= 0)
		close(fd);
	CHECK(mountinfo_find("/proc", &mi) && strcmp(mi.fstype, "proc") == 0 &&
		  !has_opt(mi.opts, "ro") && has_opt(mi.opts, "noexec"),
	      "/proc is procfs, not read-only (root.readonly is not recursive)");
	/* /proc/uptime always exists; /proc/kcore only with CONFIG_PROC_KCORE. */
	/* The container's /dev/null (a node on its /dev tmpfs) is bound over it. */
	CHECK(mountinfo_find("/proc/uptime", &mi) && strcmp(mi.fstype, "tmpfs") == 0,
	      "maskedPaths: file /proc/uptime is a bind of /dev/null");
	fd = open("/proc/uptime", O_RDONLY | O_CLOEXEC);
	{
		char b[8];
		CHECK(fd >= 0 && read(fd, b, sizeof(b)) == 0, "masked /proc/uptime reads empty");
	}
	if (fd >= 0)
		close(fd);
	if (stat("/proc/kcore", &st) == 0)
		CHECK(mountinfo_find("/proc/kcore", &mi) && st.st_rdev == makedev(1, 3),
		      "maskedPaths: /proc/kcore is /dev/null");
	if (stat("/proc/acpi", &st) == 0)
		CHECK(mountinfo_find("/proc/acpi", &mi) && strcmp(mi.fstype, "tmpfs") == 0 &&
			  has_opt(mi.opts, "ro"),
		      "maskedPaths: directory /proc/acpi under a read-only tmpfs");
	CHECK(mountinfo_find("/proc/sys", &mi) && has_opt(mi.opts, "ro"),
	      "readonlyPaths: /proc/sys is ro");
	fd = open("/proc/sys/kernel/msgmax", O_WRONLY | O_CLOEXEC);
	CHECK(fd < 0 && errno == EROFS, "writing /proc/sys fails with EROFS");
	if (fd >= 0)
		close(fd);
	msgmax = read_text("/proc/sys/kernel/msgmax");
	CHECK(msgmax && strcmp(msgmax, "12345\n") == 0, "sysctl kernel.msgmax=12345 written");
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3),
	      "/dev/null");
	CHECK(stat("/dev/mynull", &st) == 0 && st.st_rdev == makedev(1, 3) &&
		  (st.st_mode & 07777) == 0600 && st.st_uid == 123,
	      "linux.devices /dev/mynull");
	CHECK(mountinfo_find("/dev/pts", &mi) && strcmp(mi.fstype, "devpts") == 0, "/dev/pts");
	CHECK(mountinfo_find("/dev", &mi) && has_opt(mi.opts, "nosuid") &&
		  !has_opt(mi.opts, "relatime"),
	      "spec /dev tmpfs (nosuid,strictatime) used");

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/bin/busybox", "busybox", "true", (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	CHECK(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "exec /bin/busybox true in the new root");
}

static void rootfs_no_pivot(void)
{
	struct ward_spec spec = {.root_path = rootfs};
	struct ward_err err = {0};
	struct stat st;
	char cwd[256];
	int rootfd;

	if (!private_root())
		return;
	rootfd = ward_rootfs_prepare(&spec, -1, false, NULL, &err);
	CHECK(rootfd >= 0, "no_pivot: prepare");
	DIAG(err);
	if (rootfd < 0)
		return;
	CHECK(ward_rootfs_pivot(rootfd, true, &err) == 0, "no_pivot: move + chroot");
	DIAG(err);
	close(rootfd);
	CHECK(getcwd(cwd, sizeof(cwd)) && strcmp(cwd, "/") == 0 && stat("/bin/busybox", &st) == 0 &&
		  lstat(tmp, &st) < 0,
	      "no_pivot: the rootfs is /");
}

/* ---------------------------------------------------------------- setup */

static bool copy_file(const char *from, const char *to)
{
	struct ward_err e;
	size_t len;
	cleanup_free char *data = read_file_at(AT_FDCWD, from, &len, &e);
	return data && write_file_at(AT_FDCWD, to, O_CREAT | O_TRUNC, 0755, data, len, &e) == 0;
}

static bool setup(void)
{
	const char *suffix;
	char p[512];

	snprintf(tmp, sizeof(tmp), "/tmp/ward-mount-XXXXXX");
	if (!mkdtemp(tmp))
		return false;
	suffix = tmp + strlen("/tmp/ward-mount-");
	snprintf(root, sizeof(root), "%s/root", tmp);
	snprintf(src, sizeof(src), "%s/src", tmp);
	snprintf(srcfile, sizeof(srcfile), "%s/srcfile", tmp);
	snprintf(outside, sizeof(outside), "/tmp/ward-outside-%s", suffix);
	snprintf(devroot, sizeof(devroot), "%s/devroot", tmp);
	snprintf(devroot2, sizeof(devroot2), "%s/devroot2", tmp);
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", tmp);

	mkdirs(tmp, "root");
	mkdirs(root, "data");
	mkdirs(root, "srv");
	mkdirs(root, "sub");
	mkdirs(root, "tcu");
	mkdirs(root, "tcu/d");
	symlink_at(outside, root, "hostile");
	symlink_at("/host-etc", root, "proc");
	symlink_at("../../../..", root, "escape");
	symlink_at("sub/up", root, "up");
	symlink_at("../../../../..", root, "sub/up");
	snprintf(p, sizeof(p), "%s/tcu/f", root);
	write_text(p, "hello\n", 0640);
	if (chown(p, 1234, 1234) < 0)
		printf("# setup: chown: %s\n", strerror(errno));
	snprintf(p, sizeof(p), "%s/tcu/d/g", root);
	write_text(p, "g\n", 0644);
	symlink_at("f", root, "tcu/l");

	mkdirs(tmp, "src");
	mkdirs(src, "sub");
	snprintf(p, sizeof(p), "%s/file", src);
	write_text(p, "file\n", 0644);
	symlink_at("file", src, "lnk");
	write_text(srcfile, "srcfile\n", 0644);

	mkdir(outside, 0755);
	snprintf(p, sizeof(p), "%s-dev", outside);
	mkdir(p, 0755);
	mkdirs(tmp, "devroot");
	snprintf(p, sizeof(p), "%s-dev", outside);
	symlink_at(p, devroot, "dev");
	mkdirs(tmp, "devroot2");
	mkdirs(devroot2, "dev");

	mkdirs(tmp, "rootfs");
	mkdirs(rootfs, "bin");
	mkdirs(rootfs, "proc");
	snprintf(p, sizeof(p), "%s/bin/busybox", rootfs);
	return copy_file("/bin/busybox", p);
}

/* openat2, fsopen and mount_setattr exist (kernel >= 5.12; valgrind 3.19 knows none of
 * them and answers ENOSYS). */
static bool have_syscalls(void)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		return false;
	if (fd >= 0)
		close(fd);
	fd = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fd < 0 && errno == ENOSYS)
		return false;
	if (fd >= 0)
		close(fd);
	return !(syscall(SYS_mount_setattr, -1, "", 0, NULL, 0) < 0 && errno == ENOSYS);
}

int main(void)
{
	cleanup_free char *msgmax_before = NULL;
	cleanup_free char *msgmax_after = NULL;
	char p[512];
	bool ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	test_parse();

	if (geteuid() != 0) {
		printf("ok %d # skip mount tests need root\n", ++tap_n);
		TAP_DONE();
	}
	if (!have_syscalls()) {
		printf("ok %d # skip no openat2/fsopen/mount_setattr (old kernel, or valgrind < "
		       "3.20)\n",
		       ++tap_n);
		TAP_DONE();
	}
	ok = setup();
	CHECK(ok, "setup (temporary tree, busybox copied)");
	msgmax_before = read_text("/proc/sys/kernel/msgmax");
	if (ok) {
		in_child(mount_e2e, CLONE_NEWNS, "mount tests in a private mount namespace");
		in_child(rootfs_pid1, CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS,
			 "prepare/pivot/finalize in new mount+pid namespaces");
		in_child(rootfs_no_pivot, CLONE_NEWNS, "no_pivot in a new mount namespace");
	}
	msgmax_after = read_text("/proc/sys/kernel/msgmax");
	CHECK(msgmax_before && msgmax_after && strcmp(msgmax_before, msgmax_after) == 0,
	      "host kernel.msgmax unchanged");
	CHECK(!any_mount_under(tmp) && !any_mount_under(outside), "no mount reached the host");
	CHECK(dir_empty(outside), "host /tmp/outside still empty");

	nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	rmdir(outside);
	snprintf(p, sizeof(p), "%s-dev", outside);
	rmdir(p);
	CHECK(access(tmp, F_OK) < 0 && access(outside, F_OK) < 0, "temporary trees removed");
	TAP_DONE();
}
