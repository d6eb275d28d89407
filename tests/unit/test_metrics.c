/* Unit tests: ward metrics from fixture cgroup directories, a fixture state root and GPU
 * ledger, all under a temporary directory; the exposition text and its escaping. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"
#include "state.h"
#include "tap.h"
#include "util.h"

static char tmp[] = "/tmp/ward-metrics-XXXXXX";

static void put(const char *dir, const char *file, const char *text)
{
	char *p = xasprintf("%s/%s", dir, file);
	FILE *f = fopen(p, "w");
	if (!f || fputs(text, f) == EOF || fclose(f) != 0) {
		perror(p);
		exit(2);
	}
	free(p);
}

static char *mkdirs(const char *rel)
{
	char *p = xasprintf("%s/%s", tmp, rel);
	char *cmd = xasprintf("mkdir -p '%s'", p);
	if (system(cmd) != 0)
		exit(2);
	free(cmd);
	return p;
}

/* A container in the state root whose cgroup is cg; annotations key=value pairs. */
static void add_container(const char *root, const char *id, const char *cg, const char *const *ann)
{
	struct ward_err err = {0};
	struct ward_state st = {
	    .id = (char *)id,
	    .oci_version = "1.2.0",
	    .bundle = "/b",
	    .rootfs = "/b/rootfs",
	    .created = "2024-01-01T00:00:00Z",
	    .owner = "",
	    .cgroup = (char *)cg,
	};
	int rootfd = ward_state_root_open(root, &err), dirfd;
	for (size_t i = 0; ann && ann[i]; i += 2) {
		st.annotation_keys = strv_append(st.annotation_keys, ann[i]);
		st.annotation_values = strv_append(st.annotation_values, ann[i + 1]);
	}
	dirfd = ward_state_create(rootfd, id, &err);
	if (dirfd < 0 || ward_state_write(dirfd, &st, &err) < 0) {
		fprintf(stderr, "state %s: %s\n", id, err.msg);
		exit(2);
	}
	strv_free(st.annotation_keys);
	strv_free(st.annotation_values);
	close(dirfd);
	close(rootfd);
}

#define HAS(text, line) CHECK_STR_CONTAINS(text, line "\n", line)
#define HASNT(text, part, name)                                                                    \
	do {                                                                                       \
		CHECK(!strstr(text, part), name);                                                  \
		if (strstr(text, part))                                                            \
			printf("#   unexpected: %s\n", part);                                      \
	} while (0)

/* Every line is a comment (# HELP/# TYPE name ...) or name{labels} value, labels quoted with
 * only \\ \" \n escapes; every family's HELP and TYPE come before its samples, once. */
static bool exposition_valid(const char *text)
{
	char typed[64][64];
	size_t n_typed = 0;
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		char line[2048], name[64];
		size_t len;
		if (!eol)
			return false; /* the last line ends with a newline */
		len = (size_t)(eol - p);
		if (len >= sizeof(line))
			return false;
		memcpy(line, p, len);
		line[len] = '\0';
		p = eol + 1;
		if (!strncmp(line, "# TYPE ", 7)) {
			char type[16];
			if (sscanf(line + 7, "%63s %15s", name, type) != 2 ||
			    (strcmp(type, "counter") && strcmp(type, "gauge")))
				return false;
			for (size_t i = 0; i < n_typed; i++)
				if (!strcmp(typed[i], name))
					return false;
			if (n_typed == 64)
				return false;
			strcpy(typed[n_typed++], name);
			continue;
		}
		if (!strncmp(line, "# HELP ", 7))
			continue;
		/* a sample of the family typed last */
		const char *s = line;
		size_t nl = strspn(s, "abcdefghijklmnopqrstuvwxyz_0123456789");
		if (!nl || !n_typed || strlen(typed[n_typed - 1]) != nl ||
		    strncmp(s, typed[n_typed - 1], nl))
			return false;
		s += nl;
		if (*s == '{') {
			s++;
			while (*s != '}') {
				size_t ln = strspn(s, "abcdefghijklmnopqrstuvwxyz_");
				if (!ln || s[ln] != '=' || s[ln + 1] != '"')
					return false;
				s += ln + 2;
				while (*s != '"') {
					if (!*s || *s == '\n')
						return false;
					if (*s == '\\') {
						if (s[1] != '\\' && s[1] != '"' && s[1] != 'n')
							return false;
						s++;
					}
					s++;
				}
				s++;
				if (*s == ',')
					s++;
				else if (*s != '}')
					return false;
			}
			s++;
		}
		if (*s != ' ')
			return false;
		char *end;
		strtod(s + 1, &end);
		if (end == s + 1 || *end)
			return false;
	}
	return n_typed > 0;
}

