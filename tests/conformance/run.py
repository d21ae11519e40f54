#!/usr/bin/env python3
"""The probe conformance suite (issue 27, item 3): every scenario (scenarios.py) through every
probe implementation (implementations.py), on the host and under bwrap-strict.

  run.py BUILD_DIR NATIVE_PROBE [--only SCENARIO[,SCENARIO]] [--show-facts] [--all-failures]

For each implementation and environment it makes the scenario's launches, reads each stdout by
the frame rules (frames.py: a protocol error fails), checks the scenario's expectations (its
facts, and the driver's own canaries for what reached them), then compares:
  host vs sandbox, same implementation, for scenarios that agree (after VOLATILE keys and
    ALLOWED_ENVIRONMENT_DIFFERENCES);
  each implementation vs native, same environment (after ALLOWED_IMPLEMENTATION_DIFFERENCES).
Every fact is also validated against docs/facts.schema.json.

Empty implementation slots are listed as not run. bwrap missing: the sandbox environment is a
skip, or a failure with SANDPROBE_REQUIRE_BACKENDS=1. Exit 0 when nothing failed.
"""
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import frames as sp_frames  # noqa: E402
import implementations  # noqa: E402
import listeners  # noqa: E402
import scenarios  # noqa: E402

NOBODY = 65534
SANDBOX_PROFILE = os.path.join(SOURCE_DIR, "sandboxes", "bwrap-strict.json")
SANDBOX_PROBE_DIR = "/opt/sandprobe"  # where bwrap-strict binds {probe_dir}
LAUNCH_TIMEOUT_S = 60


def load_commented_json(path):
    """The profiles' JSON with // comments (outside strings)."""
    out, in_string, escaped, i = [], False, False, 0
    text = open(path).read()
    while i < len(text):
        c = text[i]
        if in_string:
            out.append(c)
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return json.loads("".join(out))


class Fixtures:
    """The files, directories, canaries and values the scenarios name in braces."""

    def __init__(self, root, canaries):
        self.root = root
        fx = os.path.join(root, "fx")
        os.mkdir(fx, 0o755)
        canary = b"sandprobe conformance canary 01\n"
        with open(os.path.join(fx, "canary.txt"), "wb") as f:
            f.write(canary)
        os.chmod(os.path.join(fx, "canary.txt"), 0o644)
        with open(os.path.join(fx, "secret.txt"), "wb") as f:
            f.write(b"not for the probe\n")
        os.chmod(os.path.join(fx, "secret.txt"), 0o600)
        os.symlink(os.path.join(fx, "canary.txt"), os.path.join(fx, "link"))
        os.mkdir(os.path.join(fx, "rw"))
        os.chmod(os.path.join(fx, "rw"), 0o777)
        os.mkdir(os.path.join(fx, "ro"), 0o755)
        self.workspace = os.path.join(root, "workspace")
        os.mkdir(self.workspace)
        os.chmod(self.workspace, 0o777)
        secret_prefix = "SANDPROBE_CONFORMANCE_" + os.urandom(4).hex().upper() + "_"
        self.values = {"fx": fx, "canary_sha": hashlib.sha256(canary).hexdigest(),
                       "canary_bytes": len(canary), "secret_prefix": secret_prefix,
                       "secret_name": secret_prefix + "TOKEN",
                       "secret_sha": hashlib.sha256(b"conformance-secret-value").hexdigest(),
                       "token": "conformance" + os.urandom(6).hex(), "driver_uid": os.geteuid()}
        self.values.update(canaries.endpoints())
        # A socket anyone may connect to (priv.runtime_sockets), answering GET /_ping.
        canaries.start_unix(os.path.join(fx, "runtime.sock"))
        os.chmod(os.path.join(fx, "runtime.sock"), 0o777)

    def expand(self, value):
        if isinstance(value, str):
            whole = re.fullmatch(r"\{(\w+)\}", value)
            if whole and whole.group(1) in self.values:
                return self.values[whole.group(1)]
            return re.sub(r"\{(\w+)\}", lambda m: str(self.values.get(m.group(1), m.group(0))), value)
        if isinstance(value, list):
            return [self.expand(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.expand(v) for v in value)
        if isinstance(value, dict):
            return {self.expand(k): self.expand(v) for k, v in value.items()}
        return value


class Environment:
    """How a launch is started: "host" (directly; as uid 65534 when the driver is root) or
    "sandbox" (bwrap-strict's argv from sandboxes/bwrap-strict.json, the fixtures bound in)."""

    def __init__(self, name, fixtures, probe_dir):
        self.name = name
        self.fixtures = fixtures
        self.probe_dir = probe_dir
        if name == "sandbox":
            self.profile = load_commented_json(SANDBOX_PROFILE)

    def argv(self, impl, probe_args):
        if self.name == "host":
            command = [a.replace("{probe_dir}", self.probe_dir) for a in impl["command"]]
            drop = (["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups",
                     "--inh-caps", "-all", "--bounding-set", "-all"] if os.geteuid() == 0 else [])
            return drop + command + probe_args
        command = [a.replace("{probe_dir}", SANDBOX_PROBE_DIR) for a in impl["command"]]
        fx = self.fixtures.values["fx"]
        extra = ["--bind", fx, fx]
        for path in impl["sandbox_binds"]:
            extra += ["--ro-bind", path, path]
        for name, value in impl.get("sandbox_env", {}).items():
            extra += ["--setenv", name, value]  # after the profile's --clearenv
        out = []
        for arg in self.profile["run"]:
            if arg == "--remount-ro":
                out += extra  # after the profile's own mounts (its tmpfs /tmp), before the remount
            if arg == "{probe}":
                out += command
            elif arg == "{probe_args...}":
                out += probe_args
            else:
                out.append(arg.replace("{probe_dir}", self.probe_dir)
                           .replace("{workspace}", self.fixtures.workspace))
        return out

    def env(self, scenario_env):
        if self.name == "sandbox" and self.profile.get("environment") == "empty":
            base = {}
        else:
            base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.fixtures.workspace}
        base.update(scenario_env)
        return base

    def cwd(self):
        return self.fixtures.workspace


