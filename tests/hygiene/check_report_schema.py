#!/usr/bin/env python3
"""check_report_schema.py DOC REPORT...: validate reports against docs/report-schema.md (or doctor
--json documents against docs/doctor-schema.md).

The Markdown table in the doc is the schema. Every field of a report must be a
documented path with the documented type; every path marked "always" whose parent
is present must be there. Exit 1 naming each violation.
"""
import json
import re
import sys

PLACEHOLDER_PARENTS = {"api": "<ABI>", "inner": "<ABI>", "kinds": "<kind>", "interposition": "<event>", "sources": "<setting>", "parts": "<part>",
                       # docs/doctor-schema.md: architecture names
                       "arch_counts": "<arch>", "embedded_arch_counts": "<arch>", "per_arch": "<arch>"}
TYPES = {"string": str, "integer": int, "object": dict, "array": list, "null": type(None), "boolean": bool,
         "number": (int, float)}


def load_schema(doc):
    rows = {}
    for line in open(doc):
        m = re.match(r"\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|\s*(always|optional)\s*\|", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def type_ok(value, spec):
    for alt in re.split(r"\s+or\s+", spec):
        alt = alt.replace("array of string", "array")
        t = TYPES.get(alt.strip())
        if t is int and isinstance(value, bool):  # JSON true is not an integer
            continue
        if t is not None and isinstance(value, t if isinstance(t, tuple) else (t,)):
            return True
    return False


def walk(node, path, out):
    out.append((path, node))
    if isinstance(node, dict):
        last = path.split(".")[-1] if path else ""
        for k, v in node.items():
            key = PLACEHOLDER_PARENTS.get(last, k)
            walk(v, f"{path}.{key}" if path else key, out)
    elif isinstance(node, list):
        for v in node:
            if isinstance(v, (dict, list)):
                walk(v, path + "[]", out)


def check(rows, report_path):
    errors = []
    with open(report_path) as f:
        rep = json.load(f)
    seen = []
    walk(rep, "", seen)
    present, containers = set(), set()
    for path, value in seen:
        if not path:
            continue
        present.add(path)
        if isinstance(value, (dict, list)):
            containers.add(path)
        if path not in rows:
            errors.append(f"{report_path}: field '{path}' is not documented in the schema")
        elif not type_ok(value, rows[path][0]):
            errors.append(f"{report_path}: field '{path}' is {type(value).__name__}, documented as {rows[path][0]}")
    for path, (_, presence) in rows.items():
        parent = path.rsplit(".", 1)[0] if "." in path else ""
        if path.endswith("[]"):
            continue  # an element of a possibly empty array
        if presence == "always" and path not in present and (parent == "" or parent in containers):
            errors.append(f"{report_path}: required field '{path}' is missing")
    return errors


def main():
    rows = load_schema(sys.argv[1])
    if len(rows) < 20:
        print(f"FAIL: only {len(rows)} rows parsed from {sys.argv[1]}")
        return 1
    errors = []
    for r in sys.argv[2:]:
        errors += check(rows, r)
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print(f"ok: {len(sys.argv) - 2} report(s) match the {len(rows)}-row schema")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
