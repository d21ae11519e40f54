#!/usr/bin/env python3
"""Without the WASI toolchain the build skips the wasm probe cleanly (issue 27).

  wasi_toolchain_absent_test.py SOURCE_DIR BUILD_DIR GENERATOR

Configures SOURCE_DIR afresh in a scratch directory under BUILD_DIR with SP_WASI_SYSROOT set to
an empty directory (wasi-libc and libc++ for wasm32 "not installed"), and checks that:
- the configure succeeds and says what is missing and how to install it
  ("wasi probe: not built (missing: SYSROOT/include/wasm32-wasi/stdio.h; ...); scripts/setup.sh
  --with wasi installs the toolchain");
- the build's table of probes (generated/probe_rows.txt) has no wasi row, and still the native,
  js and python ones, so `sandprobe run --sandbox wasi-node` says "built without a wasi probe"
  with the profile's install hint (run/run_test.cc checks that message, exit 3);
- there is no sandprobe-probe-wasi target to build.
When BUILD_DIR itself has a wasi row (the toolchain is installed here), that is the control:
forcing the sysroot away is what removed it. Only configure runs (about 2 s); the scratch
directory is removed.
"""
import os
import shutil
import subprocess
import sys


def rows(path):
    with open(path) as f:
        return {line.split("|", 1)[0] for line in f if line.strip()}


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    source, build, generator = sys.argv[1:]
    scratch = os.path.join(build, "wasi-toolchain-absent-test")
    shutil.rmtree(scratch, ignore_errors=True)
    sysroot = os.path.join(scratch, "empty-sysroot")
    os.makedirs(sysroot)
    failures = []
    try:
        configure = subprocess.run(
            ["cmake", "-S", source, "-B", os.path.join(scratch, "build"), "-G", generator,
             f"-DSP_WASI_SYSROOT={sysroot}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        if configure.returncode != 0:
            failures.append(f"configure failed (exit {configure.returncode}): {configure.stdout[-2000:]}")
        else:
            expected = (f"wasi probe: not built (missing: {sysroot}/include/wasm32-wasi/stdio.h; "
                        f"{sysroot}/lib/wasm32-wasi/libc.a;")
            if expected not in configure.stdout:
                failures.append(f"the configure does not say what is missing ({expected!r}): {configure.stdout[-2000:]}")
            if "scripts/setup.sh --with wasi installs the toolchain" not in configure.stdout:
                failures.append("the configure does not say how to install the toolchain")
            scratch_rows = rows(os.path.join(scratch, "build", "generated", "probe_rows.txt"))
            if "wasi" in scratch_rows:
                failures.append(f"the table of probes has a wasi row without the toolchain: {sorted(scratch_rows)}")
            if not {"native", "js", "python"} <= scratch_rows:
                failures.append(f"the other probes went missing with the wasi one: {sorted(scratch_rows)}")
            targets = subprocess.run(["cmake", "--build", os.path.join(scratch, "build"), "--target", "help"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
            if targets.returncode != 0 or "sandprobe-probe" not in targets.stdout:
                failures.append(f"cannot list the scratch build's targets: {targets.stdout[-500:]}")
            elif "sandprobe-probe-wasi" in targets.stdout:
                failures.append("a sandprobe-probe-wasi target exists without the toolchain")
            own = os.path.join(build, "generated", "probe_rows.txt")
            if os.path.exists(own) and "wasi" in rows(own):
                print("control: this build has the toolchain and a wasi row; the forced-absent configure has none")
            else:
                print("note: this build has no wasi row either (no toolchain here): no control run")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print("wasi_toolchain_absent_test: the wasi probe is skipped cleanly, its table row absent, the reason and the fix said")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