def launch(argv, env, cwd, nonce, kill_after_ms=None):
    """One launch in a process group of its own; ended by its group id when it overstays."""
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    limit = kill_after_ms / 1000 if kill_after_ms else LAUNCH_TIMEOUT_S
    try:
        out, err = proc.communicate(timeout=limit)
        killed = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        killed = True
    return {"exit": proc.returncode, "killed": killed, "stderr": err.decode(errors="replace")[-400:],
            "frames": sp_frames.parse_frames(out, nonce)}


def prepared(impl, build_dir):
    """The row with its executables ({deno}, ...) resolved and its families read from the build
    (families_file), and what is missing for it to run: (row, [missing])."""
    found = {name: implementations.find_executable(name) for name in implementations.EXECUTABLES}
    missing = [r for r in impl["requires"]
               if (found.get(r) if r in implementations.EXECUTABLES else shutil.which(r)) is None]
    missing += [p.replace("{build}", build_dir) for p in impl.get("build_products", [])
                if not os.path.exists(p.replace("{build}", build_dir))]
    if missing:
        return impl, missing

    def expand(arg):
        for name, path in found.items():
            arg = arg.replace("{" + name + "}", path or "")
        return arg
    row = dict(impl, command=[expand(a) for a in impl["command"]],
               sandbox_binds=[expand(a) for a in impl["sandbox_binds"]])
    if "families_file" in impl:
        path = impl["families_file"].replace("{build}", build_dir)
        if not os.path.exists(path):
            return impl, [path]
        with open(path) as f:
            row["families"] = [line.strip() for line in f if line.strip()]
    return row, []


def hello_problems(impl, results):
    """The hello's "families" must be the row's (the build's list), when the row has one."""
    problems = []
    for index, (_, result) in enumerate(results):
        hello = next((f for f in result["frames"].facts if f.get("family") == "hello"), None)
        if hello is None:
            problems.append(f"launch {index}: no hello fact")
        elif impl.get("families") is not None and hello.get("families") != impl["families"]:
            problems.append(f"launch {index}: hello families {hello.get('families')} are not the build's {impl['families']}")
    return problems


