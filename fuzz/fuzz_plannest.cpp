// libFuzzer harness for plan files that nest (planner/planfile.h's depth limits): the input is a
// recipe, not the text. Each byte decides one inner entry of the 100-step Asian call (609
// nodes): null, {}, a malformed fragment, or cuts (one to three, even or at the segment's end, a
// chain or not) with sub-entries read from the next bytes, depth first, so a run of bytes nests as
// deep as it is long (byte 0xF4 cuts one node off a segment's end: up to 304 levels, past the
// limit of 256; corpus/plannest/nested-tight-*). The text goes through the reader twice, as a
// string and as a file streamed in 64 KiB chunks. A bug is a crash or a sanitizer report (a
// stack overflow among them), an exception other than PlanFileError, an error that is not one
// line naming the file, the two paths disagreeing, an accepted plan deeper than kMaxPlanDepth,
// or one that does not read back the same after planFileText. TAPELAB_FUZZ_VERBOSE=1 prints what
// each input reached (replaying seeds by hand).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "fuzz/harness.h"
#include "planner/planfile.h"
#include "tape/products/products.h"
#include "util/files.h"

using namespace tapelab;

namespace {

class Recipe {
 public:
  Recipe(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  uint8_t next() {
    if (n_ == 0) return 0;
    --n_;
    return *p_++;
  }
  bool done() const { return n_ == 0; }

  // One inner entry for the segment [begin, end).
  void entry(std::string& out, int32_t begin, int32_t end) {
    const uint8_t c = next();
    const int32_t len = end - begin;
    switch (c % 10) {
      case 0:
      case 1: out += "null"; return;
      case 2: out += "{}"; return;
      case 3: {  // what a careless or hostile writer puts there
        const std::string mid = std::to_string(begin + len / 2);
        const std::string junk[] = {"[", "{\"cuts\": [", "7", "\"x\"", "{\"chain\": true}",
                                    "{\"cuts\": [" + mid + "], \"cuts\": [" + mid + "]}",
                                    "{\"cuts\": [" + std::to_string(begin) + "]}",
                                    "{\"cuts\": [" + mid + "], \"inner\": [null]}",
                                    "{\"cuts\": [" + mid + "], \"chain\": 1}", "[[[[[[[[", "{\"cuts\": [1e999]}"};
        out += junk[(c / 10) % (sizeof junk / sizeof junk[0])];
        return;
      }
      default: break;
    }
    if (len < 2) {
      out += "null";
      return;
    }
    const int k = std::min<int>(1 + (c >> 4) % 3, len - 1);
    std::vector<int32_t> bounds{begin};
    // Even cuts, or (bit 0x40) the last k nodes cut off, so that the first sub-segment stays long
    // and a run of such bytes nests as deep as the tape is long.
    const bool tight = c & 0x40;
    for (int i = 1; i <= k; ++i)
      bounds.push_back(tight ? end - (k - i + 1) : begin + static_cast<int32_t>(int64_t{len} * i / (k + 1)));
    bounds.push_back(end);
    out += "{\"cuts\": [";
    for (int i = 1; i <= k; ++i) out += (i > 1 ? ", " : "") + std::to_string(bounds[static_cast<size_t>(i)]);
    out += "]";
    if (c & 8) out += ", \"chain\": true";
    if (!done() && next() % 4 != 0) {
      out += ", \"inner\": [";
      for (size_t s = 0; s + 1 < bounds.size(); ++s) {
        if (s) out += ", ";
        entry(out, bounds[s], bounds[s + 1]);
      }
      out += "]";
    }
    out += "}";
  }

 private:
  const uint8_t* p_;
  size_t n_;
};

bool samePlan(const Plan& x, const Plan& y) {
  return x.bounds == y.bounds && x.persistent == y.persistent && x.storedAt == y.storedAt &&
         planInnerJson(x) == planInnerJson(y);
}

// The reader's verdict: the plan's file text, or the error.
std::string verdict(const std::function<Plan()>& read, Plan* plan) {
  try {
    *plan = read();
    return "ok";
  } catch (const PlanFileError& e) {
    return e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Tape tape = products::asianCall(100);
  static const std::string file = "/tmp/tapelab-fuzz-plannest-" + std::to_string(::getpid()) + ".json";
  Recipe r(data, size);
  const int32_t n = tape.size();
  const uint8_t top = r.next();
  const int segments = 1 + top % 4;
  std::vector<int32_t> bounds{0};
  for (int i = 1; i < segments; ++i) bounds.push_back(static_cast<int32_t>(int64_t{n} * i / segments));
  bounds.push_back(n);
  std::string text = "{\"format\": \"tapelab-plan 1\", \"tape\": {\"nodes\": " + std::to_string(n) + ", \"structure\": \"" +
                     structureHash(tape) + "\"}, \"cuts\": [";
  for (size_t i = 1; i + 1 < bounds.size(); ++i) text += (i > 1 ? ", " : "") + std::to_string(bounds[i]);
  text += "], \"inner\": [";
  for (size_t s = 0; s + 1 < bounds.size(); ++s) {
    if (s) text += ", ";
    r.entry(text, bounds[s], bounds[s + 1]);
  }
  text += "]";
  if (top & 16) text += ", \"metrics\": {\"depth\": [[[[1]]]]}";
  if (top & 32) text += ", \"segment_list\": 3";
  text += "}";

  Plan fromText, fromFile;
  const std::string a = verdict([&] { return parsePlanFile(text, tape, "fuzz.json"); }, &fromText);
  if (!writeFileAtomic(file, text)) fuzz::bug("cannot write " + file);
  const std::string b = verdict([&] { return readPlanFile(file, tape); }, &fromFile);
  if (std::getenv("TAPELAB_FUZZ_VERBOSE"))  // replaying seeds by hand: what each one reached
    std::fprintf(stderr, "%zu bytes of text, depth %d: %s\n", text.size(), a == "ok" ? fromText.depth() : -1,
                 a.substr(0, 160).c_str());
  if (a != "ok") {
    fuzz::requireOneLine(a, "fuzz.json: ");
    if (b.rfind(file + ": ", 0) != 0 || b.substr(file.size()) != a.substr(9))
      fuzz::bug("the string and the file disagree: '" + a + "' vs '" + b + "'");
    return 0;
  }
  if (b != "ok" || !samePlan(fromText, fromFile)) fuzz::bug("the string and the file disagree: ok vs '" + b + "'");
  if (fromText.depth() > kMaxPlanDepth) fuzz::bug("accepted a plan " + std::to_string(fromText.depth()) + " levels deep");
  try {
    if (!samePlan(parsePlanFile(planFileText(tape, fromText), tape, "written.json"), fromText))
      fuzz::bug("plan changed on write-then-read");
  } catch (const PlanFileError& e) {
    fuzz::bug(std::string("planFileText's output does not read back: ") + e.what());
  }
  return 0;
}
