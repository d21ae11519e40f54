#!/usr/bin/env python3
"""The microVM's boot floor: scripts/microvm/launch running `sh -c 'exit 0'` in the guest (qemu
start -> kernel -> init -> the guest's exit status line -> poweroff -> qemu exit), per kernel
image and kernel command line, interleaved, medians.

Each variant is NAME=KERNEL[@INITRD][,KERNEL_ARG...]; both are relative to the guest directory
(INITRD defaults to initramfs.cpio.gz).
Defaults compare the bzImage (vmlinuz: the kernel's own xz decompressor runs under TCG) with the
uncompressed PVH vmlinux that build-initramfs.sh extracts (kernel), both with the launcher's
own command line:

  bench/microvm_boot.py --runs 5 [--guest /var/lib/sandprobe-microvm] [--accel tcg] \
      [bzimage=vmlinuz vmlinux=kernel vmlinux-notests=kernel,cryptomgr.notests]

Every boot must end with "@@sandprobe-exit 0" or the script stops: a timing of a failed boot
is no floor. The load average is printed with the medians: TCG boots scale with free CPU.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def boot(guest, accel, kernel, kernel_args):
    kernel, _, initrd = kernel.partition("@")
    argv = [os.path.join(guest, "launch"), "--kernel", os.path.join(guest, kernel),
            "--initrd", os.path.join(guest, initrd or "initramfs.cpio.gz"), "--accel", accel]
    for arg in kernel_args:
        argv += ["--kernel-arg", arg]
    argv += ["--", "/bin/sh", "-c", "exit 0"]
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    took = time.perf_counter() - start
    if done.returncode != 0 or not done.stdout.decode().replace("\r", "").endswith("@@sandprobe-exit 0\n"):
        sys.exit(f"{kernel} {kernel_args}: exit {done.returncode}, stdout {done.stdout[-200:]!r}, "
                 f"stderr {done.stderr[-400:]!r}")
    return took


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--guest", default="/var/lib/sandprobe-microvm")
    parser.add_argument("--accel", default="tcg")
    parser.add_argument("variants", nargs="*",
                        default=["bzimage=vmlinuz", "vmlinux=kernel"])
    args = parser.parse_args()
    variants = []
    for spec in args.variants:
        name, _, rest = spec.partition("=")
        kernel, *kernel_args = rest.split(",")
        variants.append((name, kernel, kernel_args))
    times = {name: [] for name, _, _ in variants}
    loads = []
    for run in range(args.runs):
        for name, kernel, kernel_args in variants:
            loads.append(os.getloadavg()[0])
            times[name].append(boot(args.guest, args.accel, kernel, kernel_args))
            print(f"run {run + 1} {name}: {times[name][-1]:.2f} s", file=sys.stderr)
    print(f"boot floor, {args.runs} runs each, interleaved, accel {args.accel}, "
          f"load average {min(loads):.1f}..{max(loads):.1f}")
    for name, kernel, kernel_args in variants:
        t = sorted(times[name])
        print(f"  {name:24} median {statistics.median(t):6.2f} s  min {t[0]:6.2f}  max {t[-1]:6.2f}"
              f"  ({kernel}{' ' + ' '.join(kernel_args) if kernel_args else ''})")


if __name__ == "__main__":
    main()