def run_scenario(scenario, impl, environment, fixtures, canaries):
    """The scenario's launches, in order: [(nonce, result)]."""
    results = []
    wrap = list(scenario.get("wrap", []))
    env = environment.env(fixtures.expand(scenario.get("env", {})))
    for steps in fixtures.expand(scenario["launches"]):
        nonce = "conf" + os.urandom(8).hex()
        probe_args = ["--nonce", nonce]
        for i, (family, args) in enumerate(steps):
            probe_args += (["--next"] if i else []) + [family] + list(args)
        argv = wrap + environment.argv(impl, probe_args)
        results.append((nonce, launch(argv, env, environment.cwd(), nonce, scenario.get("kill_after_ms"))))
    return results


def matches(fact, selector):
    """Every selector value equals the fact's, or (a compiled pattern) matches it in full."""
    def one(value, want):
        if isinstance(want, re.Pattern):
            return isinstance(value, str) and want.fullmatch(value) is not None
        return value == want
    return all(one(fact.get(k), v) for k, v in selector.items())


def scenario_families(scenario):
    return {family for steps in scenario["launches"] for family, _ in steps}


def not_run_reason(scenario, impl):
    """Why `impl` does not take part in `scenario` (a family it does not implement, a scenario
    its runtime cannot take part in), or None."""
    if scenario["name"] in impl.get("skip_scenarios", {}):
        return impl["skip_scenarios"][scenario["name"]]
    if impl.get("families") is not None:
        missing = sorted(scenario_families(scenario) - set(impl["families"]))
        if missing:
            return f"not expressible in {impl['runtime']}: {', '.join(missing)}"
    return None


def without_facts(results, selectors):
    """The results with every fact matching one of `selectors` left out (a copy)."""
    if not selectors:
        return results
    out = []
    for nonce, result in results:
        frames = sp_frames.ProbeFrames()
        frames.__dict__.update(result["frames"].__dict__)
        frames.facts = [f for f in result["frames"].facts if not any(matches(f, sel) for sel in selectors)]
        out.append((nonce, dict(result, frames=frames)))
    return out


def expectation_excluded(expect, selectors):
    """An expectation about a fact the implementation cannot express (its selector names it)."""
    fact = expect.get("fact") or expect.get("no_fact")
    return fact is not None and any(matches(fact, sel) for sel in selectors)


def check_expectations(scenario, where, results, fixtures, canaries, excluded=(), drop_for=lambda family: []):
    """`excluded`: fact selectors the implementation cannot express; `drop_for(family)`: keys it
    may report otherwise (ALLOWED_IMPLEMENTATION_DIFFERENCES), not checked."""
    problems = []
    for expect in fixtures.expand(scenario.get("expect", [])):
        if expect["where"] not in ("*", where) or expectation_excluded(expect, excluded):
            continue
        index = expect.get("launch", 0)
        nonce, result = results[index]
        facts = result["frames"].facts
        if "complete" in expect:
            if result["frames"].complete != expect["complete"]:
                problems.append(f"launch {index}: complete is {result['frames'].complete}, expected {expect['complete']}")
        elif "fact" in expect:
            found = [f for f in facts if matches(f, expect["fact"])]
            if not found:
                problems.append(f"launch {index}: no fact {expect['fact']}")
                continue
            for key, want in expect["has"].items():
                if key in drop_for(expect["fact"].get("family")):
                    continue
                if isinstance(want, dict) and want.get("absent"):
                    if key in found[0]:
                        problems.append(f"launch {index}: {expect['fact']}: {key} should be absent, is {found[0][key]!r}")
                elif found[0].get(key) != want:
                    problems.append(f"launch {index}: {expect['fact']}: {key} is {found[0].get(key, '<absent>')!r}, expected {want!r}")
        elif "no_fact" in expect:
            if any(matches(f, expect["no_fact"]) for f in facts):
                problems.append(f"launch {index}: unexpected fact {expect['no_fact']}")
        elif "received" in expect or "not_received" in expect:
            endpoint = expect.get("received") or expect.get("not_received")
            got = any(n == nonce or (len(n) == 63 and nonce.startswith(n)) for n in canaries.nonces_at(endpoint))
            if got != ("received" in expect):
                problems.append(f"launch {index}: the {endpoint} canary {'did not get' if 'received' in expect else 'got'} this launch's nonce")
    return problems


