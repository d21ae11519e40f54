#include "run/sandbox.h"

#include <cstdlib>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "contract/frame_reader.h"
#include "launch/launch_pids_cgroup.h"
#include "model/first_line.h"
#include "model/canary_env.h"
#include "load/placeholders.h"
#include "run/preflight_cause.h"
#include "run/preflight_gate.h"
#include "run/probe_process_reading.h"
#include "run/sweep_ids.h"

namespace sandprobe {

namespace {
constexpr std::size_t kProbeOutputCap = 16 << 20;
}  // namespace
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Housekeeping (requires, cleanup, stop, sweep) gets its own bound, independent of the
// profile's probe timeout.
constexpr milliseconds kHousekeepingTimeout = seconds(60);
constexpr std::size_t kTailBytes = 8192;

std::string Tail(const std::string& text) {
  return text.size() <= kTailBytes ? text : text.substr(text.size() - kTailBytes);
}

bool Succeeded(const LaunchRecord& record) {
  return record.error.empty() && !record.timed_out && record.exit_code == 0;
}

std::string DescribeRecordExit(const LaunchRecord& record) {
  return record.exit_code ? fmt::format("exit {}", *record.exit_code) : "killed by a signal";
}

LaunchEnvelope ToLaunchEnvelope(const EnvelopeSpec& e) {
  constexpr std::uint64_t kMib = 1 << 20;
  LaunchEnvelope out;
  if (e.address_space_mib) out.address_space_bytes = static_cast<std::uint64_t>(*e.address_space_mib) * kMib;
  if (e.open_files) out.open_files = static_cast<std::uint64_t>(*e.open_files);
  if (e.file_size_mib) out.file_size_bytes = static_cast<std::uint64_t>(*e.file_size_mib) * kMib;
  if (e.cpu_seconds) out.cpu_seconds = static_cast<std::uint64_t>(*e.cpu_seconds);
  out.pids_max = e.pids;
  return out;
}

}  // namespace

Sandbox::Sandbox(const Profile& profile, Launcher& launcher, SandboxContext context)
    : profile_(profile), launcher_(launcher), context_(std::move(context)) {}

Sandbox::~Sandbox() {
  Close();
  for (const std::string& dir : kept_cgroups_) (void)RemoveCgroupDir(dir);
}

std::map<std::string, std::string> Sandbox::Scalars(const std::string& instance) const {
  std::map<std::string, std::string> scalars(profile_.vars.begin(), profile_.vars.end());
  scalars["run_id"] = context_.run_id;
  scalars["instance"] = instance;
  scalars["probe_dir"] = context_.probe_dir;
  scalars["workspace"] = context_.workspace;
  scalars["canary_env"] = "";
  scalars.insert(context_.lab_scalars.begin(), context_.lab_scalars.end());
  for (const auto& [name, value] : context_.env) {
    if (name.starts_with(kCanaryEnvPrefix)) scalars["canary_env"] = name;
  }
  StatusOr<std::string> probe = ExpandString(profile_.probe_path, scalars);
  scalars["probe"] = probe.ok() ? *probe : profile_.probe_path;
  return scalars;
}

std::string Sandbox::NewInstance() {
  return fmt::format("sp-{}-{}", context_.run_id, ++instances_);
}

void Sandbox::StoreRecord(std::size_t index, const LaunchRecord& record) {
  std::lock_guard lock(records_mutex_);
  records_[index] = record;
}

