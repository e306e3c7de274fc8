#!/usr/bin/env python3
"""Checks the plugin's include graph: every quoted include names its folder from plugin/ and
exists; no header include cycle; no file includes a header of a stage above its own.

Stages, lowest first (docs/architecture.md): a file may include headers of its own stage and of
the stages below it. The plugin root holds the three stages that are one file each: the published
state layout (state.h, the lowest: every stage may write or read its slots), the per-mjData
instances (instance.c/.h) and the registration of every plugin (cusp_plugin.c).

    python3 scripts/check_includes.py        # exit 0, or one line per violation and exit 1
"""
import os
import re
import sys

STAGES = ["layout", "solver", "config", "collide", "assemble", "step", "instance", "publish",
          "control", "registration", "cli"]
ROOT_FILES = {"state.h": "layout", "instance.c": "instance", "instance.h": "instance",
              "cusp_plugin.c": "registration"}
SKIP = {"sanitize"}  # build shims, include nothing of ours
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def stage_of(rel):
    head = rel.split("/")[0]
    if "/" not in rel:
        return ROOT_FILES.get(rel)
    return head if head in STAGES else None


def main():
    plugin = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "plugin")
    files, errors = {}, []
    for d, _, names in os.walk(plugin):
        for n in names:
            if n.endswith((".c", ".h")):
                rel = os.path.relpath(os.path.join(d, n), plugin).replace(os.sep, "/")
                if rel.split("/")[0] in SKIP:
                    continue
                with open(os.path.join(d, n)) as f:
                    files[rel] = INCLUDE.findall(f.read())
    for rel in sorted(files):
        stage = stage_of(rel)
        if stage is None:
            errors.append(f"{rel}: not in a stage folder ({', '.join(STAGES)}) or a known root file")
            continue
        for inc in files[rel]:
            if inc not in files:
                errors.append(f"{rel}: includes \"{inc}\", not a path from plugin/ to a header")
                continue
            target = stage_of(inc)
            if target is not None and STAGES.index(target) > STAGES.index(stage):
                errors.append(f"{rel} ({stage}) includes {inc} of the higher stage {target}")
    # header cycles: depth-first search over header -> header edges
    state = {}

    def visit(h, path):
        state[h] = 1
        for inc in files.get(h, []):
            if not inc.endswith(".h") or inc not in files:
                continue
            if state.get(inc) == 1:
                cycle = path[path.index(inc):] + [inc] if inc in path else [h, inc]
                errors.append("include cycle: " + " -> ".join(cycle))
            elif state.get(inc) is None:
                visit(inc, path + [inc])
        state[h] = 2

    for h in sorted(f for f in files if f.endswith(".h")):
        if h not in state:
            visit(h, [h])
    for e in errors:
        print(e)
    if not errors:
        print(f"check_includes: {len(files)} files, {sum(map(len, files.values()))} includes, "
              "no upward include, no cycle")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
