#include "engine/config.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace tapelab {

const char* toString(KahanPlace p) {
  switch (p) {
    case KahanPlace::Registers: return "registers";
    case KahanPlace::Local: return "local";
  }
  return "?";
}

const char* toString(MathContract m) {
  switch (m) {
    case MathContract::Ieee: return "ieee";
    case MathContract::Approx: return "approx";
    case MathContract::Glsl: return "glsl";
  }
  return "?";
}

namespace {

using C = KernelConfig;
using S = const std::string;

// value among `names` (index = the enum's value), else "<what>: expected a|b|c, got 'v'".
template <class E, size_t N>
E pick(S& value, S& what, const char* const (&names)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (value == names[i]) return static_cast<E>(i);
  std::string list;
  for (size_t i = 0; i < N; ++i) list += (i ? "|" : "") + std::string(names[i]);
  throw std::invalid_argument(what + ": expected " + list + ", got '" + value + "'");
}

int integer(S& value, S& what, int lo, int hi) {
  int v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi)
    throw std::invalid_argument(what + ": expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                                ", got '" + value + "'");
  return v;
}

constexpr const char* kSums[] = {"registers", "local"};
constexpr const char* kMath[] = {"ieee", "approx", "glsl"};
constexpr const char* kMarkets[] = {"copies", "loop"};
constexpr const char* kDraws[] = {"redraw", "stored", "prefill"};
constexpr const char* kOnOff[] = {"off", "on"};
constexpr const char* kPhilox[] = {"rolled", "unrolled"};
constexpr const char* kLoops[] = {"unrolled", "rolled"};
constexpr const char* kReduce[] = {"device", "beside", "host"};

constexpr const char* kGpu = "vulkan,opencl,cuda,hip";

// Fields that were, and why they are not: named in the refusal instead of "no field".
constexpr std::pair<const char*, const char*> kRetiredFields[] = {
    {"quantile", "version 4 of the draws (Box-Muller pairs, docs/tape-format.md) has no quantile to branch on, "
                 "select or gather"},
    {"gather_groups", "it lost everywhere it was timed (papers/findings.md, \"The tails gathered\"), and its "
                      "quantile=gather went with version 3 of the draws"},
};

}  // namespace

