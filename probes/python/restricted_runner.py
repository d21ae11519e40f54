#!/usr/bin/env python3
"""restricted_runner.py: the sandbox under test, RestrictedPython as integrators use it.

    restricted_runner.py [--restrictedpython DIR] [--unguarded-getattr] PROBE [PROBE_ARGS...]
    restricted_runner.py [--restrictedpython DIR] --version

Reads PROBE (a Python source file), compiles it with compile_restricted_exec and runs it with
the globals RestrictedPython's documentation tells an integrator to give (docs/usage/
basic_usage.rst, "Necessary setup"): safe_builtins + limited_builtins + utility_builtins as
the builtins, getattr as safer_getattr ("can be a starting point"), and the guards
_getattr_ (safer_getattr), _getitem_ / _getiter_ (Eval's defaults), _iter_unpack_sequence_ /
_unpack_sequence_ (Guards), _write_ (full_write_guard), __metaclass__ = type and __name__ for
classes. No open, no __import__, no os/sys.

The untrusted program's input is the global `sandprobe_argv` (PROBE_ARGS), as an integrator
hands a script its parameters, and its output channel is print(): `_print_` is a
PrintCollector whose text goes straight to stdout, line by line, instead of into the
`printed` variable, so frames stream as they are made (an OOM kill or a timeout still leaves
what was reached). `sandprobe_runtime_version` tells the program which RestrictedPython it runs
on; the probe reports it in its hello fact (informational: the host never trusts it).

--restrictedpython DIR names a Debian python3-restrictedpython package unpacked with
`dpkg -x` (scripts/setup.sh --with python puts the pinned releases in
/opt/sandprobe-runtimes/restrictedpython-VERSION): its usr/lib/python3/dist-packages goes first
on sys.path, and the release is read from the package's own metadata there. Without it, the
installed RestrictedPython is used (Debian: python3-restrictedpython).

--unguarded-getattr gives getattr and _getattr_ as RestrictedPython.Eval's
default_guarded_getattr, which is the plain builtin getattr: a setup seen in integrations
(the name suggests a guard), kept as a switch so the probe can show what it costs.

Exit status: the program's own (`raise SystemExit(N)`), 0 when it ends normally, 1 when it
failed to compile or raised, 2 for the runner's own usage errors.
"""
import os
import platform
import sys


def usage(message):
    sys.stderr.write("restricted_runner: %s\n"
                     "usage: restricted_runner.py [--restrictedpython DIR] PROBE [ARGS...]\n"
                     % message)
    return 2


# Where `dpkg -x` puts a Debian python3-* package's modules under its target directory.
DEB_DIST_PACKAGES = os.path.join("usr", "lib", "python3", "dist-packages")


def restrictedpython_version():
    try:
        from importlib import metadata
        return metadata.version("RestrictedPython")
    except Exception:  # no metadata: report what is known
        return "unknown"


class StreamingPrintCollector:
    """RestrictedPython's PrintCollector protocol, writing each print to stdout at once."""

    def __init__(self, _getattr_=None):
        self.txt = []
        self._getattr_ = _getattr_

    def write(self, text):
        sys.stdout.write(text)

    def __call__(self):
        return ""

    def _call_print(self, *objects, **kwargs):
        if kwargs.get("file", None) is None:
            kwargs["file"] = sys.stdout
        else:
            self._getattr_(kwargs["file"], "write")
        print(*objects, **kwargs)
        sys.stdout.flush()


def restricted_globals(rp, argv, version, unguarded_getattr):
    from RestrictedPython import safe_builtins, limited_builtins, utility_builtins
    from RestrictedPython.Eval import (default_guarded_getattr, default_guarded_getitem,
                                       default_guarded_getiter)
    from RestrictedPython.Guards import (full_write_guard, guarded_iter_unpack_sequence,
                                         guarded_unpack_sequence, safer_getattr)
    builtins = dict(safe_builtins)
    builtins.update(limited_builtins)
    builtins.update(utility_builtins)
    getattr_guard = default_guarded_getattr if unguarded_getattr else safer_getattr
    builtins["getattr"] = getattr_guard
    return {
        "__builtins__": builtins,
        "__metaclass__": type,
        "__name__": "restricted_program",
        "_getattr_": getattr_guard,
        "_getitem_": default_guarded_getitem,
        "_getiter_": default_guarded_getiter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": full_write_guard,
        "_print_": StreamingPrintCollector,
        "sandprobe_argv": list(argv),
        "sandprobe_runtime_version": version,
    }


def main(argv):
    if len(argv) >= 2 and argv[0] == "--restrictedpython":
        unpacked = os.path.join(argv[1], DEB_DIST_PACKAGES)
        argv = argv[2:]
        if not os.path.isdir(os.path.join(unpacked, "RestrictedPython")):
            return usage("--restrictedpython: no RestrictedPython package in %s "
                         "(scripts/setup.sh --with python unpacks it)" % unpacked)
        sys.path.insert(0, unpacked)
    unguarded_getattr = False
    if argv and argv[0] == "--unguarded-getattr":
        unguarded_getattr = True
        argv = argv[1:]
    if not argv:
        return usage("no program given")
    try:
        import RestrictedPython
        from RestrictedPython import compile_restricted_exec
    except ImportError as e:
        sys.stderr.write("restricted_runner: import RestrictedPython: %s\n" % e)
        return 1
    if argv == ["--version"]:  # the profile's "version" command
        print("restrictedpython %s on %s %s" % (restrictedpython_version(),
                                               platform.python_implementation().lower(),
                                               platform.python_version()))
        return 0
    path = argv[0]
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except OSError as e:
        return usage("read %s: %s" % (path, e.strerror))
    version = "restrictedpython %s%s on %s %s" % (
        restrictedpython_version(), " (getattr unguarded)" if unguarded_getattr else "",
        platform.python_implementation().lower(), platform.python_version())
    try:
        result = compile_restricted_exec(source, filename=path)
    except Exception as e:  # 4.0b3 on Python 3.11 raises from compile() itself
        sys.stderr.write("restricted_runner: compile_restricted_exec(%s) with %s raised %s: %s\n"
                         % (path, version, type(e).__name__, e))
        return 1
    if result.errors:
        sys.stderr.write("restricted_runner: %s refused by %s:\n  %s\n"
                         % (path, version, "\n  ".join(result.errors)))
        return 1
    glb = restricted_globals(RestrictedPython, argv[1:], version, unguarded_getattr)
    try:
        exec(result.code, glb)
    except SystemExit:
        sys.stdout.flush()
        raise
    except BaseException:
        sys.stdout.flush()
        import traceback
        traceback.print_exc()
        return 1
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
