# ward: build, test, demo, install. `make help` lists targets.
CC      ?= gcc
HOSTCC  ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
VERSION := 0.1.0
COMMIT  := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

WARN     := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral
HARDEN   := -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE
CPPFLAGS += -D_GNU_SOURCE -iquote runtime/lib -I/usr/include/libnl3 \
            -DWARD_VERSION='"$(VERSION)"' -DWARD_COMMIT='"$(COMMIT)"' \
            -DWARD_BINDIR='"$(PREFIX)/bin"'
# No -g by default: create/run/exec copy the binary into a sealed memfd on every call.
CFLAGS   ?= -O2
# override: `make CFLAGS=...` (asan, valgrind) replaces the optimisation and debug flags,
# never the language, warnings, hardening or dependency files.
override CFLAGS  += -std=gnu11 $(WARN) $(HARDEN) -ffunction-sections -fdata-sections -MMD -MP
override LDFLAGS += -Wl,-z,relro,-z,now -Wl,--gc-sections
# The ward binary is static-pie: no dynamic loader at all (it ran twice per create/run/exec,
# once more after the sealed re-exec), still ASLR + RELRO. STATIC=0 links it dynamically
# (sanitizers, valgrind). Tests and helpers always link dynamically.
STATIC   ?= 1
ifeq ($(STATIC),1)
WARD_LDFLAGS := -static-pie
else
WARD_LDFLAGS := -pie
endif
# Linked statically: every ward invocation pays the loader, twice when it re-execs
# from a sealed memfd, and static libraries cut that in half.
LIBS     := -lseccomp -lcap -ljansson -lnl-route-3 -lnl-3 -lpthread -lm

