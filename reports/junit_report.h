// The JUnit XML report: what CI systems (Jenkins, GitLab, GitHub annotators) read.
//
// Dialect: the Jenkins xUnit junit-10.xsd (vendored in third_party/junit-xsd). One <testsuite>
// per run (profile x policy x suite) x check family, named "profile/policy/suite/family" (the
// classname likewise, with dots), so the reports of a matrix job merge without collisions; the
// run's properties once, on its first suite. One <testcase> per check, named by its id with
// its id, as in every other format ("fs.read.denied:host-canary"). The severity leads the type and the
// message: fail -> <failure type="high:too-permissive|high:too-restrictive" message="[high] ...">,
// error -> <error type="high:error">, inconclusive -> <error type="high:inconclusive">,
// skip -> <skipped>. The failure body has no line for a field left empty.
// Every string passes through SanitizeForXml, so hostile probe output cannot break the file.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/run_report.h"
#include "model/status.h"

namespace sandprobe {

// Caps, in bytes, on what one testcase carries (Jenkins keeps ~50k chars of a failing case).
inline constexpr std::size_t kJunitMessageCap = 1024;     // message="" attributes
inline constexpr std::size_t kJunitDetailCap = 16 * 1024;  // each field of the failure body
inline constexpr std::size_t kJunitOutputCap = 8 * 1024;   // <system-out>, <system-err>

// Renders the reports of one run (one per profile) as a JUnit XML document.
std::string RenderJunit(const std::vector<RunReport>& reports);

// Writes RenderJunit to `path` atomically, or to stdout when `path` is "-".
Status WriteJunitReport(const std::vector<RunReport>& reports, const std::string& path);

}  // namespace sandprobe
