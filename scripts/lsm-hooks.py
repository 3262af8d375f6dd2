#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
The LSM hooks of the kernels the VM tier boots, from their BTF (the bpf_lsm_<hook> functions,
one per hook of lsm_hook_defs.h), into the table of docs/HOOKS.md.

  scripts/lsm-hooks.py list VMLINUZ   the hooks of one kernel image, one a line
  scripts/lsm-hooks.py update         rewrites the table's rows for the kernels in .cache/kernels
                                      (selftests/vm/vm.sh fetches them), keeping each hook's
                                      disposition; a hook new to the table is "unclassified",
                                      which the VM test hooks_all_accounted_for refuses

Needs bpftool and the decompressors of the images (zstd, lz4, xz, gzip).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(TOP, "docs", "HOOKS.md")
SERIES = ["6.1", "6.12"]
BEGIN, END = "<!-- hooks:begin -->", "<!-- hooks:end -->"
# Compressed payloads of a bzImage: magic, decompressor.
FORMATS = [(b"\x28\xb5\x2f\xfd", ["zstd", "-dcq"]), (b"\x02\x21\x4c\x18", ["lz4", "-dcq"]),
           (b"\xfd7zXZ\x00", ["xz", "-dcq"]), (b"\x1f\x8b\x08", ["gzip", "-dcq"])]


def vmlinux(image, out):
    """Writes the kernel ELF inside a bzImage to out; returns whether one was found."""
    data = open(image, "rb").read()
    for magic, cmd in FORMATS:
        at = data.find(magic)
        while at >= 0:
            with open(out, "wb") as f:
                subprocess.run(cmd, input=data[at:], stdout=f, stderr=subprocess.DEVNULL)
            with open(out, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return True
            at = data.find(magic, at + 1)
    return False


def hooks(image):
    """The bpf_lsm_* function names of a kernel image's BTF, without the prefix."""
    with tempfile.TemporaryDirectory() as tmp:
        elf = os.path.join(tmp, "vmlinux")
        if not vmlinux(image, elf):
            sys.exit(f"{image}: no kernel ELF found inside")
        dump = subprocess.run(["bpftool", "btf", "dump", "file", elf], check=True,
                              capture_output=True, text=True).stdout
    return sorted(set(re.findall(r"FUNC 'bpf_lsm_(\w+)'", dump)))


def series_image(series):
    found = sorted(glob.glob(os.path.join(TOP, ".cache", "kernels",
                                          f"linux-image-{series}.*", "vmlinuz")))
    if not found:
        sys.exit(f"no {series} kernel in .cache/kernels: run selftests/vm/vm.sh once")
    return found[-1]


def rows(text):
    """hook -> (disposition, by what or why) of the table's rows."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\| `(\w+)` \|([^|]*)\|([^|]*)\|([^|]*)\|(.*)\|$", line)
        if m:
            out[m.group(1)] = (m.group(4).strip(), m.group(5).strip())
    return out


def update():
    text = open(DOC).read()
    if BEGIN not in text or END not in text:
        sys.exit(f"{DOC}: no {BEGIN} ... {END}")
    old = rows(text)
    have = {s: set(hooks(series_image(s))) for s in SERIES}
    table = [f"| hook | {' | '.join(SERIES)} | disposition | by what, or why |",
             "| --- | " + " | ".join("---" for _ in SERIES) + " | --- | --- |"]
    for hook in sorted(set().union(*have.values()) | set(old)):
        disp, why = old.get(hook, ("unclassified", "-"))
        cols = " | ".join("yes" if hook in have[s] else "-" for s in SERIES)
        table.append(f"| `{hook}` | {cols} | {disp} | {why} |")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    open(DOC, "w").write(head + BEGIN + "\n" + "\n".join(table) + "\n" + END + tail)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "list":
        print("\n".join(hooks(sys.argv[2])))
    elif len(sys.argv) == 2 and sys.argv[1] == "update":
        update()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