static void test_escape(void)
{
	char *e = ward_metrics_escape("a\"b\\c\nd");
	CHECK(!strcmp(e, "a\\\"b\\\\c\\nd"), "label value: \" \\ and newline escaped");
	free(e);
	e = ward_metrics_escape("plain-1.x");
	CHECK(!strcmp(e, "plain-1.x"), "label value: plain text unchanged");
	free(e);
}

static void test_cgroup_read(void)
{
	char *full = mkdirs("cg/full"), *bare = mkdirs("cg/bare");
	struct ward_metrics_cgroup c = {.path = full};

	put(full, "cpu.stat",
	    "usage_usec 2500001\nuser_usec 2000000\nsystem_usec 500001\nnr_periods 10\n"
	    "nr_throttled 3\nthrottled_usec 120000\n");
	put(full, "memory.current", "1048576\n");
	put(full, "memory.peak", "4194304\n");
	put(full, "memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n");
	put(full, "pids.current", "5\n");
	put(full, "io.stat",
	    "8:0 rbytes=100 wbytes=200 rios=1 wios=2 dbytes=0 dios=0\n"
	    "253:1 rbytes=1000 wbytes=2000 rios=1 wios=1 dbytes=0 dios=0\n");
	ward_metrics_read_cgroup(&c);
	CHECK(c.found, "full cgroup: found");
	CHECK(c.have[WARD_M_CPU_USEC] && c.value[WARD_M_CPU_USEC] == 2500001, "cpu usage_usec");
	CHECK(c.have[WARD_M_THROTTLED_USEC] && c.value[WARD_M_THROTTLED_USEC] == 120000,
	      "throttled_usec");
	CHECK(c.have[WARD_M_THROTTLED_PERIODS] && c.value[WARD_M_THROTTLED_PERIODS] == 3,
	      "nr_throttled");
	CHECK(c.value[WARD_M_MEMORY_CURRENT] == 1048576 && c.value[WARD_M_MEMORY_PEAK] == 4194304,
	      "memory current and peak");
	CHECK(c.have[WARD_M_OOM_KILLS] && c.value[WARD_M_OOM_KILLS] == 2, "oom_kill");
	CHECK(c.value[WARD_M_PIDS_CURRENT] == 5, "pids.current");
	CHECK(c.value[WARD_M_IO_READ_BYTES] == 1100 && c.value[WARD_M_IO_WRITE_BYTES] == 2200,
	      "io.stat summed over devices");
	CHECK(!c.missing[WARD_MC_CPU] && !c.missing[WARD_MC_MEMORY] && !c.missing[WARD_MC_PIDS] &&
		  !c.missing[WARD_MC_IO],
	      "full cgroup: no controller missing");

	/* a v2 cgroup without controllers (hybrid host): only core cpu.stat */
	put(bare, "cpu.stat", "usage_usec 7\nuser_usec 4\nsystem_usec 3\n");
	c.path = bare;
	ward_metrics_read_cgroup(&c);
	CHECK(c.found && c.have[WARD_M_CPU_USEC] && c.value[WARD_M_CPU_USEC] == 7,
	      "bare cgroup: cpu usage");
	CHECK(!c.have[WARD_M_THROTTLED_USEC] && !c.have[WARD_M_MEMORY_CURRENT] &&
		  !c.have[WARD_M_MEMORY_PEAK] && !c.have[WARD_M_OOM_KILLS] &&
		  !c.have[WARD_M_PIDS_CURRENT] && !c.have[WARD_M_IO_READ_BYTES],
	      "bare cgroup: figures of missing controllers are absent, not 0");
	CHECK(c.missing[WARD_MC_CPU] && c.missing[WARD_MC_MEMORY] && c.missing[WARD_MC_PIDS] &&
		  c.missing[WARD_MC_IO],
	      "bare cgroup: every controller missing");

	/* memory controller on a kernel without memory.peak; pids.max-style "max" is no figure */
	put(bare, "memory.current", "4096\n");
	put(bare, "pids.current", "max\n");
	ward_metrics_read_cgroup(&c);
	CHECK(c.have[WARD_M_MEMORY_CURRENT] && !c.have[WARD_M_MEMORY_PEAK] &&
		  !c.missing[WARD_MC_MEMORY],
	      "no memory.peak: peak absent, memory not missing");
	CHECK(!c.have[WARD_M_PIDS_CURRENT], "\"max\" is not a figure");

	c.path = xasprintf("%s/cg/gone", tmp);
	ward_metrics_read_cgroup(&c);
	CHECK(!c.found && !c.have[WARD_M_CPU_USEC], "missing cgroup: not found, no figures");
	free(c.path);
	free(full);
	free(bare);
}

