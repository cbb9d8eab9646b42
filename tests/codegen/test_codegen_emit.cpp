// The GPU emitter (gpu/codegen): golden kernels for a small tape in every
// dialect (TAPELAB_UPDATE_GOLDEN=1 rewrites them), the op table's spelling
// used for every op, exact literals (the host half of the ABI:
// test_codegen_host.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/config.h"
#include "gpu/codegen/emit.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/recorder.h"
#include "tape/spell.h"
#include "tests/codegen/small_tape.h"
#include "tests/common/test_util.h"

using namespace tapelab;
using testutil::smallTape;

namespace {

std::string readText(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct GoldenCase {
  const char* file;
  const char* dialect;
  KernelKind kind;
  int markets;
  ScratchLayout layout;
  MarketOrder order = MarketOrder::Joint;
  KernelConfig config = {};
};

KernelConfig minBlocks(int n) {
  KernelConfig c;
  c.minBlocks = n;
  return c;
}

KernelConfig marketLoop() {
  KernelConfig c;
  c.markets = MarketCode::Loop;
  return c;
}

KernelConfig prefill() {
  KernelConfig c;
  c.draws = DrawSource::Prefill;
  return c;
}

// The small tape's fp32 register kernel of three segments (cuts 9 and 17), the defaults otherwise.
KernelOptions smallRegister(const Tape& t) {
  KernelOptions o;
  o.precision = Precision::F32;
  o.kind = KernelKind::Register;
  o.plan = makePlan(t, {0, 9, 17, t.size()}, "test");
  return o;
}

// The source without its "// config" header lines (they name the config, so differ between configs
// whose code is the same).
std::string code(const std::string& source) {
  std::string out;
  size_t start = 0;
  while (start < source.size()) {
    size_t end = source.find('\n', start);
    end = end == std::string::npos ? source.size() : end + 1;
    if (source.compare(start, 10, "// config:") != 0 && source.compare(start, 16, "// config unused") != 0)
      out.append(source, start, end - start);
    start = end;
  }
  return out;
}

}  // namespace

TEST(CodegenGolden, SmallTapeInEveryDialect) {
  const Tape t = smallTape();
  const Plan plan = makePlan(t, {0, 9, 17, t.size()}, "golden");
  const GoldenCase cases[] = {
      {"small.plain.glsl", "glsl", KernelKind::Plain, 1, ScratchLayout::SoA},
      {"small.register.glsl", "glsl", KernelKind::Register, 1, ScratchLayout::SoA},
      {"small.register-2markets.glsl", "glsl", KernelKind::Register, 2, ScratchLayout::SoA},
      {"small.register.cl", "opencl", KernelKind::Register, 1, ScratchLayout::SoA},
      {"small.scratch-soa.cl", "opencl", KernelKind::Scratch, 1, ScratchLayout::SoA},
      {"small.register.cu", "cuda", KernelKind::Register, 1, ScratchLayout::SoA},
      {"small.scratch-aos.cu", "cuda", KernelKind::Scratch, 1, ScratchLayout::AoS},
      {"small.plain.hip", "hip", KernelKind::Plain, 1, ScratchLayout::SoA},
      {"small.register.hip", "hip", KernelKind::Register, 1, ScratchLayout::SoA},  // tests/hip/test_hip_compile.cpp compiles
      {"small.scratch-soa.hip", "hip", KernelKind::Scratch, 1, ScratchLayout::SoA},  // the .hip files for AMD targets
      {"small.register-2markets-sequential.glsl", "glsl", KernelKind::Register, 2, ScratchLayout::SoA,
       MarketOrder::Sequential},
      {"small.scratch-2markets-sequential.cu", "cuda", KernelKind::Scratch, 2, ScratchLayout::SoA,
       MarketOrder::Sequential},
      // Config fields with the same bits: a second launch bound.
      {"small.register-2markets-minblocks.cu", "cuda", KernelKind::Register, 2, ScratchLayout::SoA,
       MarketOrder::Sequential, minBlocks(6)},
      // The markets' forward and reverse as rolled loops over arrays (markets=loop).
      {"small.register-2markets-loop.cu", "cuda", KernelKind::Register, 2, ScratchLayout::SoA, MarketOrder::Sequential,
       marketLoop()},
      // Every draw computed first into the scratch buffer (draws=prefill), a pair at a time.
      {"small.register-prefill.cu", "cuda", KernelKind::Register, 1, ScratchLayout::SoA, MarketOrder::Joint,
       prefill()},
      {"small.register-prefill.glsl", "glsl", KernelKind::Register, 1, ScratchLayout::SoA, MarketOrder::Joint,
       prefill()},
  };
  // The source tree's golden files; a copied binary (the H200 runs) finds
  // them relative to the working directory instead.
  std::filesystem::path dir = std::filesystem::path(TAPELAB_SOURCE_DIR) / "tests" / "golden";
  if (!std::filesystem::exists(dir) && std::filesystem::exists("tests/golden")) dir = "tests/golden";
  const bool update = std::getenv("TAPELAB_UPDATE_GOLDEN") && std::string(std::getenv("TAPELAB_UPDATE_GOLDEN")) == "1";
  for (const GoldenCase& c : cases) {
    KernelOptions o;
    o.precision = Precision::F32;
    o.kind = c.kind;
    o.plan = plan;
    o.markets = c.markets;
    o.config = c.config;
    o.config.layout = c.layout;
    o.config.marketOrder = c.order;
    const std::string source = emitKernel(t, o, dialectByName(c.dialect)).source;
    const std::filesystem::path path = dir / c.file;
    if (update) {
      std::filesystem::create_directories(dir);
      std::ofstream(path, std::ios::binary) << source;
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(path)) << path << " missing: run with TAPELAB_UPDATE_GOLDEN=1";
    EXPECT_EQ(source, readText(path)) << c.file << " differs from the generated kernel; if the change is "
                                      << "intended, regenerate with TAPELAB_UPDATE_GOLDEN=1 and review the diff";
  }
}

// config loops=rolled: the tape's time loop written once (gpu/codegen/rolling.h), a tangent kernel of one and
// two markets (shared tangents once), and a value-only plain kernel, on a 6-step Asian (one trip of 4 steps,
// 2 after the loop).
TEST(CodegenGolden, RolledTimeLoops) {
  const Tape t = products::asianCall().record(6);
  struct Rolled {
    const char* file;
    const char* dialect;
    KernelKind kind;
    int markets;
    bool greeks;
    bool step = false;  // config loop_trip=step: one step a trip, the draws carried
  };
  const Rolled cases[] = {{"asian6.tangent-rolled.cu", "cuda", KernelKind::Tangent, 1, true},
                          {"asian6.tangent-rolled-2markets.glsl", "glsl", KernelKind::Tangent, 2, true},
                          {"asian6.plain-value-rolled.cl", "opencl", KernelKind::Plain, 1, false},
                          {"asian6.tangent-rolled-step.cu", "cuda", KernelKind::Tangent, 1, true, true}};
  std::filesystem::path dir = std::filesystem::path(TAPELAB_SOURCE_DIR) / "tests" / "golden";
  if (!std::filesystem::exists(dir) && std::filesystem::exists("tests/golden")) dir = "tests/golden";
  const bool update = std::getenv("TAPELAB_UPDATE_GOLDEN") && std::string(std::getenv("TAPELAB_UPDATE_GOLDEN")) == "1";
  for (const Rolled& c : cases) {
    KernelOptions o;
    o.precision = Precision::F32;
    o.kind = c.kind;
    o.markets = c.markets;
    o.greeks = c.greeks;
    o.config.loopsRolled = true;
    o.config.loopTripStep = c.step;
    // The CUDA tangent kernel with the fields that change its Greeks' rounding: no tangent for the spot's
    // path (closed forms: value / spot), fused tangent terms.
    o.config.closedForms = o.config.tangentFma = std::string(c.dialect) == "cuda";
    if (c.markets > 1) o.sharedInputs = {1, 2, 3, 4};
    const std::string source = emitKernel(t, o, dialectByName(c.dialect)).source;
    EXPECT_NE(source.find(c.step ? "the time loop: 6 trips of 1 step(s)" : "the time loop: 1 trips of 4 step(s)"),
              std::string::npos)
        << c.file;
    const std::filesystem::path path = dir / c.file;
    if (update) {
      std::ofstream(path, std::ios::binary) << source;
      continue;
    }
    ASSERT_TRUE(std::filesystem::exists(path)) << path << " missing: run with TAPELAB_UPDATE_GOLDEN=1";
    EXPECT_EQ(source, readText(path)) << c.file << " differs from the generated kernel; if the change is "
                                      << "intended, regenerate with TAPELAB_UPDATE_GOLDEN=1 and review the diff";
  }
}

// shared_constants: in CUDA and HIP the market loop's arrays of lane-invariant values (the
// inputs, the drift and volatility step computed from them alone) are __shared__, the bookmarks (draws
// reach them) stay per lane; GLSL and OpenCL C, which declare shared arrays only at kernel scope, and
// a kernel without the market loop are unchanged.
TEST(CodegenSpelling, SharedConstantsAreSharedArraysInCudaAndHipOnly) {
  const Tape t = products::asianCall(24);
  KernelOptions o = testutil::kindOptions(t, KernelKind::Register, 3, 0, ScratchLayout::SoA, 3);
  KernelOptions loop = o, shared = o;
  loop.config.markets = shared.config.markets = MarketCode::Loop;
  loop.config.sharedConstants = false;
  shared.config.sharedConstants = true;
  const std::vector<uint8_t> draw = dependsOnDraw(t), input = dependsOnInput(t);
  for (const char* name : {"cuda", "hip"}) {
    const std::string s = emitKernel(t, shared, dialectByName(name)).source;
    int sharedArrays = 0, laneArrays = 0;
    for (int32_t j : o.plan.persistent) {
      if (!input[j]) continue;
      const std::string decl = "float v" + std::to_string(j) + "[3];";
      const bool isShared = s.find("__shared__ " + decl) != std::string::npos;
      EXPECT_NE(s.find(decl), std::string::npos) << name << ": node " << j << " has no array";
      EXPECT_EQ(isShared, !draw[j]) << name << ": node " << j << (draw[j] ? " (a draw reaches it)" : "");
      (isShared ? sharedArrays : laneArrays) += 1;
    }
    EXPECT_GE(sharedArrays, t.numInputs() + 2) << name << ": the inputs and two values computed from them";
    EXPECT_GE(laneArrays, 2) << name << ": the bookmarks";
    KernelOptions alone = o, off = o;
    alone.config.sharedConstants = true;
    off.config.sharedConstants = false;
    EXPECT_EQ(code(emitKernel(t, alone, dialectByName(name)).source), code(emitKernel(t, off, dialectByName(name)).source))
        << name << ": without the market loop nothing changes";
  }
  for (const char* name : {"glsl", "opencl"})
    EXPECT_EQ(code(emitKernel(t, shared, dialectByName(name)).source), code(emitKernel(t, loop, dialectByName(name)).source))
        << name;
  // 8 markets: the Kahan sums take all 48 KiB of workgroup memory, so the constants stay per lane,
  // and the kernel says so.
  KernelOptions eight = testutil::kindOptions(t, KernelKind::Register, 3, 0, ScratchLayout::SoA, 8);
  KernelOptions eightLoop = eight, eightShared = eight;
  eightLoop.config.markets = eightShared.config.markets = MarketCode::Loop;
  eightLoop.config.sharedConstants = false;
  const EmittedKernel k8 = emitKernel(t, eightShared, cudaDialect());
  EXPECT_EQ(code(k8.source), code(emitKernel(t, eightLoop, cudaDialect()).source));
  EXPECT_EQ(std::count_if(k8.configUnused.begin(), k8.configUnused.end(),
                          [](const std::string& u) { return u.rfind("shared_constants=on: ", 0) == 0; }),
            1)
      << "not reported unused";
}

// min_blocks: a second launch bound in CUDA and HIP only, and nothing else changes.
TEST(CodegenSpelling, MinBlocksIsASecondLaunchBoundInCudaAndHip) {
  const Tape t = smallTape();
  KernelOptions o;
  o.precision = Precision::F32;
  KernelOptions bounded = o;
  bounded.config.minBlocks = 5;
  for (const char* name : {"cuda", "hip", "glsl", "opencl"}) {
    const std::string plain = code(emitKernel(t, o, dialectByName(name)).source);
    const std::string withBound = code(emitKernel(t, bounded, dialectByName(name)).source);
    EXPECT_EQ(plain.find("$MINBLOCKS"), std::string::npos) << name;
    if (std::string(name) == "cuda" || std::string(name) == "hip") {
      ASSERT_NE(plain.find("__launch_bounds__(64)\n"), std::string::npos) << name;
      std::string expected = plain;
      expected.replace(expected.find("__launch_bounds__(64)"), 21, "__launch_bounds__(64, 5)");
      EXPECT_EQ(withBound, expected) << name;
    } else {
      EXPECT_EQ(withBound, plain) << name;
    }
  }
}

// The fields of the run around the kernel (where its sums are added, how many dispatches, the carveout it
// asks the driver for) are not in its source, header included: one kernel, one text and one NVRTC cache
// entry for every value of them (before 2026-12-06g the header named them, so a tune or a comparison of
// cuda.carveout compiled the same kernel once per value). Every such field keeps the bits.
TEST(CodegenSpelling, TheRunAroundTheKernelIsNotInItsSource) {
  const Tape t = smallTape();
  const KernelOptions o = smallRegister(t);
  const std::string base = emitKernel(t, o, cudaDialect()).source;
  int around = 0;
  for (const ConfigField& f : configFields()) {
    if (f.shapesKernel) continue;
    ++around;
    EXPECT_TRUE(f.keepsBits) << f.name;
    EXPECT_EQ(base.find(std::string(f.name) + "="), std::string::npos) << f.name << " named in the source";
  }
  EXPECT_EQ(around, 3) << "cuda.reduce, cuda.dispatches, cuda.carveout";
  KernelOptions other = o;
  other.config.cudaSums = SumsPlace::Device;
  other.config.cudaDispatches = 1;
  other.config.cudaCarveout = 25;
  EXPECT_EQ(emitKernel(t, other, cudaDialect()).source, base);
  other.config.minBlocks = 5;  // a field that shapes the kernel still changes its text, header and all
  const std::string bounded = emitKernel(t, other, cudaDialect()).source;
  EXPECT_NE(bounded, base);
  EXPECT_NE(bounded.find("\n// config: "), std::string::npos);
  EXPECT_NE(bounded.find(",min_blocks=5,"), std::string::npos);
}

// math=approx: CUDA and HIP fp32 kernels call __expf / __logf (CUDA's square root sqrt.approx), OpenCL
// fp32 kernels native_exp / native_log / native_sqrt, in the tape's ops and the draws alike, and nothing
// else changes; GLSL and fp64 kernels are untouched.
TEST(CodegenSpelling, ApproxMathRespellsExpLogAndSqrtInCudaHipAndOpenCL) {
  const Tape t = smallTape();
  for (Precision precision : {Precision::F32, Precision::F64})
    for (const char* name : {"cuda", "hip", "glsl", "opencl"}) {
      if (precision == Precision::F64 && std::string(name) == "glsl") continue;
      KernelOptions o;
      o.precision = precision;
      KernelOptions approx = o;
      approx.config.math = MathContract::Approx;
      const std::string exact = code(emitKernel(t, o, dialectByName(name)).source);
      const EmittedKernel fastKernel = emitKernel(t, approx, dialectByName(name));
      const std::string fast = code(fastKernel.source);
      const bool respelt = precision == Precision::F32 && std::string(name) != "glsl";
      if (!respelt) {  // the same code, and the kernel says the field did nothing
        EXPECT_EQ(fast, exact) << name << " " << toString(precision);
        ASSERT_EQ(fastKernel.configUnused.size(), 1u) << name << " " << toString(precision);
        EXPECT_EQ(fastKernel.configUnused[0].rfind("math=approx: ", 0), 0u) << fastKernel.configUnused[0];
        continue;
      }
      EXPECT_TRUE(fastKernel.configUnused.empty()) << name;
      std::string expected = exact;
      auto replaceAll = [&](const std::string& from, const std::string& to) {
        int n = 0;
        for (size_t at = expected.find(from); at != std::string::npos; at = expected.find(from, at + to.size()), ++n)
          expected.replace(at, from.size(), to);
        return n;
      };
      if (std::string(name) == "opencl") {  // OpenCL C's overloaded exp/log/sqrt take the native_ prefix
        EXPECT_GT(replaceAll("exp(", "native_exp("), 0) << name;
        EXPECT_GT(replaceAll("log(", "native_log("), 0) << name;
        EXPECT_GT(replaceAll("sqrt(", "native_sqrt("), 0) << name;
        EXPECT_EQ(fast, expected) << name;
        continue;
      }
      EXPECT_GT(replaceAll("expf(", "__expf("), 0) << name;
      EXPECT_GT(replaceAll("logf(", "__logf("), 0) << name;
      if (std::string(name) == "cuda") {  // PTX's sqrt.approx.f32 through a helper; HIP keeps sqrtf
        EXPECT_GT(replaceAll("sqrtf(", "tl_sqrt_approx("), 0) << name;
        const std::string helper = dialectByName(name).fp32.approxHelpers;
        ASSERT_NE(helper.find("sqrt.approx.f32"), std::string::npos);
        const size_t opq = expected.find("// opq:");
        ASSERT_NE(opq, std::string::npos);
        expected.insert(opq, helper);
      }
      EXPECT_EQ(fast, expected) << name;
    }
}

// The forward and adjoint lines of every op are ops.def's expressions with the
// dialect's names substituted, nothing hand-written.
TEST(CodegenSpelling, EveryOpUsesTheOpTable) {
  for (const Dialect* d : {&glslDialect(), &openclDialect(), &cudaDialect(), &hipDialect()}) {
    for (const OpInfo& op : kOps) {
      if (op.arity == 0) continue;
      Recorder rec;
      Var x = rec.input("x", 1.5), y = rec.input("y", 0.5), z = rec.input("z", 0.25);
      rec.output(op.arity == 3   ? rec.ternary(op.op, x, y, z)
                 : op.arity == 2 ? rec.binary(op.op, x, y)
                                 : rec.unary(op.op, x));
      const Tape t = rec.finish();
      KernelOptions o;
      o.precision = Precision::F32;
      o.config.firstTermsSet = false;  // every contribution an addition (first_terms=set declares the first)
      const std::string src = emitKernel(t, o, *d).source;
      // Fenced ops read their arguments through tl_opq and fence their result.
      const std::string key = d->paramPrefix + std::string("zero");
      auto opq = [&](const std::string& x, bool on) { return on ? "tl_opq(" + x + ", " + key + ")" : x; };
      auto renameFenced = [&](std::string_view id, bool fenced) -> std::string {
        if (id == "a") return opq("v0", fenced);
        if (id == "b") return opq("v1", fenced);
        if (id == "c") return opq("v2", fenced);
        if (id == "r") return "v3";
        if (id == "d") return "d3";
        if (id == "zero") return spellLiteral(0.0, Precision::F32, *d);
        if (id == "one") return spellLiteral(1.0, Precision::F32, *d);
        return d->function(Precision::F32, id);
      };
      auto rename = [&](std::string_view expr) { return spellFenced(expr, op.op, renameFenced); };
      const std::string fwd = "v3 = " + opq(rename(op.forward), fencedResult(op.op)) + ";";
      EXPECT_NE(src.find(fwd), std::string::npos) << d->name << " " << op.name << ": no line " << fwd;
      size_t previous = 0;
      for (int k = 0; k < op.arity; ++k) {
        const std::string to = "d" + std::to_string(k) + " += ";
        if (!contributes(op.adjoint(k))) {  // a rule that sends nothing is not written
          EXPECT_EQ(src.find(to), std::string::npos) << d->name << " " << op.name << ": a line " << to;
          continue;
        }
        const std::string line = to + rename(op.adjoint(k)) + ";";
        const size_t at = src.find(line);
        EXPECT_NE(at, std::string::npos) << d->name << " " << op.name << ": no line " << line;
        EXPECT_LT(previous, at) << "contributions in argument order";
        previous = at;
      }
    }
  }
}

TEST(CodegenSpelling, DialectsDifferOnlyInTheirTable) {
  const Tape t = smallTape();
  KernelOptions o;
  o.precision = Precision::F32;
  const std::string glsl = emitKernel(t, o, glslDialect()).source;
  const std::string cl = emitKernel(t, o, openclDialect()).source;
  const std::string cu = emitKernel(t, o, cudaDialect()).source;
  EXPECT_NE(glsl.find("precise float"), std::string::npos);
  EXPECT_NE(glsl.find("umulExtended"), std::string::npos);
  EXPECT_EQ(cl.rfind("#pragma OPENCL FP_CONTRACT OFF", 0), 0u) << "the pragma must open the OpenCL source";
  EXPECT_NE(cl.find("mul_hi(0xD2511F53u, c0)"), std::string::npos);
  EXPECT_NE(cu.find("__umulhi(0xD2511F53u, c0)"), std::string::npos);
  EXPECT_NE(cu.find("expf("), std::string::npos);
  EXPECT_EQ(cu.find("precise"), std::string::npos);
  // fp64 where the dialect has it
  o.precision = Precision::F64;
  const std::string cl64 = emitKernel(t, o, openclDialect()).source;
  EXPECT_NE(cl64.find("cl_khr_fp64"), std::string::npos);
  EXPECT_NE(cl64.find("as_double(as_ulong(x) + (ulong)(z))"), std::string::npos);
  EXPECT_THROW(emitKernel(t, o, glslDialect()), std::invalid_argument);
}

// Functions are spelled by name per precision; a rule calling one the dialect
// cannot spell fails when the kernel is emitted, naming it.
TEST(CodegenSpelling, DialectsSpellFunctionsByName) {
  EXPECT_EQ(cudaDialect().function(Precision::F32, "sqrt"), "sqrtf");
  EXPECT_EQ(cudaDialect().function(Precision::F64, "sqrt"), "sqrt");
  EXPECT_EQ(hipDialect().function(Precision::F32, "exp"), "expf");
  EXPECT_EQ(openclDialect().function(Precision::F32, "log"), "log");
  EXPECT_EQ(glslDialect().function(Precision::F32, "sel"), "tl_sel");
  EXPECT_THROW(glslDialect().function(Precision::F64, "exp"), std::invalid_argument);
  Dialect noExp = cudaDialect();
  noExp.fp32.functions.erase("exp");
  KernelOptions o;
  o.precision = Precision::F32;
  Recorder rec;
  Var x = rec.input("x", 1.5);
  rec.output(sqrt(x) * x);
  EXPECT_NO_THROW(emitKernel(rec.finish(), o, noExp));
  try {
    emitKernel(smallTape(), o, noExp);
    ADD_FAILURE() << "a dialect without exp emitted a kernel calling it";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("`exp`"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
  }
}

TEST(CodegenSpelling, ValueOnlyKernelsHaveNoReverseSweep) {
  const Tape t = smallTape();
  KernelOptions o;
  o.precision = Precision::F32;
  o.greeks = false;
  const EmittedKernel k = emitKernel(t, o, glslDialect());
  EXPECT_EQ(k.width, 1);
  EXPECT_EQ(k.source.find("d0 += "), std::string::npos);
  o.kind = KernelKind::Register;
  o.plan = makePlan(t, {0, 9, 17, t.size()}, "test");
  EXPECT_EQ(emitKernel(t, o, glslDialect()).source.find("tl_rk0"), std::string::npos);
}

TEST(CodegenSpelling, CheckpointedKernelsReadBookmarksThroughOpq) {
  const Tape t = smallTape();
  const KernelOptions o = smallRegister(t);
  const std::string src = emitKernel(t, o, glslDialect()).source;
  // Every bookmark a segment imports is read through opq, and draws are re-keyed.
  for (int s = 1; s < o.plan.segments(); ++s)
    for (int32_t j : segmentImports(t, o.plan, s)) {
      const std::string opq = "w" + std::to_string(j) + " = tl_opq(v" + std::to_string(j) + ", pc.zero);";
      EXPECT_NE(src.find(opq), std::string::npos) << opq;
    }
  EXPECT_NE(src.find("uint tl_rk0 = pc.seedLo ^ pc.zero;"), std::string::npos);
  EXPECT_NE(src.find("wg0 = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_rk0, tl_rk1);"), std::string::npos);
  // One block per segment in the forward sweep, one per segment in the reverse.
  size_t blocks = 0;
  for (size_t at = 0; (at = src.find("{  // segment", at)) != std::string::npos; ++at) ++blocks;
  EXPECT_EQ(blocks, 2u * o.plan.segments());
}

TEST(CodegenSpelling, MarketsShareDrawsAndCopyMarketValues) {
  const Tape t = smallTape();
  KernelOptions o;
  o.precision = Precision::F32;
  o.markets = 3;
  const std::string src = emitKernel(t, o, cudaDialect()).source;
  // Node 2 is draw 0: one copy. Node 0 is input x: one copy per market.
  EXPECT_NE(src.find("float v2 = vg0n0.x;"), std::string::npos);
  EXPECT_EQ(src.find("v2_0"), std::string::npos);
  for (int m = 0; m < 3; ++m) EXPECT_NE(src.find("float v0_" + std::to_string(m) + " = tl_in" + std::to_string(m) + "_0;"), std::string::npos);
  o.markets = 9;
  EXPECT_THROW(emitKernel(t, o, cudaDialect()), std::invalid_argument);
}

namespace {
size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}
}  // namespace

// Draws 4g .. 4g+3 share one Philox call (tape/philox.h): a block of
// straight-line code computes group g's words once, at the first draw of g it
// needs, wherever the tape puts the draws, and a Box-Muller pair (2p, 2p + 1)
// once, at the first of its draws it needs; every block computes its own.
TEST(CodegenSpelling, EachBlockComputesADrawGroupOnce) {
  Recorder rec;
  Var x = rec.input("x", 1.25);
  Var s = x;
  for (uint32_t k : {5u, 0u, 4u, 1u, 9u, 7u}) s = s * rec.randn(k) + x;
  rec.output(s);
  const Tape t = rec.finish();
  KernelOptions o;
  o.precision = Precision::F32;
  const std::string plain = emitKernel(t, o, cudaDialect()).source;
  EXPECT_EQ(occurrences(plain, "= tl_drawWords("), 3u);
  EXPECT_LT(plain.find("vg1 = tl_drawWords(1u"), plain.find("vg0 = tl_drawWords(0u"));
  EXPECT_EQ(occurrences(plain, " = tl_boxMuller("), 4u);  // the pairs (4, 5), (0, 1), (8, 9), (6, 7)
  EXPECT_NE(plain.find("vg1n0 = tl_boxMuller(vg1.x, vg1.y);"), std::string::npos);
  EXPECT_NE(plain.find("vg1n1 = tl_boxMuller(vg1.z, vg1.w);"), std::string::npos);
  EXPECT_LT(plain.find("vg1n0 = tl_boxMuller("), plain.find("vg0n0 = tl_boxMuller("));
  EXPECT_NE(plain.find(" = vg1n0.y;"), std::string::npos);  // draw 5
  EXPECT_NE(plain.find(" = vg1n0.x;"), std::string::npos);  // draw 4, from the pair draw 5 computed
  EXPECT_NE(plain.find(" = vg2n0.y;"), std::string::npos);  // draw 9
  EXPECT_NE(plain.find(" = vg1n1.y;"), std::string::npos);  // draw 7
  // Cut between draws 4 and 1: each segment's forward block and each
  // segment's recompute draws groups 0 and 1 itself (the recompute re-keyed),
  // the second segment group 2 too.
  o.kind = KernelKind::Register;
  int32_t cut = 0;
  for (int32_t i = 0, seen = 0; i < t.size(); ++i)
    if (t.op[i] == Op::Randn && ++seen == 4) cut = i;
  o.plan = makePlan(t, {0, cut, t.size()}, "test");
  const std::string reg = emitKernel(t, o, openclDialect()).source;
  EXPECT_EQ(occurrences(reg, "vg0 = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);"), 2u);
  EXPECT_EQ(occurrences(reg, "vg1 = tl_drawWords(1u, tl_pathLo, tl_pathHi, tl_fk0, tl_fk1);"), 2u);
  EXPECT_EQ(occurrences(reg, "wg0 = tl_drawWords(0u, tl_pathLo, tl_pathHi, tl_rk0, tl_rk1);"), 2u);
  EXPECT_EQ(occurrences(reg, "wg1 = tl_drawWords(1u, tl_pathLo, tl_pathHi, tl_rk0, tl_rk1);"), 2u);
  EXPECT_EQ(occurrences(reg, "const uint4 "), 10u);
  // Pair (0, 1) in both forward segments (draw 0 in the first, draw 1 in the second), pair (6, 7) only in the second.
  EXPECT_EQ(occurrences(reg, "vg0n0 = tl_boxMuller(vg0.x, vg0.y);"), 2u);
  EXPECT_EQ(occurrences(reg, "vg1n1 = tl_boxMuller(vg1.z, vg1.w);"), 1u);
}

TEST(CodegenSpelling, LiteralsAreExact) {
  for (double v : {0.0, 1.0, -2.0, 0.1, 1e-30, 3.4e38, -1.1920928955078125e-07, 252.0, 0.02425, 2.938163982698783}) {
    for (const Dialect* d : {&glslDialect(), &cudaDialect()}) {
      std::string s = spellLiteral(v, Precision::F32, *d);
      if (s.front() == '(') s = s.substr(1, s.size() - 2);
      EXPECT_EQ(std::strtof(s.c_str(), nullptr), static_cast<float>(v)) << s;
      EXPECT_NE(s.find_first_of(".e"), std::string::npos) << s << " must be a floating literal";
    }
    std::string s = spellLiteral(v, Precision::F64, openclDialect());
    if (s.front() == '(') s = s.substr(1, s.size() - 2);
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
  }
  EXPECT_EQ(spellLiteral(0.5, Precision::F32, cudaDialect()), "0.5f");
  EXPECT_EQ(spellLiteral(-2.0, Precision::F32, glslDialect()), "(-2.0)");
  EXPECT_EQ(spellLiteral(0.1, Precision::F64, glslDialect()), "0.1lf");
}

TEST(CodegenFences, ImpreciseOpsAndComparisonsAreFenced) {
  Recorder rec;
  Var x = rec.input("x", 1.5), y = rec.input("y", 0.5);
  Var e = rec.unary(Op::Exp, x);
  Var q = rec.binary(Op::Div, e, y);
  rec.output(rec.binary(Op::Max, q, x));
  const Tape t = rec.finish();
  KernelOptions o;
  o.precision = Precision::F32;
  const std::string src = emitKernel(t, o, glslDialect()).source;
  EXPECT_NE(src.find("v2 = tl_opq(exp(tl_opq(v0, pc.zero)), pc.zero);"), std::string::npos) << src;
  EXPECT_NE(src.find("v3 = tl_opq(tl_opq(v2, pc.zero) / tl_opq(v1, pc.zero), pc.zero);"), std::string::npos) << src;
  EXPECT_NE(src.find("v4 = tl_sel(tl_opq(v3, pc.zero) >= tl_opq(v0, pc.zero), v3, v0);"), std::string::npos) << src;
  // opq must not cancel when applied twice (an XOR would): it adds zero.
  EXPECT_NE(src.find("uintBitsToFloat(floatBitsToUint(x) + uint(z))"), std::string::npos);
}