const std::vector<ConfigField>& configFields() {
  // The defaults per engine are the fastest exact configuration the H200 records support, field by
  // field (papers/findings.md, "Defaults and retired knobs", says which measurements: the IEEE tunes
  // of 2026-12-02 where they exist, else the earlier records; cuda's min_blocks at several markets the
  // tunes of 2026-12-03, once shared_inputs let 80 registers hold the ladder; OpenCL's one-market draws out
  // of line the 2026-12-03b tune, 446 against 290, with version 3's quantile by selection; Vulkan's one-market
  // prefilled draws 2026-12-03d, 526 against 470); HIP, never timed, takes CUDA's code-shape fields but no
  // launch bound. (Version 4 of the draws, Box-Muller, retired the quantile field and its gathered form:
  // every draw does the same work, nothing to branch on, select or gather; papers/findings.md keeps
  // their numbers.)
  static const std::vector<ConfigField> table = {
      {"workgroup", "32|64|128|256", kGpu,
       "changes the blocks' composition, so the sums' rounding: kernels compared for bits share it",
       "lanes per workgroup (a block is workgroup x lanes paths; the reduction tree is over the workgroup)", "",
       "",
       [](const C& c) { return std::to_string(c.workgroup); },
       [](C& c, S& v, S& w) {
         const int n = integer(v, w, 32, 256);
         if (n & (n - 1)) throw std::invalid_argument(w + ": expected 32|64|128|256, got '" + v + "'");
         c.workgroup = n;
       }},
      {"lanes", "1..64", kGpu,
       "changes the blocks' composition, so the sums' rounding: kernels compared for bits share it",
       "paths each lane prices per dispatch (a block is workgroup x lanes paths)", "cuda=1;hip=1;opencl=1",
       "1,2,4",
       [](const C& c) { return std::to_string(c.lanes); },
       [](C& c, S& v, S& w) { c.lanes = integer(v, w, 1, 64); }},
      {"sums", "registers|local", kGpu, "same bits",
       "where each lane keeps its Kahan sums across its paths: registers, or workgroup-local memory where they "
       "fit 48 KiB (else registers, reported unused)",
       "cuda=registers;hip=registers;vulkan=registers;opencl=registers",
       "",
       [](const C& c) { return std::string(kSums[int(c.sums)]); },
       [](C& c, S& v, S& w) { c.sums = pick<KahanPlace>(v, w, kSums); }},
      {"markets", "copies|loop", kGpu, "same bits",
       "register kernels with several markets in sequential order: one copy of a segment's code per market, or "
       "a rolled loop over one copy (persistent per-market values in arrays)",
       "cuda=loop;hip=loop;opencl=loop;vulkan=loop",
       "",
       [](const C& c) { return std::string(kMarkets[int(c.markets)]); },
       [](C& c, S& v, S& w) { c.markets = pick<MarketCode>(v, w, kMarkets); }},
      {"draws", "redraw|stored|prefill", kGpu, "same bits",
       "checkpointed kernels with Greeks: a recomputed segment draws its normals again, or reads the forward "
       "sweep's from the scratch buffer (4 or 8 bytes a draw per lane), or a loop computes every draw of the "
       "path into that buffer before the forward sweep and both sweeps read them",
       "cuda=stored;hip=stored;opencl=stored;vulkan@1=prefill",
       "",
       [](const C& c) { return std::string(kDraws[int(c.draws)]); },
       [](C& c, S& v, S& w) { c.draws = pick<DrawSource>(v, w, kDraws); }},
      {"prefill_ahead", "0..4", kGpu, "same bits",
       "draws=prefill: forward segment s loads its draws once segment s-1-N has computed its last persistent "
       "value (0: the segment before; more: earlier loads, more registers holding them)",
       "",
       "0,1,2",
       [](const C& c) { return std::to_string(c.prefillAhead); },
       [](C& c, S& v, S& w) { c.prefillAhead = integer(v, w, 0, 4); }},
      {"math", "ieee|approx|glsl", "*",
       "changes what exp, log, sqrt and division compute: kernels compared for bits share it",
       "the accuracy contract: ieee (the language's full-accuracy functions), approx (fp32 on cuda, hip, opencl: "
       "the hardware's approximate instructions), glsl (Vulkan: GLSL.std.450's precision, its only contract)",
       "vulkan=glsl",
       "",
       [](const C& c) { return std::string(kMath[int(c.math)]); },
       [](C& c, S& v, S& w) { c.math = pick<MathContract>(v, w, kMath); }},
      {"philox", "unrolled|rolled", kGpu, "same bits",
       "Philox's ten rounds unrolled, or a rolled loop (CPU-served devices compile faster)",
       "cuda=unrolled;hip=unrolled;opencl=unrolled;vulkan=unrolled;vulkan:cpu=rolled",
       "",
       [](const C& c) { return std::string(kPhilox[int(c.philoxUnrolled)]); },
       [](C& c, S& v, S& w) { c.philoxUnrolled = pick<int>(v, w, kPhilox) == 1; }},
      {"loops", "unrolled|rolled", kGpu, "same bits",
       "forward-only kernels (tangent; plain without Greeks): the tape's time loop (planner/loops.h) written once "
       "and run, a few steps a trip so each trip draws whole Philox calls, instead of every step written out: a "
       "fraction of the code, the same operations in the same order",
       "cuda=rolled;hip=rolled;opencl=rolled;vulkan=rolled",
       "",
       [](const C& c) { return std::string(kLoops[int(c.loopsRolled)]); },
       [](C& c, S& v, S& w) { c.loopsRolled = pick<int>(v, w, kLoops) == 1; }},
      {"closed_forms", "on|off", kGpu,
       "changes a tangent kernel's Greeks in rounding (never its values, the plain kernel's bits); no other kernel",
       "tangent kernels: a value homogeneous of degree one in an input x (x times what x does not reach: a "
       "Black-Scholes spot's path, its sum) carries no tangent in x; where it is read by one that is not, its "
       "tangent is value * (1 / x) (planner/closed_forms.h; x = 0: not finite)",
       "cuda=on;hip=on;opencl=on;vulkan=on",
       "",
       [](const C& c) { return std::string(kOnOff[int(c.closedForms)]); },
       [](C& c, S& v, S& w) { c.closedForms = pick<int>(v, w, kOnOff) == 1; }},
      {"tangent_fma", "on|off", kGpu,
       "changes a tangent kernel's Greeks in rounding (never its values, the plain kernel's bits); no other kernel",
       "tangent kernels: a tangent whose terms are a product and a sum, t_a * b + t_b * a, written as one fused "
       "multiply-add, fma(t_b, a, t_a * b): one rounding less, one instruction less (values are never fused)",
       "cuda=on;hip=on;opencl=on;vulkan=on",
       "",
       [](const C& c) { return std::string(kOnOff[int(c.tangentFma)]); },
       [](C& c, S& v, S& w) { c.tangentFma = pick<int>(v, w, kOnOff) == 1; }},
      {"opaque", "on|off", kGpu, "same bits",
       "the opaque identity on bookmark reads and fences (off: experiments only; the compiler may then merge a "
       "recompute with the first computation)",
       "",
       "on",
       [](const C& c) { return std::string(kOnOff[int(c.opaque)]); },
       [](C& c, S& v, S& w) { c.opaque = pick<int>(v, w, kOnOff) == 1; }},
      {"min_blocks", "0..32", "cuda,hip", "same bits",
       "__launch_bounds__(workgroup, N): the compiler caps registers to fit N blocks per multiprocessor (HIP reads "
       "it as its occupancy hint); 0: no second bound",
       "cuda=12;cuda@1=10",
       "0,6,8,10,12",
       [](const C& c) { return std::to_string(c.minBlocks); },
       [](C& c, S& v, S& w) { c.minBlocks = integer(v, w, 0, 32); }},
      {"shared_constants", "on|off", "cuda,hip", "same bits",
       "markets=loop: its arrays of values no draw reaches (the same in every lane) in workgroup-shared memory "
       "where they fit beside the Kahan sums, else per lane",
       "",
       "",
       [](const C& c) { return std::string(kOnOff[int(c.sharedConstants)]); },
       [](C& c, S& v, S& w) { c.sharedConstants = pick<int>(v, w, kOnOff) == 1; }},
      {"outline_draws", "on|off", kGpu, "same bits",
       "Philox and Box-Muller as functions the compiler must not inline: one copy in the kernel instead "
       "of one per draw (CUDA, HIP __noinline__; OpenCL noinline; Vulkan SPIR-V's DontInline, which NVIDIA's "
       "driver honours: its one-market Asian ran 12x slower, 2026-12-03b)",
       "cuda@1=on;hip@1=on;opencl@1=on",
       "",
       [](const C& c) { return std::string(kOnOff[int(c.outlineDraws)]); },
       [](C& c, S& v, S& w) { c.outlineDraws = pick<int>(v, w, kOnOff) == 1; }},
      {"shared_inputs", "on|off", kGpu, "same bits",
       "several markets: the inputs equal in every market of a dispatch (a spot ladder's strike, vol, rate, "
       "maturity) read once, and the values no other input reaches computed once per path (their adjoints "
       "stay per market); off: every value once per market",
       "",
       "on",
       [](const C& c) { return std::string(kOnOff[int(c.sharedInputs)]); },
       [](C& c, S& v, S& w) { c.sharedInputs = pick<int>(v, w, kOnOff) == 1; }},
      {"cuda.reduce", "device|beside|host", "cuda", "same bits",
       "where each dispatch's partials are added, in double and block order: a reduction kernel behind it on "
       "the device, one beside the next kernel on a stream of the greatest priority, or on the host",
       "",
       "device,beside",
       [](const C& c) { return std::string(kReduce[int(c.cudaSums)]); },
       [](C& c, S& v, S& w) { c.cudaSums = pick<SumsPlace>(v, w, kReduce); }},
      {"jit.chunk", "1..1000000", "cpu-jit", "same bits", "most tape nodes per generated C++ function", "",
       "64,256,1024",
       [](const C& c) { return std::to_string(c.jitChunk); },
       [](C& c, S& v, S& w) { c.jitChunk = integer(v, w, 1, 1'000'000); }},
      {"jit.part", "1..1000000", "cpu-jit", "same bits",
       "most tape nodes per translation unit: a longer tape's C++ is split into units compiled side by side", "",
       "512,4096",
       [](const C& c) { return std::to_string(c.jitPart); },
       [](C& c, S& v, S& w) { c.jitPart = integer(v, w, 1, 1'000'000); }},
  };
  return table;
}

