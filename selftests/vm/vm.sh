#!/bin/bash
# The VM tier: boots current Debian 12 cloud kernels (BPF LSM active) under QEMU with an
# initramfs holding agentd and the tests, and brings back one result line per test per kernel.
#
#   vm.sh test    kernel tests on every kernel, plus a check that this tier fails without BPF LSM
#   vm.sh bench   benchmarks on every kernel, on the instruction clock (VM_CLOCK below)
#   vm.sh demo    the demo, on the first kernel
#   vm.sh run     runs the shell command in VM_CMD in the guest (debugging), on the first kernel
#
# Environment: VM_KERNELS (default "6.1 6.12"), VM_TEST_ARGS (options for the guest's tests,
# e.g. "-o omit-deny-rule"), VM_APPEND (extra kernel command line), VM_STAGE (more host binaries
# for run: "FILE:NAME ...", each at /agentd/extra/NAME, e.g. another build's bench_open to run
# against this one in the same boot), VM_CLOCK (bench: "icount", the default, or "wall"),
# VM_BENCH_ARGS (bench_open's options, bench only), VM_E2E_ARGS (bench_e2e's, bench only),
# VM_BENCH (bench: which of "open lsm_cgroup e2e" to run, default all), VM_QEMU_ARGS (more QEMU options),
# CI (=true: cannot run -> FAIL).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/vm
cache=$top/.cache/kernels
mode=${1:-test}
kernels=${VM_KERNELS:-6.1 6.12}
declare -A meta=([6.1]=linux-image-cloud-amd64 [6.12]=linux-image-6.12-cloud-amd64)

# A tier that cannot run is a failure under CI, a skip (with its reason) elsewhere.
cannot_run() {
	if [ "${CI:-}" = true ]; then echo "FAIL $1: $2"; else echo "SKIP $1: $2"; fi
}

# Resolves the series' meta-package to the current versioned image package.
resolve_kernel() {
	apt-cache depends "${meta[$1]}" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }'
}