static void test_collect_render(void)
{
	struct ward_err err = {0};
	struct ward_metrics m;
	char *root = mkdirs("state"), *cgroot = mkdirs("v2");
	char *tcg = mkdirs("v2/ward/acme"), *ccg = mkdirs("v2/ward/acme/c1"),
	     *ocg = mkdirs("v2/ward/other/c2"), *gpudir, *text;
	char *const configured[] = {"acme", "idle", NULL};
	static const char *const cri[] = {"ward.dev/tenant",
					  "acme",
					  "io.kubernetes.cri.sandbox-namespace",
					  "team\"a\\",
					  "io.kubernetes.cri.sandbox-name",
					  "web-0",
					  "io.kubernetes.cri.container-name",
					  "nginx",
					  NULL};
	static const char *const bare[] = {"ward.dev/tenant", "other", NULL};

	put(tcg, "cpu.stat",
	    "usage_usec 9000000\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n");
	put(tcg, "memory.current", "8192\n");
	put(ccg, "cpu.stat",
	    "usage_usec 2000500\nnr_periods 1\nnr_throttled 1\nthrottled_usec 7\n");
	put(ccg, "memory.current", "4096\n");
	put(ccg, "memory.events", "oom_kill 1\n");
	put(ccg, "pids.current", "3\n");
	put(ocg, "cpu.stat", "usage_usec 1\n");
	add_container(root, "c1", ccg, cri);
	add_container(root, "c2", ocg, bare);

	gpudir = xasprintf("%s/gpu", root); /* lib_dir = root here */
	mkdir(gpudir, 0700);
	put(gpudir, "ledger.json",
	    "{\"version\": 1, \"gpus\": ["
	    "{\"uuid\": \"GPU-a\", \"state\": \"leased\", \"tenant\": \"acme\", \"holders\": "
	    "[{\"root\": \"/run/ward\", \"container\": \"c1\", \"pod\": \"team/web-0\", "
	    "\"since\": 1000}], "
	    "\"changed\": 1000, \"lease_seconds\": 50, \"wipes\": 2, \"wipe_failures\": 0, "
	    "\"wipe_bytes\": 4096, \"wipe_seconds\": 1.5},"
	    "{\"uuid\": \"GPU-b\", \"state\": \"quarantined\", \"tenant\": \"other\", "
	    "\"holders\": [], \"reason\": \"wipe failed\", \"changed\": 900, "
	    "\"lease_seconds\": 7, \"wipes\": 1, \"wipe_failures\": 1, \"wipe_bytes\": 0, "
	    "\"wipe_seconds\": 0.25}]}\n");

	CHECK(ward_metrics_collect(root, root, cgroot, configured, NULL, 1100, &m, &err) == 0,
	      "collect from fixtures");
	if (err.msg[0])
		printf("#   %s\n", err.msg);
	text = ward_metrics_render(&m);
	ward_metrics_clear(&m);
	CHECK(exposition_valid(text), "the text is valid exposition");
	HAS(text, "# TYPE ward_cpu_seconds_total counter");
	/* the type follows the name: counters end in _total */
	HAS(text, "# TYPE ward_oom_kills_total counter");
	HAS(text, "# TYPE ward_pids_current gauge");
	HAS(text, "# TYPE ward_cgroup_found gauge");
	HAS(text, "# TYPE ward_container_info gauge");
	HAS(text, "# TYPE ward_gpu_state gauge");
	HAS(text, "# TYPE ward_gpu_lease_seconds_total counter");
	HAS(text, "# TYPE ward_gpu_lease_active_seconds gauge");
	HAS(text, "# TYPE ward_gpu_wipe_seconds_total counter");
	HAS(text, "# TYPE ward_tenant_gpus_leased gauge");
	HAS(text, "ward_cpu_seconds_total{scope=\"container\",tenant=\"acme\",namespace="
		  "\"team\\\"a\\\\\","
		  "pod=\"web-0\",container=\"nginx\",id=\"c1\"} 2.000500");
	HAS(text, "ward_cpu_seconds_total{scope=\"container\",tenant=\"other\",namespace=\"\","
		  "pod=\"\",container=\"c2\",id=\"c2\"} 0.000001");
	HAS(text, "ward_cpu_seconds_total{scope=\"tenant\",tenant=\"acme\"} 9.000000");
	HAS(text,
	    "ward_cpu_throttled_seconds_total{scope=\"container\",tenant=\"acme\","
	    "namespace=\"team\\\"a\\\\\",pod=\"web-0\",container=\"nginx\",id=\"c1\"} 0.000007");
	HAS(text, "ward_memory_current_bytes{scope=\"tenant\",tenant=\"acme\"} 8192");
	HAS(text,
	    "ward_oom_kills_total{scope=\"container\",tenant=\"acme\",namespace=\"team\\\"a\\\\\","
	    "pod=\"web-0\",container=\"nginx\",id=\"c1\"} 1");
	HAS(text,
	    "ward_pids_current{scope=\"container\",tenant=\"acme\",namespace=\"team\\\"a\\\\\","
	    "pod=\"web-0\",container=\"nginx\",id=\"c1\"} 3");
	HASNT(text, "ward_memory_current_bytes{scope=\"container\",tenant=\"other\"",
	      "no memory figure where memory.current is missing");
	HASNT(text, "ward_memory_peak_bytes", "no memory.peak anywhere: no peak family");
	HAS(text,
	    "ward_cgroup_controller_missing{scope=\"container\",tenant=\"other\",namespace=\"\","
	    "pod=\"\",container=\"c2\",id=\"c2\",controller=\"memory\"} 1");
	HAS(text, "ward_cgroup_found{scope=\"tenant\",tenant=\"idle\"} 0");
	HAS(text, "ward_cgroup_found{scope=\"tenant\",tenant=\"other\"} 1");
	HAS(text, "ward_cgroup_controller_missing{scope=\"tenant\",tenant=\"other\",controller="
		  "\"cpu\"} 1");
	HAS(text,
	    "ward_container_info{scope=\"container\",tenant=\"acme\",namespace=\"team\\\"a\\\\\","
	    "pod=\"web-0\",container=\"nginx\",id=\"c1\",status=\"stopped\"} 1");
	HAS(text, "ward_gpu_state{uuid=\"GPU-a\",state=\"leased\"} 1");
	HAS(text, "ward_gpu_state{uuid=\"GPU-a\",state=\"free\"} 0");
	HAS(text, "ward_gpu_quarantined{uuid=\"GPU-b\"} 1");
	HAS(text, "ward_gpu_quarantined{uuid=\"GPU-a\"} 0");
	HAS(text, "ward_gpu_lease_seconds_total{uuid=\"GPU-a\"} 150");
	HAS(text, "ward_gpu_lease_active_seconds{uuid=\"GPU-a\",tenant=\"acme\",namespace=\"team\","
		  "pod=\"web-0\",id=\"c1\"} 100");
	HAS(text, "ward_gpu_wipes_total{uuid=\"GPU-a\"} 2");
	HAS(text, "ward_gpu_wipe_failures_total{uuid=\"GPU-b\"} 1");
	HAS(text, "ward_gpu_wipe_bytes_total{uuid=\"GPU-a\"} 4096");
	HAS(text, "ward_gpu_wipe_seconds_total{uuid=\"GPU-b\"} 0.250000");
	HAS(text, "ward_tenant_gpus_leased{tenant=\"acme\"} 1");
	HAS(text, "ward_tenant_gpus_leased{tenant=\"other\"} 0");
	HAS(text, "ward_tenant_gpus_leased{tenant=\"idle\"} 0");
	free(text);

	CHECK(ward_metrics_collect(root, root, cgroot, configured, "other", 1100, &m, &err) == 0,
	      "collect one tenant");
	text = ward_metrics_render(&m);
	ward_metrics_clear(&m);
	CHECK(exposition_valid(text), "one tenant: valid exposition");
	HASNT(text, "acme", "one tenant: nothing of another tenant");
	HAS(text, "ward_gpu_quarantined{uuid=\"GPU-b\"} 1");
	HAS(text, "ward_cgroup_found{scope=\"container\",tenant=\"other\",namespace=\"\",pod=\"\","
		  "container=\"c2\",id=\"c2\"} 1");
	free(text);

	free(gpudir);
	gpudir = xasprintf("%s/nowhere", tmp);
	CHECK(ward_metrics_collect(gpudir, gpudir, NULL, NULL, NULL, 0, &m, &err) == 0 &&
		  m.n_cg == 0,
	      "a missing state root has no containers");
	text = ward_metrics_render(&m);
	CHECK(text && !*text, "nothing to report: empty text");
	free(text);
	ward_metrics_clear(&m);
	free(gpudir);
	free(root);
	free(cgroot);
	free(tcg);
	free(ccg);
	free(ocg);
}

int main(void)
{
	char *cmd;
	if (!mkdtemp(tmp))
		return 2;
	test_escape();
	test_cgroup_read();
	test_collect_render();
	cmd = xasprintf("rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		return 2;
	free(cmd);
	TAP_DONE();
}
