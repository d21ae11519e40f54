// The check catalogue: one row per check template (a check id up to its ':'), saying what the
// check proves and how a sandbox usually meets it. It is what SARIF rules carry as their help
// (the rule's own text, not the first failing check's), what docs/checks.md is generated from
// (tested to be current), and where a rule's helpUri points.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace sandprobe {

struct CatalogueRow {
  std::string_view check;   // the template: "fs.read.denied", "priv.syscall"
  std::string_view family;  // the probe family whose facts decide it (family table)
  std::string_view proves;  // what a pass means, one sentence
  std::string_view help;    // how a sandbox usually meets it, one or two sentences
};

std::span<const CatalogueRow> CheckCatalogue();

// The row of a check id's template ("fs.read.denied:/etc/shadow" -> fs.read.denied), or null.
const CatalogueRow* FindCatalogueRow(std::string_view check_id);

// The anchor of a template in docs/checks.md: "fs.read.denied" -> "fs-read-denied".
std::string CatalogueAnchor(std::string_view check_template);

// docs/checks.md: the catalogue as Markdown, one section per family.
std::string CatalogueMarkdown();

}  // namespace sandprobe
