#!/bin/bash
# make demo: what agentd enforces on this machine, then the first enforced rule live in a VM
# whose kernel has BPF LSM active.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

echo "== this machine: agentd --probe"
if [ "$(id -u)" = 0 ]; then
	"$top/build/agentd" --probe || true
else
	"$top/build/agentctl" probe || true
fi
echo
echo "== a Debian 12 kernel with BPF LSM active, under QEMU"
VM_KERNELS=${VM_KERNELS:-6.1} "$top/selftests/vm/vm.sh" demo
