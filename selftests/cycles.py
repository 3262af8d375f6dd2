#!/usr/bin/env python3
"""Fails on a cycle between source files: A uses a function or variable that B defines, and B,
through any chain, uses one of A's. Reads the objects' symbol tables (nm), so it sees calls
whatever header declares them. Each program (a folder of userspace/ besides lib/) is checked
with the library; objects are given as build/cycles/<folder>/[<sub>/]<name>.o (lib/kernel/enforcer.o is
the library's).

usage: cycles.py OBJECT...
"""
import collections
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", "-g", obj], check=True, capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] not in "Uwv":
            defined.add(parts[2])
    return defined, used


def cycles(nodes, edges):
    """Tarjan's strongly connected components of more than one node (or a node on itself)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def main(objs):
    by_folder = collections.defaultdict(list)
    for obj in objs:
        rel = os.path.normpath(obj).split(os.sep)
        top = rel[rel.index("cycles") + 1] if "cycles" in rel else os.path.basename(os.path.dirname(obj))
        by_folder[top].append(obj)
    lib = by_folder.pop("lib", [])
    bad = 0
    for folder in sorted(by_folder) or ["lib"]:
        group = lib + by_folder.get(folder, [])
        table = {o: symbols(o) for o in group}
        owner = {}
        for o, (defined, _) in table.items():
            for s in defined:
                owner.setdefault(s, o)
        edges = {o: {owner[s] for s in used if s in owner and owner[s] != o}
                 for o, (_, used) in table.items()}
        for comp in cycles(table, edges):
            bad += 1
            print("cycle:", " <-> ".join(comp))
            for a in comp:
                for b in comp:
                    if b in edges[a]:
                        names = sorted(s for s in table[a][1] if owner.get(s) == b)
                        print(f"  {a} uses {b}: {', '.join(names)}")
    bad += folder_cycles(lib)
    return 1 if bad else 0


def folder_cycles(lib):
    """The library's folders (policy, kernel, audit, wire, sandbox) form layers: no folder uses
    another that, through any chain, uses it back."""
    def folder(o):
        rel = os.path.normpath(o).split(os.sep)
        rel = rel[rel.index("lib") + 1:]
        return rel[0] if len(rel) > 1 else "."
    table = {o: symbols(o) for o in lib}
    owner = {s: o for o, (defined, _) in table.items() for s in defined}
    edges = collections.defaultdict(set)
    why = collections.defaultdict(set)
    for o, (_, used) in table.items():
        for s in used:
            if s in owner and folder(owner[s]) != folder(o):
                edges[folder(o)].add(folder(owner[s]))
                why[(folder(o), folder(owner[s]))].add(f"{o} uses {s}")
    nodes = {folder(o) for o in lib}
    bad = 0
    for comp in cycles(nodes, {n: edges[n] for n in nodes}):
        bad += 1
        print("folder cycle: lib/" + " <-> lib/".join(comp))
        for a in comp:
            for b in comp:
                for w in sorted(why[(a, b)])[:5]:
                    print("  " + w)
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
