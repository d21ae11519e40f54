#include "witnesses/witness_docker_engine.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

namespace sandprobe {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;

constexpr const char* kDefaultSocket = "/var/run/docker.sock";
constexpr std::string_view kUnixScheme = "unix://";

std::string Env(const EnvLookup& env, const char* name) {
  const char* value = env(name);
  return value == nullptr ? "" : value;
}

// The context the CLI config selects ("" for none), or why the config cannot say.
StatusOr<std::string> ConfigContext(const EnvLookup& env) {
  std::string dir = Env(env, "DOCKER_CONFIG");
  if (dir.empty()) {
    const std::string home = Env(env, "HOME");
    if (home.empty()) return Status::Error("neither DOCKER_CONFIG nor HOME says where the docker CLI's config is");
    dir = home + "/.docker";
  }
  const std::string path = dir + "/config.json";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return std::string();  // the CLI's defaults
  std::ifstream in(path);
  if (!in) return Status::Error(fmt::format("{}: cannot be read", path));
  nlohmann::json config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) return Status::Error(fmt::format("{}: not a JSON object", path));
  auto current = config.find("currentContext");
  if (current == config.end()) return std::string();
  if (!current->is_string()) return Status::Error(fmt::format("{}: currentContext is not a string", path));
  return current->get<std::string>();
}

}  // namespace

StatusOr<std::string> DockerCliDaemonSocket(const EnvLookup& env) {
  if (const std::string host = Env(env, "DOCKER_HOST"); !host.empty()) {
    if (host.rfind(kUnixScheme, 0) != 0 || host.size() == kUnixScheme.size()) {
      return Status::Error(fmt::format("DOCKER_HOST={} is not a unix socket", host));
    }
    return host.substr(kUnixScheme.size());
  }
  if (const std::string context = Env(env, "DOCKER_CONTEXT"); !context.empty() && context != "default") {
    return Status::Error(fmt::format("DOCKER_CONTEXT={} selects a context", context));
  }
  StatusOr<std::string> context = ConfigContext(env);
  if (!context.ok()) return context.status();
  if (!context->empty() && *context != "default") {
    return Status::Error(fmt::format("the docker CLI's config selects context {}", *context));
  }
  return std::string(kDefaultSocket);
}

StatusOr<nlohmann::json> DockerEngineGet(const std::string& socket, const std::string& target,
                                         std::chrono::milliseconds limit) {
  const std::string what = fmt::format("GET {} on unix://{}", target, socket);
  asio::io_context io;
  asio::local::stream_protocol::socket stream(io);
  boost::beast::flat_buffer buffer;
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "docker");  // any name: the daemon serves every Host
  http::response<http::string_body> response;
  boost::system::error_code failed;
  const char* step = "connect";
  bool done = false;
  // Asynchronous only so that one limit bounds all of it (io.run_for); one operation at a time.
  stream.async_connect(socket, [&](boost::system::error_code ec) {
    if (ec) {
      failed = ec;
      return;
    }
    step = "send the request";
    http::async_write(stream, request, [&](boost::system::error_code ec, std::size_t) {
      if (ec) {
        failed = ec;
        return;
      }
      step = "read the response";
      http::async_read(stream, buffer, response, [&](boost::system::error_code ec, std::size_t) {
        if (ec) failed = ec;
        else done = true;
      });
    });
  });
  io.run_for(limit);
  if (failed) return Status::Error(fmt::format("{}: {}: {}", what, step, failed.message()));
  if (!done) return Status::Error(fmt::format("{}: no answer within {} ms ({})", what, limit.count(), step));
  if (response.result() != http::status::ok) {
    return Status::Error(fmt::format("{}: HTTP {}: {}", what, response.result_int(), response.body().substr(0, 200)));
  }
  nlohmann::json body = nlohmann::json::parse(response.body(), nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return Status::Error(fmt::format("{}: the body is not JSON", what));
  return body;
}

StatusOr<nlohmann::json> AskDockerEngine(const std::string& target, std::chrono::milliseconds limit) {
  StatusOr<std::string> socket = DockerCliDaemonSocket(std::getenv);
  if (!socket.ok()) return socket.status();
  return DockerEngineGet(*socket, target, limit);
}

}  // namespace sandprobe
