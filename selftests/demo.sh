#!/bin/bash
# make demo (as root): agentd on this machine with the layers its kernel offers, an agent from
# policies/demo-agent.json trying allowed and forbidden things, the verdicts, the enforcing
# layer, the live view, the audit records and agentctl status; then everything torn down. Then
# the same kind of agent where BPF LSM is active: a Debian kernel under QEMU.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
export PATH=$build:$PATH

if [ "$(id -u)" != 0 ]; then
	echo "make demo needs root (agentd loads BPF programs and makes cgroups)" >&2
	exit 1
fi

echo "== this machine: agentd --probe"
full=yes
agentd --probe || full=no
partial=()
[ $full = yes ] || partial=(--allow-partial)

# Not under /tmp: the agent has a private one, and the secrets it tries must be there to refuse.
mkdir -p /var/lib
tmp=$(mktemp -d /var/lib/agentd-demo.XXXXXX)
# Searchable: the broker runs fs.read as an unprivileged id of the agent's, which must reach the workspace.
chmod 0711 "$tmp"
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
cgroup=$cg2/agentd-demo-$$
pins=/sys/fs/bpf/agentd-demo-$$
export AGENTD_CONTROL=$tmp/run/control.sock
agentd_pid= live_pid= listener_pid=

cleanup() {
	set +e
	[ -n "$live_pid" ] && kill "$live_pid" 2>/dev/null
	[ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null
	if [ -n "$agentd_pid" ]; then
		agentctl agent rm demo >/dev/null 2>&1
		kill "$agentd_pid" 2>/dev/null
		wait "$agentd_pid" 2>/dev/null
	fi
	agentd --teardown --pin-dir "$pins" >/dev/null 2>&1
	find "$cgroup" -depth -type d -exec rmdir {} \; 2>/dev/null
	chattr -R -a "$tmp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

ws=$tmp/workspace
mkdir -p "$ws" "$tmp/secrets" "$tmp/bin" "$tmp/state"
echo "notes of the agent" >"$ws/notes.txt"
echo "AKIAIOSFODNN7EXAMPLE" >"$tmp/secrets/api-key"
cp /usr/bin/true "$tmp/bin/not-allowed"

echo
echo "== agentd ${partial[*]} (throwaway state in $tmp)"
agentd "${partial[@]}" --control "$AGENTD_CONTROL" --state-dir "$tmp/state" --pin-dir "$pins" \
	--cgroup "$cgroup" \
	>"$tmp/agentd.log" 2>&1 &
agentd_pid=$!
for _ in $(seq 100); do
	grep -q 'agentd: ready' "$tmp/agentd.log" && break
	kill -0 "$agentd_pid" 2>/dev/null || { cat "$tmp/agentd.log"; exit 1; }
	sleep 0.1
done
grep -v '^agentd: ready' "$tmp/agentd.log" | sed 's/^/  /'

echo
echo "== agentctl agent add demo --policy policies/demo-agent.json"
agentctl agent add demo --policy "$top/policies/demo-agent.json" \
	--tools "$top/policies/tools.json" --var workspace="$ws" --var tools_bin="$build"
agentctl attach demo >"$tmp/live.txt" 2>&1 &
live_pid=$!

# A service on loopback outside the agent, as a host's database or metadata proxy would be.
python3 -c 'import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 5433)); s.listen(); time.sleep(600)' &
listener_pid=$!

# The agent: one shell in its cgroup from its first instruction, each attempt a line
# "what|exit status|last line of output".
cat >"$ws/agent.sh" <<EOF
try() {
	what=\$1; shift; out=\$("\$@" 2>&1 </dev/null); rc=\$?
	printf '%s\\n' "\$out" | { while IFS= read -r l; do last=\$l; done; echo "\$what|\$rc|\$last"; }
}
try "read its workspace" cat "$ws/notes.txt"
try "write in its workspace" sh -c 'echo draft >"$ws/draft.txt"'
try "read a secret outside it" cat "$tmp/secrets/api-key"
try "write outside its workspace" sh -c 'echo x >"$tmp/exfil"'
try "run a binary not on its list" "$tmp/bin/not-allowed"
try "create a user namespace" unshare -U true
try "connect to a loopback service" curl -sS --max-time 5 http://127.0.0.1:5433/
try "fetch a host not on its list" curl -sS -o /dev/null -w '%{http_code}' https://not-allowed.example/
try "call an allowed tool (fs.read)" "$build/agent-tool" fs.read path="$ws/notes.txt"
try "call a tool not in its policy" "$build/agent-tool" deploy.trigger environment=production revision=abcdef1
EOF

echo
echo "== agentctl run demo -- sh agent.sh"
agentctl run demo -- /bin/sh "$ws/agent.sh" >"$tmp/tried.txt" 2>"$tmp/run.err" || true
sed 's/^/  /' "$tmp/run.err"

lsm_or() { if [ $full = yes ]; then echo "BPF LSM ($1)"; else echo "Landlock"; fi; }
layer_of() {
	case $1 in
	"read a secret"* | "write outside"*) lsm_or file_open ;;
	"run a binary"*) lsm_or bprm_check_security ;;
	"create a user namespace") echo "seccomp$([ $full = yes ] && echo ', BPF LSM (userns_create)')" ;;
	"connect to a loopback"*) echo "cgroup-BPF (connect4)" ;;
	"fetch a host"*) echo "agentd's egress proxy" ;;
	"call a tool not"*) echo "agentd's tool broker" ;;
	*) echo "-" ;;
	esac
}

