# Tests of what ships (included by cmake/Install.cmake): the CI templates and the .deb on a clean
# Debian 12. Both are scripts: exit 77 is a skip (a missing linter or test root), which they turn
# into a failure themselves under SANDPROBE_REQUIRE_BACKENDS=1.

# yamllint, actionlint and the templates' rules (build once, install per cell, gate, publish).
add_test(NAME ci_templates_test
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/ci_templates_test.sh" "${CMAKE_SOURCE_DIR}")
set_tests_properties(ci_templates_test PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)

# The .deb installed with apt-get in a clean debootstrap root (cached by
# `scripts/setup.sh --with debroot`), run there by the templates' own audit steps and through the
# host's docker socket, its verdicts compared with this build tree's. Needs the whole build (the
# man page, the CLI for the reference runs). Minutes the first time (apt downloads the
# Recommends into /var/cache/sandprobe-test-root/apt), about one after.
add_test(NAME deb_root_test
         COMMAND bash "${CMAKE_SOURCE_DIR}/scripts/deb-root-test.sh" "${CMAKE_BINARY_DIR}")
set_tests_properties(deb_root_test PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 1200)

# The fleet audit (docs/fleet.md): the Kubernetes manifests against the API's models (an unknown
# field, a wrong type, a missing required field fail; --self-test proves the checker catches
# each), and the image of sandprobe run as the DaemonSet's pod would run it, its reports
# compared check by check with the same audit on the host. 60-130 s here (30-45 s of it the
# image, from the cached debootstrap root).
add_test(NAME fleet_manifests_test
         COMMAND /usr/bin/python3 "${CMAKE_SOURCE_DIR}/tests/fleet_manifests_test.py" "${CMAKE_SOURCE_DIR}" --self-test)
set_tests_properties(fleet_manifests_test PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
add_test(NAME fleet_image_test
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/fleet_image_test.sh" "${CMAKE_BINARY_DIR}")
set_tests_properties(fleet_image_test PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
# The RuntimeClass columns' kubectl profiles through tests/kubectl_standin/kubectl (pods carried
# out by docker; no cluster here), with the probe path of issue 29 as the failing control. ~10 s.
add_test(NAME fleet_kubectl_profiles_test
         COMMAND bash "${CMAKE_SOURCE_DIR}/tests/fleet_kubectl_profiles_test.sh" "${CMAKE_BINARY_DIR}")
set_tests_properties(fleet_kubectl_profiles_test PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
# The .deb root test and the fleet image both run apt-get in a debootstrap root whose package
# archive is the host's /var/cache/apt (one lock), and both rebuild the machine's sandprobe/probe
# and sandprobe/agent images: never at the same time (a fresh-clone CI run had the image test
# fail on "Could not get lock /var/cache/apt/archives/lock" while deb_root_test held it).
set_tests_properties(deb_root_test fleet_image_test PROPERTIES RESOURCE_LOCK debian_root_apt_and_images)
