# agentd: kernel-enforced supervisor for AI agents.
#   make            build everything into build/
#   make check      install what is missing, build, run every test tier (unit, host, VM)
#   make demo       the first enforced rule, live in a VM with BPF LSM
#   make bench      benchmarks (docs/PERFORMANCE.md)
#   make deps       install the Debian/Ubuntu packages needed to build, test and run
#   make format / make lint
# V=1 shows every command.

OUT := build
VERSION := $(shell sed -n 's/^#define AGENTD_VERSION "\(.*\)"/\1/p' userspace/lib/version.h)
# make install: the usual conventions (DESTDIR for staging). Configuration, state and runtime
# directories are the daemon's own fixed paths (/etc/agentd, /var/lib/agentd, /run/agentd).
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/agentd
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
UNITDIR ?= $(PREFIX)/lib/systemd/system
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
CONFDIR ?= /etc/agentd
CLANG ?= clang
CC ?= cc
BPFTOOL ?= bpftool
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -dumpmachine 2>/dev/null)

comma := ,

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:
.SECONDEXPANSION:

# Packages needed to build, test and run; `make deps` installs what is missing.
DEPS := make clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libseccomp-dev libjansson-dev \
	pkg-config gcc libc6-dev qemu-system-x86 busybox-static cpio gzip clang-format cppcheck \
	libclang-rt-14-dev libssl-dev iproute2 util-linux python3 python3-jsonschema curl \
	dpkg-dev debhelper lintian libsystemd-dev prometheus nodejs \
	git perl python3-venv python3-pip python3-setuptools python3-wheel

BPF_CFLAGS := -g -O2 -Wall -Werror -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) \
	-I include -I bpf -I /usr/include/$(MULTIARCH)
CFLAGS := -g -O2 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -I include -I userspace/lib \
	-I $(OUT)
SAN_CFLAGS := $(CFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDLIBS := -lbpf -lelf -lz -ljansson -lcrypto -lseccomp
# Flags a packager adds (debian/rules: Debian's hardening flags).
CFLAGS += $(EXTRA_CFLAGS)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
# Programs only the benchmarks load live beside them.
BENCH_BPF_SRCS := $(wildcard selftests/bench/bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS)) \
	$(patsubst selftests/bench/bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BENCH_BPF_SRCS))
SKELS := $(patsubst %.bpf.o,%.skel.h,$(subst /bpf/,/,$(BPF_OBJS)))
# The objects that walk paths, built again for Linux 6.2 and later: there the walk above the
# object's mount reads through bpf_rdonly_cast() (bpf/rights.bpf.h), and the enforcer loads them.
RO_BPF := files exec
SKELS += $(patsubst %,$(OUT)/%_ro.skel.h,$(RO_BPF))
LIB_SRCS := $(wildcard userspace/lib/*.c userspace/lib/*/*.c)
LIB_OBJS := $(patsubst userspace/lib/%.c,$(OUT)/lib/%.o,$(LIB_SRCS))
SAN_LIB_OBJS := $(patsubst userspace/lib/%.c,$(OUT)/san/lib/%.o,$(LIB_SRCS))
HDRS := $(wildcard include/agentd/*.h userspace/lib/*.h userspace/lib/*/*.h)
HARNESS := selftests/harness.c selftests/harness.h selftests/testlib.c selftests/testlib.h
# The skeletons the given sources include: each object waits for its own, not for all of them.
skels_of = $(sort $(patsubst %,$(OUT)/%,$(shell sed -n 's/^\#include "\(.*\.skel\.h\)"/\1/p' $(1))))

FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -I include -I userspace/lib \
	-I $(OUT) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_LIB_OBJS := $(patsubst userspace/lib/%.c,$(OUT)/fuzz/lib/%.o,$(LIB_SRCS))
FUZZERS := $(patsubst selftests/fuzz/%.c,$(OUT)/fuzz/%,$(wildcard selftests/fuzz/fuzz_*.c))