# Prints the path of the series' vmlinuz, downloading it into the cache once per version.
fetch_kernel() {
	local series=$1 pkg dir tmp
	pkg=$(resolve_kernel "$series")
	if [ -z "$pkg" ]; then
		apt-get update -q >&2 || true
		pkg=$(resolve_kernel "$series")
	fi
	[ -n "$pkg" ] || return 1
	dir=$cache/$pkg
	if [ ! -s "$dir/vmlinuz" ] || [ ! -s "$dir/modules.cpio.gz" ]; then
		tmp=$(mktemp -d)
		(cd "$tmp" && apt-get -q -o APT::Sandbox::User=root download "$pkg" >&2 &&
			dpkg-deb -x ./*.deb x) || { rm -rf "$tmp"; return 1; }
		mkdir -p "$dir"
		cp "$tmp"/x/boot/vmlinuz-* "$dir/vmlinuz.part" && mv "$dir/vmlinuz.part" "$dir/vmlinuz"
		keep_modules "$tmp/x" "$dir"
		rm -rf "$tmp"
	fi
	echo "$dir/vmlinuz"
}

# Copies a binary and the shared libraries it loads into the initramfs tree.
stage_binary() {
	local bin=$1 dest=$2 lib
	install -D -m 0755 "$bin" "$stage/$dest"
	for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
		[ -e "$stage$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$stage$lib"
	done
}

# shellcheck source=selftests/vm/stage_sessions.sh
. "$top/selftests/vm/stage_sessions.sh"

build_initramfs() {
	stage=$out/initramfs
	rm -rf "$stage"
	mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run}
	install -m 0755 "$(command -v busybox)" "$stage/bin/busybox"
	install -m 0755 "$top/selftests/vm/init" "$stage/init"
	install -D -m 0755 "$top/selftests/demo-guest.sh" "$stage/agentd/demo.sh"
	install -m 0644 "$top/selftests/demo-policy.json" "$stage/agentd/demo-policy.json"
	# For hooks_all_accounted_for (selftests/kernel/test_hooks.c): the table and the objects.
	install -m 0644 "$top/docs/HOOKS.md" "$stage/agentd/HOOKS.md"
	install -d "$stage/agentd/bpf" && install -m 0644 "$top"/build/bpf/*.bpf.o "$stage/agentd/bpf/"
	printf '#!/bin/sh\n%s\n' "${VM_CMD:-true}" >"$stage/agentd/run.sh"
	chmod 0755 "$stage/agentd/run.sh"
	for b in agentd agentctl agentd-worker agentd-drill agent-tool; do stage_binary "$top/build/$b" "agentd/$b"; done
	install -D -m 0644 "$top/policies/base/linux-userland.json" "$stage/agentd/policies/base/linux-userland.json"
	install -m 0644 "$top"/policies/*.json "$stage/agentd/policies/"
	for b in test_kernel bench_open bench_lsm_cgroup bench_e2e; do
		stage_binary "$top/build/selftests/$b" "agentd/selftests/$b"
	done
	for b in ${VM_STAGE:-}; do stage_binary "${b%%:*}" "agentd/extra/${b#*:}"; done
	install -D -m 0644 -t "$stage/policies" "$top"/policies/*.json # for test_sessions.c
	install -D -m 0644 -t "$stage/policies/base" "$top"/policies/base/*.json
	sessions=$(sessions_archive)
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initrd.gz"
	cat "$sessions" >>"$out/initrd.gz"
}

# One vCPU: with two, the 6.12 guest once took an unexpected int3 while BPF trampolines were
# being patched (text_poke under software emulation: cross-modifying code between vCPUs), and
# panicked. VM_SMP=2 brings two back, for benchmarks that want them.
VM_SMP=${VM_SMP:-1}
# Seconds before a guest is killed (and its boot reported FAIL). Most of a test guest's time is
# loading agentd's programs (10 to 15 s a start under software emulation with the containment
# objects; each test prints its time, TIME lines in the console log); a test that hangs is ended
# by its own deadline (-D in selftests/vm/init), so this is the bound on a slow machine, not on
# a hung test. Benchmarks take longer.
case $mode in
test | bench) VM_TIMEOUT=${VM_TIMEOUT:-3600} ;;
*) VM_TIMEOUT=${VM_TIMEOUT:-600} ;;
esac
# The benchmarks' clock. icount: the guest's clock counts instructions (one per nanosecond,
# -icount shift=0), so a loop's time is the instructions it executed and a ratio is one of
# instruction counts, the same from run to run and whatever else the host runs; software
# emulation's wall clock swings by more than the effects measured (docs/PERFORMANCE.md).
# icount runs one vCPU (a 6.1 guest with two hung at boot under it). wall: emulation's own time.
VM_CLOCK=${VM_CLOCK:-icount}
VM_BENCH=${VM_BENCH:-open lsm_cgroup e2e}
case $mode:$VM_CLOCK in
bench:icount)
	VM_SMP=1
	VM_QEMU_ARGS="-icount shift=0,sleep=off ${VM_QEMU_ARGS:-}"
	VM_BENCH_ARGS=${VM_BENCH_ARGS:--r 5}
	VM_E2E_ARGS=${VM_E2E_ARGS:--r 5}
	;;
bench:wall)
	VM_BENCH_ARGS=${VM_BENCH_ARGS:-}
	VM_E2E_ARGS=${VM_E2E_ARGS:-}
	;;
bench:*)
	echo "vm.sh: VM_CLOCK is icount or wall, not \"$VM_CLOCK\"" >&2
	exit 2
	;;
esac

# Boots one kernel; the guest's console goes to $log.
boot() {
	local vmlinuz=$1 log=$2 append=$3
	# shellcheck disable=SC2086 # VM_QEMU_ARGS is a list of options
	timeout --foreground -k 5 "$VM_TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -m 1G -smp "$VM_SMP" \
		${VM_QEMU_ARGS:-} -kernel "$vmlinuz" -initrd "$initrd" -nic none \
		-append "console=ttyS0 panic=-1 quiet $append" \
		-nographic -no-reboot -monitor none </dev/null >"$log" 2>&1
}

# The guest's console without carriage returns and terminal escapes.
console() {
	tr -d '\r' <"$1" | sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1b[c]//g'
}

# Prints the guest's result lines, named after the kernel; fails the boot if it did not finish.
results() {
	local series=$1 log=$2 last
	console "$log" | sed -n -E "s#^(PASS|FAIL|SKIP) #\1 vm-$series/#p"
	console "$log" | grep -q '^AGENTD-VM-END' && return 0
	last=$(console "$log" | grep -E '^(PASS|FAIL|SKIP) ' | tail -1 | cut -d' ' -f2 | cut -d: -f1)
	[ -z "$last" ] || last="; last result: $last"
	echo "FAIL vm-$series/boot: the guest did not finish (its budget: $VM_TIMEOUT s$last;" \
		"console: $log)"
}

main() {
	local series vmlinuz log args first=1 failed=0
	bench_logs=()
	test_logs=()
	if ! command -v qemu-system-x86_64 >/dev/null || ! command -v busybox >/dev/null; then
		cannot_run vm "qemu-system-x86_64 or busybox missing (make deps installs them)"
		return 0
	fi
	mkdir -p "$out" "$cache"
	build_initramfs
	for series in $kernels; do
		[ -n "${meta[$series]:-}" ] || { echo "FAIL vm-$series: unknown kernel series"; continue; }
		if ! vmlinuz=$(fetch_kernel "$series"); then
			cannot_run "vm-$series" "cannot fetch ${meta[$series]} through apt"
			continue
		fi
		log=$out/$mode-$series.log
		# The kernel's own modules appended (boot's initrd).
		initrd=$out/initrd-$series.gz
		cat "$out/initrd.gz" "$(dirname "$vmlinuz")/modules.cpio.gz" >"$initrd"
		echo "vm: booting $(basename "$(dirname "$vmlinuz")") ($mode)" >&2
		case $mode in
		test)
			# Each kernel in its own guest, side by side (one vCPU each, two cores):
			# the tier takes as long as the slower kernel, not the sum.
			args=${VM_TEST_ARGS:-}
			boot "$vmlinuz" "$log" "agentd.mode=test agentd.args=${args// /,} ${VM_APPEND:-}" &
			test_logs+=("$series:$log")
			;;
		bench)
			# Each kernel in its own guest, side by side: on the instruction clock
			# the other's load changes nothing measured.
			args=${VM_BENCH_ARGS:-}
			e2e=${VM_E2E_ARGS:-}
			boot "$vmlinuz" "$log" "agentd.mode=bench agentd.args=${args// /,} agentd.e2e=${e2e// /,} agentd.bench=${VM_BENCH// /,} ${VM_APPEND:-}" &
			bench_logs+=("$series:$log")
			[ "$VM_CLOCK" = icount ] || wait
			continue
			;;
		demo | run)
			boot "$vmlinuz" "$log" "agentd.mode=$mode ${VM_APPEND:-}" || true
			console "$log" | sed -n '/^AGENTD-VM /,/^AGENTD-VM-END/p'
			results "$series" "$log" | grep '^FAIL' && return 1
			;;
		esac
		[ "$mode" != demo ] && [ "$mode" != run ] || break
		if [ "$first" = 1 ] && [ -z "${VM_APPEND:-}" ]; then
			first=0
			check_fails_without_bpf_lsm "$series" "$vmlinuz" || failed=1
		fi
	done
	test_results || failed=1
	bench_results
	return $failed
}

# The test guests' results, kernel by kernel, once all have powered off.
# The exit status is 1 when any line is a FAIL (make check counts the lines themselves).
test_results() {
	local entry lines status=0
	[ "$mode" = test ] || return 0
	wait
	for entry in "${test_logs[@]}"; do
		lines=$(results "${entry%%:*}" "${entry#*:}")
		echo "$lines"
		! echo "$lines" | grep -q '^FAIL' || status=1
	done
	return $status
}

# The bench guests' figures, kernel by kernel, once all have powered off.
bench_results() {
	local entry
	[ "$mode" = bench ] || return 0
	wait
	for entry in "${bench_logs[@]}"; do
		echo "vm: ${entry%%:*}: clock $VM_CLOCK (${VM_QEMU_ARGS:-no QEMU options}), $VM_BENCH, bench_open ${VM_BENCH_ARGS:-}, bench_e2e ${VM_E2E_ARGS:-}" >&2
		console "${entry#*:}" | grep -E '^(BENCH|FAIL) ' | sed "s#^#vm-${entry%%:*} #"
		results "${entry%%:*}" "${entry#*:}" | grep -v '^PASS' || true
	done
}

# The tier must fail, not skip, when bpf is not an active LSM: boot once without it and
# check that the guest says FAIL.
check_fails_without_bpf_lsm() {
	local series=$1 vmlinuz=$2 log=$out/nobpf-$1.log
	boot "$vmlinuz" "$log" "agentd.mode=lsm lsm=lockdown,capability,landlock" || true
	if console "$log" | grep -q '^FAIL lsm_active: '; then
		echo "PASS vm-$series/tier_fails_without_bpf_lsm"
	else
		echo "FAIL vm-$series/tier_fails_without_bpf_lsm: the guest did not report FAIL (console: $log)"
		return 1
	fi
}

main