LaunchRecord Sandbox::LaunchTemplate(const TemplateLaunch& launch, LaunchResult* raw,
                                     std::size_t* index_out) {
  LaunchRecord record;
  std::size_t index = 0;
  {
    // Ids follow start order; the slot is filled when the launch ends (launches may overlap).
    std::lock_guard lock(records_mutex_);
    index = records_.size();
    record.id = fmt::format("L{}", index + 1);
    records_.push_back(record);
  }
  if (index_out) *index_out = index;
  record.instance = launch.instance;
  record.purpose = launch.purpose;
  std::map<std::string, std::string> scalars = Scalars(launch.instance);
  scalars.insert(launch.extra_scalars.begin(), launch.extra_scalars.end());
  StatusOr<std::vector<std::string>> argv =
      ExpandArgv(launch.argv_template, PlaceholderValues{std::move(scalars), launch.probe_args});
  if (!argv.ok()) {
    record.error = argv.status().message();
    StoreRecord(index, record);
    return record;
  }
  record.argv = *argv;
  Deadline::Bound bound = launch.removes ? context_.deadline.ForRemoval(launch.timeout)
                                         : context_.deadline.For(launch.timeout);
  if (bound.nothing_left()) {
    record.error = record.cut_short = DescribeCut(bound, launch.timeout);
    StoreRecord(index, record);
    return record;
  }
  LaunchSpec spec;
  spec.argv = *argv;
  spec.extra_env = context_.env;
  spec.timeout = bound.limit;
  spec.cancel = launch.cancellable ? context_.cancel : nullptr;
  // A probe's stdout is its facts: a policy of a few thousand paths makes several MiB of them
  // (one fact per path and alias). The frame parser bounds its own work per line and per fact.
  if (launch.purpose == "probe") spec.output_cap = kProbeOutputCap;
  if (launch.enveloped && profile_.envelope) spec.envelope = ToLaunchEnvelope(*profile_.envelope);
  spec.empty_environment = launch.enveloped && profile_.environment == ProbeEnvironment::kEmpty;
  spec.spare_processes_with_arg = launch.spare_processes_with_arg;
  // A daemonless runtime's monitor (podman's conmon) names the instance but clears our marker.
  spec.orphan_tag = launch.instance;
  if (launch.join_lab) spec.lab_join = context_.lab_join;
  StatusOr<LaunchResult> result = launcher_.Launch(spec);
  if (!result.ok()) {
    record.error = result.status().message();
  } else {
    record.exit_code = result->exit_code;
    record.signal = result->signal;
    record.timed_out = result->timed_out;
    record.wall_ms = result->wall.count();
    record.stdout_tail = Tail(result->out);
    record.stderr_tail = Tail(result->err);
    record.leftover_processes = result->leftovers_killed;
    record.spared_processes = result->leftovers_spared;
    if (!result->kept_cgroup.empty()) {
      std::lock_guard lock(records_mutex_);
      kept_cgroups_.push_back(result->kept_cgroup);
    }
    record.alive_at_timeout = result->alive_at_timeout;
    record.executable = result->executable;
    record.executable_sha256 = result->executable_sha256;
    record.executable_warning = result->executable_warning;
    record.executable_forgeable = result->executable_forgeable;
    if (result->cancelled) record.error = "interrupted";
    if (result->timed_out) record.cut_short = DescribeCut(bound, launch.timeout);
    if (!result->envelope_note.empty()) record.stderr_tail += "\n[sandprobe] " + result->envelope_note;
    if (raw) *raw = *result;
  }
  StoreRecord(index, record);
  return record;
}

Status Sandbox::Preflight() {
  for (const std::vector<std::string>& command : profile_.requirements) {
    LaunchRecord record = LaunchTemplate({.argv_template = command, .purpose = "requires",
                                          .timeout = seconds(30)});
    if (record.error.empty() && record.exit_code == 0) continue;
    std::string why = !record.error.empty() ? record.error
                      : record.timed_out     ? "timed out"
                                             : fmt::format("{}: {}", record.exit_code ? fmt::format("exit {}", *record.exit_code) : "killed by a signal",
                                                           FirstLineOf(record.stderr_tail.empty() ? record.stdout_tail : record.stderr_tail));
    std::string message = fmt::format("backend {} unavailable for profile {}: `{}` failed: {}",
                                      NameOf(profile_.backend), profile_.name, FormatArgv(record.argv.empty() ? command : record.argv), why);
    PreflightFailure failure{.argv = record.argv.empty() ? command : record.argv,
                             .started = record.exit_code.has_value() || record.signal.has_value(),
                             .exit_code = record.exit_code,
                             .timed_out = record.timed_out};
    message += DescribeDiagnosis(DiagnosePreflight(failure, RealPreflightHost(), profile_.requires_hint));
    return Status::Error(message);
  }
  return Status::Ok();
}

