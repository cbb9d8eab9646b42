// The kernel configuration (engine/config.h) as the front ends resolve it (api/montecarlo.h
// resolveConfig): canonical text that prints and parses back, per-engine defaults, fields an engine
// has no use for refused by name, math contracts checked against engine and precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "api/montecarlo.h"
#include "api/registry.h"
#include "engine/config.h"
#include "gpu/codegen/emit.h"
#include "tape/products/products.h"

using namespace tapelab;

namespace {
bool isKernelKindName(const std::string& name) {
  return std::any_of(std::begin(kKernelKinds), std::end(kKernelKinds), [&](KernelKind k) { return name == toString(k); });
}
}  // namespace

namespace {

const char* const kEngines[] = {"reference", "reference-f32", "reference-mp", "cpu-jit", "vulkan", "opencl", "cuda", "hip"};

// Every combination of every field's search values would be large: each field in turn through each of
// its values, the others at the engine's defaults.
std::vector<KernelConfig> oneFieldAtATime(const std::string& engine) {
  std::vector<KernelConfig> out;
  for (const ConfigField& f : configFields()) {
    if (!fieldAppliesTo(f, engine)) continue;
    for (const std::string& v : searchValues(f)) {
      KernelConfig c = defaultConfig(engine);
      f.set(c, v, f.name);
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

TEST(ApiConfig, CanonicalTextParsesBackForEveryEngine) {
  for (const char* engine : kEngines)
    for (const KernelConfig& c : oneFieldAtATime(engine)) {
      const std::string text = configText(c, engine);
      KernelConfig back = defaultConfig(engine);
      applyConfigText(back, text, engine);
      EXPECT_EQ(back, c) << engine << ": " << text;
      EXPECT_EQ(configText(back, engine), text) << engine;
    }
  // Engine-neutral text names every field once, in table order.
  const std::string all = configTextAll(KernelConfig{});
  size_t at = 0;
  for (const ConfigField& f : configFields()) {
    const size_t next = all.find(std::string(f.name) + "=", at);
    ASSERT_NE(next, std::string::npos) << f.name << " missing or out of order in " << all;
    at = next;
  }
}

TEST(ApiConfig, EveryFieldHasItsTableEntries) {
  std::set<std::string> names;
  for (const ConfigField& f : configFields()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name << " twice";
    EXPECT_NE(std::string(f.help), "") << f.name;
    EXPECT_FALSE(searchValues(f).empty()) << f.name;
    for (const std::string& v : searchValues(f)) {  // every search value is a value
      KernelConfig c;
      EXPECT_NO_THROW(f.set(c, v, f.name)) << f.name << "=" << v;
      EXPECT_EQ(f.get(c), v) << f.name;
    }
    // A field named for one engine ("cuda.reduce") applies to that engine alone.
    const std::string name = f.name;
    if (const size_t dot = name.find('.'); dot != std::string::npos) {
      const std::string prefix = name.substr(0, dot) == "jit" ? "cpu-jit" : name.substr(0, dot);
      EXPECT_EQ(fieldEngines(f), prefix) << name;
    }
  }
}

TEST(ApiConfig, DefaultsDifferByEngine) {
  EXPECT_EQ(defaultConfig("vulkan").math, MathContract::Glsl);
  EXPECT_EQ(defaultConfig("cuda").math, MathContract::Ieee);
  EXPECT_FALSE(defaultConfig("cuda").outlineDraws);
  EXPECT_TRUE(defaultConfig("cuda", false, 1).outlineDraws) << "the @1 row: one market per dispatch";
  EXPECT_FALSE(defaultConfig("cuda", false, 2).outlineDraws);
  EXPECT_TRUE(defaultConfig("opencl", false, 1).outlineDraws) << "OpenCL's one-market row (2026-12-03b)";
  EXPECT_EQ(defaultConfig("vulkan", false, 1).draws, DrawSource::Prefill) << "Vulkan's one-market row (2026-12-03d)";
  EXPECT_EQ(defaultConfig("vulkan", false, 7).draws, DrawSource::Redraw);
  EXPECT_FALSE(defaultConfig("opencl").outlineDraws);
  EXPECT_FALSE(defaultConfig("vulkan", false, 1).outlineDraws) << "out of line, Vulkan's kernel ran 12x slower";
  EXPECT_TRUE(defaultConfig("vulkan").philoxUnrolled);
  EXPECT_FALSE(defaultConfig("vulkan", true).philoxUnrolled) << "lavapipe: Philox rolled, to compile faster";
  EXPECT_EQ(defaultConfig("reference"), KernelConfig{}) << "no field of the reference differs from the baseline";
  EXPECT_EQ(configText(defaultConfig("reference"), "reference"), "math=ieee,tangent_chunk=0");
  for (const char* engine : kEngines)
    EXPECT_EQ(mathProblem(defaultConfig(engine), engine, true), "") << engine << ": its defaults have its contract";
}

// The declarations are data a test can read: every default is a value of its field on an engine it
// applies to, every requirement names a field and one of its values, and the baseline's sums=local is
// no GPU engine's default (engine/config.h says why the baseline keeps it).
TEST(ApiConfig, DeclarationsAreConsistentData) {
  for (const ConfigField& f : configFields()) {
    EXPECT_EQ(f.keepsBits, std::string(f.bitsReason).empty()) << f.name << ": a reason exactly where bits change";
    for (const FieldDefault& d : f.defaults) {
      EXPECT_TRUE(fieldAppliesTo(f, d.engine)) << f.name << ": a default on " << d.engine;
      KernelConfig c;
      EXPECT_NO_THROW(f.set(c, d.value, f.name)) << f.name << "=" << d.value;
      EXPECT_TRUE(d.markets == 0 || d.markets == 1) << f.name;
      const std::string kind = d.kind;
      EXPECT_TRUE(kind.empty() || isKernelKindName(kind))
          << f.name << ": a default for kind '" << kind << "'";
      EXPECT_TRUE(kind.empty() || kindMayQualify(f)) << f.name << ": read before the kind is chosen, so no kind's own";
    }
    KernelConfig met;  // every requirement set: the field acts
    for (const FieldRequirement& r : f.requires_) {
      const ConfigField* other = findConfigField(r.field);
      ASSERT_NE(other, nullptr) << f.name << " requires " << r.field;
      EXPECT_NO_THROW(other->set(met, r.value, r.field)) << f.name << " requires " << r.field << "=" << r.value;
    }
    EXPECT_EQ(fieldActs(f, met), "") << f.name << ": its requirements met";
    if (!f.choices.empty() && f.values.find("..") == std::string::npos) {
      std::string joined;
      for (const std::string& v : f.choices) joined += (joined.empty() ? "" : "|") + v;
      EXPECT_EQ(f.values, joined) << f.name << ": the values printed are the choices";
    }
  }
  KernelConfig c = defaultConfig("cuda");
  EXPECT_EQ(fieldActs(*findConfigField("prefill_ahead"), c), "draws=prefill not in effect");
  c.draws = DrawSource::Prefill;
  EXPECT_EQ(fieldActs(*findConfigField("prefill_ahead"), c), "");
  c.markets = MarketCode::Copies;
  EXPECT_EQ(fieldActs(*findConfigField("shared_constants"), c), "markets=loop not in effect");
  for (const char* engine : {"cuda", "hip", "opencl", "vulkan"})
    for (const bool cpu : {false, true})
      for (const int markets : {1, 2})
        EXPECT_EQ(defaultConfig(engine, cpu, markets).sums, KahanPlace::Registers) << engine;
  EXPECT_EQ(KernelConfig{}.sums, KahanPlace::Local) << "the baseline covers the shape the defaults leave";
  EXPECT_STREQ(toString(DrawSource::Prefill), "prefill");
  EXPECT_STREQ(toString(SumsPlace::Beside), "beside");
}

// Where a field acts beyond other fields: the kernels it acts on (engine/config.h FieldKernels), what the
// tuner reads to skip a value that builds the same kernel.
TEST(ApiConfig, LayoutAndMarketOrderActOnTheirKernelsAlone) {
  const ConfigField& order = *findConfigField("market_order");
  const ConfigField& layout = *findConfigField("layout");
  const KernelConfig c = defaultConfig("cuda");
  EXPECT_EQ(fieldActs(order, c, {"register", 7, true}), "");
  EXPECT_EQ(fieldActs(order, c, {"scratch", 2, true}), "");
  EXPECT_EQ(fieldActs(order, c, {"register", 1, true}), "one market per dispatch");
  EXPECT_EQ(fieldActs(order, c, {"register", 7, false}), "value only");
  EXPECT_EQ(fieldActs(order, c, {"plain", 7, true}), "not a register or scratch kernel");
  EXPECT_EQ(fieldActs(order, c), "") << "no kernel named: not checked";
  EXPECT_EQ(fieldActs(layout, c, {"scratch", 1, false}), "") << "a value-only scratch kernel stores its bookmarks";
  EXPECT_EQ(fieldActs(layout, c, {"tangent", 1, true}), "not a register or scratch kernel");
  KernelConfig joint = c;
  joint.marketOrder = MarketOrder::Joint;
  EXPECT_EQ(fieldActs(*findConfigField("markets"), joint), "market_order=sequential not in effect");
  for (const ConfigField& f : configFields())
    for (const std::string& kind : f.kernels.kinds)
      EXPECT_TRUE(isKernelKindName(kind))
          << f.name << ": " << kind;
  // Every engine's default and the baseline alike: what KernelOptions held before they were fields.
  for (const char* engine : kEngines)
    for (const int markets : {1, 7}) {
      EXPECT_EQ(defaultConfig(engine, false, markets).layout, ScratchLayout::SoA) << engine;
      EXPECT_EQ(defaultConfig(engine, false, markets).marketOrder, MarketOrder::Sequential) << engine;
    }
  EXPECT_TRUE(keepsBits(order) && keepsBits(layout)) << "same bits in either layout and either order";
}

// --config layout=aos,market_order=joint: parsed at the edge, through the canonical text and back, resolved
// by the front door (resolveKernel) into the kernel the GPU emitter writes, whose header names both.
TEST(ApiConfig, LayoutAndMarketOrderTravelFromTheTextToTheKernel) {
  const ConfigRequest request = parseConfigText("layout=aos,market_order=joint", "--config");
  EXPECT_EQ(requestText(request), "layout=aos,market_order=joint");
  KernelConfig c = defaultConfig("cuda", false, 2);
  applyConfigRequest(c, request, "cuda");
  EXPECT_EQ(c.layout, ScratchLayout::AoS);
  EXPECT_EQ(c.marketOrder, MarketOrder::Joint);
  const std::string text = configText(c, "cuda");
  EXPECT_NE(text.find(",market_order=joint,markets=loop,"), std::string::npos) << text;
  EXPECT_NE(text.find(",layout=aos,"), std::string::npos) << text;
  KernelConfig back = defaultConfig("cuda");
  applyConfigText(back, text, "cuda");
  EXPECT_EQ(back, c);

  const Tape tape = products::asianCall(12);
  RunConfig rc;
  rc.engine = "cuda";
  rc.kernel = KernelKind::Scratch;
  rc.checkpoint = Checkpoint::count(3);
  rc.useTuned = false;
  rc.userConfig = request;
  EngineCaps caps;
  caps.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Scratch};
  caps.defaultPrecision = Precision::F32;
  KernelOptions o = resolveKernel(tape, rc, caps, 2);
  o.markets = 2;
  EXPECT_EQ(o.config, c);
  // The header's line "// tapelab kernel: ..., scratch (3 segments, window), aos, N slots, ...".
  auto headerOf = [](const std::string& source) {
    const size_t at = source.find("// tapelab kernel: ");
    return at == std::string::npos ? std::string() : source.substr(at, source.find('\n', at) - at);
  };
  const std::string joint = emitKernel(tape, o, cudaDialect()).source;
  const std::string header = headerOf(joint);
  EXPECT_NE(header.find(", scratch (3 segments, window), aos, "), std::string::npos) << header;
  EXPECT_EQ(header.find("markets sequential"), std::string::npos) << header;
  // The kernel's fields (not the run's around it: cuda.reduce, cuda.dispatches, cuda.carveout).
  EXPECT_NE(joint.find("\n// config: " + kernelConfigText(c, "cuda") + "\n"), std::string::npos) << joint.substr(0, 600);
  EXPECT_EQ(joint.find("cuda.reduce="), std::string::npos) << joint.substr(0, 600);
  // The defaults, for contrast: soa, one market after another.
  rc.userConfig = {};
  o = resolveKernel(tape, rc, caps, 2);
  o.markets = 2;
  const std::string sequential = emitKernel(tape, o, cudaDialect()).source;
  const std::string first = headerOf(sequential);
  EXPECT_NE(first.find(", scratch (3 segments, window), soa, "), std::string::npos) << first;
  EXPECT_NE(first.find("markets sequential"), std::string::npos) << first;
}

// A configuration text parsed once at the edge travels as a ConfigRequest: applied on an engine it
// gives what the text gives, and a field the engine has no use for is refused there.
TEST(ApiConfig, ParsedRequestAppliesAsTheTextDoes) {
  const ConfigRequest r = parseConfigText("lanes=2,math=approx", "TAPELAB_CONFIG");
  EXPECT_EQ(r.fields, (std::vector<std::string>{"lanes", "math"}));
  EXPECT_EQ(requestText(r), "lanes=2,math=approx");
  KernelConfig fromRequest = defaultConfig("cuda"), fromText = defaultConfig("cuda");
  applyConfigRequest(fromRequest, r, "cuda");
  applyConfigText(fromText, "lanes=2,math=approx", "cuda");
  EXPECT_EQ(fromRequest, fromText);
  const ConfigRequest cudaOnly = parseConfigText("min_blocks=4", "--config");
  KernelConfig v = defaultConfig("vulkan");
  try {
    applyConfigRequest(v, cudaOnly, "vulkan");
    ADD_FAILURE() << "min_blocks accepted on vulkan";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--config: field 'min_blocks' applies to cuda,hip, not to engine vulkan");
  }
  KernelConfig whole;
  applyConfigRequest(whole, wholeConfig(defaultConfig("opencl", false, 1), "opencl", "job"), "opencl");
  EXPECT_EQ(configText(whole, "opencl"), configText(defaultConfig("opencl", false, 1), "opencl"));
}

// run, price and compare take the engine's default precision when none is given: it must be one it has
// (reference-f32 once said fp64, which only it cannot run).
TEST(ApiConfig, EveryEngineDefaultPrecisionIsOneItHas) {
  for (const EngineEntry& e : engineRegistry()) {
    const EngineCaps c = engineCaps(e);
    if (!c.usable && !c.compileOnly) continue;
    EXPECT_TRUE(c.defaultPrecision == Precision::F32 ? c.fp32 : c.fp64) << e.name;
  }
}

TEST(ApiConfig, BadTextIsOneLineNamingTheFieldAndTheEngine) {
  struct Bad {
    const char* engine;
    const char* text;
    const char* says;
  };
  for (const Bad& b : std::initializer_list<Bad>{
           {"vulkan", "min_blocks=4", "field 'min_blocks' applies to cuda,hip, not to engine vulkan"},
           {"cuda", "jit.chunk=8", "applies to cpu-jit, not to engine cuda"},
           {"reference", "lanes=1", "not to engine reference"},
           {"cuda", "lanes=0", "lanes: expected an integer from 1 to 64, got '0'"},
           {"cuda", "sums=global", "sums: expected registers|local, got 'global'"},
           {"cuda", "colour=red", "no field 'colour'"},
           {"cuda", "lanes=1,lanes=2", "field 'lanes' given twice"},
           {"cuda", "lanes=1,", "expected NAME=VALUE"},
           {"cuda", "lanes", "expected NAME=VALUE"},
       }) {
    KernelConfig c = defaultConfig(b.engine);
    try {
      applyConfigText(c, b.text, b.engine, "--config");
      ADD_FAILURE() << b.engine << ": '" << b.text << "' accepted";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("--config", 0), 0u) << msg;
      EXPECT_NE(msg.find(b.says), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

// resolveConfig: the engine's defaults, the text over them, the math contract checked.
TEST(ApiConfig, ResolveConfigChecksTheMathContract) {
  EngineCaps caps;
  RunConfig rc;
  rc.engine = "cuda";
  EXPECT_EQ(resolveConfig(rc, caps, Precision::F32), defaultConfig("cuda", false, 1));
  EXPECT_TRUE(resolveConfig(rc, caps, Precision::F32, 1).outlineDraws) << "cuda outlines the draws at one market";
  EXPECT_FALSE(resolveConfig(rc, caps, Precision::F32, 7).outlineDraws) << "and not at seven";
  rc.userConfig = parseConfigText("lanes=2,math=approx");
  const KernelConfig c = resolveConfig(rc, caps, Precision::F32);
  EXPECT_EQ(c.lanes, 2);
  EXPECT_EQ(c.math, MathContract::Approx);
  EXPECT_EQ(c.minBlocks, defaultConfig("cuda", false, 1).minBlocks) << "fields not given keep the engine's default";
  EXPECT_THROW(resolveConfig(rc, caps, Precision::F64), std::invalid_argument) << "no approximate fp64";
  rc.engine = "vulkan";
  rc.userConfig = parseConfigText("math=ieee");
  try {
    resolveConfig(rc, caps, Precision::F32);
    ADD_FAILURE() << "vulkan took math=ieee";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("GLSL.std.450"), std::string::npos) << e.what();
  }
  rc.engine = "cpu-jit";
  rc.userConfig = parseConfigText("jit.chunk=64");
  EXPECT_EQ(resolveConfig(rc, caps, Precision::F64).jitChunk, 64);
}

// Defaults per kernel kind (issue 46): a kind-qualified default applies to that kind's kernels alone, after
// the engine's and the one-market ones; the configuration before the kind is chosen has none of them; the
// front door gives the kind it resolves (auto's choice or the one named) its own defaults, the user's
// fields over them, and a tuned winner's configuration whole.
TEST(ApiConfig, EachKernelKindGetsItsOwnDefaults) {
  // cuda at 7 markets, the H100 records of 2026-12-06: the tangent kernel at min_blocks=10, beside; the
  // register kernel's market loops unrolled whole at min_blocks=8, its sums on the device (2026-12-06h); at
  // one market the register kernel at 6, rolled, beside.
  EXPECT_EQ(defaultConfig("cuda", false, 7).minBlocks, 12);
  EXPECT_EQ(defaultConfig("cuda", false, 7, "register").minBlocks, 8);
  EXPECT_EQ(defaultConfig("cuda", false, 7, "register").marketUnroll, kUnrollWhole);
  EXPECT_EQ(defaultConfig("cuda", false, 7, "tangent").minBlocks, 10);
  EXPECT_EQ(defaultConfig("cuda", false, 7, "tangent").marketUnroll, 1);
  EXPECT_EQ(defaultConfig("cuda", false, 7, "tangent").cudaSums, SumsPlace::Beside);
  EXPECT_EQ(defaultConfig("cuda", false, 7, "register").cudaSums, SumsPlace::Device);
  EXPECT_EQ(defaultConfig("cuda", false, 1, "register").minBlocks, 6);
  EXPECT_EQ(defaultConfig("cuda", false, 1, "register").marketUnroll, 1);
  EXPECT_EQ(defaultConfig("cuda", false, 1, "register").cudaSums, SumsPlace::Beside);
  // cuda.carveout=fit for register kernels at several markets (2026-12-06g), the driver's split elsewhere.
  EXPECT_EQ(defaultConfig("cuda", false, 7, "register").cudaCarveout, kCarveoutFit);
  EXPECT_EQ(defaultConfig("cuda", false, 7, "tangent").cudaCarveout, kCarveoutDriver);
  EXPECT_EQ(defaultConfig("cuda", false, 7).cudaCarveout, kCarveoutDriver);
  EXPECT_EQ(defaultConfig("cuda", false, 1, "register").cudaCarveout, kCarveoutDriver);
  EXPECT_EQ(defaultConfig("hip", false, 7, "tangent"), defaultConfig("hip", false, 7)) << "cuda's measurement, not hip's";
  for (const char* engine : kEngines)
    for (const int markets : {1, 7})
      for (const KernelKind kind : kKernelKinds)
        for (const ConfigField& f : configFields()) {
          if (kindMayQualify(f)) continue;
          EXPECT_EQ(f.get(defaultConfig(engine, false, markets, toString(kind))), f.get(defaultConfig(engine, false, markets)))
              << engine << " " << toString(kind) << ": " << f.name << " is read before the kind is chosen";
        }

  EngineCaps gpu;
  gpu.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Tangent};
  gpu.marketOrder = true;
  gpu.defaultPrecision = Precision::F32;
  RunConfig c;
  c.engine = "cuda";
  const Tape asian = products::asianCall(252);
  const KernelOptions automatic = resolveKernel(asian, c, gpu, 7);
  ASSERT_EQ(automatic.kind, KernelKind::Tangent);
  EXPECT_EQ(automatic.config, defaultConfig("cuda", false, 7, "tangent"));
  RunConfig named = c;
  named.kernel = KernelKind::Register;
  EXPECT_EQ(resolveKernel(asian, named, gpu, 7).config, defaultConfig("cuda", false, 7, "register"));
  named.kernel = KernelKind::Tangent;
  EXPECT_EQ(resolveKernel(asian, named, gpu, 7).config, defaultConfig("cuda", false, 7, "tangent"));
  RunConfig user = c;
  user.userConfig = parseConfigText("min_blocks=8");
  const KernelOptions mine = resolveKernel(asian, user, gpu, 7);
  EXPECT_EQ(mine.config.minBlocks, 8) << "the user's field over the kind's default";
  RunConfig sums = c;
  sums.userConfig = parseConfigText("cuda.reduce=device");
  const KernelOptions theirs = resolveKernel(asian, sums, gpu, 7);
  EXPECT_EQ(theirs.config.cudaSums, SumsPlace::Device) << "the user's field";
  EXPECT_EQ(theirs.config.minBlocks, 10) << "the kind's other defaults stay";

  // A job resolved once for all its rows (compare): each kind's rows get the kind's defaults where the job's
  // are the defaults (the H100 call of 2026-12-06b timed the tangent ladder at the job's min_blocks=12), the
  // user's fields over them, and the job's bit-changing fields; a tuned job's configuration stays whole.
  RunConfig wide = c;
  wide.userConfig = parseConfigText("lanes=2");
  KernelConfig job = resolveConfig(wide, gpu, Precision::F32, 7);
  job.workgroup = 128;  // a bit-changing field of the fused job, which every row shares
  const KernelConfig tangentRows = kindRowConfig(job, true, wide, gpu, Precision::F32, 7, KernelKind::Tangent, job);
  EXPECT_EQ(tangentRows.minBlocks, 10);
  EXPECT_EQ(tangentRows.lanes, 2) << "the user's field";
  EXPECT_EQ(tangentRows.workgroup, 128) << "the job's bit-changing field";
  KernelConfig registerRows = job;  // the job's but for the register kernels' own defaults at several markets
  registerRows.cudaCarveout = kCarveoutFit;
  registerRows.minBlocks = 8;
  registerRows.marketUnroll = kUnrollWhole;
  registerRows.cudaSums = SumsPlace::Device;
  EXPECT_EQ(kindRowConfig(job, true, wide, gpu, Precision::F32, 7, KernelKind::Register, job), registerRows);
  EXPECT_EQ(kindRowConfig(job, false, wide, gpu, Precision::F32, 7, KernelKind::Tangent, job), job) << "tuned: whole";
}
