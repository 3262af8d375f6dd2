#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Keeps docs/policy.schema.json and docs/tools.schema.json in step with agentd's parser.

usage: check_schema.py
1. Every shipped policy and registry (policies/*.json, policies/base/*.json) validates, and so
   does every fixture the parser accepts (agentctl policy check --json from build/; paths,
   bases and tools that do not exist here set aside): the fixture files (selftests/
   demo-policy.json, the fuzz corpora's seeds) and the policies and registries the tests write
   from C string literals (selftests/*/*.c, printf conversions given sample values); the
   corpora's errors.json seeds are refused by both.
2. The keys the parser accepts (the *_keys[] arrays of userspace/lib/policy/policy.c and
   tools.c, the limits' in jsondoc.c) are exactly the properties of the matching schema
   objects, every object of the schemas is matched, and the parser's lists of names (rights,
   socket families, protocols, capabilities, effects, argument types, builtins) are the
   schema's enums.
Needs python3-jsonschema (Debian/Ubuntu). Exit 0: in step; 1: not.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import jsonschema

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SRC = os.path.join(TOP, "userspace", "lib", "policy")

# (C file, array) -> (schema, JSON pointer of the object whose properties the array lists)
KEYS = {
    ("policy.c", "top_keys"): ("policy", ""),
    ("policy.c", "file_keys"): ("policy", "/$defs/file_rule"),
    ("policy.c", "exec_keys"): ("policy", "/$defs/exec"),
    ("policy.c", "exec_allow_keys"): ("policy", "/$defs/exec_allow"),
    ("policy.c", "net_keys"): ("policy", "/$defs/network"),
    ("policy.c", "connect_keys"): ("policy", "/$defs/connect_rule"),
    ("policy.c", "proxy_keys"): ("policy", "/$defs/proxy"),
    ("policy.c", "audit_keys"): ("policy", "/$defs/audit"),
    ("policy.c", "device_keys"): ("policy", "/$defs/devices"),
    ("policy.c", "grant_keys"): ("policy", "/$defs/tool_grant"),
    ("jsondoc.c", "keys"): ("policy", "/$defs/limits"),
    ("tools.c", "top_keys"): ("tools", ""),
    ("tools.c", "tool_keys"): ("tools", "/$defs/tool"),
    ("tools.c", "arg_keys"): ("tools", "/$defs/arg"),
    ("jsondoc.c", "tool_keys"): ("tools", "/$defs/limits"),
}
# Arrays naming some of an object's keys (parsed apart), not all of them.
SOME_KEYS = {
    ("tools.c", "keys"): ("tools", "/$defs/tool"),
}
# (C file, array) -> (schema, JSON pointer of the enum)
ENUMS = {
    ("policy.c", "right_names"): ("policy", "/$defs/right"),
    ("policy.c", "sock_names"): ("policy", "/$defs/socket_family"),
    ("policy.c", "protos"): ("policy", "/$defs/connect_rule/properties/protocol"),
    ("tools.c", "effects"): ("tools", "/$defs/tool/properties/effect"),
    ("tools.c", "arg_types"): ("tools", "/$defs/arg/properties/type"),
    ("tools.c", "modes"): ("tools", "/$defs/tool/properties/approval"),
    ("tools.c", "builtins"): ("tools", "/$defs/tool/properties/builtin"),
}
# Capabilities are matched in any case, with or without CAP_: a pattern rather than an enum.
CAPS = (("policy.c", "cap_names"), ("policy", "/properties/capabilities/items"))

ARRAY = re.compile(r"\b(\w+)\[\]\s*=\s*\{([^}]*)\}")


def arrays(name):
    """The string arrays of a C file: {array name: [strings]}."""
    with open(os.path.join(SRC, name)) as f:
        text = f.read()
    return {m.group(1): re.findall(r'"([^"]*)"', m.group(2)) for m in ARRAY.finditer(text)}


