#!/bin/bash
# make check: runs the test tiers and ends with one line "N passed, N failed, N skipped".
#   run.sh all|lint|unit|fuzz|host|vm|pkg
# Every result line is "PASS name", "FAIL name: why" or "SKIP name: why". With CI=true a tier
# that cannot run (not root, no QEMU, no kernel) is a FAIL, never a skip.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
results=$build/test-results.txt

cannot_run() {
	if [ "${CI:-}" = true ]; then echo "FAIL $1: $2"; else echo "SKIP $1: $2"; fi
}

tier_lint() {
	if (cd "$top" && make --no-print-directory -s lint >"$build/lint.log" 2>&1); then
		echo "PASS lint/format-and-cppcheck"
	else
		echo "FAIL lint/format-and-cppcheck: see $build/lint.log"
		sed 's/^/    /' "$build/lint.log" | head -20
	fi
}

# The unit tests keep every audit log they write; each record must match the JSON Schema.
tier_unit() {
	local collect=$build/audit-records
	rm -rf "$collect" && mkdir -p "$collect"
	AGENTD_AUDIT_COLLECT=$collect "$build/selftests/test_unit" -p unit/ || true
	# Debian's python3 (python3-jsonschema), whatever python3 comes first in PATH.
	if /usr/bin/python3 "$top/selftests/audit/validate_schema.py" --allow-torn "$collect" \
		>"$build/audit-schema.log" 2>&1; then
		echo "PASS unit/audit-schema-every-record"
	else
		echo "FAIL unit/audit-schema-every-record: see $build/audit-schema.log"
	fi
	# The policy and tools registry schemas against the parser's keys and the policies.
	if /usr/bin/python3 "$top/selftests/policy/check_schema.py" >"$build/policy-schema.log" 2>&1; then
		echo "PASS unit/policy-schema-matches-parser"
	else
		echo "FAIL unit/policy-schema-matches-parser: see $build/policy-schema.log"
	fi
}

# Each libFuzzer target for FUZZ_SECONDS (default 5), from its seed corpus when it has one.
tier_fuzz() {
	local src f name corpus
	for src in "$top"/selftests/fuzz/fuzz_*.c; do
		name=$(basename "$src" .c)
		f=$build/fuzz/$name
		corpus=$build/fuzz/corpus/$name
		mkdir -p "$corpus"
		[ -d "$top/selftests/fuzz/corpus/$name" ] && cp -r "$top/selftests/fuzz/corpus/$name/." "$corpus/"
		if "$f" -max_total_time="${FUZZ_SECONDS:-5}" -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix="$build/fuzz/$name-" "$corpus" >"$build/fuzz/$name.log" 2>&1; then
			echo "PASS fuzz/$name"
		else
			echo "FAIL fuzz/$name: see $build/fuzz/$name.log"
		fi
	done
}

tier_host() {
	if [ "$(id -u)" != 0 ]; then
		cannot_run host "the host tier needs root"
		return
	fi
	"$build/selftests/test_host" -p host/ || true
	# The BPF LSM tests also run natively where this kernel loads BPF LSM programs.
	if "$build/agentd" --probe >/dev/null 2>&1; then
		"$build/selftests/test_kernel" -p host-lsm/ || true
	else
		echo "SKIP host-lsm: this kernel refuses BPF LSM programs (agentd --probe); they run in the VM tier"
	fi
}

tier_vm() {
	if [ "$(id -u)" != 0 ]; then
		cannot_run vm "the VM tier needs root (to fetch kernels through apt)"
		return
	fi
	"$top/selftests/vm/vm.sh" test || echo "FAIL vm: selftests/vm/vm.sh exited $?"
}

# make install and uninstall, the Debian package (lintian), installed and purged on this host.
tier_pkg() {
	if [ "$(id -u)" != 0 ]; then
		cannot_run pkg "the pkg tier installs the package: it needs root"
		return
	fi
	"$top/selftests/pkg/check.sh"
}

mkdir -p "$build"
case ${1:-all} in
all) tiers="lint unit fuzz host vm pkg" ;;
*) tiers=$1 ;;
esac

for tier in $tiers; do
	echo "== $tier" >&2
	"tier_$tier"
done | tee "$results"

passed=$(grep -c '^PASS ' "$results")
failed=$(grep -c '^FAIL ' "$results")
skipped=$(grep -c '^SKIP ' "$results")
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
