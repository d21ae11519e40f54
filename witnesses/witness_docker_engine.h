// Asking the docker daemon itself, over its Engine API socket, instead of through the docker CLI.
//
// A GET on the socket takes a few ms of the daemon's time. `docker network inspect bridge` is a
// Go program that starts, reads its config and asks the same thing: 10-77 ms, and when it runs
// beside a launch (as the net witness's question does) it takes CPU from the container starting
// there. docker-hardened's network suite, medians of 15 interleaved runs on 2 vCPUs: 22 ms of
// the run's wall was that one CLI call.
//
// Only where the CLI would ask the same daemon: the sandboxes run through the CLI, so the answer
// must be about their daemon. The CLI picks it in this order: DOCKER_HOST, DOCKER_CONTEXT, the
// config's currentContext ($DOCKER_CONFIG/config.json, else ~/.docker/config.json), else
// unix:///var/run/docker.sock. DockerCliDaemonSocket follows that order and answers only a unix
// socket outside any context; anything else (tcp://, ssh://, a context, a config it cannot
// read) is an error saying why, and the caller asks the CLI as before.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "model/status.h"

namespace sandprobe {

// getenv, or a table in tests.
using EnvLookup = std::function<const char*(const char* name)>;

// The path of the unix socket the docker CLI would talk to, or why there is none to ask directly.
StatusOr<std::string> DockerCliDaemonSocket(const EnvLookup& env);

// GET `target` (e.g. "/networks/bridge") from the Engine API listening on unix socket `socket`,
// within `limit`: the body, parsed as JSON. A status other than 200, a body that is not JSON, a
// refused connection or the limit passing is an error that names it.
StatusOr<nlohmann::json> DockerEngineGet(const std::string& socket, const std::string& target,
                                         std::chrono::milliseconds limit);

// DockerEngineGet on DockerCliDaemonSocket(getenv): what a real run's witnesses use
// (WitnessSetup::docker_engine).
StatusOr<nlohmann::json> AskDockerEngine(const std::string& target, std::chrono::milliseconds limit);

}  // namespace sandprobe
