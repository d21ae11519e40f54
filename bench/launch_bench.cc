// What a launch's executable hash costs the launch's critical path. A docker binary is ~45 MB
// (36 ms to hash): the launcher used to hash it before the fork, once per run; it now opens it
// before the fork and hashes it on a thread while the launch runs (StartExecutableSha256).
//  - Sync:  the start and the wait back to back, what the critical path paid before.
//  - Start: the start alone, what it pays now (open, fstat, a thread); the wait is untimed.
// Each iteration first changes the file's ctime (futimens), so both caches miss (the process's
// and the one kept across runs), as at the first launch of a new binary.
//  - PersistedLookup: what a later run pays instead of the hash: one look into a full cache
//    kept across runs (launch_hash_cache.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <benchmark/benchmark.h>

#include "launch/launch_executable.h"
#include "launch/launch_hash_cache.h"

namespace sandprobe {
namespace {

constexpr std::size_t kDockerSize = 45 * 1024 * 1024;

const std::string& BigExecutable() {
  static const std::string path = [] {
    std::string p = (std::filesystem::temp_directory_path() / "sandprobe-bench-exe").string();
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    std::string chunk(1024 * 1024, '\x7f');
    for (std::size_t i = 0; i < kDockerSize / chunk.size(); ++i) out << chunk;
    return p;
  }();
  return path;
}

void Touch(const std::string& path) {  // a new ctime: the hash cache misses
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ::futimens(fd, nullptr);
  ::close(fd);
}

void BM_ExecutableHashSync(benchmark::State& state) {
  const std::string& path = BigExecutable();
  for (auto _ : state) {
    state.PauseTiming();
    Touch(path);
    state.ResumeTiming();
    benchmark::DoNotOptimize(StartExecutableSha256(path).get());
  }
}
BENCHMARK(BM_ExecutableHashSync)->Unit(benchmark::kMillisecond);

void BM_ExecutableHashStart(benchmark::State& state) {
  const std::string& path = BigExecutable();
  for (auto _ : state) {
    state.PauseTiming();
    Touch(path);
    state.ResumeTiming();
    std::future<StatusOr<std::string>> pending = StartExecutableSha256(path);
    state.PauseTiming();
    benchmark::DoNotOptimize(pending.get());
    state.ResumeTiming();
  }
}
// A fixed count: the untimed hash (36 ms) would otherwise run thousands of times to fill the
// minimum measured time of a sub-millisecond Start().
BENCHMARK(BM_ExecutableHashStart)->Unit(benchmark::kMillisecond)->Iterations(30);

void BM_PersistedLookup(benchmark::State& state) {
  const std::string dir = (std::filesystem::temp_directory_path() / "sandprobe-bench-hashes").string();
  std::filesystem::create_directories(dir);
  const std::string cache = dir + "/cache.json";
  std::filesystem::remove(cache);
  struct stat st {};
  for (std::size_t i = 0; i < kMaxPersistedHashes; ++i) {  // full: the largest file a lookup reads
    const std::string file = dir + "/f" + std::to_string(i);
    std::ofstream(file) << i;
    ::stat(file.c_str(), &st);
    PersistHash(cache, st, file, std::string(64, 'a'));
  }
  for (auto _ : state) benchmark::DoNotOptimize(FindPersistedHash(cache, st));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_PersistedLookup)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sandprobe
