#!/bin/bash
# The pkg tier: make install and uninstall into a staging root, the Debian package built and
# checked by lintian, its files run from a scratch root, and installed and purged on this host.
# Prints one "PASS name" or "FAIL name: why" line per check.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
scratch=$(mktemp -d /tmp/agentd-pkg-XXXXXX)
installed_here=
cleanup() {
	[ -z "$installed_here" ] || dpkg --purge agentd >/dev/null 2>&1
	rm -rf "$scratch"
}
trap cleanup EXIT

pass() { echo "PASS pkg/$1"; }
fail() { echo "FAIL pkg/$1: $2"; }

# What make install must put in a staging root, and nothing else.
expected_files() {
	local f
	for f in usr/sbin/agentd usr/bin/agentctl usr/bin/agent-tool \
		usr/libexec/agentd/agentd-worker usr/libexec/agentd/agentd-drill lib/systemd/system/agentd.service \
		usr/lib/tmpfiles.d/agentd.conf usr/share/man/man8/agentd.8 \
		usr/share/man/man1/agentctl.1 usr/share/man/man1/agent-tool.1 \
		usr/share/bash-completion/completions/agentctl usr/share/doc/agentd/README.md; do
		echo "$f"
	done
	(cd "$top" && git ls-files 'docs/*.md' 'docs/*.schema.json' | sed 's#^docs/#usr/share/doc/agentd/#')
	(cd "$top/policies" && git ls-files '*.json' | sed 's#^#etc/agentd/#')
}

make_install() {
	make -C "$top" --no-print-directory -s install DESTDIR="$1" PREFIX=/usr \
		UNITDIR=/lib/systemd/system TMPFILESDIR=/usr/lib/tmpfiles.d
}

check_install() {
	local root=$scratch/install got want
	if ! make_install "$root" >"$scratch/install.log" 2>&1; then
		fail install "make install failed: $(tail -3 "$scratch/install.log")"
		return
	fi
	got=$(cd "$root" && find . -type f | sed 's#^\./##' | sort)
	want=$(expected_files | sort)
	if [ "$got" != "$want" ]; then
		fail install "the installed files differ from the expected list: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -5 | tr '\n' ' ')"
		return
	fi
	if ! grep -qx 'ExecStart=/usr/sbin/agentd' "$root/lib/systemd/system/agentd.service"; then
		fail install "the unit does not start the installed agentd"
		return
	fi
	pass install
	# An operator's edit survives a reinstall; the shipped file goes beside it.
	echo '{"tools": []}' >"$root/etc/agentd/tools.json"
	make_install "$root" >/dev/null 2>&1
	if ! grep -q '"tools": \[\]' "$root/etc/agentd/tools.json" ||
		! cmp -s "$top/policies/tools.json" "$root/etc/agentd/tools.json.new"; then
		fail install_keeps_edited_configuration "the edited tools.json was overwritten, or no tools.json.new"
	else
		pass install_keeps_edited_configuration
	fi
	make -C "$top" --no-print-directory -s uninstall DESTDIR="$root" PREFIX=/usr \
		UNITDIR=/lib/systemd/system TMPFILESDIR=/usr/lib/tmpfiles.d >/dev/null 2>&1
	got=$(cd "$root" && find . -type f | sed 's#^\./##')
	if [ "$got" != etc/agentd/tools.json ]; then
		fail uninstall "left behind: $(echo "$got" | tr '\n' ' ')"
	else
		pass uninstall
	fi
}

check_deb() {
	local deb lint
	if ! make -C "$top" --no-print-directory -s deb >"$scratch/deb.log" 2>&1; then
		fail deb_builds "make deb failed: $(tail -3 "$scratch/deb.log")"
		return 1
	fi
	deb=$(ls "$build"/agentd_*.deb | head -1)
	pass deb_builds
	# Errors and warnings fail; a kept warning needs an override in debian/ that says why.
	if lint=$(lintian --fail-on error,warning "$deb" 2>&1); then
		pass deb_lintian_clean
	else
		fail deb_lintian_clean "$(echo "$lint" | grep -E '^[EW]:' | head -5 | tr '\n' ' ')"
	fi
	DEB=$deb
}

check_scratch_root() {
	local root=$scratch/root out status want
	dpkg-deb -x "$DEB" "$root"
	# The packaged agentd probes this kernel as the built one does: the same verdict.
	"$build/agentd" --probe >/dev/null 2>&1
	want=$?
	out=$("$root/usr/sbin/agentd" --probe 2>&1)
	status=$?
	if [ "$status" != "$want" ] || ! echo "$out" | grep -q 'BPF LSM'; then
		fail deb_agentd_probe "installed agentd --probe exited $status, the built one $want: $(echo "$out" | head -2)"
	else
		pass deb_agentd_probe
	fi
	if out=$("$root/usr/bin/agentctl" policy check --tools "$root/etc/agentd/tools.json" \
		"$root"/etc/agentd/*.json 2>&1); then
		pass deb_policies_check_as_shipped
	else
		fail deb_policies_check_as_shipped "$(echo "$out" | grep -v ': ok' | head -3 | tr '\n' ' ')"
	fi
	if bash -c "source '$root/usr/share/bash-completion/completions/agentctl' && complete -p agentctl" \
		>/dev/null 2>&1; then
		pass completion_sources
	else
		fail completion_sources "bash could not source the completion script"
	fi
}

# Installed and purged for real on this host, when no agentd package is installed already.
check_install_purge() {
	local files left
	if dpkg-query -W agentd >/dev/null 2>&1; then
		local why="an agentd package is installed on this host"
		if [ "${CI:-}" = true ]; then fail deb_installs_and_purges "$why"; else echo "SKIP pkg/deb_installs_and_purges: $why"; fi
		return
	fi
	installed_here=1
	if ! dpkg -i "$DEB" >"$scratch/dpkg.log" 2>&1; then
		fail deb_installs_and_purges "dpkg -i failed: $(tail -3 "$scratch/dpkg.log")"
		return
	fi
	files=$(dpkg -L agentd | while read -r f; do [ -f "$f" ] && echo "$f"; done)
	if [ -e /etc/systemd/system/multi-user.target.wants/agentd.service ]; then
		fail deb_installs_and_purges "the package enabled agentd.service"
		return
	fi
	if ! dpkg --purge agentd >>"$scratch/dpkg.log" 2>&1; then
		fail deb_installs_and_purges "dpkg --purge failed: $(tail -3 "$scratch/dpkg.log")"
		return
	fi
	installed_here=
	left=$(for f in $files; do [ -e "$f" ] && echo "$f"; done)
	if [ -n "$left" ]; then
		fail deb_installs_and_purges "left after purge: $(echo "$left" | head -3 | tr '\n' ' ')"
	else
		pass deb_installs_and_purges
	fi
}

check_install
if check_deb; then
	check_scratch_root
	check_install_purge
fi