def at(schema, pointer):
    node = schema
    for part in pointer.split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def objects(node, pointer=""):
    """The JSON pointers of every schema object that lists properties."""
    if isinstance(node, dict):
        if "properties" in node:
            yield pointer
        for k, v in node.items():
            yield from objects(v, pointer + "/" + k.replace("~", "~0").replace("/", "~1"))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from objects(v, f"{pointer}/{i}")


def case_free(word):
    return "".join(f"[{c.upper()}{c}]" if c.isalpha() else c for c in word)


def check_sync(schemas, errors):
    c = {name: arrays(name) for name in ("policy.c", "tools.c", "jsondoc.c")}
    for (src, arr), (which, ptr) in KEYS.items():
        if arr not in c[src]:
            errors.append(f"{src}: no array {arr}[] (update KEYS in {__file__})")
            continue
        keys, props = set(c[src][arr]), set(at(schemas[which], ptr)["properties"])
        for k in sorted(keys - props):
            errors.append(f"{src} {arr}[] accepts \"{k}\"; {which}.schema.json#{ptr} lacks it")
        for k in sorted(props - keys):
            errors.append(f"{which}.schema.json#{ptr} has \"{k}\"; {src} {arr}[] refuses it")
        if at(schemas[which], ptr).get("additionalProperties") is not False:
            errors.append(f"{which}.schema.json#{ptr}: unknown keys must be refused")
    for (src, arr), (which, ptr) in SOME_KEYS.items():
        for k in sorted(set(c[src].get(arr, [])) - set(at(schemas[which], ptr)["properties"])):
            errors.append(f"{src} {arr}[] accepts \"{k}\"; {which}.schema.json#{ptr} lacks it")
    for (src, arr), (which, ptr) in ENUMS.items():
        names, enum = c[src].get(arr), at(schemas[which], ptr).get("enum")
        if names is None or sorted(names) != sorted(enum or []):
            errors.append(f"{src} {arr}[] is {names}; {which}.schema.json#{ptr} enum is {enum}")
    (src, arr), (which, ptr) = CAPS
    want = "^(" + case_free("cap_") + ")?(" + "|".join(case_free(n) for n in c[src][arr]) + ")$"
    if at(schemas[which], ptr).get("pattern") != want:
        errors.append(f"{which}.schema.json#{ptr}: the pattern is not {src} {arr}[]'s names, "
                      f"in any case, CAP_ optional:\n  {want}")
    # Every key array of the parser is matched, and every object of the schemas.
    known = set(KEYS) | set(SOME_KEYS) | set(ENUMS) | {CAPS[0]}
    for src, arrs in c.items():
        for arr in arrs:
            if (arr.endswith("keys") or arr.endswith("names")) and (src, arr) not in known:
                errors.append(f"{src} {arr}[] is not matched with the schema "
                              f"(add it to {__file__})")
    matched = {(which, ptr) for which, ptr in KEYS.values()}
    for which, schema in schemas.items():
        for ptr in objects(schema):
            if "/properties/" in ptr.rsplit("/$defs/", 1)[-1] + "/":
                continue
            if (which, ptr) not in matched:
                errors.append(f"{which}.schema.json#{ptr} is matched with no array of the parser")


def is_registry(doc):
    return isinstance(doc, dict) and set(doc) == {"tools"} and all(
        isinstance(t, dict) for t in doc["tools"])


# Errors about the machine, not the file: paths, bases and tools that do not exist here.
MISSING_PATH = re.compile(r"does not exist here|expected an existing path|No such file or "
                          r"directory|expected a tool of the registry")


def parser_accepts(path, registry):
    """Whether agentctl policy check accepts the file, paths missing here set aside."""
    agentctl = os.path.join(TOP, "build", "agentctl")
    tmp = None
    if registry and os.path.basename(path) != "tools.json":
        # agentctl checks a file as a registry by its name.
        tmp = tempfile.mkdtemp()
        path = shutil.copy(path, os.path.join(tmp, "tools.json"))
    try:
        out = subprocess.run([agentctl, "policy", "check", "--json", "--tools",
                              os.path.join(TOP, "policies", "tools.json"), path],
                             capture_output=True, text=True, check=False).stdout
    finally:
        if tmp:
            shutil.rmtree(tmp)
    result = json.loads(out)[0]
    return result["valid"] or (
        all(MISSING_PATH.search(e["message"]) for e in result.get("errors", [])) and
        not result.get("errors_dropped"))