PROGS := $(OUT)/agentd $(OUT)/agentctl $(OUT)/agent-tool $(OUT)/agentd-worker $(OUT)/agentd-drill
BENCHES := $(patsubst selftests/bench/%.c,$(OUT)/selftests/%,$(wildcard selftests/bench/bench_*.c))
TESTS := $(OUT)/selftests/test_unit $(OUT)/selftests/test_host $(OUT)/selftests/test_kernel \
	$(BENCHES) $(OUT)/selftests/bench_audit_writer

.PHONY: all
all: $(PROGS) $(TESTS) $(FUZZERS)

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(wildcard include/agentd/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/bpf/%.bpf.o: selftests/bench/bpf/%.bpf.c $(wildcard bpf/*.h) $(wildcard include/agentd/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/bpf/%_ro.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(wildcard include/agentd/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DAGENTD_RDONLY_CAST -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

$(OUT)/lib/%.o: userspace/lib/%.c $(HDRS) $$(call skels_of,userspace/lib/$$*.c)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/san/lib/%.o: userspace/lib/%.c $(HDRS) $$(call skels_of,userspace/lib/$$*.c)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) -c $< -o $@

$(OUT)/libagentd.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

AGENTD_SRCS := $(wildcard userspace/agentd/*.c userspace/agentd/*/*.c)
AGENTD_HDRS := $(wildcard userspace/agentd/*.h userspace/agentd/*/*.h)

$(OUT)/agentd: $(AGENTD_SRCS) $(OUT)/libagentd.a $(HDRS) $(AGENTD_HDRS)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) -I userspace/agentd -DAGENTD_LIBEXECDIR='"$(LIBEXECDIR)/agentd"' $(EXTRA_LDFLAGS) $(filter %.c,$^) $(OUT)/libagentd.a $(LDLIBS) -lsystemd -o $@

$(OUT)/agentctl: $(wildcard userspace/agentctl/*.c) $(OUT)/libagentd.a $(HDRS)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) $(EXTRA_LDFLAGS) $(filter %.c,$^) $(OUT)/libagentd.a $(LDLIBS) -o $@

$(OUT)/agent-tool: $(wildcard userspace/agent-tool/*.c) $(OUT)/libagentd.a $(HDRS)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) $(EXTRA_LDFLAGS) $(filter %.c,$^) $(OUT)/libagentd.a $(LDLIBS) -o $@

$(OUT)/agentd-worker: $(wildcard userspace/workers/*.c) $(wildcard userspace/workers/*.h) $(OUT)/libagentd.a $(HDRS)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) $(EXTRA_LDFLAGS) $(filter %.c,$^) $(OUT)/libagentd.a $(LDLIBS) -o $@

$(OUT)/agentd-drill: $(wildcard userspace/drill/*.c) $(wildcard userspace/drill/*.h) $(OUT)/libagentd.a $(HDRS)
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) $(EXTRA_LDFLAGS) $(filter %.c,$^) $(OUT)/libagentd.a $(LDLIBS) -o $@

# Unit tier: the library's logic under ASan+UBSan, no root.
$(OUT)/selftests/test_unit: $(wildcard selftests/unit/*.c) $(HARNESS) $(SAN_LIB_OBJS) $(HDRS)
	$(call msg,CCLD-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) -I selftests $(filter %.c,$^) $(SAN_LIB_OBJS) $(LDLIBS) -o $@

# Network tests (cgroup-BPF) run in both the host tier and the VM tier.
NET_TESTS := $(wildcard selftests/net/*.c)
# The shipped profiles' sessions too (selftests/sessions/).
NET_TESTS += $(wildcard selftests/sessions/*.c) selftests/sessions/session.h

$(OUT)/selftests/test_host: $(wildcard selftests/host/*.c) $(NET_TESTS) $(HARNESS) $(OUT)/libagentd.a $(HDRS)
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I selftests $(filter %.c,$^) $(OUT)/libagentd.a $(LDLIBS) -o $@

$(OUT)/selftests/test_kernel: $(wildcard selftests/kernel/*.c) $(NET_TESTS) $(HARNESS) \
		$(OUT)/libagentd.a $(HDRS) $(call skels_of,$(wildcard selftests/kernel/*.c))
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I selftests $(filter %.c,$^) $(OUT)/libagentd.a $(LDLIBS) -o $@

$(OUT)/selftests/bench_%: selftests/bench/bench_%.c selftests/bench/common.c \
		selftests/bench/common.h $(OUT)/libagentd.a $(HDRS) \
		$$(call skels_of,selftests/bench/bench_$$*.c selftests/bench/common.c)
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I selftests $(filter %.c,$^) $(OUT)/libagentd.a $(LDLIBS) -o $@

$(OUT)/selftests/bench_audit_writer: selftests/audit/bench_writer.c $(OUT)/libagentd.a $(HDRS)
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I selftests $(filter %.c,$^) $(OUT)/libagentd.a $(LDLIBS) -o $@

# libFuzzer targets, one per parser of untrusted bytes (clang: libFuzzer is clang's).
$(OUT)/fuzz/lib/%.o: userspace/lib/%.c $(HDRS) $$(call skels_of,userspace/lib/$$*.c)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(subst fuzzer$(comma),fuzzer-no-link$(comma),$(FUZZ_CFLAGS)) -c $< -o $@

$(OUT)/fuzz/fuzz_%: selftests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS) $(HDRS)
	$(call msg,CCLD-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(FUZZ_LIB_OBJS) $(LDLIBS) -o $@

# Per-file objects of every userspace source, only for the cycle check of `make lint`.
CYCLE_OBJS := $(patsubst userspace/%.c,$(OUT)/cycles/%.o,$(wildcard userspace/*/*.c userspace/*/*/*.c))

