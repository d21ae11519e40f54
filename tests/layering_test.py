#!/usr/bin/env python3
"""Every include of the host side follows the link lines: a folder's code includes only headers
of its own folder and of the folders its library links (directly or through them). A test may
include more (it links what it needs). An include that runs upward fails here, with the file and
the header, before it becomes a cycle between libraries."""
import os, re, sys

# folder -> the folders its library links, directly (the CMakeLists DEPS) — closed below.
LINKS = {
    "contract": [],
    "model": ["contract"],
    "io": ["model", "contract"],
    "load": ["model"],
    "launch": ["model", "contract", "io"],
    "lab": ["load", "model", "contract"],
    "families": ["load", "model", "contract"],
    "witnesses": ["families", "launch", "load", "model", "contract"],
    "gate": ["families", "load", "model", "contract"],
    "reports": ["gate", "load", "io", "model"],
    "recorded": ["families", "reports", "load", "model"],
    "run": ["lab", "recorded", "witnesses", "gate", "reports", "families", "launch", "io", "load", "model",
            "contract"],
    "mutate": ["run", "reports", "families", "launch", "load", "model"],
    "cli": ["mutate", "run", "recorded", "reports", "gate", "load", "launch", "io", "model", "contract"],
    "probes": ["contract"],
}

def closure(folder, seen=None):
    seen = seen if seen is not None else set()
    for dep in LINKS[folder]:
        if dep not in seen:
            seen.add(dep)
            closure(dep, seen)
    return seen | {folder}

def main(root):
    include = re.compile(r'^#include "([a-z_]+)/[^"]+"', re.M)
    problems = []
    for folder in LINKS:
        allowed = closure(folder)
        path = os.path.join(root, folder)
        for name in sorted(os.listdir(path)):
            if not name.endswith((".h", ".cc")) or name.endswith("_test.cc"):
                continue
            text = open(os.path.join(path, name), encoding="utf-8").read()
            for target in include.findall(text):
                if target in LINKS and target not in allowed:
                    problems.append(f"{folder}/{name} includes {target}/: not a folder its library links")
    known = set(LINKS) | {"tests", "bench", "fuzz", "docs", "docker", "scripts", "sandboxes",
                          "policies", "suites", "third_party", "cmake", "build", ".ci", ".git"}
    for entry in sorted(os.listdir(root)):
        if os.path.isdir(os.path.join(root, entry)) and entry not in known and not entry.startswith("build"):
            if any(n.endswith((".cc", ".h")) for n in os.listdir(os.path.join(root, entry))):
                problems.append(f"{entry}/: a source folder this test does not know; add it to LINKS")
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
