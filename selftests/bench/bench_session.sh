#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The macro benchmark: a real C build inside the coding agent against the same build outside any
# agent, in one run. The project is this repository's userspace library (userspace/lib without
# the BPF loader, which needs generated skeletons: policy, wire, audit, sandbox, log), compiled
# with cc -O2 by make -j2 into an archive. Outside and inside alternate, ROUNDS times each (default
# 3); each build starts from make clean. Inside runs through agentd (--allow-partial where BPF LSM
# is refused, as on a host without it) and agentctl run under policies/coding-agent.json. Wall
# time and CPU time (user + system of make and everything below it) are measured by the same
# Python wrapper in both places; the ratio is of the medians.
#
# usage: selftests/bench/bench_session.sh [ROUNDS]   (root; build/ made by make all)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
rounds=${1:-3}
tmp=$(mktemp -d /var/lib/agentd-bench.XXXXXX)
ws=$tmp/ws
agentd_pid=
cleanup() {
	[ -z "$agentd_pid" ] || "$build/agentctl" agent rm coder >/dev/null 2>&1 || true
	[ -z "$agentd_pid" ] || { kill "$agentd_pid" 2>/dev/null; wait "$agentd_pid" 2>/dev/null || true; }
	[ ! -d "$tmp/state/audit" ] || chattr -R -a "$tmp/state/audit" 2>/dev/null || true
	rm -rf "$tmp"
	[ -z "${cg:-}" ] || rmdir "$cg"/* "$cg" 2>/dev/null || true
	[ -z "${pins:-}" ] || rm -rf "$pins"
}
trap cleanup EXIT

mkdir -p "$ws"
cp -r "$top/include" "$top/userspace/lib" "$ws/"
cat >"$ws/Makefile" <<'EOF'
SRCS := $(wildcard lib/*.c lib/policy/*.c lib/wire/*.c lib/audit/*.c lib/sandbox/*.c)
OBJS := $(SRCS:.c=.o)
CFLAGS := -O2 -g -std=gnu11 -D_GNU_SOURCE -Wall -I include -I lib
libbench.a: $(OBJS)
	ar rcs $@ $^
clean:
	rm -f $(OBJS) libbench.a
.PHONY: clean
EOF

# Runs the build in directory $1, prints "WALL CPU" in seconds.
timer='import resource, subprocess, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
subprocess.run(["make", "-s", "clean"], check=True)
c, t = cpu(), time.monotonic()
subprocess.run(["make", "-s", "-j2"], check=True)
print("%.3f %.3f" % (time.monotonic() - t, cpu() - c))'

cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
cg=$cg2/agentd-bench-$$
pins=/sys/fs/bpf/agentd-bench-$$
export AGENTD_CONTROL=$tmp/control.sock
"$build/agentd" --control "$AGENTD_CONTROL" --state-dir "$tmp/state" --pin-dir "$pins" \
	--cgroup "$cg" --allow-partial >"$tmp/agentd.log" 2>&1 &
agentd_pid=$!
for _ in $(seq 100); do
	grep -q 'agentd: ready' "$tmp/agentd.log" && break
	sleep 0.1
done
"$build/agentctl" agent add coder --policy "$top/policies/coding-agent.json" \
	--tools "$top/policies/tools.json" --var workspace="$ws" >/dev/null

outside=() inside=()
for i in $(seq "$rounds"); do
	outside+=("$(cd "$ws" && /usr/bin/python3 -c "$timer")")
	inside+=("$("$build/agentctl" run coder --cwd "$ws" -- /usr/bin/python3 -c "$timer" \
		2>/dev/null </dev/null)")
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ow=$(printf '%s\n' "${outside[@]}" | cut -d' ' -f1 | median)
oc=$(printf '%s\n' "${outside[@]}" | cut -d' ' -f2 | median)
iw=$(printf '%s\n' "${inside[@]}" | cut -d' ' -f1 | median)
ic=$(printf '%s\n' "${inside[@]}" | cut -d' ' -f2 | median)
n=$(ls "$ws"/lib/*.c "$ws"/lib/*/*.c | grep -vc '/kernel/')
echo "make -j2 of $n C files (userspace/lib), $rounds rounds, medians:"
printf '  outside: wall %6.2f s  cpu %6.2f s   (%s)\n' "$ow" "$oc" "${outside[*]}"
printf '  inside:  wall %6.2f s  cpu %6.2f s   (%s)\n' "$iw" "$ic" "${inside[*]}"
awk -v ow="$ow" -v oc="$oc" -v iw="$iw" -v ic="$ic" \
	'BEGIN { printf "  inside/outside: wall %.3f, cpu %.3f\n", iw / ow, ic / oc }'
