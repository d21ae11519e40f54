# SANDPROBE_PCH (off unless asked; scripts/setup.sh turns it on for the run build): the headers
# most sources parse (the standard library's containers, fmt, nlohmann/json) precompiled once and
# shared by every library, the probe and the CLI. A cold build of the two run targets spends
# most of its time parsing those headers again per file. Off by default: ccache (the tests'
# builds) does not cache through a precompiled header without its sloppiness settings.
option(SANDPROBE_PCH "precompile the common headers once for the run build" OFF)
if(SANDPROBE_PCH)
  set(SP_PCH_HEADERS <algorithm> <filesystem> <map> <memory> <optional> <set> <string>
      <string_view> <vector> <fmt/format.h> <nlohmann/json.hpp>)
  # The libraries share one compile line (sp_add_library), so one header serves them all.
  target_precompile_headers(sp_model PRIVATE ${SP_PCH_HEADERS})
  foreach(target sp_load sp_launch sp_families sp_witnesses sp_gate sp_reports sp_recorded
                 sp_run sp_probe)
    if(TARGET ${target})
      target_precompile_headers(${target} REUSE_FROM sp_model)
    endif()
  endforeach()
endif()
