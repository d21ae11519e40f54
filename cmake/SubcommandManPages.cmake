# Run at build time (cmake -P) by the custom command of cmake/Install.cmake: one man page per
# subcommand, sandprobe-NAME.1.gz in OUT_DIR, each made by help2man from `sandprobe NAME --help`.
# The subcommands are the binary's own (`sandprobe help --commands`), so a new one gets its
# page without an edit here. Pages of subcommands that no longer exist are removed.
# In: SANDPROBE (the built binary), HELP2MAN, GZIP, VERSION, INCLUDE (an .h2m file), OUT_DIR.
execute_process(COMMAND "${SANDPROBE}" help --commands OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR listing STREQUAL "")
  message(FATAL_ERROR "`${SANDPROBE} help --commands` failed (exit ${rc})")
endif()
file(GLOB stale "${OUT_DIR}/sandprobe-*.1.gz")
if(stale)
  file(REMOVE ${stale})
endif()
string(REPLACE "\n" ";" lines "${listing}")
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(FIND "${line}" "\t" tab)
  string(SUBSTRING "${line}" 0 ${tab} name)
  math(EXPR after "${tab} + 1")
  string(SUBSTRING "${line}" ${after} -1 description)
  set(page "${OUT_DIR}/sandprobe-${name}.1")
  # --version-string: a subcommand has no --version of its own; help2man then runs only --help.
  execute_process(
    COMMAND "${HELP2MAN}" --no-info --section=1 --source=sandprobe "--name=${description}"
            "--help-option=${name} --help" "--version-string=sandprobe-${name} ${VERSION}" "--include=${INCLUDE}"
            "--output=${page}" "${SANDPROBE}"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help2man for `sandprobe ${name} --help` failed (exit ${rc}): ${err}")
  endif()
  execute_process(COMMAND "${GZIP}" -n -9 -f "${page}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${page} failed (exit ${rc})")
  endif()
endforeach()
