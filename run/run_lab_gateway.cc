#include "run/run_lab_gateway.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "lab/lab_names.h"

namespace sandprobe {
namespace {

// What a command printed, trimmed, for messages (the first line of stderr, else stdout).
std::string Said(const LaunchResult& r) {
  std::string text = r.err.empty() ? r.out : r.err;
  text = text.substr(0, text.find('\n'));
  return text.empty() ? DescribeExit(r) : DescribeExit(r) + ": " + text;
}

bool IsContainerId(const std::string& id) {
  return id.size() == 64 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Runs a docker command (kept to one CPU, as witnesses' host commands are) within `deadline`;
// its stdout's first line when it exited 0.
StatusOr<std::string> Docker(Launcher& launcher, const Deadline& deadline, std::vector<std::string> argv,
                             bool removal) {
  const Deadline::Bound bound = removal ? deadline.ForRemoval(DockerLabGateway::kCommandLimit)
                                        : deadline.For(DockerLabGateway::kCommandLimit);
  const std::string command = FormatArgv(argv);
  if (bound.nothing_left()) return Status::HarnessError(command + ": not started: the run's deadline had passed");
  LaunchSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = bound.limit;
  spec.extra_env = {{"GOMAXPROCS", "1"}};
  StatusOr<LaunchResult> r = launcher.Launch(spec);
  if (!r.ok()) return r.status().WithContext(command).AsHarnessError();
  if (r->exit_code != 0) return Status::HarnessError(fmt::format("{}: {}", command, Said(*r)));
  return r->out.substr(0, r->out.find('\n'));
}

}  // namespace

std::vector<std::string> LabGatewayRunArgv(const std::string& run_id, long long sleep_seconds) {
  return {"docker", "run", "-d", "--pull", "never",
          "--name", fmt::format("sp-{}-lab-gateway", run_id),
          "--label", "sandprobe.run=" + run_id, "--label", DockerLabGateway::kRoleLabel,
          // No network of docker's: the lab's veth is the only link it will get.
          "--network", "none",
          "--dns", LabResolverV4().Text(), "--dns", LabResolverV6().Text(),
          "--dns-opt", "timeout:1", "--dns-opt", "attempts:1",
          // IPv6 in its own namespace only (docker turns it off where the daemon has no IPv6):
          // the veth gets the lab's IPv6 addresses, as a process sandbox's does.
          "--sysctl", "net.ipv6.conf.all.disable_ipv6=0", "--sysctl", "net.ipv6.conf.default.disable_ipv6=0",
          // It only holds the namespace: no capability, no writes, nobody's uid.
          "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only", "--user", "65534:65534",
          "--memory", "16m", "--pids-limit", "4",
          DockerLabGateway::kImage, "sleep", std::to_string(sleep_seconds)};
}

RecordedSweep LabGatewaySweep(const std::string& run_id) {
  RecordedSweep sweep;
  sweep.list = {"docker", "ps", "-aq", "--no-trunc", "--filter", "label=sandprobe.run=" + run_id,
                "--filter", std::string("label=") + DockerLabGateway::kRoleLabel};
  sweep.remove = {{"docker"}, {"rm"}, {"-f"}, {"", ""}};
  return sweep;
}

StatusOr<std::unique_ptr<DockerLabGateway>> DockerLabGateway::Start(Launcher& launcher, const std::string& run_id,
                                                                    const Deadline& deadline) {
  // It outlives the run by five minutes at most, should nothing remove it.
  const long long sleep_seconds =
      deadline.bounded()
          ? std::chrono::duration_cast<std::chrono::seconds>(deadline.Remaining()).count() + 300
          : 86400;
  StatusOr<std::string> id = Docker(launcher, deadline, LabGatewayRunArgv(run_id, sleep_seconds), false);
  if (!id.ok()) return id.status().WithContext("lab gateway");
  if (!IsContainerId(*id)) {
    return Status::HarnessError(fmt::format("lab gateway: docker run printed no container id: \"{}\"", *id));
  }
  std::unique_ptr<DockerLabGateway> gateway(new DockerLabGateway(launcher, deadline, *id));
  StatusOr<std::string> pid =
      Docker(launcher, deadline, {"docker", "inspect", "--type", "container", "--format", "{{.State.Pid}}", *id}, false);
  if (!pid.ok()) return pid.status().WithContext("lab gateway");
  const auto [end, ec] = std::from_chars(pid->data(), pid->data() + pid->size(), gateway->pid_);
  if (ec != std::errc() || end != pid->data() + pid->size() || gateway->pid_ <= 0) {
    return Status::HarnessError(fmt::format("lab gateway {}: not running (State.Pid \"{}\")", *id, *pid));
  }
  return gateway;
}

DockerLabGateway::~DockerLabGateway() { Remove(); }

std::string DockerLabGateway::NetworkNamespacePath() const { return fmt::format("/proc/{}/ns/net", pid_); }

std::string DockerLabGateway::Remove() {
  if (!removed_.empty()) return removed_;
  StatusOr<std::string> removed = Docker(launcher_, deadline_, {"docker", "rm", "-f", id_}, true);
  removed_ = removed.ok() ? "removed" : removed.status().message();
  return removed_;
}

}  // namespace sandprobe
