// Test-only: fixed RunReports behind the golden files. Two profiles, every outcome and
// direction, evidence, and launches whose output is as hostile as a probe can make it.
#pragma once

#include <string>
#include <vector>

#include "model/run_report.h"

namespace sandprobe::report_fixture {

// ANSI CSI and OSC, NUL, a lone ESC, invalid UTF-8 (bad lead, truncated, encoded surrogate),
// "]]>", U+FFFE, U+FFFF and some valid non-ASCII text.
std::string HostileBytes();

// 200 KB of printable text with a recognisable end ("...END-OF-200K").
std::string Big200K();

// Profile "docker-hardened": pass, fail (both directions), error, two inconclusive citing the
// same launch, skip; launch L1's stdout/stderr and one observed text hold HostileBytes().
RunReport HardenedReport();

// Profile "bwrap-basic": no hostname in host facts, a skipped family, a duplicate check id and a
// failing check whose observed text is Big200K(), and an interrupted check whose launch's
// stdout is Big200K().
RunReport BwrapReport();

inline std::vector<RunReport> BothReports() { return {HardenedReport(), BwrapReport()}; }

// Compares `actual` byte for byte with reports/testdata/<name>. With UPDATE_GOLDEN=1 in the
// environment it rewrites the file instead. Returns "" on a match, else what differs.
std::string CompareWithGolden(const std::string& name, const std::string& actual);

// A fresh empty directory under $TMPDIR (or /tmp); the test removes what it made.
std::string MakeTempDir();

// Names in `dir` (not . or ..), sorted.
std::vector<std::string> ListDir(const std::string& dir);

std::string ReadFile(const std::string& path);

}  // namespace sandprobe::report_fixture