def normalised(fact, nonce, drop):
    """The fact with the nonce spelled <nonce> and the keys in `drop` (family-wide) removed."""
    text = json.dumps(fact).replace(nonce, "<nonce>")
    fact = json.loads(text)
    for key in drop:
        head, _, rest = key.partition(".")
        if rest and isinstance(fact.get(head), dict):
            fact[head].pop(rest, None)
        else:
            fact.pop(key, None)
    return fact


def keyed(results, drop_for):
    """{(launch, identity): normalised fact}, progress facts as (launch, family, kind, n)."""
    out = {}
    for index, (nonce, result) in enumerate(results):
        progress = {}
        for fact in result["frames"].facts:
            identity = sp_frames.fact_identity(fact)
            if identity is None:
                tag = (fact.get("family"), fact.get("kind"))
                progress[tag] = True
                continue
            out[(index, identity.replace(nonce, "<nonce>"))] = normalised(fact, nonce, drop_for(fact.get("family")))
        for tag in progress:
            out[(index, "progress") + tag] = {"family": tag[0], "kind": tag[1]}
    return out


def unstable(scenario, results, drop_for):
    """The results and the key filter without what the scenario calls unstable (scenarios.py)."""
    rows = scenario.get("unstable")
    if not rows:
        return results, drop_for
    return (without_facts(results, rows["facts"]),
            lambda family: list(drop_for(family)) + rows["keys"].get(family, []))


def compare(a_results, b_results, drop_for, label, scenario=None):
    if scenario is not None:
        a_results, _ = unstable(scenario, a_results, drop_for)
        b_results, drop_for = unstable(scenario, b_results, drop_for)
    a, b = keyed(a_results, drop_for), keyed(b_results, drop_for)
    problems = []
    for key in sorted(set(a) | set(b), key=str):
        shown = key[1].replace("\0", " ") if isinstance(key[1], str) else key
        if key not in a or key not in b:
            problems.append(f"{label}: fact {shown!r} only in {'the first' if key in a else 'the second'}")
        elif a[key] != b[key]:
            diff = sorted(k for k in set(a[key]) | set(b[key]) if a[key].get(k) != b[key].get(k))
            problems.append(f"{label}: fact {shown!r} differs in {diff}: "
                            f"{ {k: a[key].get(k) for k in diff} } vs { {k: b[key].get(k) for k in diff} }")
    return problems


def environment_drop(family):
    keys = list(scenarios.VOLATILE.get(family, []))
    for row in scenarios.ALLOWED_ENVIRONMENT_DIFFERENCES:
        if row["family"] == family:
            keys += row["keys"]
    return keys


def implementation_drop(impl):
    """The keys `impl` may report otherwise than native, per family: its runtime's
    (ALLOWED_IMPLEMENTATION_DIFFERENCES) and its row's own (allowed_differences)."""
    rows = [row for row in implementations.ALLOWED_IMPLEMENTATION_DIFFERENCES
            if row["runtime"] in ("*", impl["runtime"])] + impl.get("allowed_differences", [])

    def drop(family):
        keys = list(scenarios.VOLATILE.get(family, []))
        for row in rows:
            if row["family"] in ("*", family):
                keys += row["keys"]
        return keys
    return drop


# A lying implementation for the driver's self-check: the native probe with every EACCES
# rewritten to ENOENT (frames stay well-formed). The comparison and the expectations must both
# catch it, or the suite could pass anything.
LIAR = """
import subprocess, sys
out = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE).stdout
sys.stdout.buffer.write(out.replace(b'"EACCES"', b'"ENOENT"'))
"""


