#!/usr/bin/env python3
"""Every fact a real probe writes is valid against docs/facts.schema.json.

  facts_schema_test.py BUILD_DIR PROBE CLI

1. The built native probe, run directly on the host over every family it lists (--families),
   with arguments that reach each family's shapes (a readable file, a missing one, a name that
   is not UTF-8, listeners the test opens on 127.0.0.1, a DNS responder, a unix socket, an
   inherited directory fd, ...). Each run's stdout is read by the frame rules (tests/conformance/
   frames.py): complete, no protocol error, exit 0.
2. `sandprobe run --suite all --json F` with --sandbox host and --sandbox bwrap-strict, and with
   wasi-node and wasi-node-leaky (the wasm32-wasi probe under node:wasi): every frame of every
   probe launch (report launches[].frames) validates, and no launch has a protocol error.
3. Negative cases: for the first real fact of every shape, the same fact with an unknown key,
   and with one key's value of another type, must be rejected; so must a done frame with a
   second key. If the schema stopped catching them, this test fails.

bwrap (or the wasi probe, node and its runner) missing: that run is skipped with the reason,
unless SANDPROBE_REQUIRE_BACKENDS=1, then it is a failure.
"""
import collections
import fcntl
import hashlib
import json
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import termios
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "conformance"))
import frames as sp_frames  # noqa: E402
import listeners  # noqa: E402

try:
    import jsonschema