const ConfigField* findConfigField(const std::string& name) {
  for (const ConfigField& f : configFields())
    if (name == f.name) return &f;
  return nullptr;
}

namespace {

// Whether `name` is an item of the comma list `list`.
bool listed(std::string_view list, std::string_view name) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (list.substr(0, comma) == name) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::vector<std::string> searchValues(const ConfigField& field) {
  std::string_view list = *field.search ? field.search : field.values;
  const char separator = *field.search ? ',' : '|';
  std::vector<std::string> out;
  while (!list.empty()) {
    const size_t at = list.find(separator);
    out.emplace_back(list.substr(0, at));
    if (at == std::string_view::npos) break;
    list.remove_prefix(at + 1);
  }
  return out;
}

bool keepsBits(const ConfigField& field) { return std::string_view(field.bits) == "same bits"; }

bool fieldAppliesTo(const ConfigField& field, const std::string& engine) {
  return std::string_view(field.engines) == "*" || listed(field.engines, engine);
}

KernelConfig defaultConfig(const std::string& engine, bool cpuDevice, int markets) {
  KernelConfig c;
  for (const ConfigField& f : configFields()) {
    std::string_view rows(f.defaults);
    while (!rows.empty()) {
      const size_t semi = rows.find(';');
      const std::string_view row = rows.substr(0, semi);
      const size_t eq = row.find('=');
      std::string_view who = row.substr(0, eq);
      bool cpuOnly = false, oneMarket = false;
      if (who.size() > 2 && who.substr(who.size() - 2) == "@1") {
        who.remove_suffix(2);
        oneMarket = true;
      }
      if (who.size() > 4 && who.substr(who.size() - 4) == ":cpu") {
        who.remove_suffix(4);
        cpuOnly = true;
      }
      if (who == engine && (!cpuOnly || cpuDevice) && (!oneMarket || markets == 1))
        f.set(c, std::string(row.substr(eq + 1)), f.name);
      if (semi == std::string_view::npos) break;
      rows.remove_prefix(semi + 1);
    }
  }
  return c;
}

std::string configText(const KernelConfig& config, const std::string& engine) {
  std::string text;
  for (const ConfigField& f : configFields())
    if (fieldAppliesTo(f, engine)) text += (text.empty() ? "" : ",") + std::string(f.name) + "=" + f.get(config);
  return text;
}

std::string configTextAll(const KernelConfig& config) {
  std::string text;
  for (const ConfigField& f : configFields()) text += (text.empty() ? "" : ",") + std::string(f.name) + "=" + f.get(config);
  return text;
}

std::vector<std::string> applyConfigText(KernelConfig& config, const std::string& text, const std::string& engine,
                                         const std::string& what) {
  std::vector<std::string> set;
  if (text.empty()) return set;
  std::string_view rest(text);
  while (true) {
    const size_t comma = rest.find(',');
    const std::string item(rest.substr(0, comma));
    const size_t eq = item.find('=');
    if (item.empty() || eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw std::invalid_argument(what + ": expected NAME=VALUE[,NAME=VALUE...], got '" + item + "' in '" + text + "'");
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    const ConfigField* f = findConfigField(name);
    if (!f) {
      for (const auto& [retired, why] : kRetiredFields)
        if (name == retired) throw std::invalid_argument(what + ": field '" + name + "' is retired: " + why);
      std::string names;
      for (const ConfigField& g : configFields()) names += (names.empty() ? "" : ", ") + std::string(g.name);
      throw std::invalid_argument(what + ": no field '" + name + "' (fields: " + names + "; tapelab config --list)");
    }
    if (std::find(set.begin(), set.end(), name) != set.end())
      throw std::invalid_argument(what + ": field '" + name + "' given twice");
    if (!engine.empty() && !fieldAppliesTo(*f, engine))
      throw std::invalid_argument(what + ": field '" + name + "' applies to " + f->engines + ", not to engine " + engine);
    f->set(config, value, what + ": " + name);
    set.push_back(name);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return set;
}

std::string mathProblem(const KernelConfig& config, const std::string& engine, bool fp32) {
  const bool vulkan = engine == "vulkan";
  switch (config.math) {
    case MathContract::Glsl:
      return vulkan ? "" : "math=glsl is Vulkan's contract; engine " + engine + " takes ieee" +
                               (engine == "cuda" || engine == "hip" || engine == "opencl" ? " or approx" : "");
    case MathContract::Ieee:
      return vulkan ? "math=ieee: a Vulkan shader's exp, log and division are GLSL.std.450's (math=glsl), not "
                      "correctly rounded"
                    : "";
    case MathContract::Approx:
      if (engine != "cuda" && engine != "hip" && engine != "opencl")
        return "math=approx: engine " + engine + " has no approximate functions (cuda, hip and opencl do, in fp32)";
      if (!fp32) return "math=approx: approximate functions exist in fp32 only";
      return "";
  }
  return "";
}

std::string configProblem(const KernelConfig& config, const std::string& engine, bool fp32) {
  return mathProblem(config, engine, fp32);
}

}  // namespace tapelab