$(OUT)/cycles/%.o: userspace/%.c $(HDRS) $$(call skels_of,userspace/$$*.c)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -I userspace/agentd -DAGENTD_LIBEXECDIR='"$(LIBEXECDIR)/agentd"' -c $< -o $@

# Installs only what is missing; needs root for that (and only for that).
.PHONY: deps
deps:
	$(Q)missing=$$(for p in $(DEPS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' \
			|| echo $$p; done); \
	if [ -z "$$missing" ]; then echo "deps: all installed"; exit 0; fi; \
	echo "deps: installing:" $$missing; \
	if [ "$$(id -u)" != 0 ]; then echo "deps: need root to install: $$missing" >&2; exit 1; fi; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -q && apt-get install -y -q --no-install-recommends $$missing
	$(Q)$(MAKE) --no-print-directory selftests/mcp/node_modules/.package-lock.json

# The official MCP SDK for the MCP tests (selftests/mcp/package-lock.json pins it), from npm.
selftests/mcp/node_modules/.package-lock.json: selftests/mcp/package.json selftests/mcp/package-lock.json
	$(call msg,NPM,$(@D))
	$(Q)command -v npm >/dev/null || apt-get install -y -q --no-install-recommends npm
	$(Q)cd selftests/mcp && npm ci --no-audit --no-fund --loglevel=error \
		|| { echo "deps: npm ci failed: the MCP tests will skip" >&2; [ "$${CI:-}" != true ]; }

.PHONY: check check-unit check-host check-vm check-pkg
# deps first, then a fresh make: the build's variables depend on the tools deps installs.
check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)selftests/run.sh all

check-unit: all
	$(Q)selftests/run.sh unit

check-host: all
	$(Q)selftests/run.sh host

check-pkg: all
	$(Q)selftests/run.sh pkg

# VM_KERNELS picks kernels (6.1, 6.12); VM_TEST_ARGS are passed to the tests in the guest.
check-vm: all
	$(Q)selftests/run.sh vm

# Each fuzzer for FUZZ_SECONDS (make check runs each for a few seconds).
FUZZ_SECONDS ?= 300
.PHONY: fuzz
fuzz: all
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) selftests/run.sh fuzz