LIB_SRCS  := $(sort $(wildcard runtime/lib/*.c))
CLI_SRCS  := $(sort $(wildcard runtime/*.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
HELPER_SRCS := $(sort $(wildcard tests/helpers/*.c))

LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/seccomp_builtin.o
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# Checks of the source tree run with the unit tests (TAP): no include cycle between modules.
UNIT_CHECKS := $(sort $(wildcard tests/unit/check_*.py))
HELPER_BINS := $(HELPER_SRCS:tests/helpers/%.c=$(BUILD)/tests/%)

.PHONY: all test test-unit test-integration test-vm test-fuzz fuzz fuzz-build demo install asan valgrind valgrind-run bench bench-vm bench-shim bench-cri bench-gpu bench-idpool format clean help deps man dead-code

all: $(BUILD)/ward $(BUILD)/containerd-shim-ward-v2 $(BUILD)/ward-gpu-hook $(BUILD)/ward-net-hook \
	$(BUILD)/ward-audit-hook

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The ward-default AppArmor profile is linked in with .incbin (runtime/lib/apparmor.c).
$(BUILD)/runtime/lib/apparmor.o: runtime/apparmor/ward-default
$(BUILD)/runtime/lib/seccomp_profiles.o: $(wildcard seccomp-profiles/*.json)
# The built-in profiles also in their typed form (seccomp_profiles.h), made at build time
# by a small host tool from the same JSON: no profile is parsed per container.
BUILTIN_PROFILES := default strict privileged
$(BUILD)/seccomp-builtin-gen: seccomp-profiles/builtin-gen.c
	@mkdir -p $(dir $@)
	$(HOSTCC) -O2 -Wall -Wextra -Werror -o $@ $< -ljansson
$(BUILD)/seccomp_builtin.c: $(BUILD)/seccomp-builtin-gen $(BUILTIN_PROFILES:%=seccomp-profiles/%.json)
	$< $(foreach p,$(BUILTIN_PROFILES),$(p) seccomp-profiles/$(p).json) >$@.tmp && mv $@.tmp $@
$(BUILD)/seccomp_builtin.o: $(BUILD)/seccomp_builtin.c
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The objects that compile WARD_COMMIT in are rebuilt when HEAD moves: the stamp is
# rewritten only when the commit differs from the one it holds.
COMMIT_OBJS := $(BUILD)/runtime/main.o $(BUILD)/shim/main.o $(BUILD)/shim/bootstrap.o \
               $(BUILD)/runtime/lib/seccomp.o
$(COMMIT_OBJS): $(BUILD)/commit.stamp
$(BUILD)/commit.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(COMMIT)' | cmp -s - $@ || echo '$(COMMIT)' >$@
.PHONY: FORCE
FORCE:

$(BUILD)/libward.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/ward: $(CLI_OBJS) $(BUILD)/libward.a
	$(CC) $(CFLAGS) $(LDFLAGS) $(WARD_LDFLAGS) -o $@ $(CLI_OBJS) $(BUILD)/libward.a $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libward.a tests/unit/tap.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote tests/unit $(CFLAGS) $(LDFLAGS) -pie -o $@ $< $(BUILD)/libward.a $(LIBS)

$(BUILD)/tests/%: tests/helpers/%.c $(BUILD)/libward.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -pie -o $@ $< $(BUILD)/libward.a $(LIBS)

# --- containerd shim (shim/): protobuf messages generated at build time -------------------
# Debian's golang-github-containerd-containerd-dev protos (and google/protobuf from
# libprotobuf-dev) are copied into $(BUILD)/proto/ under their import paths with every
# gogoproto option and import stripped, then protoc-c writes $(BUILD)/proto-c/. Nothing
# generated is committed. Shim code includes e.g.
# "github.com/containerd/containerd/runtime/v2/task/shim.pb-c.h".
GOCODE       := /usr/share/gocode/src
PROTO_GO     := github.com/containerd/containerd/runtime/v2/task/shim.proto \
                github.com/containerd/containerd/api/types/mount.proto \
                github.com/containerd/containerd/api/types/task/task.proto \
                github.com/containerd/containerd/api/types/metrics.proto \
                github.com/containerd/containerd/api/events/task.proto \
                github.com/containerd/containerd/api/services/ttrpc/events/v1/events.proto \
                github.com/containerd/cgroups/v2/stats/metrics.proto \
                github.com/containerd/containerd/pkg/runtimeoptions/v1/api.proto
PROTO_GOOGLE := google/protobuf/any.proto google/protobuf/empty.proto \
                google/protobuf/timestamp.proto google/rpc/status.proto
# Messages Debian ships no .proto for (the ttrpc envelope, containerd 2.x's BootstrapParams
# and RuntimeInfo): written from the reference in shim/proto/, under their import paths.
PROTO_SHIM   := github.com/containerd/ttrpc/request.proto \
                github.com/containerd/containerd/api/runtime/bootstrap/v1/bootstrap.proto \
                github.com/containerd/containerd/api/types/introspection.proto
PROTO_FILES  := $(PROTO_GO) $(PROTO_GOOGLE) $(PROTO_SHIM)
PROTO_C      := $(PROTO_FILES:%.proto=$(BUILD)/proto-c/%.pb-c.c)
PROTO_H      := $(PROTO_FILES:%.proto=$(BUILD)/proto-c/%.pb-c.h)
PROTO_OBJS   := $(PROTO_C:.c=.o)
PROTO_LIBS   := -lprotobuf-c
# gogoproto is only Go codegen sugar; dropping it leaves the wire format unchanged. Options
# are removed per bracket ("[(gogoproto...)]"), never per line: those lines carry fields.
PROTO_SED    := -e '/gogoproto\/gogo.proto/d' -e '/fieldpath.proto/d' \
                -e '/option[[:space:]]*(gogoproto/d' -e '/option[[:space:]]*(containerd.plugin/d' \
                -e 's/[[:space:]]*\[(gogoproto[^]]*\]//'

$(BUILD)/proto/github.com/%.proto: $(GOCODE)/github.com/%.proto
	@mkdir -p $(dir $@)
	sed $(PROTO_SED) $< > $@

$(BUILD)/proto/google/protobuf/%.proto: /usr/include/google/protobuf/%.proto
	@mkdir -p $(dir $@)
	cp $< $@

# google.rpc.Status (the ttrpc Response's status) from Debian's gogo googleapis.
$(BUILD)/proto/google/rpc/%.proto: $(GOCODE)/github.com/gogo/googleapis/google/rpc/%.proto
	@mkdir -p $(dir $@)
	cp $< $@

$(PROTO_SHIM:%=$(BUILD)/proto/%): $(BUILD)/proto/%: shim/proto/%
	@mkdir -p $(dir $@)
	cp $< $@

$(BUILD)/proto-c/.stamp: $(PROTO_FILES:%=$(BUILD)/proto/%)
	@rm -rf $(BUILD)/proto-c && mkdir -p $(BUILD)/proto-c
	protoc-c -I$(BUILD)/proto --c_out=$(BUILD)/proto-c $(PROTO_FILES)
	@touch $@

$(PROTO_C) $(PROTO_H): $(BUILD)/proto-c/.stamp ;

# protoc-c 1.4's output builds with the full warning set; this rule is where to relax it.
$(BUILD)/proto-c/%.pb-c.o: $(BUILD)/proto-c/%.pb-c.c
	$(CC) $(CPPFLAGS) -I$(BUILD)/proto-c $(CFLAGS) -c -o $@ $<

# Shim library: every shim/*.c except main.c, plus the generated messages. The shim binary
# links main.o + libwardshim.a + libward.a + $(PROTO_LIBS).
SHIM_LIB_SRCS := $(filter-out shim/main.c,$(sort $(wildcard shim/*.c)))
SHIM_LIB_OBJS := $(SHIM_LIB_SRCS:%.c=$(BUILD)/%.o)
SHIM_CPPFLAGS := -iquote shim -I$(BUILD)/proto-c
$(BUILD)/shim/%.o: shim/%.c $(BUILD)/proto-c/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(SHIM_CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/libwardshim.a: $(SHIM_LIB_OBJS) $(PROTO_OBJS)
	@rm -f $@
	ar rcs $@ $^

# containerd-shim-ward-v2: linked like ward (STATIC=1: static-pie).
$(BUILD)/containerd-shim-ward-v2: $(BUILD)/shim/main.o $(BUILD)/libwardshim.a $(BUILD)/libward.a
	$(CC) $(CFLAGS) $(LDFLAGS) $(WARD_LDFLAGS) -o $@ $(BUILD)/shim/main.o $(BUILD)/libwardshim.a \
		$(BUILD)/libward.a $(PROTO_LIBS) $(LIBS)

# test_ttrpc links ttrpc.o and the generated messages only (not the rest of the shim).
$(BUILD)/tests/test_ttrpc: tests/unit/test_ttrpc.c $(BUILD)/shim/ttrpc.o $(PROTO_OBJS) $(BUILD)/libward.a tests/unit/tap.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(SHIM_CPPFLAGS) -iquote tests/unit $(CFLAGS) $(LDFLAGS) -pie -o $@ $< \
		$(BUILD)/shim/ttrpc.o $(PROTO_OBJS) $(BUILD)/libward.a $(PROTO_LIBS) $(LIBS)

# test_events links events.o, ttrpc.o and the generated messages.
$(BUILD)/tests/test_events: tests/unit/test_events.c $(BUILD)/shim/events.o $(BUILD)/shim/ttrpc.o $(PROTO_OBJS) $(BUILD)/libward.a tests/unit/tap.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(SHIM_CPPFLAGS) -iquote tests/unit $(CFLAGS) $(LDFLAGS) -pie -o $@ $< \
		$(BUILD)/shim/events.o $(BUILD)/shim/ttrpc.o $(PROTO_OBJS) $(BUILD)/libward.a $(PROTO_LIBS) $(LIBS)

# test_bootstrap links the shim library (bootstrap.o pulls in the rest) and the messages.
$(BUILD)/tests/test_bootstrap: tests/unit/test_bootstrap.c $(BUILD)/libwardshim.a $(BUILD)/libward.a tests/unit/tap.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(SHIM_CPPFLAGS) -iquote tests/unit $(CFLAGS) $(LDFLAGS) -pie -o $@ $< \
		$(BUILD)/libwardshim.a $(BUILD)/libward.a $(PROTO_LIBS) $(LIBS)

# shim-client (tests/shim.bats): a Task API client, linked like test_ttrpc.
$(BUILD)/tests/shim-client: tests/helpers/shim-client.c $(BUILD)/shim/ttrpc.o $(PROTO_OBJS) $(BUILD)/libward.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(SHIM_CPPFLAGS) $(CFLAGS) $(LDFLAGS) -pie -o $@ $< \
		$(BUILD)/shim/ttrpc.o $(PROTO_OBJS) $(BUILD)/libward.a $(PROTO_LIBS) $(LIBS)

# --- GPU hook (gpu-hooks/) ---------------------------------------------------------------
# ward-gpu-hook is a dynamic executable (-pie, never static-pie): its wipe helper dlopens
# libcuda.so.1, which a static binary cannot do reliably.
GPU_HOOK_SRCS := $(sort $(wildcard gpu-hooks/*.c))
GPU_HOOK_OBJS := $(GPU_HOOK_SRCS:%.c=$(BUILD)/%.o)
$(BUILD)/gpu-hooks/%.o: gpu-hooks/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote gpu-hooks $(CFLAGS) -c -o $@ $<

# With STATIC=1 everything but libc is linked in, and not libm, which nothing of the hook
# uses: each shared object the loader maps costs every create of a GPU container (about
# 0.15 ms for libm alone on the 2-core test host).
ifeq ($(STATIC),1)
GPU_HOOK_LIBS := -Wl,-Bstatic -lseccomp -lcap -ljansson -lnl-route-3 -lnl-3 -Wl,-Bdynamic \
                 -lpthread -ldl
else
GPU_HOOK_LIBS := $(LIBS) -ldl
endif
$(BUILD)/ward-gpu-hook: $(GPU_HOOK_OBJS) $(BUILD)/libward.a
	$(CC) $(CFLAGS) $(LDFLAGS) -pie -o $@ $(GPU_HOOK_OBJS) $(BUILD)/libward.a $(GPU_HOOK_LIBS)

# --- debug network hook (hooks/net*.c): linked like ward (STATIC=1: static-pie) ----------
NET_HOOK_SRCS := $(sort $(wildcard hooks/net*.c))
NET_HOOK_OBJS := $(NET_HOOK_SRCS:%.c=$(BUILD)/%.o)
$(BUILD)/ward-net-hook: $(NET_HOOK_OBJS) $(BUILD)/libward.a
	$(CC) $(CFLAGS) $(LDFLAGS) $(WARD_LDFLAGS) -o $@ $(NET_HOOK_OBJS) $(BUILD)/libward.a $(LIBS)
-include $(NET_HOOK_OBJS:.o=.d)

# --- audit hook (hooks/audit*.c): linked like ward (STATIC=1: static-pie) ---------------
AUDIT_HOOK_SRCS := $(sort $(wildcard hooks/audit*.c))
AUDIT_HOOK_OBJS := $(AUDIT_HOOK_SRCS:%.c=$(BUILD)/%.o)
$(BUILD)/ward-audit-hook: $(AUDIT_HOOK_OBJS) $(BUILD)/libward.a
	$(CC) $(CFLAGS) $(LDFLAGS) $(WARD_LDFLAGS) -o $@ $(AUDIT_HOOK_OBJS) $(BUILD)/libward.a $(LIBS)
-include $(AUDIT_HOOK_OBJS:.o=.d)

# test_gpu_wipe links the scrubber (gpu-hooks/wipe.o) and drives it against the stub.
$(BUILD)/tests/test_gpu_wipe: tests/unit/test_gpu_wipe.c $(BUILD)/gpu-hooks/wipe.o $(BUILD)/libward.a $(BUILD)/tests/gpu/libcuda.so.1 tests/unit/tap.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote gpu-hooks -iquote tests/unit $(CFLAGS) $(LDFLAGS) -pie -o $@ $< \
		$(BUILD)/gpu-hooks/wipe.o $(BUILD)/libward.a $(LIBS) -ldl

# The stub libcuda.so.1 the GPU tests load instead of NVIDIA's (tests/gpu/stub-libcuda.c):
# "device memory" is a file; knobs in files beside the library.
HELPER_BINS += $(BUILD)/tests/gpu/libcuda.so.1
$(BUILD)/tests/gpu/libcuda.so.1: tests/gpu/stub-libcuda.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 -o $@ $<

# wipe-run: runs the scrubber once and prints its report (tests/gpu/real-gpu.sh, bench).
HELPER_BINS += $(BUILD)/tests/gpu/wipe-run
$(BUILD)/tests/gpu/wipe-run: tests/gpu/wipe-run.c $(BUILD)/gpu-hooks/wipe.o $(BUILD)/libward.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote gpu-hooks $(CFLAGS) $(LDFLAGS) -pie -o $@ $< \
		$(BUILD)/gpu-hooks/wipe.o $(BUILD)/libward.a $(LIBS) -ldl

# Programs that run inside test containers (bare busybox root filesystems): static and
# without libward, so built with plain flags whatever CFLAGS say (sanitizers cannot link
# statically).
STATIC_HELPER_CFLAGS := -std=gnu11 $(WARN) -O2

# The escape battery's probe (tests/security/escape.bats).
HELPER_BINS += $(BUILD)/tests/ward-probe
$(BUILD)/tests/ward-probe: tests/security/probe.c
	@mkdir -p $(dir $@)
	$(CC) $(STATIC_HELPER_CFLAGS) -static -o $@ $<

# The pause image's /pause (tests/cri/harness.bash builds the CRI test images with it).
HELPER_BINS += $(BUILD)/tests/cri-pause
$(BUILD)/tests/cri-pause: tests/cri/pause.c
	@mkdir -p $(dir $@)
	$(CC) $(STATIC_HELPER_CFLAGS) -static -o $@ $<

# Run inside test containers (busybox rootfs): static, without libward.
$(BUILD)/tests/cgprobe: tests/helpers/cgprobe.c
	@mkdir -p $(dir $@)
	$(CC) $(STATIC_HELPER_CFLAGS) -static -o $@ $<

# Enters a running container's mount namespace (tests/gpu.bats): plain flags, because a
# sanitizer's exit-time checks read /proc/self, which is the container's /proc there.
$(BUILD)/tests/bind-into: tests/helpers/bind-into.c
	@mkdir -p $(dir $@)
	$(CC) $(STATIC_HELPER_CFLAGS) -static -o $@ $<

$(BUILD)/tests/socket-probe: tests/helpers/socket-probe.c
	@mkdir -p $(dir $@)
	$(CC) $(STATIC_HELPER_CFLAGS) -static -o $@ $<

# --- fuzzing (tests/fuzz/): libFuzzer targets ----------------------------------------------
# Debian's clang (and libclang-rt-14-dev for libFuzzer and the sanitizer runtimes). The
# library is built again with clang, coverage instrumentation and ASan/UBSan in its own
# directory (FUZZ_BUILD), and each tests/fuzz/fuzz_NAME.c links against that libward.a.
FUZZ_BUILD  := build-fuzz
FUZZ_CC     ?= clang
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
               -fno-sanitize-recover=undefined
FUZZ_SRCS   := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES  := $(FUZZ_SRCS:tests/fuzz/fuzz_%.c=%)
FUZZ_BINS   := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz/fuzz_%)
# make fuzz: seconds per target (FUZZ_TARGETS: a subset of the names, e.g. "spec config").
FUZZ_TIME    ?= 300
FUZZ_TARGETS ?= $(FUZZ_NAMES)

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(BUILD)/libward.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -iquote tests/fuzz $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -pie -o $@ $< \
		$(BUILD)/libward.a $(LIBS)
-include $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%.d)

fuzz-build:
	$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) STATIC=0 CC=$(FUZZ_CC) \
		CFLAGS='$(FUZZ_CFLAGS)' LDFLAGS='-fsanitize=address,undefined' $(FUZZ_BINS)

# The long run: FUZZ_TIME seconds per target, a growing corpus in $(FUZZ_BUILD)/corpus/
# (seeded from tests/fuzz/corpus/), crashing inputs in $(FUZZ_BUILD)/crashes/.
fuzz: fuzz-build
	@FUZZ_TIME=$(FUZZ_TIME) bash tests/fuzz/run.sh --long $(FUZZ_BUILD) $(FUZZ_TARGETS)

# The short bounded run `make test` does (one TAP line per target). A failed fuzz build
# removes the fuzz programs, so every target is reported as a failure, never skipped.
test-fuzz:
	@$(MAKE) -s --no-print-directory fuzz-build || rm -f $(FUZZ_BINS)
	@bash tests/run-all.sh --fuzz-only --fuzz $(abspath $(FUZZ_BUILD))

# The README's test command. The last line is "N passed, N failed[, N skipped]".
test: all $(UNIT_BINS) $(HELPER_BINS)
	@$(MAKE) -s --no-print-directory fuzz-build || rm -f $(FUZZ_BINS)
	@WARD=$(abspath $(BUILD)/ward) WARD_TEST_BIN=$(abspath $(BUILD)/tests) \
		bash tests/run-all.sh --fuzz $(abspath $(FUZZ_BUILD)) $(UNIT_BINS) $(UNIT_CHECKS)

test-unit: $(UNIT_BINS)
	@bash tests/run-all.sh --unit-only $(UNIT_BINS) $(UNIT_CHECKS)

# Only the bats suites whose names match T (make test-integration T=lifecycle).
test-integration: all $(HELPER_BINS)
	@WARD=$(abspath $(BUILD)/ward) WARD_TEST_BIN=$(abspath $(BUILD)/tests) \
		bash tests/run-all.sh --bats-only --filter '$(T)'

# Only the VM suites (tests/vm/*.bats): Debian's kernel under qemu (TCG), cgroup2 and AppArmor.
test-vm: all $(HELPER_BINS)
	@WARD=$(abspath $(BUILD)/ward) WARD_TEST_BIN=$(abspath $(BUILD)/tests) \
		bash tests/vm/run-vm.sh

deps:
	@bash .ci/install-deps.sh

demo: 
	@bash .ci/install-deps.sh --if-missing
	@$(MAKE) --no-print-directory all
	@bash tests/demo.sh $(abspath $(BUILD)/ward)

install: all
	install -D -m 0755 $(BUILD)/ward $(DESTDIR)$(PREFIX)/bin/ward
	install -D -m 0755 $(BUILD)/containerd-shim-ward-v2 $(DESTDIR)$(PREFIX)/bin/containerd-shim-ward-v2
	install -D -m 0755 $(BUILD)/ward-gpu-hook $(DESTDIR)$(PREFIX)/bin/ward-gpu-hook
	install -D -m 0755 $(BUILD)/ward-net-hook $(DESTDIR)$(PREFIX)/bin/ward-net-hook
	install -D -m 0755 $(BUILD)/ward-audit-hook $(DESTDIR)$(PREFIX)/bin/ward-audit-hook
	install -D -m 0644 man/ward.8 $(DESTDIR)$(PREFIX)/share/man/man8/ward.8
	install -D -m 0644 man/ward-tenants.5 $(DESTDIR)$(PREFIX)/share/man/man5/ward-tenants.5
	install -D -m 0644 man/containerd-shim-ward-v2.8 $(DESTDIR)$(PREFIX)/share/man/man8/containerd-shim-ward-v2.8
	install -D -m 0644 man/ward-net-hook.8 $(DESTDIR)$(PREFIX)/share/man/man8/ward-net-hook.8
	install -D -m 0644 man/ward-gpu-hook.8 $(DESTDIR)$(PREFIX)/share/man/man8/ward-gpu-hook.8
	install -D -m 0644 man/ward-audit-hook.8 $(DESTDIR)$(PREFIX)/share/man/man8/ward-audit-hook.8

# Sanitizer build in its own directory, then the full suite against it.
asan:
	LSAN_OPTIONS=suppressions=$(abspath tests/unit/lsan.supp):print_suppressions=0 \
	$(MAKE) BUILD=build-asan STATIC=0 CFLAGS='-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined' \
		LDFLAGS='-fsanitize=address,undefined' test

# Unit tests under valgrind, then ward's own commands under valgrind (a dynamically linked
# debug build in build-vg). valgrind 3.19 lacks openat2/fsopen/open_tree, so the mount
# path of create is covered by `make asan` instead.
valgrind:
	$(MAKE) BUILD=build-vg STATIC=0 CFLAGS='-O1 -g' valgrind-run

valgrind-run: all $(UNIT_BINS) $(HELPER_BINS)
	@WARD_VALGRIND=1 bash tests/run-all.sh --unit-only $(UNIT_BINS)
	@bash tests/valgrind-runtime.sh $(abspath $(BUILD)/ward)

bench: all $(BUILD)/tests/cri-pause
	@bash tests/bench/run-latency $(abspath $(BUILD)/ward)
	@WARD_TEST_BIN=$(abspath $(BUILD)/tests) bash tests/bench/cri-pod-start

# The same comparison inside the test VM (tests/vm): create + start + delete with limits.
bench-vm: all
	@bash tests/bench/run-latency-vm $(abspath $(BUILD)/ward)

# GPU injection's added create latency on the fake GPU host; the stub wipe's throughput.
bench-gpu: all $(HELPER_BINS)
	@WARD_TEST_BIN=$(abspath $(BUILD)/tests) bash tests/bench/gpu-inject $(abspath $(BUILD)/ward)
	@BUILD=$(BUILD) bash tests/bench/gpu-wipe

# containerd-shim-ward-v2 vs containerd-shim-runc-v2: PSS per pod, ctr run --rm latency.
bench-shim: all
	@bash tests/bench/shim

# Functions no program uses (a list to judge, not a test): tests/dead-code.sh.
dead-code: all
	@bash tests/dead-code.sh $(BUILD)

# A CRI pod start (RunPodSandbox + CreateContainer + StartContainer) and its teardown through
# containerd's CRI plugin, ward vs runc, interleaved; target ward/runc <= 0.7 (issue 15).
# The ID pool's cost with 0, 110 and 500 live pods (BASE_LIB=<an older libward.a>: compared).
bench-idpool:
	@BUILD=$(BUILD) bash tests/bench/idpool

bench-cri: all $(BUILD)/tests/cri-pause
	@WARD_TEST_BIN=$(abspath $(BUILD)/tests) bash tests/bench/cri-pod-start

man: man/ward.8 man/ward-tenants.5 man/containerd-shim-ward-v2.8 man/ward-net-hook.8 \
	man/ward-audit-hook.8 man/ward-gpu-hook.8

man/ward.8: man/ward.8.md
	go-md2man -in $< -out $@

man/ward-tenants.5: man/ward-tenants.5.md
	go-md2man -in $< -out $@

man/containerd-shim-ward-v2.8: man/containerd-shim-ward-v2.8.md
	go-md2man -in $< -out $@

man/ward-net-hook.8: man/ward-net-hook.8.md
	go-md2man -in $< -out $@

man/ward-gpu-hook.8: man/ward-gpu-hook.8.md
	go-md2man -in $< -out $@

man/ward-audit-hook.8: man/ward-audit-hook.8.md
	go-md2man -in $< -out $@

format:
	clang-format -i $$(git ls-files '*.c' '*.h') $(LIB_SRCS) $(CLI_SRCS) $(UNIT_SRCS) $(HELPER_SRCS)

clean:
	rm -rf build build-asan $(FUZZ_BUILD)

help:
	@echo "targets: all test test-unit test-integration test-vm test-fuzz fuzz demo install asan valgrind bench bench-cri bench-vm dead-code format clean"
	@echo "  fuzz: libFuzzer on the parsers (tests/fuzz/), FUZZ_TIME=300 seconds per target,"
	@echo "        FUZZ_TARGETS='$(FUZZ_NAMES)'; crashes in $(FUZZ_BUILD)/crashes/"
	@echo "  test-fuzz: the short bounded fuzz run that make test includes"

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(SHIM_LIB_OBJS:.o=.d) $(BUILD)/shim/main.d \
	$(GPU_HOOK_OBJS:.o=.d)
