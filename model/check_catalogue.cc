#include "model/check_catalogue.h"

#include <array>
#include <map>
#include <vector>

#include <fmt/format.h>

namespace sandprobe {
namespace {

// Sorted by family, then template, as docs/checks.md lists them. A new check template needs a
// row here: check_catalogue_test plans every shipped suite and policy and finds any without.
constexpr std::array kRows = std::to_array<CatalogueRow>({
    {"env.secret.hidden", "env.secret",
     "A secret the harness put in its own environment is not visible inside the sandbox (environ of every process the probe can read).",
     "Start the sandbox under an empty environment (env -i, bwrap --clearenv, no docker -e/--env-file of host variables) and pass only what the workload needs."},
    {"env.secret.visible", "env.secret",
     "The secret the policy says the workload may see is visible inside the sandbox.",
     "Pass the variable into the sandbox (docker -e NAME, bwrap --setenv), or drop it from the policy."},
    {"fs.alias.denied", "fs.alias",
     "A path the policy denies cannot be reached another way: through a symlink, '..', /proc/self/root or a mount's root.",
     "Keep the denied path out of the sandbox's mount namespace altogether; a deny that rests on one spelling of the path is not a deny."},
    {"fs.mounts.host-block-device", "fs.mounts",
     "No host block device is mounted or reachable as a device node inside the sandbox.",
     "Do not pass host block devices (--device, --dev-bind) or mount host filesystems by device."},
    {"fs.mounts.host-dir", "fs.mounts",
     "A critical host directory (/, /etc, /root, /home, /var/lib/docker, /proc, /sys, /dev) is not visible anywhere in the sandbox, judged by the host's own device and mount identity, not by path.",
     "Do not bind the directory (or one holding it) into the sandbox under any name; bind only what the workload needs."},
    {"fs.mounts.host-dirs", "fs.mounts",
     "Every other host directory the sandbox can see is one the policy declares readable (or the harness handed in).",
     "Mount only the host directories the workload needs, and declare them in the policy's filesystem.readable (and writable) lists."},
    {"fs.mounts.host-root-bind", "fs.mounts",
     "The host's root filesystem is not bound into the sandbox.",
     "Give the sandbox its own root (an image, a tmpfs root with read-only binds of what it needs), never the host's /."},
    {"fs.read.allowed", "fs.read",
     "A path the policy declares readable can be read inside the sandbox.",
     "Expose the path to the sandbox (a bind or volume), or drop it from the policy's filesystem.readable list."},
    {"fs.read.denied", "fs.read",
     "A path the policy declares unreadable cannot be read; for the host canary, the host itself watches its canary and proves any read by its content.",
     "Do not mount or bind the path into the sandbox; expose only the paths the workload needs."},
    {"fs.storage.undeclared-writable", "fs.storage",
     "Outside the policy's filesystem.writable list (and the places its persistence lists promise content survives), no real write (a file created and removed in each mount's directories the sandbox can reach) lands on storage that outlives the sandbox: a host directory, or the sandbox's own root layer or disk. The sandbox's own memory filesystems (a private tmpfs /dev or /dev/shm, a VM's initramfs root) are told apart by their mount's identity and not counted.",
     "Make the sandbox's root read-only (docker --read-only, bwrap --remount-ro /) and mount read-only every host directory the workload only reads; declare the directories it must write in filesystem.writable."},
    {"fs.write.allowed", "fs.write",
     "A path the policy declares writable can be written (a file created and removed) inside the sandbox.",
     "Give the sandbox a writable mount there (a tmpfs or a volume), or drop the path from the policy's filesystem.writable list."},
    {"fs.write.denied", "fs.write",
     "A path the policy declares unwritable cannot be written inside the sandbox (a real create is tried, never assumed from permissions).",
     "Make the path read-only inside the sandbox (read-only root or ro bind, no write permission for the sandbox user)."},
    {"host.pid_namespace", "priv.host_pid",
     "The harness's canary process on the host is not visible inside the sandbox (found by its host pid and start time).",
     "Run the workload in its own pid namespace (no docker --pid host, bwrap --unshare-pid)."},
    {"lang.escape.denied", "lang.escape",
     "Code the language runtime sandbox runs cannot reach the host canary through the runtime's own escape routes.",
     "Use a runtime sandbox whose policy denies file access outright (Deno without --allow-read of the path, a WASI runtime without the preopen), not a language-level filter."},
    {"limits.cpus", "res.cpu",
     "The CPU quota the policy declares is enforced: the probe's measured CPU use stays within the band, measured by the harness.",
     "Set the CPU quota in the sandbox (docker --cpus, a cgroup cpu.max), at the value the policy declares."},
    {"limits.memory_mib", "res.memory",
     "The memory limit the policy declares is enforced: allocation stops within the band, read from the sandbox's cgroup where the host can.",
     "Set the memory limit (docker --memory, a cgroup memory.max, prlimit --as) at the value the policy declares."},
    {"limits.open_files", "res.fds",
     "The open-file limit the policy declares is enforced.",
     "Set RLIMIT_NOFILE for the sandbox (docker --ulimit nofile=N:N, prlimit --nofile) at the value the policy declares."},
    {"limits.pids.max", "res.pids",
     "The process limit the policy declares is enforced: forking stops within the band (the probe's own ceiling keeps the host safe).",
     "Set the task limit (docker --pids-limit, a cgroup pids.max) at the value the policy declares; RLIMIT_NPROC does not bind root."},
    {"limits.tmp_mib", "res.disk",
     "The size of the sandbox's temporary storage is limited as the policy declares.",
     "Give /tmp a size-limited tmpfs (docker --tmpfs /tmp:size=N, bwrap --size N --tmpfs /tmp) at the value the policy declares."},
    {"limits.wall_seconds", "res.wall",
     "The sandbox ends the workload at the wall-clock limit the policy declares, measured by the harness's clock.",
     "Have the sandbox enforce a wall-clock timeout (timeout(1), the runtime's own limit) at the value the policy declares."},
    {"net.allow.reachable", "net.lab",
     "A destination the policy's network.allow names is reachable from the sandbox in the egress lab: a lab sink received this launch's nonce with that Host from the sandbox's address (proof by receipt).",
     "Let the sandbox reach the destination (its allowlist, proxy or firewall), or drop it from the policy's network.allow list."},
    {"net.allow.refused", "net.lab",
     "A destination the policy does not allow (a look-alike such as ALLOWED.evil.test or evilALLOWED, or an unrelated name) is refused in the egress lab: no lab sink holds a receipt for it.",
     "Filter egress with an allowlist that matches whole, canonical names (or the resolved addresses), in a proxy or firewall the sandbox cannot go around."},
    {"net.allow.untested", "net.tcp",
     "An allowlist entry the policy declares was not tested: it names no destination the harness serves (a skip, never a pass).",
     "Run the network suite with the egress lab, or name only destinations the harness can serve."},
    {"net.bypass.refused", "net.bypass",
     "A denied destination spelled another way (decimal, hex, octal or short forms of its address, IPv4-mapped IPv6, its IPv6 address, the IPv6 address with a zone id, a trailing dot, mixed case) is refused too: no lab sink receives it. rebinding: after the lab answers the allowed name's later lookups with a control address, no sink at that address receives the request. fronting: no sink records a denied name as the Host of a request sent to (or CONNECTed through to) the allowed name. dns-exfil (when the policy filters DNS): the lab's resolver never receives a lookup of NONCE.denied-name.",
     "Canonicalise names and addresses before matching (inet_pton, lower case, no trailing dot), or match the resolved address; resolve once and connect to the address matched; match Host and SNI inside the connection; filter DNS queries by name."},
    {"net.dns.allowed", "net.dns",
     "The sandbox can resolve names through the harness's canary responder, as the policy allows.",
     "Give the sandbox a resolver it can reach, or declare DNS denied."},
    {"net.dns.denied", "net.dns",
     "No DNS query from the sandbox reaches the harness's canary responders (proof by receipt on the host side).",
     "Block DNS from the sandbox: no network, or a firewall dropping udp/53 and tcp/53 to every resolver it can reach."},
    {"net.ifaces.host-netns-hidden", "net.ifaces",
     "None of the host's own network interfaces (matched by name and hardware address) is visible inside the sandbox.",
     "Give the sandbox its own network namespace (no --network host, no --share-net)."},
    {"net.ifaces.host-sysfs-hidden", "net.ifaces",
     "The host's interfaces are not visible through /sys/class/net either.",
     "Give the sandbox its own /sys (or none), and its own network namespace."},
    {"net.ifaces.loopback-only", "net.ifaces",
     "The sandbox has only a loopback interface.",
     "Give the sandbox no network (--network none, bwrap --unshare-net)."},
    {"net.proxy.untested", "net.tcp",
     "The proxy the policy declares was not tested (a skip, never a pass).",
     "Run the network suite with the egress lab to test the proxy."},
    {"net.tcp.allowed", "net.tcp",
     "A TCP destination the policy allows receives this run's nonce from the sandbox (proof by receipt).",
     "Let the sandbox reach the destination, or drop it from the policy's network.allow list."},
    {"net.tcp.denied", "net.tcp",
     "A TCP canary listener on the host (loopback, the bridge gateway) receives nothing from the sandbox (proof by receipt).",
     "Block egress to the host: --network none, bwrap --unshare-net, or a firewall dropping the sandbox's traffic to this host."},
    {"net.udp.allowed", "net.udp",
     "A UDP destination the policy allows receives this run's nonce from the sandbox (proof by receipt).",
     "Let the sandbox reach the destination, or drop it from the policy's network.allow list."},
    {"net.udp.denied", "net.udp",
     "A UDP canary listener on the host receives nothing from the sandbox (proof by receipt).",
     "Block egress to the host: --network none, bwrap --unshare-net, or a firewall dropping the sandbox's traffic to this host."},
    {"net.unix.allowed", "net.unix",
     "A unix socket the policy allows can be connected to from the sandbox.",
     "Mount the socket into the sandbox, or drop it from the policy."},
    {"net.unix.denied", "net.unix",
     "A unix socket the policy denies is absent or refuses the sandbox.",
     "Do not mount the socket (or its directory) into the sandbox."},
    {"net.unix.hidden", "net.unix",
     "A well-known runtime socket path is absent or refuses the sandbox.",
     "Do not mount the socket (or its directory) into the sandbox: a runtime socket is root on the host."},
    {"net.unix.runtime-api", "net.unix",
     "No unix socket the sandbox can see, wherever it is mounted, answers a container runtime's harmless handshake (docker /_ping, containerd, CRI).",
     "Do not mount a runtime's socket or a directory holding one (-v /var/run:..., --bind /run ...) into the sandbox, under any name."},
    {"net.unix.visible", "net.unix",
     "A unix socket the policy says the workload needs is present in the sandbox.",
     "Mount the socket into the sandbox, or drop it from the policy."},
    {"persist.host", "persist",
     "A background process the workload starts does not outlive the sandbox on the host (the harness looks for it by its token), unless the policy says it survives.",
     "Give the sandbox its own pid namespace that ends every process in it when the sandboxed command exits (docker --init, bwrap --die-with-parent --unshare-pid)."},
    {"persist.session.ephemeral", "persist",
     "A file written in one sandbox instance is gone in a fresh instance, as the policy declares.",
     "Give each launch a fresh filesystem there (tmpfs, a new container), or declare that it survives."},
    {"persist.session.survives", "persist",
     "A file written in one session survives into the next, as the policy declares.",
     "Keep that location on storage that outlives the session (a volume), or declare it ephemeral."},
    {"persist.turn.ephemeral", "persist",
     "A file written in one turn of a long-lived session is gone in the next turn, as the policy declares.",
     "Reset that location between turns, or declare that it survives turns."},
    {"persist.turn.survives", "persist",
     "A file written in one turn of a long-lived session is still there in the next turn, as the policy declares.",
     "Keep the session's filesystem between turns, or declare the location ephemeral."},
    {"priv.caps.bounding", "priv.caps",
     "The bounding set holds no capability beyond the policy's list.",
     "Drop every capability the workload does not need from the bounding set (docker --cap-drop ALL, bwrap --cap-drop ALL)."},
    {"priv.caps.effective", "priv.caps",
     "No effective or permitted capability beyond the policy's list.",
     "Run the workload unprivileged in a sandbox that drops all capabilities."},
    {"priv.caps.inheritable", "priv.caps",
     "No inheritable or ambient capability beyond the policy's list.",
     "Clear the inheritable and ambient sets (setpriv --inh-caps=-all --ambient-caps=-all)."},
    {"priv.caps.sys_admin", "priv.caps",
     "CAP_SYS_ADMIN is not held.",
     "Never grant CAP_SYS_ADMIN (no --privileged, no --cap-add SYS_ADMIN); run unprivileged."},
    {"priv.cgroup.release_agent", "priv.cgroups",
     "No cgroup v1 release_agent opens for write (an open for write, closed unwritten: never written).",
     "Mount cgroupfs read-only in the sandbox (or not at all), and give it its own cgroup namespace."},
    {"priv.cgroup.writable", "priv.cgroups",
     "No cgroupfs mount opens for write (tried, never written).",
     "Mount cgroupfs read-only in the sandbox (or not at all)."},
    {"priv.cwd", "priv.cwd",
     "The working directory the sandbox starts in is not a host directory outside what the policy exposes.",
     "Start the workload in a directory of the sandbox's own (docker --workdir, bwrap --chdir)."},
    {"priv.devices", "priv.devices",
     "Only the usual device nodes (null, zero, full, random, urandom, tty, ptmx, pts, shm) exist in the sandbox's /dev.",
     "Give the sandbox a minimal /dev (bwrap --dev /dev, docker's default) and no --device or --privileged."},
    {"priv.fds.directory", "priv.fds",
     "No file descriptor inherited from the launcher refers to a host directory (an open directory is a way out of any mount namespace).",
     "Close every inherited descriptor before the workload starts (close_range, the runtime's own fd cleanup)."},
    {"priv.fds.inherited", "priv.fds",
     "No file descriptor beyond stdin, stdout and stderr is inherited from the launcher.",
     "Close every inherited descriptor before the workload starts (close_range, the runtime's own fd cleanup)."},
    {"priv.host_pid.door", "priv.host_pid",
     "The host canary cannot be read through a host process's /proc/<pid>/root or /cwd (tried read-only on the harness's canary process).",
     "Give the sandbox its own pid namespace, and no ptrace or CAP_SYS_PTRACE over host processes."},
    {"priv.identity.root", "priv.identity",
     "The workload does not run as uid 0 (of the host, or mapped to it).",
     "Run the workload as an unprivileged user (docker --user, setpriv --reuid)."},
    {"priv.kernel_knob", "priv.kernel_knobs",
     "Kernel knobs (/proc/sys, core_pattern, sysrq-trigger) do not open for write (tried, closed unwritten: never written).",
     "Mount /proc/sys read-only in the sandbox and run the workload unprivileged."},
    {"priv.masked", "priv.masked",
     "Host information files (/proc/keys, /proc/timer_list, /sys/firmware, ...) are masked: unreadable or empty.",
     "Mask them as container runtimes do (bind /dev/null over them, or give the sandbox its own /proc and /sys)."},
    {"priv.namespace", "priv.namespaces",
     "The sandbox's namespace of this kind differs from the harness's own (namespace inodes compared by the harness).",
     "Run the workload with its own namespace of this kind (docker's defaults, bwrap --unshare-*)."},
    {"priv.no_new_privs", "priv.seccomp",
     "NoNewPrivs is set: no setuid program can raise the workload's privileges.",
     "Set PR_SET_NO_NEW_PRIVS before starting the workload (setpriv --no-new-privs, docker --security-opt no-new-privileges)."},
    {"priv.runtime_sockets", "priv.runtime_sockets",
     "No container runtime socket is connectable from the sandbox.",
     "Do not mount a runtime's socket (or its directory) into the sandbox."},
    {"priv.seccomp", "priv.seccomp",
     "A seccomp filter is installed (Seccomp: 2).",
     "Run the workload inside a sandbox that installs a seccomp filter (docker's default profile, bwrap --seccomp)."},
    {"priv.syscall", "priv.syscalls",
     "A dangerous system call is filtered (EPERM/ENOSYS or SIGSYS) or refused for every real argument; each is tried harmlessly (bad pointers, invalid flags, the probe's own pid).",
     "Run the workload inside a sandbox whose seccomp filter denies this call."},
    {"priv.tiocsti", "priv.tiocsti",
     "TIOCSTI cannot push input into a terminal the sandbox shares with its launcher.",
     "Give the sandbox no controlling terminal of the host (setsid, bwrap --new-session), or a kernel with TIOCSTI disabled."},
    {"priv.tiocsti.session", "priv.tiocsti",
     "The sandboxed process runs in a session of its own, not its launcher's (the host compares sessions).",
     "Start the workload in a new session (setsid, bwrap --new-session)."},
    {"priv.userns", "priv.userns",
     "The workload cannot create user namespaces (unshare and clone with CLONE_NEWUSER refused).",
     "Deny CLONE_NEWUSER in the sandbox's seccomp filter, or limit user namespaces (user.max_user_namespaces) for it."},
});

}  // namespace

std::span<const CatalogueRow> CheckCatalogue() { return kRows; }

const CatalogueRow* FindCatalogueRow(std::string_view check_id) {
  const std::string_view check = check_id.substr(0, check_id.find(':'));
  for (const CatalogueRow& row : kRows) {
    if (row.check == check) return &row;
  }
  return nullptr;
}

std::string CatalogueAnchor(std::string_view check_template) {
  std::string anchor;
  for (char c : check_template) anchor.push_back(c == '.' || c == '_' ? '-' : c);
  return anchor;
}

std::string CatalogueMarkdown() {
  std::map<std::string_view, std::vector<const CatalogueRow*>> by_family;
  for (const CatalogueRow& row : kRows) by_family[row.family].push_back(&row);
  std::string out =
      "<!-- Generated from model/check_catalogue.cc by `sandprobe-checks-doc`; "
      "check_catalogue_test fails when this file is not current. -->\n"
      "# sandprobe checks\n\n"
      "Each check id is a template, then `:` and the target where it has one "
      "(`fs.read.denied:/etc/shadow`, `priv.syscall:bpf`). A pass is only what the harness "
      "observed; the evidence tier of each verdict (witnessed, measured, reported) says what it "
      "rests on.\n";
  for (const auto& [family, rows] : by_family) {
    out += fmt::format("\n## {}\n", family);
    for (const CatalogueRow* row : rows) {
      out += fmt::format("\n### {}\n<a id=\"{}\"></a>\n\n{}\n\n**Fix:** {}\n", row->check,
                         CatalogueAnchor(row->check), row->proves, row->help);
    }
  }
  return out;
}

}  // namespace sandprobe
