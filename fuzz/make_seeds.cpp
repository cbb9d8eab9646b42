// Writes the seed corpora that come from code rather than files (fuzz/README.md):
// product tapes for fuzz_tape, and plan files of every strategy (flat and
// nested) for fuzz_planfile's fixed tape, the 4-step Asian call.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "planner/planfile.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/textformat.h"

using namespace tapelab;

namespace {
void put(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds CORPUS_ROOT (writes CORPUS_ROOT/tape and CORPUS_ROOT/planfile)\n");
    return 2;
  }
  const std::filesystem::path root = argv[1];
  std::filesystem::create_directories(root / "tape");
  std::filesystem::create_directories(root / "planfile");
  put(root / "tape" / "european-3.tape", writeTape(products::europeanCall(3)));
  put(root / "tape" / "asian-4.tape", writeTape(products::asianCall(4)));
  put(root / "tape" / "basket-2x2.tape", writeTape(products::basketCall(2, 2)));
  const Tape tape = products::asianCall(4);
  for (const StrategyEntry& s : strategies()) {
    for (int segments : {2, 5}) {
      PlanOptions o;
      o.segments = segments;
      try {
        put(root / "planfile" / (s.name + "-" + std::to_string(segments) + ".json"),
            planFileText(tape, makeStrategyPlan(s.name, tape, o), segments));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "make_seeds: %s at %d segments: %s\n", s.name.c_str(), segments, e.what());
      }
    }
  }
  return 0;
}