def self_check(fixtures, canaries, probe_dir, runs):
    """Runs the liar on the host through canary-unreadable; returns what went wrong with the
    check itself (empty when the liar was caught)."""
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    liar = {"name": "liar", "runtime": "native", "command": [python, "-c", LIAR, "{probe_dir}/sandprobe-probe"],
            "sandbox_binds": []}
    scenario = next(s for s in scenarios.SCENARIOS if s["name"] == "canary-unreadable")
    native = runs.get(("native", "host", scenario["name"]))
    if native is None:
        return []
    results = run_scenario(scenario, liar, Environment("host", fixtures, probe_dir), fixtures, canaries)
    caught_by_expect = check_expectations(scenario, "host", results, fixtures, canaries)
    caught_by_compare = compare(native, results, implementation_drop(liar), "native vs liar")
    problems = []
    if not caught_by_expect:
        problems.append("self-check: the expectations accepted a probe that reports ENOENT for EACCES")
    if not caught_by_compare:
        problems.append("self-check: the comparison accepted a probe that reports ENOENT for EACCES")
    print(f"self-check: a probe reporting ENOENT for EACCES was caught by {len(caught_by_expect)} "
          f"expectation(s) and {len(caught_by_compare)} comparison difference(s)")
    return problems


def schema_validator():
    try:
        import jsonschema
    except ImportError:
        return None
    with open(os.path.join(SOURCE_DIR, "docs", "facts.schema.json")) as f:
        schema = json.load(f)
    return jsonschema.Draft202012Validator(schema)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    options = [a for a in sys.argv[1:] if a.startswith("--")]
    if len(args) < 2:
        print(__doc__)
        return 2
    build_dir, native_probe = os.path.abspath(args[0]), os.path.abspath(args[1])
    only = None
    for i, a in enumerate(sys.argv):
        if a == "--only" and i + 1 < len(sys.argv):
            only = set(sys.argv[i + 1].split(","))
            args = [x for x in args if x != sys.argv[i + 1]]
    require = os.environ.get("SANDPROBE_REQUIRE_BACKENDS") == "1"
    started = time.monotonic()
    failures, notes = [], []
    validator = schema_validator()
    if validator is None:
        failures.append("python3 jsonschema is not installed (apt-get install python3-jsonschema)")

    root = tempfile.mkdtemp(prefix="sp-conformance-")
    os.chmod(root, 0o755)
    canaries = listeners.Canaries()
    canaries.start()
    counts = {"launches": 0, "facts": 0, "expectations": 0, "comparisons": 0}
    try:
        fixtures = Fixtures(root, canaries)
        environments = ["host"]
        if shutil.which("bwrap") and shutil.which("setpriv"):
            environments.append("sandbox")
        elif require:
            failures.append("bwrap (or setpriv) is not installed: the sandbox environment cannot run (SANDPROBE_REQUIRE_BACKENDS=1)")
        else:
            notes.append("SKIP sandbox environment: bwrap or setpriv is not installed")
        selected = [s for s in scenarios.SCENARIOS if only is None or s["name"] in only]
        runs = {}  # (impl, env, scenario) -> results
        for impl in implementations.IMPLEMENTATIONS:
            if impl["command"] is None:
                notes.append(f"not run: {impl['name']} ({impl['owner']})")
                continue
            impl, missing = prepared(impl, build_dir)
            if missing:
                (failures if require else notes).append(f"not run: {impl['name']}: {', '.join(missing)} not installed")
                continue
            probe_dir = os.path.join(root, "probe-" + re.sub(r"\W", "_", impl["name"]))
            os.mkdir(probe_dir, 0o755)
            for pattern in impl["files"]:
                path = pattern.replace("{build}", build_dir).replace("{source}", SOURCE_DIR).replace("{probe}", native_probe)
                shutil.copy(path, probe_dir)
                os.chmod(os.path.join(probe_dir, os.path.basename(path)), 0o755)
            for env_name in environments:
                environment = Environment(env_name, fixtures, probe_dir)
                excluded = [row["fact"] for row in impl.get("not_expressible_facts", [])]
                for scenario in selected:
                    reason = not_run_reason(scenario, impl)
                    if reason is not None:
                        if env_name == environments[0]:
                            notes.append(f"not run: {impl['name']} / {scenario['name']}: {reason}")
                        continue
                    results = without_facts(run_scenario(scenario, impl, environment, fixtures, canaries), excluded)
                    runs[(impl["name"], env_name, scenario["name"])] = results
                    label = f"{impl['name']} / {env_name} / {scenario['name']}"
                    for index, (nonce, result) in enumerate(results):
                        counts["launches"] += 1
                        frames = result["frames"]
                        counts["facts"] += len(frames.facts)
                        if frames.errors:
                            failures.append(f"{label}: launch {index}: protocol errors: {frames.errors[:3]}")
                        expected_complete = not scenario.get("kill_after_ms")
                        if expected_complete and (not frames.complete or result["exit"] != 0):
                            failures.append(f"{label}: launch {index}: exit {result['exit']}, {frames.describe()}; stderr {result['stderr']!r}")
                        for fact in frames.facts:
                            for error in (validator.iter_errors(fact) if validator else []):
                                failures.append(f"{label}: schema: {error.message} in {json.dumps(fact)[:200]}")
                        if "--show-facts" in options:
                            print(f"# {label} launch {index} exit {result['exit']}")
                            for fact in frames.facts:
                                print("  ", json.dumps(fact))
                    allowed = (implementation_drop(impl) if impl["runtime"] != "native"
                               else (lambda family: []))
                    problems = check_expectations(scenario, env_name, results, fixtures, canaries, excluded, allowed)
                    problems += hello_problems(impl, results)
                    counts["expectations"] += sum(1 for e in scenario.get("expect", []) if e["where"] in ("*", env_name)
                                                  and not expectation_excluded(fixtures.expand(e), excluded))
                    failures += [f"{label}: {p}" for p in problems]
        # Host vs sandbox, per implementation, where the scenario says they agree.
        for impl in implementations.IMPLEMENTATIONS:
            for scenario in selected:
                host = runs.get((impl["name"], "host", scenario["name"]))
                sandbox = runs.get((impl["name"], "sandbox", scenario["name"]))
                if scenario["agree"] and host and sandbox:
                    counts["comparisons"] += 1
                    failures += compare(host, sandbox, environment_drop,
                                        f"{impl['name']} / {scenario['name']}: host vs sandbox", scenario)
        # Each implementation vs native, per environment.
        for impl in implementations.IMPLEMENTATIONS[1:]:
            for env_name in environments:
                for scenario in selected:
                    mine = runs.get((impl["name"], env_name, scenario["name"]))
                    native = runs.get(("native", env_name, scenario["name"]))
                    if mine and native:
                        counts["comparisons"] += 1
                        native = without_facts(native, [row["fact"] for row in impl.get("not_expressible_facts", [])])
                        failures += compare(native, mine, implementation_drop(impl),
                                            f"{scenario['name']} / {env_name}: native vs {impl['name']}", scenario)
        native_dir = os.path.join(root, "probe-native")
        if os.path.isdir(native_dir):
            failures += self_check(fixtures, canaries, native_dir, runs)
    finally:
        canaries.stop()
        shutil.rmtree(root, ignore_errors=True)
        token = "conformance"  # a persist.plant token file left in /tmp by a failed check
        for name in os.listdir("/tmp"):
            if name.startswith(".sandprobe-persist-" + token):
                os.unlink(os.path.join("/tmp", name))
    elapsed = time.monotonic() - started
    ran = sorted({k[0] for k in runs})
    print(f"conformance: {len(selected)} scenarios x {len(ran)} implementation(s) ({', '.join(ran)}) x "
          f"{len(environments)} environment(s): {counts['launches']} launches, {counts['facts']} facts, "
          f"{counts['expectations']} expectations, {counts['comparisons']} comparisons; {elapsed:.1f} s")
    for note in notes:
        print(note)
    shown = len(failures) if "--all-failures" in options else 60
    for failure in failures[:shown]:
        print("FAIL:", failure)
    if len(failures) > shown:
        print(f"FAIL: and {len(failures) - shown} more (--all-failures shows them)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
