#!/bin/sh
# The demo's guest half: an agent cgroup, a workspace and a secret, agentd enforcing, and an
# "agent" trying things. Runs as /agentd/demo.sh in the VM (see selftests/demo.sh).
cg=/sys/fs/cgroup/demo-agent
mkdir -p /work/agent /secrets "$cg"
echo "notes" >/work/agent/notes.txt
echo "AKIA-DEMO-SECRET" >/secrets/api-key

echo "== agentd --probe"
agentd --probe
echo
echo "== agentd --agent-cgroup $cg --deny-open /secrets/api-key"
agentd --agent-cgroup "$cg" --deny-open /secrets/api-key >/tmp/agentd.out 2>&1 &
agentd_pid=$!
until grep -q 'agentd: ready' /tmp/agentd.out 2>/dev/null; do
	kill -0 $agentd_pid 2>/dev/null || { cat /tmp/agentd.out; exit 1; }
done

# Runs a command as the agent: moved into the agent cgroup before exec.
as_agent() {
	sh -c 'echo $$ >'"$cg"'/cgroup.procs && exec "$@"' agent "$@"
}

try() {
	who=$1 what=$2
	shift 2
	if out=$("$@" 2>&1); then
		verdict="allowed"
		layer="-"
	else
		verdict="DENIED: ${out##*: }"
		layer="BPF LSM (lsm/file_open)"
	fi
	printf '%-8s %-34s %-36s %s\n' "$who" "$what" "$verdict" "$layer"
}

echo
printf '%-8s %-34s %-36s %s\n' WHO TRIED VERDICT "ENFORCED BY"
try agent "read its workspace notes" as_agent cat /work/agent/notes.txt
try agent "read /secrets/api-key" as_agent cat /secrets/api-key
try agent "read it through a hard link" as_agent sh -c 'ln /secrets/api-key /work/agent/k && cat /work/agent/k'
try host "read /secrets/api-key" cat /secrets/api-key

kill $agentd_pid
wait $agentd_pid
echo
echo "== what agentd printed"
cat /tmp/agentd.out
