# `cmake --install` and the Debian package (cpack -G DEB): the layout load/data_dir.cc's
# DataLayouts() "installed" row finds relative to the binary, so nothing of the build machine
# is compiled in:
#   /usr/bin/sandprobe
#   /usr/lib/sandprobe/sandprobe-probe      (the static probe; sandboxes bind this directory)
#   /usr/lib/sandprobe-js/sandprobe-probe.js (the JS probe, for Deno and Node profiles)
#   /usr/lib/sandprobe-python/sandprobe_probe.py (the Python probe, for RestrictedPython profiles)
#   /usr/share/sandprobe/scripts/restricted_runner.py (their sandbox: see the profiles' install_hint)
#   /usr/lib/sandprobe-wasi/sandprobe-probe.wasm (the wasm32-wasi probe, when built) and
#   /usr/share/sandprobe/scripts/wasi_node_runner.mjs (the wasi-node profiles' runner)
#   /usr/share/sandprobe/{suites,policies,sandboxes,docs/*.schema.json,docs/checks.md,scripts/microvm}
#   /usr/share/sandprobe/docker/            (build-images.sh and the Dockerfiles of the images
#                                            the docker profiles run: sandprobe/agent, /probe)
#   /usr/share/man/man1/sandprobe.1.gz      (help2man from `sandprobe --help`), and
#   /usr/share/man/man1/sandprobe-NAME.1.gz (from `sandprobe NAME --help`, one per subcommand)
#   /usr/share/bash-completion/completions/sandprobe (`sandprobe completion bash`)
#   /usr/share/doc/sandprobe/               (README.Debian: after the install; the CI templates)
# scripts/microvm is data for the microvm profiles: their guest is built from it (see
# sandboxes/microvm.json) into /var/lib/sandprobe-microvm by
# /usr/share/sandprobe/scripts/microvm/build-initramfs.sh.

# `cmake --install` and cpack install what is built, and build nothing themselves: without this,
# cpack's preinstall step builds `all` (every test and benchmark) before packing two binaries.
# scripts/build-deb.sh builds the package's targets first; a missing one is install's error.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(SANDPROBE_INSTALL_BIN "bin")
set(SANDPROBE_INSTALL_PROBE "lib/sandprobe")
set(SANDPROBE_INSTALL_DATA "share/sandprobe")

install(TARGETS sandprobe RUNTIME DESTINATION "${SANDPROBE_INSTALL_BIN}")
# install(PROGRAMS), not TARGETS: CPack strips installed targets (CPACK_STRIP_FILES), and the
# harness refuses a probe whose SHA-256 is not the one the build made (run/probe_builds.h).
install(PROGRAMS "$<TARGET_FILE:sandprobe-probe>" DESTINATION "${SANDPROBE_INSTALL_PROBE}")
# Each other runtime's probe in a directory of its own beside it (load/data_dir.h ProbeDirFor):
# sandboxes bind the whole directory, so each holds its probe only.
install(FILES "${CMAKE_BINARY_DIR}/probe-js/sandprobe-probe.js" DESTINATION "${SANDPROBE_INSTALL_PROBE}-js")
install(FILES "${CMAKE_BINARY_DIR}/probe-python/sandprobe_probe.py" DESTINATION "${SANDPROBE_INSTALL_PROBE}-python")
# The wasm32-wasi probe, when this build had its toolchain (probes/wasi), and the node:wasi
# runner of sandboxes/wasi-node*.json (see their install_hint).
if(TARGET sandprobe-probe-wasi)
  install(FILES "${CMAKE_BINARY_DIR}/probe-wasi/sandprobe-probe.wasm" DESTINATION "${SANDPROBE_INSTALL_PROBE}-wasi")