except ImportError:  # scripts/setup.sh installs python3-jsonschema
    print("FAIL: python3 jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(1)


class Checker:
    def __init__(self, schema):
        self.schema = schema
        self.validator = jsonschema.Draft202012Validator(schema)
        self.frames = 0
        self.failures = []
        self.shapes = collections.Counter()   # (family, sorted keys) seen
        self.first_of_shape = {}
        self.keys = set()

    def errors(self, payload):
        return [f"{e.message} at /{'/'.join(map(str, e.absolute_path))}"
                for e in self.validator.iter_errors(payload)]

    def check(self, payload, where):
        self.frames += 1
        problems = self.errors(payload)
        if problems:
            self.failures.append(f"{where}: {json.dumps(payload)[:300]}: {'; '.join(problems[:3])}")
        shape = (payload.get("family", "done"), payload.get("kind", ""),
                 "summary" if payload.get("summary") else payload.get("variant", "")[:9])
        self.shapes[shape] += 1
        self.keys |= seen_keys(payload, payload.get("family", "done"))
        self.first_of_shape.setdefault(shape, payload)


def _take_terminal():
    """In the child: the pty on stdin becomes its controlling terminal (a session of its own)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def run_probe(probe, nonce, args, cwd, env=None, pass_fds=(), timeout=60, tty=False, wrap=()):
    """Runs the probe; with tty=True its stdin is a pty the test opened, and its controlling
    terminal (priv.tiocsti's terminal facts; its ioctls use a bad pointer, nothing is injected)."""
    master = slave = None
    if tty:
        master, slave = pty.openpty()
    try:
        proc = subprocess.run(list(wrap) + [probe, "--nonce", nonce] + args, cwd=cwd, env=env, pass_fds=pass_fds,
                              stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, start_new_session=tty,
                              preexec_fn=_take_terminal if tty else None)
    finally:
        for fd in (master, slave):
            if fd is not None:
                os.close(fd)
    return proc.returncode, proc.stdout, proc.stderr


def direct_invocations(fx):
    """family -> list of argument lists, each reaching different shapes of the family."""
    canary, scratch = fx["canary"], fx["scratch"]
    return {
        "fs.read": [[canary, fx["dir"], fx["missing"], fx["bad_name"], fx["fifo"], "/proc/self/status"]],
        "fs.write": [[scratch, fx["missing"], fx["bad_name_dir"], fx["readonly_dir"]]],
        "fs.alias": [["--scratch", scratch, canary, fx["missing"], fx["bad_name"]], ["--scratch", fx["missing"], canary]],
        "fs.mounts": [[]],
        # Everything declared writable: no write on the host here (the host and bwrap-strict runs
        # below reach the write, walk and EROFS shapes).
        "fs.storage": [["/"]],
        "env.secret": [[fx["env_prefix"]]],
        "net.tcp": [[f"loopback={fx['tcp']}", f"closed={fx['closed']}", "v6=[::1]:9"]],
        "net.udp": [[f"loopback={fx['udp']}", f"closed={fx['closed']}"]],
        "net.dns": [[f"loopback={fx['dns']}", f"closed={fx['closed']}"]],
        "net.unix": [[fx["unix"], canary, fx["missing"], fx["bad_name"]]],
        "net.ifaces": [[]],
        # On the host the resolver is not the lab's: the probe refuses to resolve (resolv.conf
        # shape); the lab's shapes come from the lab run (tests/lab_test.cc's reports).
        "net.lab": [["pkg.lab.test", "evilpkg.lab.test"]],
        "net.bypass": [["decimal=3325256714", "trailing-dot=unrelated.evil.test.", "zone-id=2001:db8:c::a%1",
                        "fronting=pkg.lab.test@fronted.unrelated.evil.test", "dns-exfil=NONCE.unrelated.evil.test"]],
        "priv.identity": [[]],
        "priv.caps": [[]],
        "priv.seccomp": [[]],
        "priv.syscalls": [fx["syscalls"]],
        "priv.userns": [[]],
        "priv.tiocsti": [[]],
        "priv.namespaces": [["pid", "net", "mnt", "ipc", "uts", "cgroup", "user", "nosuch"]],
        "priv.host_pid": [[fx["canary_process_sha"]], ["0" * 64]],
        "priv.runtime_sockets": [[fx["unix"], canary, fx["missing"], fx["dir"], fx["bad_name"]]],
        "priv.fds": [[]],
        "priv.cwd": [[]],
        "priv.kernel_knobs": [["/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe",
                               "/proc/sysrq-trigger", fx["missing"]]],
        "priv.cgroups": [[]],
        "priv.devices": [[]],
        "priv.masked": [["/proc/kcore", "/proc/keys", "/proc/timer_list", "/sys/firmware",
                         fx["missing"], fx["dir"]]],
        "res.pids": [["--ceiling", "20"]],
        "res.memory": [["--ceiling-mib", "12", "--every-mib", "4"]],
        "res.cpu": [["--threads", "2", "--window-ms", "300"],
                    ["--threads", "2", "--window-ms", "600", "--min-periods", "2",
                     "--stop-above-mc", "100", "--edge-ms", "10", "--min-window-ms", "100"]],
        "res.wall": [["--ceiling-seconds", "1"]],
        "res.disk": [["--dir", scratch, "--ceiling-mib", "9"], ["--dir", fx["missing"], "--ceiling-mib", "1"]],
        "res.fds": [["--ceiling", "40"]],
        # plant, then a --keep check that finds everything, then the check that cleans up.
        "persist.plant": [["--token", fx["token"], "--background-seconds", "5", scratch, "@home",
                           "@cwd", fx["missing"]]],
        "persist.check": [["--token", fx["token"], "--keep", scratch, "@cwd", fx["missing"]],
                          ["--token", fx["token"], scratch, "@home", "@cwd", fx["missing"]]],
    }


def make_fixtures(root, net):
    fx = {}
    fx["canary"] = os.path.join(root, "canary.txt")
    with open(fx["canary"], "w") as f:
        f.write("sandprobe schema test canary\n")
    fx["dir"] = os.path.join(root, "dir")
    os.mkdir(fx["dir"])
    for name in ("a", "b"):
        open(os.path.join(fx["dir"], name), "w").close()
    fx["missing"] = os.path.join(root, "missing")
    fx["bad_name"] = os.fsdecode(os.path.join(root, "bad").encode() + b"\xff\xfe.txt")
    open(fx["bad_name"], "w").close()
    fx["bad_name_dir"] = os.fsdecode(os.path.join(root, "baddir").encode() + b"\xc3\x28")
    os.mkdir(fx["bad_name_dir"])
    fx["fifo"] = os.path.join(root, "fifo")
    os.mkfifo(fx["fifo"])
    fx["scratch"] = os.path.join(root, "scratch")
    os.mkdir(fx["scratch"])
    fx["readonly_dir"] = os.path.join(root, "readonly")
    os.mkdir(fx["readonly_dir"], 0o555)
    fx["env_prefix"] = "SANDPROBE_SCHEMA_TEST_"
    fx["token"] = "schema" + os.urandom(6).hex()
    fx["syscalls"] = [
        "chroot", "mount", "unshare", "clone", "setns", "bpf", "keyctl", "add_key", "ptrace",
        "perf_event_open", "userfaultfd", "io_uring_setup", "open_by_handle_at", "init_module",
        "kexec_load", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "clone3", "personality", "ioctl", "socket(AF_PACKET)", "socket(AF_VSOCK)",
        "socket(AF_BLUETOOTH)", "socket(AF_NETLINK)"]
    fx.update(net)
    return fx


def direct_runs(probe, checker, root, net):
    fx = make_fixtures(root, net)
    known = subprocess.run([probe, "--families"], stdout=subprocess.PIPE, check=True).stdout.decode().split()
    invocations = direct_invocations(fx)
    schema_families = set(checker.schema["$defs"]["fact"]["properties"]["family"]["enum"]) - {"hello"}
    if set(known) != schema_families:
        checker.failures.append(f"--families and the schema disagree: probe only {sorted(set(known) - schema_families)}, "
                                f"schema only {sorted(schema_families - set(known))}")
    missing = set(known) - set(invocations)
    if missing:
        checker.failures.append(f"no direct invocation for {sorted(missing)}: add one to direct_invocations()")
    env = dict(os.environb)
    env[(fx["env_prefix"] + "PLAIN").encode()] = b"value"
    env[fx["env_prefix"].encode() + b"NOT_UTF8_\xff"] = b"value"
    env[b"HOME"] = fx["scratch"].encode()
    # Inherited descriptors for priv.fds: a directory, and a file whose name is not UTF-8.
    dir_fd = os.open(fx["dir"], os.O_RDONLY | os.O_DIRECTORY)
    file_fd = os.open(fx["bad_name"], os.O_RDONLY)
    runs = 0
    try:
        runs_wanted = [(f, a, False, []) for f in known for a in invocations.get(f, [])]
        runs_wanted.append(("priv.tiocsti", [], True, []))
        # fs.alias mount_root hits: the fixture dir bound at another mount point, in a mount
        # namespace of the probe's own (root only; nothing changes outside that namespace).
        if os.geteuid() == 0 and shutil.which("unshare"):
            bound = os.path.join(root, "bound")
            os.mkdir(bound)
            script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
            wrap = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", fx["dir"], bound]
            runs_wanted.append(("fs.alias", ["--scratch", fx["scratch"], os.path.join(fx["dir"], "a")], False, wrap))
        for family, args, tty, wrap in runs_wanted:
            nonce = "schema" + os.urandom(8).hex()
            # The working directory's name is not UTF-8 either (hello and priv.cwd: cwd_hex).
            code, out, err = run_probe(probe, nonce, [family] + args, cwd=fx["bad_name_dir"], env=env,
                                       pass_fds=(dir_fd, file_fd), tty=tty, wrap=wrap)
            runs += 1
            parsed = sp_frames.parse_frames(out, nonce)
            where = f"direct {family} {' '.join(args)[:80]}"
            if code != 0 or not parsed.complete:
                checker.failures.append(f"{where}: exit {code}, {parsed.describe()}; stderr: {err.decode(errors='replace')[-300:]}")
            if parsed.done:
                checker.check({"done": True}, where + " (done)")
            for fact in parsed.facts:
                checker.check(fact, where)
                # The hello's families are exactly what --families prints, and this is native.
                if fact.get("family") == "hello":
                    if sorted(fact.get("families") or []) != sorted(known) or fact.get("runtime") != "native":
                        checker.failures.append(f"{where}: hello says runtime {fact.get('runtime')!r}, families "
                                                f"{sorted(fact.get('families') or [])}; --families says {sorted(known)}")
    finally:
        os.close(dir_fd)
        os.close(file_fd)
    return runs


WASI_RUNNER = "/opt/sandprobe-runtimes/bin/sandprobe-wasi-node-runner.mjs"


def full_runs(cli, checker, root, build_dir):
    have_bwrap = shutil.which("bwrap") is not None
    require = os.environ.get("SANDPROBE_REQUIRE_BACKENDS") == "1"
    sandboxes = ["host"] + (["bwrap-strict"] if have_bwrap else [])
    if not have_bwrap:
        message = "bwrap is not installed: the bwrap-strict run cannot be made"
        if require:
            checker.failures.append(message + " (SANDPROBE_REQUIRE_BACKENDS=1)")
        else:
            print("SKIP part:", message)
    # The wasm32-wasi probe's facts, through node:wasi: the strict profile and the leaky one
    # (whose / preopen reaches the mount table and other processes' environ).
    have_wasi = (os.path.exists(os.path.join(build_dir, "probe-wasi", "sandprobe-probe.wasm"))
                 and shutil.which("node") is not None and os.path.exists(WASI_RUNNER))
    if have_wasi:
        sandboxes += ["wasi-node", "wasi-node-leaky"]
    else:
        message = "the wasi probe, node or the wasi runner is missing (scripts/setup.sh --with wasi): no wasi-node run"
        if require:
            checker.failures.append(message + " (SANDPROBE_REQUIRE_BACKENDS=1)")
        else:
            print("SKIP part:", message)
    launches = 0
    for sandbox in sandboxes:
        report = os.path.join(root, f"report-{sandbox}.json")
        proc = subprocess.run([cli, "run", "--sandbox", sandbox, "--suite", "all", "--json", report],
                              cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=540)
        # 0: every check passed, 1: checks failed (the host fails most); anything else is no run.
        if proc.returncode not in (0, 1) or not os.path.exists(report):
            checker.failures.append(f"sandprobe run --sandbox {sandbox}: exit {proc.returncode}: "
                                    f"{proc.stdout.decode(errors='replace')[-600:]}")
            continue
        with open(report) as f:
            data = json.load(f)
        for launch in data["launches"]:
            launches += 1
            where = f"{sandbox} launch {launch['id']}"
            if launch.get("protocol_errors"):
                checker.failures.append(f"{where}: protocol errors {launch['protocol_errors'][:3]}")
            if not launch.get("frames") and launch.get("purpose") != "requires":  # a preflight: no probe
                checker.failures.append(f"{where}: no frames ({launch.get('error', '')})")
            for index, fact in enumerate(launch["frames"]):
                checker.check(fact, f"{where} frame {index}")
    return len(sandboxes), launches


def schema_keys(schema):
    """(family, key path) for every property the schema declares, nested objects as a.b."""
    defs = schema["$defs"]
    out = set()

    def walk(node, family, prefix, depth=0):
        if depth > 12 or not isinstance(node, dict):
            return
        if "$ref" in node:
            walk(defs[node["$ref"].split("/")[-1]], family, prefix, depth + 1)
        for key, sub in node.get("properties", {}).items():
            out.add((family, prefix + key))
            walk(sub, family, prefix + key + ".", depth + 1)
        for word in ("then", "else", "items", "additionalProperties"):
            if isinstance(node.get(word), dict):
                walk(node[word], family, prefix + ("*." if word == "additionalProperties" else ""), depth + 1)
        for word in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(word, []):
                walk(sub, family, prefix, depth + 1)
    for family in defs["fact"]["properties"]["family"]["enum"]:
        walk(defs["fact." + family], family, "")
    return out


def seen_keys(fact, family, prefix="", out=None, depth=0):
    out = set() if out is None else out
    if depth > 12:
        return out
    if isinstance(fact, dict):
        for key, value in fact.items():
            path = prefix + key
            out.add((family, path))
            seen_keys(value, family, path + ".", out, depth + 1)
    elif isinstance(fact, list):
        for value in fact:
            seen_keys(value, family, prefix, out, depth + 1)
    return out


def negative_cases(checker):
    """The schema must reject an unknown key and a wrong type in every shape it accepted."""
    rejected = 0
    for shape, fact in sorted(checker.first_of_shape.items(), key=lambda kv: json.dumps(kv[0])):
        if shape[0] == "done":
            bad = [dict(fact, extra=1)]
        else:
            key = next((k for k in fact if k not in ("family",)), None)
            wrong = {"x": 1} if not isinstance(fact.get(key), dict) else "not an object"
            bad = [dict(fact, sandprobe_unknown_key=True)]
            if key is not None:
                bad.append(dict(fact, **{key: wrong}))
        for case in bad:
            if checker.errors(case):
                rejected += 1
            else:
                checker.failures.append(f"negative case accepted (the schema does not catch it): {json.dumps(case)[:300]}")
    # A misspelled key in a fact that is otherwise fine.
    probe = {"family": "fs.read", "path": "/x", "ok": False, "step": "open", "errno": "ENOENT", "erno": "ENOENT"}
    if not checker.errors(probe):
        checker.failures.append("a misspelled key (erno) was accepted")
    else:
        rejected += 1
    return rejected


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    build_dir, probe, cli = (os.path.abspath(p) for p in sys.argv[1:4])
    for path in (probe, cli):
        if not os.access(path, os.X_OK):
            print(f"FAIL: {path}: not an executable (build the sandprobe and sandprobe-probe targets in {build_dir})")
            return 1
    with open(os.path.join(SOURCE_DIR, "docs", "facts.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    checker = Checker(schema)
    started = time.monotonic()
    root = tempfile.mkdtemp(prefix="sp-schema-")
    net = listeners.Canaries()
    try:
        net.start()
        canary_process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                                           "sandprobe-canary-schema"], stdout=subprocess.DEVNULL)
        try:
            values = net.endpoints()
            values["canary_process_sha"] = hashlib.sha256(b"sandprobe-canary-schema").hexdigest()
            values["unix"] = net.start_unix(os.path.join(root, "api.sock"))
            direct = direct_runs(probe, checker, root, values)
        finally:
            canary_process.kill()
            canary_process.wait()
        direct_s = time.monotonic() - started
        sandboxes, launches = full_runs(cli, checker, root, build_dir)
        rejected = negative_cases(checker)
    finally:
        net.stop()
        shutil.rmtree(root, ignore_errors=True)
    elapsed = time.monotonic() - started
    families = {shape[0] for shape in checker.shapes}
    print(f"validated {checker.frames} frames ({len(checker.shapes)} shapes of {len(families)} families): "
          f"{direct} direct probe runs ({direct_s:.1f} s) and {launches} launches of {sandboxes} full runs; "
          f"{rejected} negative cases rejected; {elapsed:.1f} s")
    declared = schema_keys(schema)
    # Object maps (macs, cpu.stat) have data as keys: not part of the comparison.
    used = {k for k in checker.keys if k in declared}
    print(f"the schema declares {len(declared)} keys (nested ones as a.b) over "
          f"{len(schema['$defs']['fact']['properties']['family']['enum'])} fact families; "
          f"real output used {len(used)}")
    if os.environ.get("SANDPROBE_SCHEMA_UNUSED"):
        for family, key in sorted(declared - used):
            print(f"  not seen: {family} {key}")
    for failure in checker.failures[:40]:
        print("FAIL:", failure)
    if len(checker.failures) > 40:
        print(f"FAIL: and {len(checker.failures) - 40} more")
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
