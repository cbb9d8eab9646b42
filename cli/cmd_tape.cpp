#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "cli/commands.h"
#include "planner/liveness.h"
#include "tape/philox.h"
#include "tape/products/products.h"
#include "tape/textformat.h"

namespace tapelab::cli {
namespace {

// One line of sizes (nodes, draws, inputs, pipe width), then the product's parameters.
void summary(const Flags& f, const Tape& t) {
  std::printf("%s: %d nodes, %llu draws, %d inputs, pipe width %d\n", t.name.c_str(), t.size(),
              static_cast<unsigned long long>(t.drawCount()), t.numInputs(), pipeWidth(t));
  const std::string name = f.textOrDefault("product").value_or("");
  for (const products::ProductInfo& p : products::catalog()) {
    if (p.name != name) continue;
    std::printf("%s: %s\n", p.name.c_str(), p.summary.c_str());
    for (const products::ProductParam& q : p.params)
      std::printf("  --param %s=%.17g  %s\n", q.name.c_str(), q.defaultValue, q.help.c_str());
  }
}

int tape(const Flags& f) {
  Tape t = tapeFrom(f);
  if (f.given("summary")) {
    summary(f, t);
    return kExitOk;
  }
  if (auto out = f.text("out")) {
    writeTapeFile(t, *out, f.all("file"));  // never over the tape it read
    std::fprintf(stderr, "tapelab: wrote %s (%d nodes)\n", out->c_str(), t.size());
  } else {
    std::printf("%s", writeTape(t).c_str());
  }
  return kExitOk;
}

int philox(const Flags& f) {
  const std::vector<std::string> words = f.all("words");
  if (words.size() != 6) throw UsageError("philox takes 6 words: C0 C1 C2 C3 K0 K1");
  uint32_t w[6];
  for (int i = 0; i < 6; ++i) {
    std::string s = words[i];
    if (s.rfind("0x", 0) == 0 || s.rfind("0X", 0) == 0) s = s.substr(2);
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 16);
    if (s.empty() || *end != '\0' || errno != 0 || v > 0xFFFFFFFFull || s[0] == '-')
      throw UsageError("philox: word " + std::to_string(i + 1) + " '" + words[i] + "' is not a 32-bit hex number");
    w[i] = static_cast<uint32_t>(v);
  }
  const auto out = philox4x32({w[0], w[1], w[2], w[3]}, {w[4], w[5]});
  std::printf("%08x %08x %08x %08x\n", out[0], out[1], out[2], out[3]);
  return kExitOk;
}

}  // namespace

Runner setupTape(CLI::App& app) {
  app.footer("Writes a product's tape (or a tape file, read and checked, in canonical form) in the .tape\n"
             "text format (version 1); --summary: its nodes, draws, inputs and pipe width.");
  auto f = std::make_shared<Flags>(app);
  addTapeFlags(*f, TapeSource::FileOrProduct);
  f->value("out", "FILE", "write to FILE instead of standard output");
  f->flag("summary", "print the tape's size (nodes, draws, inputs, pipe width) and the product's parameters instead");
  return [f] { return tape(*f); };
}

Runner setupPhilox(CLI::App& app) {
  app.footer("Prints the four Philox4x32-10 output words (hex) for counter C0..C3 and key K0,K1\n"
             "(32-bit words in hex, with or without 0x), to cross-check other implementations.");
  auto f = std::make_shared<Flags>(app);
  f->positional("words", "C0 C1 C2 C3 K0 K1", "the counter's four words and the key's two", true);
  return [f] { return philox(*f); };
}

}  // namespace tapelab::cli