.PHONY: bench demo
bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)echo "== host: the event pipeline, BPF to the audit log (selftests/bench/bench_events.c)"
	$(Q)$(OUT)/selftests/bench_events 1
	$(Q)$(OUT)/selftests/bench_events 2
	$(Q)echo "== host: 500,000 events/s offered for 60 s, rotation and gzip included"
	$(Q)$(OUT)/selftests/bench_events 1 64 60 500000
	$(Q)echo "== host: an agent's identity and configuration, cgroup/sock_create (selftests/bench/bench_identity.c)"
	$(Q)$(OUT)/selftests/bench_identity
	$(Q)echo "== host: the audit writer alone (selftests/audit/bench_writer.c)"
	$(Q)$(OUT)/selftests/bench_audit_writer -n 2000000
	$(Q)echo "== host: the tool broker's round trip (selftests/bench/bench_broker.c)"
	$(Q)$(OUT)/selftests/bench_broker 100000
	$(Q)echo "== host: a tools/call through agent-tool mcp against the socket directly (docs/MCP.md)"
	$(Q)$(OUT)/selftests/bench_broker 20000 mcp
	$(Q)echo "== host: the egress proxy against direct connections (selftests/bench/bench_proxy.c)"
	$(Q)$(OUT)/selftests/bench_proxy 4000 1024
	$(Q)echo "== host: a C build inside the coding agent against outside (selftests/bench/bench_session.sh)"
	$(Q)selftests/bench/bench_session.sh 5
	$(Q)echo "== VM: open+close, stat, exec and connect under the policy (selftests/bench/bench_open.c), and lsm/ against"
	$(Q)echo "   lsm_cgroup/ attachment (selftests/bench/bench_lsm_cgroup.c); end to end, agentd as a daemon and an agent"
	$(Q)echo "   through agentctl run, each ratio against issue 26's goals (selftests/bench/bench_e2e.c)"
	$(Q)VM_TIMEOUT=3600 selftests/vm/vm.sh bench

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)selftests/demo.sh

FORMAT_SRCS := $(wildcard bpf/*.[ch] selftests/bench/bpf/*.[ch] include/agentd/*.h userspace/*/*.[ch] userspace/*/*/*.[ch] selftests/*.[ch] \
	selftests/*/*.[ch] selftests/*/*/*.[ch])

.PHONY: format lint
format:
	$(Q)clang-format -i $(FORMAT_SRCS)

lint:
	$(Q)clang-format --dry-run -Werror $(FORMAT_SRCS)
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
		--inline-suppr --std=c11 -D_GNU_SOURCE -I include -I userspace/lib -I userspace/agentd \
		userspace selftests/unit selftests/harness.c
	$(Q)$(MAKE) --no-print-directory -s cycles

# No two source files depend on each other, through any chain (selftests/cycles.py).
.PHONY: cycles
cycles: $(CYCLE_OBJS)
	$(Q)python3 selftests/cycles.py $(CYCLE_OBJS)