LaunchRecord Sandbox::RunProbe(const std::vector<std::string>& probe_args,
                               const std::string& nonce, const ProbeLaunchOptions& options) {
  milliseconds timeout = options.timeout.count() > 0 ? options.timeout
                                                     : seconds(profile_.timeout_seconds);
  // A new session: the open instance is stopped and cleaned up, the next launch starts another.
  if (options.fresh_instance && profile_.lifecycle == Lifecycle::kSession) Close();
  std::string instance;
  const std::vector<std::string>* argv_template = &profile_.run;
  if (profile_.lifecycle == Lifecycle::kSession) {
    // Launches may run side by side: the first one starts the session, the others wait for it.
    std::lock_guard session_lock(session_mutex_);
    if (session_instance_.empty()) {
      std::string fresh = NewInstance();
      LaunchRecord started = LaunchTemplate(
          {.argv_template = profile_.start, .instance = fresh, .purpose = "start",
           .timeout = kHousekeepingTimeout});
      session_instance_ = fresh;  // set even on failure, so Close() stops and cleans it
      if (!started.error.empty() || started.exit_code != 0) {
        LaunchRecord failed;
        failed.id = started.id;
        failed.instance = fresh;
        failed.purpose = "probe";
        failed.error = fmt::format("session start failed: {}", started.error.empty() ? FirstLineOf(started.stderr_tail) : started.error);
        std::lock_guard lock(records_mutex_);
        housekeeping_incomplete_ = true;
        return failed;
      }
    }
    instance = session_instance_;
    argv_template = &profile_.exec;
  } else {
    instance = NewInstance();
  }
  LaunchResult raw;
  std::size_t index = 0;
  // The probe process as the host sees it, while it runs (run/probe_process_reading.h): the
  // cgroup limits that bind it, for launches whose checks read host readings.
  std::optional<ProbeProcessWatch> watch;
  if (options.host_readings || options.probe_process) watch.emplace(context_.probe_dir + "/sandprobe-probe", nonce);
  LaunchRecord record = LaunchTemplate({.argv_template = *argv_template, .instance = instance,
                                        .purpose = "probe", .probe_args = probe_args,
                                        .cancellable = true, .enveloped = true,
                                        .timeout = timeout,
                                        .spare_processes_with_arg = options.spare_processes_with_arg,
                                        .join_lab = options.join_lab},
                                       &raw, &index);
  if (watch) {
    nlohmann::json seen = watch->Stop();
    if (!seen.empty()) {
      std::lock_guard lock(records_mutex_);
      host_readings_[record.id].update(seen);
    }
  }
  if (record.error.empty()) {
    record.frames = ParseFrames(raw.out, nonce, raw.out_dropped > 0);
    StoreRecord(index, record);
  }
  if (!record.error.empty() || record.timed_out) {
    std::lock_guard lock(records_mutex_);
    housekeeping_incomplete_ = true;
  }
  if (options.host_readings) Inspect(instance, record.id);
  if (profile_.lifecycle == Lifecycle::kOneShot && !options.defer_cleanup) Cleanup(instance);
  return record;
}

void Sandbox::Inspect(const std::string& instance, const std::string& probe_launch_id) {
  if (!profile_.inspect) return;
  nlohmann::json readings = ReadInspect(instance);
  // Read again while the readings still say "an event is not recorded yet" (InspectSettle).
  if (const std::optional<InspectSettle>& settle = profile_.inspect->settle) {
    auto unsettled = [&settle](const nlohmann::json& r) {
      for (const auto& [name, value] : settle->while_readings) {
        if (!r.contains(name) || r.at(name) != value) return false;
      }
      return true;
    };
    int rereads = 0;
    while (unsettled(readings) && rereads < settle->tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(settle->every_ms));
      readings = ReadInspect(instance);
      ++rereads;
    }
    if (rereads > 0) readings["inspect_rereads"] = rereads;  // shown with the host readings
  }
  std::lock_guard lock(records_mutex_);
  host_readings_[probe_launch_id].update(readings);
}

nlohmann::json Sandbox::ReadInspect(const std::string& instance) {
  LaunchResult raw;
  LaunchRecord record = LaunchTemplate({.argv_template = profile_.inspect->argv,
                                        .instance = instance, .purpose = "inspect",
                                        .timeout = seconds(30)},
                                       &raw);
  nlohmann::json readings = nlohmann::json::object();
  if (!record.error.empty() || record.exit_code != 0) {
    readings["inspect_error"] = !record.error.empty() ? record.error : FirstLineOf(raw.err);
  } else {
    nlohmann::json doc = nlohmann::json::parse(raw.out, nullptr, false);
    if (doc.is_discarded()) {
      readings["inspect_error"] = "inspect output is not JSON";
    } else {
      for (const auto& [name, pointer] : profile_.inspect->readings) {
        try {
          nlohmann::json::json_pointer ptr(pointer);
          if (doc.contains(ptr)) readings[name] = doc.at(ptr);
        } catch (const nlohmann::json::exception&) {
          // A pointer that does not fit this document (e.g. an index into an object): absent.
        }
      }
    }
  }
  return readings;
}

void Sandbox::Cleanup(const std::string& instance) {
  bool removed = !profile_.cleanup.empty();
  for (const std::vector<std::string>& command : profile_.cleanup) {
    LaunchRecord record = LaunchTemplate({.argv_template = command, .instance = instance,
                                          .purpose = "cleanup", .removes = true,
                                          .timeout = kHousekeepingTimeout});
    removed = removed && Succeeded(record);
  }
  std::lock_guard lock(records_mutex_);
  if (removed) instances_cleaned_.insert(instance);
}

