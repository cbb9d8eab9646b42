// libFuzzer harness for the .tape reader (tape/textformat.h). A bug is a crash,
// a sanitizer report, an exception other than TapeParseError, an error that is
// not one line naming the file, an accepted tape that validate() rejects, or
// one that does not survive write-then-read bit for bit.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz/harness.h"
#include "tape/textformat.h"

using namespace tapelab;

namespace {
bool sameBits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Tape t;
  try {
    t = parseTape(text, "fuzz.tape");
  } catch (const TapeParseError& e) {
    fuzz::requireOneLine(e.what(), "fuzz.tape:");
    return 0;
  }
  if (const std::string problem = validate(t); !problem.empty()) fuzz::bug("reader accepted an invalid tape: " + problem);
  const std::string written = writeTape(t);
  Tape back;
  try {
    back = parseTape(written, "written.tape");
  } catch (const TapeParseError& e) {
    fuzz::bug(std::string("writeTape's output does not read back: ") + e.what());
  }
  const bool same = back.op == t.op && back.a == t.a && back.b == t.b && back.c == t.c && back.output == t.output &&
                    back.inputNames == t.inputNames && back.inputNodes == t.inputNodes &&
                    sameBits(back.imm, t.imm) && sameBits(back.inputDefaults, t.inputDefaults);
  if (!same) fuzz::bug("write-then-read changed the tape:\n" + written);
  return 0;
}
