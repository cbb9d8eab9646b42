// The kernel configuration's canonical text (engine/config.h): for every engine of the registry, a
// random configuration printed by configText and parsed back by applyConfigText over a different
// base is the same configuration, sets exactly the fields that apply to the engine, and prints the
// same text again; text naming a field another engine has no use for is refused there. The same
// for configTextAll (every field) with no engine named.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/config.h"
#include "properties/gen.h"
#include "properties/harness.h"

namespace tapelab::props {
namespace {

namespace gen = rc::gen;

// Every value a field takes, from its `values` text: "a|b|c", or "lo..hi" (both ends, then random
// integers between).
// A value of the field: one of its names or of its range (values "a|b", "lo..hi" or both: "driver|fit|0..100").
std::string anyValue(const ConfigField& f) {
  std::vector<std::string> names;
  for (size_t at = 0;;) {
    const size_t bar = f.values.find('|', at);
    names.push_back(f.values.substr(at, bar - at));
    if (bar == std::string::npos) break;
    at = bar + 1;
  }
  const std::string one = *gen::elementOf(names);
  const size_t dots = one.find("..");
  if (dots == std::string::npos) return one;
  const int lo = std::stoi(one.substr(0, dots)), hi = std::stoi(one.substr(dots + 2));
  return std::to_string(*gen::weightedOneOf<int>({{1, gen::just(lo)}, {1, gen::just(hi)}, {4, gen::inRange(lo, hi + 1)}}));
}

// `base` with every field that applies to `engine` (every field: engine "") set to any of its values.
KernelConfig anyConfig(KernelConfig base, const std::string& engine) {
  for (const ConfigField& f : configFields())
    if (engine.empty() || fieldAppliesTo(f, engine)) f.set(base, anyValue(f), f.name);
  return base;
}

std::vector<std::string> fieldsOf(const std::string& engine) {
  std::vector<std::string> names;
  for (const ConfigField& f : configFields())
    if (fieldAppliesTo(f, engine)) names.push_back(f.name);
  return names;
}

void roundTrip(const KernelConfig& config, KernelConfig base, const std::string& engine, const std::string& text) {
  logCase("engine '", engine, "': ", text);
  const std::vector<std::string> set = applyConfigText(base, text, engine);
  if (!(base == config))
    RC_FAIL("engine '" + engine + "': '" + text + "' parsed back as '" + configTextAll(base) + "', printed from '" +
            configTextAll(config) + "'");
  RC_ASSERT((engine.empty() ? configTextAll(base) : configText(base, engine)) == text);
  std::vector<std::string> want;
  for (const ConfigField& f : configFields())
    if (engine.empty() || fieldAppliesTo(f, engine)) want.push_back(f.name);
  RC_ASSERT(set == want);  // every field it printed, in table order
  ++counters().compared;
}

TEST(Config, PrintThenParseIsIdentityOnEveryEngine) {
  const std::vector<std::string> engines = engineNames();
  checkProperty("config", 300 * propertyRuns(), [&] {
    for (const std::string& e : engines) {
      // What the tuner and the exactness properties draw (search values, a math contract the engine
      // has), or any value of every field; over the engine's defaults or the neutral baseline.
      const bool cpu = *gen::arbitrary<bool>();
      const int markets = *gen::inRange(0, 9);
      const KernelConfig start = *gen::arbitrary<bool>() ? defaultConfig(e, cpu, markets) : KernelConfig{};
      const Precision p = *gen::element(Precision::F32, Precision::F64);
      const KernelConfig config = *gen::arbitrary<bool>() ? *genConfig(e, p) : anyConfig(start, e);
      // The base differs in the fields the text sets and agrees in the rest (which the text leaves).
      const KernelConfig base = anyConfig(config, e);
      const std::string text = configText(config, e);
      RC_ASSERT(!text.empty());  // math applies to every engine
      roundTrip(config, base, e, text);
      // Elsewhere, a field this engine has and that one has not is refused with one line.
      const std::string other = *gen::elementOf(engines);
      const std::vector<std::string> mine = fieldsOf(e), theirs = fieldsOf(other);
      const bool foreign = std::any_of(mine.begin(), mine.end(), [&](const std::string& n) {
        return std::find(theirs.begin(), theirs.end(), n) == theirs.end();
      });
      KernelConfig elsewhere;
      if (foreign) {
        try {
          applyConfigText(elsewhere, text, other);
          RC_FAIL("engine " + other + " accepted engine " + e + "'s '" + text + "'");
        } catch (const std::invalid_argument& x) {
          const std::string what = x.what();
          RC_ASSERT(what.find("not to engine " + other) != std::string::npos);
          RC_ASSERT(what.find('\n') == std::string::npos);
        }
      } else {
        RC_ASSERT(applyConfigText(elsewhere, text, other).size() == mine.size());
      }
    }
    // Every field, no engine: configTextAll round-trips over a base that differs in every field.
    const KernelConfig all = anyConfig(KernelConfig{}, "");
    roundTrip(all, anyConfig(KernelConfig{}, ""), "", configTextAll(all));
  });
}

}  // namespace
}  // namespace tapelab::props
