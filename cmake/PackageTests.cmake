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
