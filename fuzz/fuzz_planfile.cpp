// libFuzzer harness for the plan-file reader (planner/planfile.h, "tapelab-plan 1")
// against one fixed tape, the 4-step Asian call (48 nodes; the seeds are plans
// for it, so the structure hash matches and the fuzzer reaches the cuts). A bug
// is a crash, a sanitizer report, an exception other than PlanFileError, an
// error that is not one line naming the file, or an accepted plan whose
// written plan file does not read back to the same plan.
#include <cstdint>
#include <string>

#include "fuzz/harness.h"
#include "planner/planfile.h"
#include "tape/products/products.h"

using namespace tapelab;

namespace {
bool samePlan(const Plan& x, const Plan& y) {
  return x.bounds == y.bounds && x.persistent == y.persistent && x.storedAt == y.storedAt &&
         planInnerJson(x) == planInnerJson(y);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Tape tape = products::asianCall(4);
  const std::string text(reinterpret_cast<const char*>(data), size);
  Plan plan;
  try {
    plan = parsePlanFile(text, tape, "fuzz.plan");
  } catch (const PlanFileError& e) {
    fuzz::requireOneLine(e.what(), "fuzz.plan: ");
    return 0;
  }
  const std::string written = planFileText(tape, plan);
  try {
    if (!samePlan(parsePlanFile(written, tape, "written.plan"), plan)) fuzz::bug("plan changed on write-then-read");
  } catch (const PlanFileError& e) {
    fuzz::bug(std::string("planFileText's output does not read back: ") + e.what());
  }
  return 0;
}