endif()
install(PROGRAMS probes/wasi/wasi_node_runner.mjs DESTINATION "${SANDPROBE_INSTALL_DATA}/scripts")
# The sandbox of sandboxes/restrictedpython*.json (RestrictedPython as integrators set it up), for
# a package user to put where those profiles start it (their install_hint says how).
install(PROGRAMS probes/python/restricted_runner.py DESTINATION "${SANDPROBE_INSTALL_DATA}/scripts")
install(DIRECTORY suites policies sandboxes DESTINATION "${SANDPROBE_INSTALL_DATA}")
file(GLOB SP_SCHEMAS CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/docs/*.schema.json")
install(FILES ${SP_SCHEMAS} docs/checks.md DESTINATION "${SANDPROBE_INSTALL_DATA}/docs")
install(DIRECTORY scripts/microvm DESTINATION "${SANDPROBE_INSTALL_DATA}/scripts"
        USE_SOURCE_PERMISSIONS)
# The images are built on the user's machine (no registry): the script finds the installed probe
# beside itself (../../../lib/sandprobe/sandprobe-probe).
install(PROGRAMS docker/build-images.sh DESTINATION "${SANDPROBE_INSTALL_DATA}/docker")
# The fleet audit (docs/fleet.md): the image of sandprobe itself is built from this package by
# build-sandprobe-image.sh (a debootstrap root made by scripts/debroot.sh), and runs
# node-audit.sh, the DaemonSet's command.
install(PROGRAMS docker/build-sandprobe-image.sh docker/node-audit.sh
        DESTINATION "${SANDPROBE_INSTALL_DATA}/docker")
install(PROGRAMS scripts/debroot.sh DESTINATION "${SANDPROBE_INSTALL_DATA}/scripts")
install(FILES docker/agent.Dockerfile docker/probe.Dockerfile docker/tinyproxy.Dockerfile
        docker/tinyproxy-allowlist.conf docker/tinyproxy-allowlist.filter
        DESTINATION "${SANDPROBE_INSTALL_DATA}/docker")
install(FILES cmake/README.Debian DESTINATION share/doc/sandprobe)
install(FILES docs/ci/README.md docs/ci/github-actions.yml docs/ci/gitlab-ci.yml
        DESTINATION share/doc/sandprobe/examples/ci)

# The man page: help2man runs the built binary (its --help and --version), plus the sections
# of cmake/sandprobe.h2m. gzip -n: no name or time stamp in the archive (reproducible).
find_program(HELP2MAN help2man REQUIRED)
find_program(GZIP gzip REQUIRED)
set(SP_MAN "${CMAKE_BINARY_DIR}/man/sandprobe.1")
add_custom_command(
  OUTPUT "${SP_MAN}.gz"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_BINARY_DIR}/man"
  COMMAND "${HELP2MAN}" --no-info --section=1 --source=sandprobe
          "--name=checks that a sandbox enforces the policy it declares"
          "--include=${CMAKE_SOURCE_DIR}/cmake/sandprobe.h2m"
          --output=${SP_MAN} $<TARGET_FILE:sandprobe>
  COMMAND "${GZIP}" -n -9 -f "${SP_MAN}"
  DEPENDS sandprobe "${CMAKE_SOURCE_DIR}/cmake/sandprobe.h2m"
  COMMENT "man page sandprobe.1 (help2man)"
  VERBATIM)
# One page per subcommand, the same way (cmake/SubcommandManPages.cmake asks the binary which).
set(SP_SUBCOMMAND_MANS "${CMAKE_BINARY_DIR}/man/subcommands.stamp")
add_custom_command(
  OUTPUT "${SP_SUBCOMMAND_MANS}"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_BINARY_DIR}/man"
  COMMAND "${CMAKE_COMMAND}" "-DSANDPROBE=$<TARGET_FILE:sandprobe>" "-DHELP2MAN=${HELP2MAN}"
          "-DGZIP=${GZIP}" "-DVERSION=${PROJECT_VERSION}"
          "-DINCLUDE=${CMAKE_SOURCE_DIR}/cmake/sandprobe-subcommand.h2m"
          "-DOUT_DIR=${CMAKE_BINARY_DIR}/man" -P "${CMAKE_SOURCE_DIR}/cmake/SubcommandManPages.cmake"
  COMMAND "${CMAKE_COMMAND}" -E touch "${SP_SUBCOMMAND_MANS}"
  DEPENDS sandprobe "${CMAKE_SOURCE_DIR}/cmake/SubcommandManPages.cmake"
          "${CMAKE_SOURCE_DIR}/cmake/sandprobe-subcommand.h2m"
  COMMENT "man pages sandprobe-SUBCOMMAND.1 (help2man)"
  VERBATIM)
add_custom_target(sandprobe_man ALL DEPENDS "${SP_MAN}.gz" "${SP_SUBCOMMAND_MANS}")
install(DIRECTORY "${CMAKE_BINARY_DIR}/man/" DESTINATION share/man/man1 FILES_MATCHING PATTERN "*.1.gz")

# Bash completion, written by the binary from its own command table (cli/bash_completion.h).
set(SP_COMPLETION "${CMAKE_BINARY_DIR}/completion/sandprobe")
add_custom_command(
  OUTPUT "${SP_COMPLETION}"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_BINARY_DIR}/completion"
  COMMAND sh -c "\"$1\" completion bash > \"$2\"" sh $<TARGET_FILE:sandprobe> "${SP_COMPLETION}"
  DEPENDS sandprobe
  COMMENT "bash completion (sandprobe completion bash)"
  VERBATIM)
add_custom_target(sandprobe_completion ALL DEPENDS "${SP_COMPLETION}")
install(FILES "${SP_COMPLETION}" DESTINATION share/bash-completion/completions)

# The package. Library dependencies come from dpkg-shlibdeps (dpkg-dev); setpriv (util-linux) is
# what the bwrap profiles start bwrap with. The backends are Recommends/Suggests: a missing one
# makes its profiles skip with the reason, never fail. docker: either Debian's or Docker's own
# (docker-ce), never forced over the other; busybox-static is the sandprobe/agent image's
# userland (build-images.sh).
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "sandprobe")
set(CPACK_PACKAGE_VENDOR "sandprobe")
set(CPACK_PACKAGE_CONTACT "sandprobe maintainers <sandprobe@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "sandbox escape and policy test harness")
set(CPACK_PACKAGE_DESCRIPTION
    "sandprobe runs a static probe inside a sandbox (docker, gVisor, bubblewrap, firejail, a microVM, agent sandboxes) and judges what it observed against a declared policy, with host-side witnesses. Reports: JSON, JUnit, SARIF, Markdown.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES TRUE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "utils")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "util-linux")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bubblewrap, docker.io | docker-ce | moby-engine, busybox-static")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "firejail, runsc, qemu-system-x86, linux-image-amd64, cpio, kmod")
include(CPack)

include("${CMAKE_CURRENT_LIST_DIR}/PackageTests.cmake")
