// A future that already holds its value: for work that is usually started on a thread (hashing
// an executable, a witness's host command) but sometimes has its answer at once (a cache hit,
// an error before anything starts), so callers hold one type and wait the same way.
#pragma once

#include <future>
#include <utility>

namespace sandprobe {

template <class T>
std::future<T> ReadyFuture(T value) {
  std::promise<T> promise;
  promise.set_value(std::move(value));
  return promise.get_future();
}

}  // namespace sandprobe
