#!/usr/bin/env python3
"""Turns a matrix cell of a CI template's audit job into a shell script that runs its shell steps
the way the runner would, so the tests run the templates' own commands (scripts/deb-root-test.sh).

usage: ci-template-steps.py github|gitlab TEMPLATE JOB CELL OUT_SCRIPT [--var NAME=VALUE]...

CELL is the matrix cell, e.g. SANDBOX=bwrap-strict (GitLab) or sandbox=bwrap-strict (GitHub).
--var gives the runner's values: RUNNER_TEMP=DIR, GITHUB_STEP_SUMMARY=FILE (GitHub; names in
capitals are exported, others resolve ${{ expressions }}).

GitHub: every `run:` step of JOB, in order, each in `bash --noprofile --norc -eo pipefail` (the
runner's shell for `run:` on Linux); after a failing step only steps whose `if:` has always()
run; `uses:` steps are left out (the caller plays checkout and download-artifact). The job's
`env:` is exported, its ${{ matrix.* }} resolved; any other expression in
the env, and any expression at all in a `run:` text, is an error: scripts get values through the
environment only.
GitLab: before_script and script as one `bash -eo pipefail` script (as the shell executor runs
them), then after_script in a shell of its own whatever the script's exit; the matrix cell and
the job's `variables:` are exported. The script's exit code is the job's.
"""
import re
import shlex
import sys

import yaml

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def die(message):
    print(f"ci-template-steps: {message}", file=sys.stderr)
    sys.exit(2)


def github(doc, job_name, cell, variables):
    job = doc.get("jobs", {}).get(job_name)
    if job is None:
        die(f"no job {job_name}")
    matrix = job.get("strategy", {}).get("matrix", {})
    for key, value in cell.items():
        if value not in matrix.get(key, []):
            die(f"the matrix of {job_name} has no {key}={value} (it has {matrix.get(key)})")

    def resolve(text, where):
        def one(m):
            expr = m.group(1)
            if expr.startswith("matrix.") and expr[7:] in cell:
                return cell[expr[7:]]
            if expr in variables:
                return variables[expr]
            die(f"{where}: the expression ${{{{ {expr} }}}} is not resolved by this test")
        return EXPR.sub(one, str(text))

    lines = ["#!/bin/bash", "failed=0"]
    for name, value in job.get("env", {}).items():
        lines.append(f"export {name}={shlex.quote(resolve(value, 'env.' + name))}")
    for name, value in variables.items():
        if re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
            lines.append(f"export {name}={shlex.quote(value)}")
    for index, step in enumerate(job.get("steps", [])):
        if "run" not in step:
            continue
        label = step.get("name", f"step {index}")
        if EXPR.search(step["run"]):
            die(f"step '{label}': an expression in a run script (pass it through env:)")
        condition = str(step.get("if", ""))
        guard = "true" if "always()" in condition else '[ "$failed" -eq 0 ]'
        lines += [f"if {guard}; then",
                  f"  echo {shlex.quote('== ' + label)} >&2",
                  f"  bash --noprofile --norc -eo pipefail -c {shlex.quote(step['run'])} "
                  f"|| {{ rc=$?; echo {shlex.quote('== ' + label)}\": exit $rc\" >&2; "
                  "[ \"$failed\" -ne 0 ] || failed=$rc; }",
                  "fi"]
    lines.append('exit "$failed"')
    return "\n".join(lines) + "\n"


def gitlab(doc, job_name, cell, variables):
    job = doc.get(job_name)
    if not isinstance(job, dict):
        die(f"no job {job_name}")
    cells = job.get("parallel", {}).get("matrix", [])
    if not any(all(value in entry.get(key, []) for key, value in cell.items()) for entry in cells):
        die(f"the matrix of {job_name} has no cell {cell}")
    lines = ["#!/bin/bash"]
    for name, value in {**job.get("variables", {}), **cell, **variables}.items():
        lines.append(f"export {name}={shlex.quote(str(value))}")
    main = "\n".join(list(job.get("before_script", [])) + list(job.get("script", [])))
    after = "\n".join(job.get("after_script", []))
    lines += [f"bash --noprofile --norc -eo pipefail -c {shlex.quote(main)}",
              "rc=$?",
              f"bash --noprofile --norc -c {shlex.quote(after)} || true",
              'exit "$rc"']
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) < 6:
        die(__doc__.split("\n\n")[1])
    kind, template, job_name, cell_arg, out = argv[1:6]
    variables = {}
    rest = argv[6:]
    while rest:
        if rest[0] != "--var" or len(rest) < 2 or "=" not in rest[1]:
            die(f"unknown argument: {rest[0]}")
        name, value = rest[1].split("=", 1)
        variables[name] = value
        rest = rest[2:]
    if "=" not in cell_arg:
        die(f"CELL is NAME=VALUE, not {cell_arg}")
    key, value = cell_arg.split("=", 1)
    with open(template) as f:
        doc = yaml.safe_load(f)
    builders = {"github": github, "gitlab": gitlab}
    if kind not in builders:
        die(f"github or gitlab, not {kind}")
    script = builders[kind](doc, job_name, {key: value}, variables)
    with open(out, "w") as f:
        f.write(script)


if __name__ == "__main__":
    main(sys.argv)