C_STRINGS = re.compile(r'(?:"(?:[^"\\\n]|\\.)*"\s*)+')
C_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def c_fixtures():
    """The JSON documents the tests' C sources spell as string literals: (where, text)."""
    for src in sorted(glob.glob(os.path.join(TOP, "selftests", "*", "*.c"))):
        with open(src) as f:
            code = f.read()
        for m in C_STRINGS.finditer(code):
            parts = re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0))
            text = re.sub(r"\\(.)", lambda e: C_ESCAPES.get(e.group(1), e.group(1)),
                          "".join(parts))
            if not re.match(r'\s*\{\s*"(name|tools)"', text):
                continue
            text = re.sub(r"%(-?\d*(l{0,2}|z)[sdu]|%)",
                          lambda e: "%" if e.group(0) == "%%" else
                          ("/tmp" if e.group(0).endswith("s") else "1"), text)
            line = code.count("\n", 0, m.start()) + 1
            yield f"{os.path.relpath(src, TOP)}:{line}", text


def check_c_fixtures(schemas, errors):
    accepted = refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        for where, text in c_fixtures():
            try:
                doc = json.loads(text)
            except ValueError:
                continue
            which = "tools" if is_registry(doc) else "policy"
            path = os.path.join(tmp, "fixture.json")
            with open(path, "w") as f:
                f.write(text)
            if not parser_accepts(path, which == "tools"):
                refused += 1
                continue
            accepted += 1
            for e in jsonschema.Draft202012Validator(schemas[which]).iter_errors(doc):
                errors.append(f"{where}: /{'/'.join(map(str, e.absolute_path))}: {e.message} "
                              f"({which}.schema.json refuses what the parser accepts)")
    print(f"{accepted} policies and registries of the tests' sources the parser accepts, all "
          f"valid against the schemas; {refused} it refuses")


def check_files(schemas, errors):
    shipped = sorted(glob.glob(os.path.join(TOP, "policies", "*.json")) +
                     glob.glob(os.path.join(TOP, "policies", "base", "*.json")))
    corpus = os.path.join(TOP, "selftests", "fuzz", "corpus")
    fixtures = sorted([os.path.join(TOP, "selftests", "demo-policy.json")] +
                      glob.glob(os.path.join(corpus, "fuzz_policy", "*.json")) +
                      glob.glob(os.path.join(corpus, "fuzz_tools", "*.json")))
    counts = {"valid": 0, "refused": 0}
    for path in shipped + fixtures:
        with open(path) as f:
            doc = json.load(f)
        which = "tools" if is_registry(doc) else "policy"
        bad = list(jsonschema.Draft202012Validator(schemas[which]).iter_errors(doc))
        rel = os.path.relpath(path, TOP)
        accepted = path in shipped or parser_accepts(path, which == "tools")
        if accepted:
            counts["valid"] += 1
            for e in bad:
                errors.append(f"{rel}: /{'/'.join(map(str, e.absolute_path))}: {e.message} "
                              f"({which}.schema.json refuses what the parser accepts)")
        else:
            counts["refused"] += 1
            if os.path.basename(path) == "errors.json" and not bad:
                errors.append(f"{rel}: the parser refuses it, {which}.schema.json accepts it")
    print(f"{counts['valid']} files the parser accepts, all valid against the schemas; "
          f"{counts['refused']} it refuses")


def main():
    schemas = {}
    for which in ("policy", "tools"):
        with open(os.path.join(TOP, "docs", f"{which}.schema.json")) as f:
            schemas[which] = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schemas[which])
    errors = []
    check_sync(schemas, errors)
    check_files(schemas, errors)
    check_c_fixtures(schemas, errors)
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