echo
printf '%-34s %-8s %-34s %s\n' "THE AGENT TRIED" VERDICT "ENFORCED BY" "WHAT IT SAW"
while IFS='|' read -r what status out; do
	verdict=allowed
	[ "$status" = 0 ] || verdict=DENIED
	# The proxy answers 403 with curl's status 0: the request was refused all the same.
	[ "$out" = 403 ] && verdict=DENIED
	layer=-
	[ $verdict = DENIED ] && layer=$(layer_of "$what")
	printf '%-34s %-8s %-34s %s\n' "$what" "$verdict" "$layer" "${out:0:60}"
done <"$tmp/tried.txt"
printf '%-34s %-8s %-34s %s\n' "(the host reads the secret)" \
	"$(cat "$tmp/secrets/api-key" >/dev/null && echo allowed)" - "not an agent"

echo
echo "== an approval: the agent calls report.submit, which its policy grants with \"approval\": \"required\""
agentctl run demo -- "$build/agent-tool" report.submit title=weekly text="all quiet" severity=info \
	>"$tmp/approval.txt" 2>&1 &
call_pid=$!
id=
for _ in $(seq 100); do
	id=$(agentctl approvals --json | python3 -c 'import json, sys
a = json.load(sys.stdin)["approvals"]
print(a[0]["id"] if a else "")')
	[ -n "$id" ] && break
	sleep 0.1
done
[ -n "$id" ] || { echo "  no call was held:"; sed 's/^/  /' "$tmp/approval.txt"; exit 1; }
echo "  \$ agentctl approvals   (text is not displayable: only the digest of the arguments shows)"
agentctl approvals | sed 's/^/  /'
echo "  \$ agentctl approve $id"
agentctl approve "$id" | sed 's/^/  /'
wait "$call_pid" && echo "  the held call ran: agent-tool exited 0" || echo "  agent-tool exited $?"

sleep 0.5 # the live view prints what the audit writer committed (batches close within 10 ms)
kill "$live_pid" 2>/dev/null || true
wait "$live_pid" 2>/dev/null || true
live_pid=
echo
echo "== agentctl attach demo (the live view, while the agent ran)"
sed 's/^/  /' "$tmp/live.txt"
[ $full = yes ] || echo "  (Landlock and seccomp refuse without telling agentd: their denials are not in agentd's
  log; the kernel's audit log has seccomp's, see docs/LAYERS.md)"

echo
echo "== agentctl status"
agentctl status | sed 's/^/  /'

echo
echo "== agentctl drill demo (each boundary tried from a fresh cgroup under the demo's policy)"
agentctl drill demo | sed 's/^/  /' || echo "  the drill FAILED: a boundary the layers claim escaped, or an allowed operation failed"
[ $full = yes ] || echo "  (escaped here is what agentctl status lists as NOT ENFORCED without BPF LSM; the VM below
  runs the same policy with every boundary blocked)"

echo
echo "== agentctl inspect demo (declared, observed in the kernel, proven by a drill)"
agentctl inspect demo | sed 's/^/  /' || true

echo
echo "== agentctl agent rm demo; agentd stops; agentd --teardown"
agentctl agent rm demo
kill "$agentd_pid"
wait "$agentd_pid" || true
agentd_pid=
agentd --teardown --pin-dir "$pins"
echo
echo "== agentctl audit verify --dir $tmp/state/audit"
agentctl audit verify --dir "$tmp/state/audit"

echo
echo "== a Debian 12 kernel with BPF LSM active, under QEMU: full enforcement"
VM_KERNELS=${VM_KERNELS:-6.1} "$top/selftests/vm/vm.sh" demo
