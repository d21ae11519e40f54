// sandprobe-checks-doc: prints docs/checks.md, the check catalogue (check_catalogue.h).
#include <iostream>

#include "model/check_catalogue.h"

int main() {
  std::cout << sandprobe::CatalogueMarkdown();
  return 0;
}
