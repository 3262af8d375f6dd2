#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Validates every line of agentd audit logs against docs/audit.schema.json.

usage: validate_schema.py [--allow-torn] FILE|DIR...
Files may be gzip segments; a directory stands for every file in it. Lines that are not JSON
fail, unless --allow-torn (logs from crash and tampering tests: verify judges those lines).
Needs python3-jsonschema (Debian/Ubuntu). Exit 0: every record valid; 1: not; 2: usage.
"""
import gzip
import json
import os
import sys
import zlib

import jsonschema

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                      "audit.schema.json")


def files_of(args):
    for arg in args:
        if os.path.isdir(arg):
            for name in sorted(os.listdir(arg)):
                path = os.path.join(arg, name)
                if os.path.isfile(path) and ".log" in name:
                    yield path
        else:
            yield arg


def lines_of(path):
    """The file's lines, or None when it is a truncated or corrupt gzip segment."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            print(f"{path}: unreadable gzip: {e}", file=sys.stderr)
            return None
    return enumerate(data.split(b"\n"), 1)


def main(argv):
    allow_torn = "--allow-torn" in argv
    args = [a for a in argv if a != "--allow-torn"]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    with open(SCHEMA) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    records = bad = torn = 0
    for path in files_of(args):
        lines = lines_of(path)
        if lines is None:
            torn += 1
            bad += 0 if allow_torn else 1
            continue
        for lineno, raw in lines:
            if not raw:
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                torn += 1
                if not allow_torn:
                    print(f"{path}:{lineno}: not JSON", file=sys.stderr)
                    bad += 1
                continue
            records += 1
            for err in validator.iter_errors(record):
                where = "/".join(str(p) for p in err.absolute_path) or "record"
                print(f"{path}:{lineno}: {where}: {err.message}", file=sys.stderr)
                bad += 1
    print(f"{records} records checked, {bad} problems, {torn} lines or segments unreadable")
    return 1 if bad or not records else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
