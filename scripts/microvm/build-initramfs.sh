#!/usr/bin/env bash
# Builds the microVM guest from Debian packages alone: the installed Debian kernel, and an
# initramfs of busybox-static as the userland, the guest's init (scripts/microvm/init), and
# the few modules of that kernel the guest needs (virtio-mmio transport, virtio console, qemu
# fw_cfg, 9p, virtio-net). The probe is not in it: each launch shares the run's probe directory read-only
# over 9p (scripts/microvm/launch), so the guest always runs the build's probe.
# Output: OUT_DIR/{kernel,vmlinuz,initramfs.cpio.gz,kernel-release,launch}, and OUT_DIR/accel: the
# launcher's accelerator preflight for this guest (kvm if a kvm boot runs it within 10 s, else
# tcg and why; see launch --accel auto), made here so no probe launch waits for it. Not
# committed: a build product, made by scripts/setup.sh.
#
# OUT_DIR/kernel is what the profiles boot: the uncompressed ELF vmlinux inside Debian's
# bzImage (xz), when it has a PVH entry (CONFIG_PVH), so qemu enters the kernel directly; else
# a copy of the bzImage. Under TCG the bzImage's own xz decompressor was most of the boot:
# 27 of 45 s to the kernel's first line under load here, 2.5 s with the vmlinux (bench/
# microvm_boot.py measures both). OUT_DIR/vmlinuz stays the bzImage.
#
# usage: build-initramfs.sh OUT_DIR [KERNEL_RELEASE]
#   KERNEL_RELEASE defaults to the newest installed generic *-amd64 kernel: Debian's cloud
#   kernel (*-cloud-amd64, ~2x faster to boot) has no 9p (CONFIG_NET_9P unset), so no workspace
#   share and no persistence; it is used only when no generic kernel is installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build-initramfs.sh OUT_DIR [KERNEL_RELEASE]}
release=${2:-}

pick_release() {
  local flavour
  local pattern
  for pattern in '[0-9.-]*-amd64' '[0-9.-]*-cloud-amd64'; do
    # newest by version sort
    ls /boot 2>/dev/null | sed -n "s/^vmlinuz-\($pattern\)\$/\1/p" | sort -V | tail -n 1 | grep . && return 0
  done
  return 1
}
[ -n "$release" ] || release=$(pick_release) || {
  echo "build-initramfs: no Debian kernel in /boot (apt-get install linux-image-cloud-amd64)" >&2; exit 1; }
kernel=/boot/vmlinuz-$release
modules=/lib/modules/$release
busybox=/bin/busybox
[ -r "$kernel" ] || { echo "build-initramfs: $kernel not readable" >&2; exit 1; }
[ -d "$modules" ] || { echo "build-initramfs: $modules missing" >&2; exit 1; }
# busybox-static's binary; the dynamic busybox of package `busybox` would need a libc inside.
if ! file -L "$busybox" 2>/dev/null | grep -q 'statically linked'; then
  ldd "$busybox" >/dev/null 2>&1 && { echo "build-initramfs: $busybox is not static (apt-get install busybox-static)" >&2; exit 1; }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,etc,root,workspace,opt/sandprobe,lib/modules,mnt,usr,var/tmp}
install -m 0755 "$busybox" "$root/bin/busybox"
for applet in sh start-stop-daemon setpriv mount umount mkdir insmod cat echo sleep stty poweroff ls ln chmod chown \
              test printf cp rm sync grep sed tr head mdev setsid hostname id ip mknod; do
  ln -s busybox "$root/bin/$applet"
done
install -m 0755 "$here/init" "$root/init"
# A few files the probes read exist on every real system.
printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/workspace:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\nuser:x:1000:\n' > "$root/etc/group"
printf 'root:*:19000:0:99999:7:::\nuser:*:19000:0:99999:7:::\n' > "$root/etc/shadow"
chmod 0640 "$root/etc/shadow"
chmod 0700 "$root/root"
chmod 1777 "$root/tmp"
echo sandprobe-vm > "$root/etc/hostname"

# Modules in load order (dependencies first); absent ones are skipped (built in, or not in
# this kernel: 9p is only in the generic kernel).
# virtio_net only for a profile that gives the VM a NIC (microvm-usernet); without one it
# binds to nothing.
wanted=(virtio_ring virtio virtio_mmio virtio_console qemu_fw_cfg failover net_failover virtio_net)
if modinfo -k "$release" -n 9p >/dev/null 2>&1; then
  wanted+=(netfs fscache 9pnet 9pnet_virtio 9p)
fi
: > "$root/lib/modules/load-order"
for name in "${wanted[@]}"; do
  path=$(modinfo -k "$release" -n "$name" 2>/dev/null || true)
  case "$path" in
    /*.ko) install -m 0644 "$path" "$root/lib/modules/$name.ko"; echo "$name" >> "$root/lib/modules/load-order" ;;
    /*.ko.xz) xz -dc "$path" > "$root/lib/modules/$name.ko"; echo "$name" >> "$root/lib/modules/load-order" ;;
    *) ;;  # built in or absent
  esac
done

# extract_vmlinux BZIMAGE OUT: the ELF inside an xz-compressed bzImage, found as the kernel's
# own scripts/extract-vmlinux finds it (each xz magic, decompressed until one is an ELF; python3's
# lzma, so no xz-utils needed); then only when that ELF has a PVH entry note (Xen ELF note
# 0x12), which qemu needs to boot it.
extract_vmlinux() {
  command -v python3 >/dev/null && command -v readelf >/dev/null || return 1
  python3 - "$1" "$2" <<'PY' || return 1
import lzma, sys
data = open(sys.argv[1], "rb").read()
at = data.find(b"\xfd7zXZ\x00")
while at >= 0:
    try:
        elf = lzma.LZMADecompressor().decompress(data[at:])
    except lzma.LZMAError:
        elf = b""
    if elf.startswith(b"\x7fELF"):
        open(sys.argv[2], "wb").write(elf)
        sys.exit(0)
    at = data.find(b"\xfd7zXZ\x00", at + 1)
sys.exit(1)
PY
  readelf -n "$2" 2>/dev/null | grep -q 'Xen .*(0x00000012)'
}

mkdir -p "$out"
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --owner 0:0 --quiet) \
  | gzip -1 > "$work/initramfs.cpio.gz"
install -m 0644 "$work/initramfs.cpio.gz" "$out/initramfs.cpio.gz"
install -m 0644 "$kernel" "$out/vmlinuz"
if extract_vmlinux "$kernel" "$work/vmlinux"; then
  install -m 0644 "$work/vmlinux" "$out/kernel"
  boots="uncompressed vmlinux, PVH entry"
else
  install -m 0644 "$kernel" "$out/kernel"
  boots="bzImage: no xz-compressed ELF with a PVH entry found in $kernel"
fi
install -m 0755 "$here/launch" "$out/launch"
echo "$release" > "$out/kernel-release"
"$out/launch" --kernel "$out/kernel" --initrd "$out/initramfs.cpio.gz" \
  --accel auto --accel-cache "$out/accel" --preflight >&2
echo "build-initramfs: $out/initramfs.cpio.gz ($(du -k "$out/initramfs.cpio.gz" | cut -f1) KiB, kernel $release ($boots), modules: $(tr '\n' ' ' < "$root/lib/modules/load-order"))" >&2