# Installs the programs, the unit, tmpfiles.d entry, man pages, completion, docs, and the shipped
# policies and tools registry under CONFDIR; a configuration file the operator changed is kept,
# and the shipped one is put beside it as FILE.new.
CONF_FILES := $(wildcard policies/*.json policies/base/*.json)
DOC_FILES := README.md $(wildcard docs/*.md docs/*.schema.json)

.PHONY: install uninstall deb
install: $(PROGS)
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR)/agentd
	$(Q)install -m 0755 $(OUT)/agentd $(DESTDIR)$(SBINDIR)/agentd
	$(Q)install -m 0755 $(OUT)/agentd-worker $(DESTDIR)$(LIBEXECDIR)/agentd/agentd-worker
	$(Q)install -m 0755 $(OUT)/agentd-drill $(DESTDIR)$(LIBEXECDIR)/agentd/agentd-drill
	$(Q)install -m 0755 $(OUT)/agentctl $(OUT)/agent-tool $(DESTDIR)$(BINDIR)/
	$(Q)install -D -m 0644 userspace/agentd/agentd.service $(DESTDIR)$(UNITDIR)/agentd.service
	$(Q)sed -i 's|/usr/sbin/agentd|$(SBINDIR)/agentd|' $(DESTDIR)$(UNITDIR)/agentd.service
	$(Q)install -D -m 0644 userspace/agentd/agentd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/agentd.conf
	$(Q)install -D -m 0644 docs/agentd.8 $(DESTDIR)$(MANDIR)/man8/agentd.8
	$(Q)install -D -m 0644 docs/agentctl.1 $(DESTDIR)$(MANDIR)/man1/agentctl.1
	$(Q)install -D -m 0644 docs/agent-tool.1 $(DESTDIR)$(MANDIR)/man1/agent-tool.1
	$(Q)install -D -m 0644 userspace/agentctl/agentctl.bash $(DESTDIR)$(COMPLETIONDIR)/agentctl
	$(Q)install -d $(DESTDIR)$(DOCDIR) && install -m 0644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/
	$(Q)for f in $(CONF_FILES); do \
		dest=$(DESTDIR)$(CONFDIR)/$${f#policies/}; \
		if [ -e "$$dest" ] && ! cmp -s "$$f" "$$dest"; then \
			echo "install: keeping $$dest (changed); the shipped one is $$dest.new"; \
			dest=$$dest.new; \
		fi; \
		install -D -m 0644 "$$f" "$$dest"; \
	done

# Removes what install put there, except configuration the operator changed.
uninstall:
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/agentd $(DESTDIR)$(BINDIR)/agentctl $(DESTDIR)$(BINDIR)/agent-tool
	$(Q)rm -rf $(DESTDIR)$(LIBEXECDIR)/agentd $(DESTDIR)$(DOCDIR)
	$(Q)rm -f $(DESTDIR)$(UNITDIR)/agentd.service $(DESTDIR)$(TMPFILESDIR)/agentd.conf
	$(Q)rm -f $(DESTDIR)$(MANDIR)/man8/agentd.8 $(DESTDIR)$(MANDIR)/man1/agentctl.1
	$(Q)rm -f $(DESTDIR)$(MANDIR)/man1/agent-tool.1 $(DESTDIR)$(COMPLETIONDIR)/agentctl
	$(Q)for f in $(CONF_FILES); do \
		dest=$(DESTDIR)$(CONFDIR)/$${f#policies/}; \
		if cmp -s "$$f" "$$dest"; then rm -f "$$dest"; fi; \
		rm -f "$$dest.new"; \
	done
	$(Q)rmdir $(DESTDIR)$(CONFDIR)/base $(DESTDIR)$(CONFDIR) 2>/dev/null || true

# The Debian package, built by dpkg-buildpackage from debian/ in a copy of the tree.
deb:
	$(Q)rm -rf $(OUT)/deb && mkdir -p $(OUT)/deb/agentd-$(VERSION)
	$(Q)git ls-files -z | xargs -0 cp --parents -t $(OUT)/deb/agentd-$(VERSION)
	$(Q)cd $(OUT)/deb/agentd-$(VERSION) && dpkg-buildpackage -us -uc -b >../build.log 2>&1 \
		|| { tail -30 ../build.log; exit 1; }
	$(Q)cp $(OUT)/deb/agentd_$(VERSION)_*.deb $(OUT)/
	$(Q)ls $(OUT)/agentd_$(VERSION)_*.deb

.PHONY: clean
clean:
	$(Q)rm -rf $(OUT)
