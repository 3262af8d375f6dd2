#!/bin/sh
# The demo's guest half: agentd with the agent "demo-agent" held to selftests/demo-policy.json,
# and the agent trying allowed and forbidden things. Runs as /agentd/demo.sh in the VM
# (selftests/demo.sh).
state=/var/lib/agentd
audit=$state/audit
export AGENTD_CONTROL=/run/agentd/control.sock
cg=/sys/fs/cgroup/agentd/demo-agent
mkdir -p /work/agent /secrets /run/agentd "$state"
echo "notes" >/work/agent/notes.txt
echo "AKIA-DEMO-SECRET" >/secrets/api-key

echo "== agentd --probe"
agentd --probe
echo
echo "== the policy (selftests/demo-policy.json)"
cat /agentd/demo-policy.json
echo
echo "== agentd -v (decisions on stdout), state and audit log in $state"
agentd -v --control "$AGENTD_CONTROL" --state-dir "$state" >/tmp/agentd.out 2>&1 &
agentd_pid=$!
until grep -q 'agentd: ready' /tmp/agentd.out 2>/dev/null; do
	kill -0 $agentd_pid 2>/dev/null || { cat /tmp/agentd.out; exit 1; }
done
echo "== agentctl agent add demo-agent --policy demo-policy.json (its cgroup: $cg)"
agentctl agent add demo-agent --policy /agentd/demo-policy.json || {
	cat /tmp/agentd.out
	exit 1
}

# A listener outside the agent, as a host service on loopback would be.
nc -l -p 2222 -s 127.0.0.1 >/dev/null 2>&1 &
listener=$!

# Runs a command as the agent: moved into the agent cgroup before exec.
as_agent() {
	sh -c 'echo $$ >'"$cg"'/cgroup.procs && exec "$@"' agent "$@"
}

try() {
	who=$1 what=$2 layer=$3
	shift 3
	if out=$("$@" 2>&1 </dev/null); then
		verdict="allowed"
		layer="-"
	else
		verdict="DENIED: ${out##*: }"
	fi
	printf '%-6s %-40s %-34s %s\n' "$who" "$what" "$verdict" "$layer"
}

echo
printf '%-6s %-40s %-34s %s\n' WHO TRIED VERDICT "ENFORCED BY"
try agent "read its workspace notes" - as_agent cat /work/agent/notes.txt
try agent "write in its workspace" - as_agent sh -c 'echo draft >/work/agent/draft.txt'
try agent "read /secrets/api-key" "BPF LSM (file_open)" as_agent cat /secrets/api-key
try agent "read it through a hard link" "BPF LSM (path_link)" \
	as_agent sh -c 'ln /secrets/api-key /work/agent/k && cat /work/agent/k'
try agent "write outside its workspace" "BPF LSM (path_mknod)" \
	as_agent sh -c 'echo x >/tmp/exfil'
try agent "run a binary not on its exec list" "BPF LSM (bprm_check_security)" \
	as_agent /agentd/agentctl version
try agent "connect to a loopback service" "cgroup-BPF (connect4)" \
	as_agent nc -w 1 127.0.0.1 2222
try agent "move itself out of its cgroup" "BPF LSM (file_open, self-protection)" \
	as_agent sh -c 'echo $$ >/sys/fs/cgroup/cgroup.procs'
try host "read /secrets/api-key" - cat /secrets/api-key

echo
echo "== agentctl drill demo-agent (each boundary tried from a fresh cgroup under its policy)"
agentctl drill demo-agent | sed 's/^/  /' || echo "  the drill FAILED: a boundary the layers claim escaped"

echo "== agentctl inspect demo-agent (BPF LSM: every boundary observed in the kernel)"
agentctl inspect demo-agent || true
kill $listener 2>/dev/null
kill $agentd_pid
wait $agentd_pid
echo
echo "== what agentd printed"
cat /tmp/agentd.out
echo
echo "== agentctl audit query --dir $audit --decision deny"
agentctl audit query --dir "$audit" --decision deny
echo
echo "== agentctl audit verify --dir $audit"
agentctl audit verify --dir "$audit"
