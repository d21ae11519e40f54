// The owner of the precompiled header the libraries, the CLI and the probe reuse in a unity
// build (cmake/SandprobeTargets.cmake, sp_reuse_precompiled_header): CMake compiles the header
// list with this target's flags; the file itself has nothing to compile.