void Sandbox::Close() {
  std::string instance;
  {
    std::lock_guard session_lock(session_mutex_);
    instance = std::move(session_instance_);
    session_instance_.clear();
  }
  if (instance.empty()) return;
  LaunchTemplate({.argv_template = profile_.stop, .instance = instance, .purpose = "stop",
                  .removes = true, .timeout = kHousekeepingTimeout});
  Cleanup(instance);
}

void Sandbox::Teardown() {
  for (const std::vector<std::string>& command : profile_.teardown) {
    LaunchRecord record = LaunchTemplate({.argv_template = command, .purpose = "teardown",
                                          .removes = true, .timeout = kHousekeepingTimeout});
    std::lock_guard lock(records_mutex_);
    if (!Succeeded(record)) housekeeping_incomplete_ = true;
  }
}

bool Sandbox::may_have_left_objects() const {
  // Without a sweep spec a later `sandprobe sweep` could not remove a sandbox object either
  // (and a profile without one makes none that outlive their launch: bwrap, firejail).
  if (profile_.sweeps.empty()) return false;
  std::lock_guard lock(records_mutex_);
  if (instances_.load() == 0 && !housekeeping_incomplete_) return false;
  return !HousekeepingRemovedAll() && !sweep_complete_;
}

bool Sandbox::HousekeepingRemovedAll() const {
  return !profile_.cleanup.empty() && !housekeeping_incomplete_ &&
         instances_cleaned_.size() == static_cast<std::size_t>(instances_.load());
}

std::vector<Sandbox::SweepListing> Sandbox::Sweep(bool interrupted_run) {
  if (profile_.sweeps.empty()) return {};
  {
    std::lock_guard lock(records_mutex_);
    int instances = instances_.load();
    // No instance: this Sandbox knows nothing of what was made (`sandprobe sweep` of a dead
    // run), so it sweeps. An interrupted run (SIGINT, --timeout, the watchdog) always sweeps.
    bool interrupted = interrupted_run || (context_.cancel != nullptr && context_.cancel->load());
    if (instances > 0 && !interrupted && HousekeepingRemovedAll()) {
      sweep_summary_ = fmt::format(
          "skipped: the cleanup of every instance ({}) exited 0 and no launch was cut short",
          instances);
      return {};
    }
  }
  std::vector<SweepListing> listings;
  std::vector<std::string> incomplete;
  for (const SweepSpec& sweep : profile_.sweeps) {
    SweepListing listing;
    LaunchResult listed;  // the whole output (the record keeps only its tail) and what was dropped
    listing.list = LaunchTemplate(
        {.argv_template = sweep.list, .purpose = "sweep", .removes = true,
         .timeout = kHousekeepingTimeout},
        &listed);
    if (Succeeded(listing.list)) {
      SweepIds ids = ParseSweepIds(listed.out, listed.out_dropped);
      for (const std::string& id : ids.ids) {
        listing.removals.emplace_back(
            id, LaunchTemplate({.argv_template = sweep.remove, .purpose = "sweep",
                                .extra_scalars = {{"id", id}}, .removes = true,
                                .timeout = kHousekeepingTimeout}));
      }
      listing.incomplete = std::move(ids.problems);
    } else {
      listing.incomplete.push_back(fmt::format(
          "`{}` failed: {}", FormatArgv(listing.list.argv.empty() ? sweep.list : listing.list.argv),
          !listing.list.error.empty() ? listing.list.error
          : listing.list.timed_out    ? std::string("timed out")
          : listing.list.exit_code    ? fmt::format("exit {}", *listing.list.exit_code)
                                      : std::string("killed by a signal")));
    }
    incomplete.insert(incomplete.end(), listing.incomplete.begin(), listing.incomplete.end());
    listings.push_back(std::move(listing));
  }
  for (const SweepListing& listing : listings) {
    for (const auto& [id, removal] : listing.removals) {
      if (!Succeeded(removal)) {
        incomplete.push_back(fmt::format("could not remove {}: {}", id,
                                         !removal.error.empty() ? removal.error
                                         : removal.timed_out    ? std::string("timed out")
                                                                : DescribeRecordExit(removal)));
      }
    }
  }
  sweep_complete_ = incomplete.empty();
  sweep_summary_ = "ran";
  if (!incomplete.empty()) {
    std::size_t shown = std::min<std::size_t>(incomplete.size(), 3);
    sweep_summary_ = fmt::format("failed: {}{}",
                                 fmt::join(incomplete.begin(), incomplete.begin() + shown, "; "),
                                 incomplete.size() > shown ? fmt::format("; and {} more", incomplete.size() - shown) : "");
  }
  return listings;
}

}  // namespace sandprobe
