#include "reference/cpujit/cpujit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "reference/cpujit/abi.h"
#include "reference/cpujit/compile.h"
#include "reference/cpujit/emit.h"
#include "reference/cpujit/probe.h"
#include "util/files.h"
#include "util/process.h"

namespace tapelab {
namespace {

// Paths per reduction block (engine/engine.h): fixed, so results do not depend on threads.
constexpr uint64_t kBlock = 1024;
constexpr int kMaxMarkets = 8;

std::string hintFor(const Tape& tape, const KernelOptions& o, bool registerKind) {
  std::string h = tape.name.empty() ? "tape" : tape.name;
  h += o.kind == KernelKind::Tangent ? "-tangent" : registerKind ? "-reg" + std::to_string(o.plan.segments()) : "-plain";
  h += o.precision == Precision::F64 ? "-fp64" : "-fp32";
  h += o.greeks ? "-greeks" : "-value";
  return h;
}

struct Loaded {
  JitLibrary lib;
  jitabi::BlockFn block = nullptr;
  jitabi::WorkspaceFn workspace = nullptr;
  jitabi::DrawFn draw = nullptr;
  int lanes = 0;
  std::string arch;
  JitSource source;
  KernelStats stats;
};

Loaded buildKernel(const Tape& tape, const KernelOptions& o, const EngineSettings& settings) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string problem = validate(tape);
  if (!problem.empty()) throw std::invalid_argument(problem);
  if (o.markets < 1 || o.markets > kMaxMarkets)
    throw std::invalid_argument("cpu-jit: markets must be 1.." + std::to_string(kMaxMarkets) + ", got " +
                                std::to_string(o.markets));
  if (o.kind == KernelKind::Scratch)
    throw std::invalid_argument("cpu-jit has no scratch kernels (kinds: plain, register, tangent)");
  const bool registerKind = o.kind == KernelKind::Register;
  if (registerKind && (o.plan.bounds.size() < 2 || o.plan.bounds.back() != tape.size()))
    throw std::invalid_argument("cpu-jit: a register kernel needs a plan for this tape");

  JitSpec spec;
  spec.precision = o.precision;
  spec.greeks = o.greeks;
  spec.plan = registerKind ? &o.plan : nullptr;
  TangentSlots tangents;
  if (o.kind == KernelKind::Tangent) {
    tangents = tangentSlots(tape, differentiatedInputs(o, tape.numInputs()));
    spec.tangents = &tangents;
  }
  spec.chunkNodes = o.config.jitChunk;
  spec.partNodes = o.config.jitPart;
  spec.configText = configText(o.config, "cpu-jit");
  if (spec.chunkNodes < 1 || spec.partNodes < 1)
    throw std::invalid_argument("cpu-jit: jit.chunk and jit.part must be positive (--config jit.chunk=N,jit.part=N)");
  Loaded k;
  k.source = emitCpuJit(tape, spec);
  const std::string hint = hintFor(tape, o, registerKind);

  const std::string& dumpDir = o.dumpDir;
  std::string dumped;
  if (!dumpDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dumpDir, ec);
    for (size_t i = 0; i < k.source.parts.size(); ++i) {
      const std::string path =
          (std::filesystem::path(dumpDir) /
           ("cpujit-" + hint + (i == 0 ? std::string() : ".part" + std::to_string(i)) + ".cpp"))
              .string();
      writeOutputFile(path, k.source.parts[i], {}, "--dump");  // as every --out (util/files.h)
      if (i == 0) dumped = path;
    }
  }

  JitToolchain toolchain = jitToolchain(settings);
  toolchain.subject = kernelSubject(tape, o);
  k.lib = loadJit(k.source.parts, hint, toolchain);
  auto abi = reinterpret_cast<jitabi::AbiFn>(k.lib.symbol("tapelab_cpujit_abi"));
  if (abi() != jitabi::kVersion) throw std::runtime_error("cpu-jit: " + k.lib.libraryPath + " has another ABI version");
  k.block = reinterpret_cast<jitabi::BlockFn>(k.lib.symbol("tapelab_cpujit_block"));
  k.workspace = reinterpret_cast<jitabi::WorkspaceFn>(k.lib.symbol("tapelab_cpujit_workspace"));
  k.draw = reinterpret_cast<jitabi::DrawFn>(k.lib.symbol("tapelab_cpujit_draw"));
  k.lanes = reinterpret_cast<jitabi::LanesFn>(k.lib.symbol("tapelab_cpujit_lanes"))();
  k.arch = reinterpret_cast<jitabi::NameFn>(k.lib.symbol("tapelab_cpujit_arch"))();

  k.stats.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  k.stats.cacheHit = k.lib.cacheHit;
  k.stats.sourceBytes = 0;
  for (const std::string& part : k.source.parts) k.stats.sourceBytes += static_cast<int64_t>(part.size());
  k.stats.sourcePath = dumped.empty() ? k.lib.sourcePath : dumped;
  k.stats.notes = "arch=" + k.arch + " lanes=" + std::to_string(k.lanes) +
                  " functions=" + std::to_string(k.source.functions) +
                  " units=" + std::to_string(k.source.parts.size()) +
                  " valueSlots=" + std::to_string(k.source.valueSlots) +
                  " adjointSlots=" + std::to_string(k.source.adjointSlots) + " object=" + k.lib.libraryPath;
  return k;
}

class CpuJitKernel final : public Kernel {
 public:
  CpuJitKernel(const Tape& tape, const KernelOptions& o, unsigned threads, Loaded k)
      : numInputs_(tape.numInputs()), options_(o), threads_(threads), k_(std::move(k)) {
    options_.plan = {};
  }

  RunResult run(const std::vector<std::vector<double>>& inputs, uint64_t paths, uint64_t seed) override {
    const auto t0 = std::chrono::steady_clock::now();
    BlockReduction sums;  // block by block in order: finishBlocks' bits, a window of blocks in memory
    windows(inputs, 0, paths, seed, sums);
    RunResult r = sums.finish(inputs.size(), static_cast<size_t>(numInputs_), paths, seed);
    markUncomputedGreeks(r, options_, numInputs_);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

  uint64_t blockPaths() const override { return kBlock; }

  double runBlocks(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths, uint64_t seed,
                   BlockSink& sink) override {
    const auto t0 = std::chrono::steady_clock::now();
    if (first % kBlock) throw std::invalid_argument("runBlocks: the first path is not at a block boundary");
    windows(inputs, first, paths, seed, sink);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  KernelStats stats() const override { return k_.stats; }

 private:
  // Paths [first, first + paths) a window of blocks at a time (engine.h runBlockWindows).
  void windows(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths, uint64_t seed,
               BlockSink& sink) {
    runBlockWindows(options_.dispatch.pathOffset, first, paths, kBlock, inputs.size() * 2 * (1 + static_cast<size_t>(numInputs_)),
                    sink, [&](uint64_t lo, uint64_t n) { return blockPartials(inputs, lo, n, seed); });
  }

  // Per-block sums of paths [first, first + paths) after dispatch.pathOffset (engine/engine.h's layout).
  std::vector<double> blockPartials(const std::vector<std::vector<double>>& inputs, uint64_t first, uint64_t paths,
                                    uint64_t seed) {
    const uint64_t origin = options_.dispatch.pathOffset + first;
    const size_t markets = inputs.size();
    if (markets < 1 || markets > static_cast<size_t>(kMaxMarkets))
      throw std::invalid_argument("cpu-jit: 1.." + std::to_string(kMaxMarkets) + " markets per call, got " +
                                  std::to_string(markets));
    for (const auto& m : inputs)
      if (m.size() != static_cast<size_t>(numInputs_))
        throw std::invalid_argument("market has " + std::to_string(m.size()) + " inputs, the tape " +
                                    std::to_string(numInputs_));
    // Inputs in the kernel's precision, as the interpreter converts them (T(x)).
    std::vector<double> in64;
    std::vector<float> in32;
    for (const auto& m : inputs)
      for (double x : m) (options_.precision == Precision::F64 ? in64.push_back(x) : in32.push_back(static_cast<float>(x)));
    const void* in = options_.precision == Precision::F64 ? static_cast<const void*>(in64.data()) : in32.data();

    const size_t width = 1 + static_cast<size_t>(numInputs_);
    const size_t stride = markets * 2 * width;
    const uint64_t blocks = (paths + kBlock - 1) / kBlock;
    std::vector<double> partial(blocks * stride, 0.0);
    const size_t wsBytes = k_.workspace(markets);
    std::atomic<uint64_t> next{0};
    auto worker = [&] {
      std::vector<unsigned char> ws(wsBytes + 64);
      for (uint64_t blk; !interruptRequested() && (blk = next.fetch_add(1)) < blocks;) {
        jitabi::JitBlockArgs a{};
        a.inputs = in;
        a.markets = markets;
        a.seed = seed;
        a.lo = origin + blk * kBlock;
        a.hi = origin + std::min(paths, blk * kBlock + kBlock);
        a.opaque = 0;
        a.workspace = ws.data();
        a.partial = partial.data() + blk * stride;
        k_.block(&a);
      }
    };
    runOnThreads(blocks, threads_, worker);
    return partial;
  }

  int numInputs_;
  KernelOptions options_;
  unsigned threads_;
  Loaded k_;
};

class CpuJitEngine final : public Engine {
 public:
  explicit CpuJitEngine(EngineSettings settings) : settings_(std::move(settings)) {}
  std::string name() const override { return "cpu-jit"; }
  EngineCaps caps() const override {
    EngineCaps c;
    std::string why;
    c.usable = jitCompilerUsable(settings_.cpuJit.compiler, why);
    c.reason = c.usable ? why + ", xsimd, " + std::to_string(std::max(1u, std::thread::hardware_concurrency())) +
                              " hardware threads"
                        : why;
    c.fp32 = c.fp64 = true;
    c.defaultPrecision = Precision::F64;
    c.kinds = {KernelKind::Plain, KernelKind::Register, KernelKind::Tangent};
    c.perValuePlans = true;
    c.maxMarkets = kMaxMarkets;
    // The plain kernel's values (some 70 kB per batch on the 252-step Asian) stay in L2; the
    // register kernel only adds the recomputation: 1.4x the plain kernel's time there.
    c.autoCheckpoint = false;
    return c;
  }
  std::unique_ptr<Kernel> compile(const Tape& tape, const KernelOptions& o) override {
    return std::make_unique<CpuJitKernel>(tape, o, settings_.threads, buildKernel(tape, o, settings_));
  }

 private:
  EngineSettings settings_;
};

}  // namespace

std::unique_ptr<Engine> makeCpuJitEngine(const EngineSettings& settings) {
  return std::make_unique<CpuJitEngine>(settings);
}

std::vector<JitDraw> cpuJitDraws(const EngineSettings& settings, Precision precision, uint64_t seed,
                                 uint64_t firstPath, uint32_t k) {
  Tape t;
  t.name = "draw-probe";
  t.output = t.push(Op::Randn, -1, -1, static_cast<double>(k));
  KernelOptions o;
  o.precision = precision;
  o.greeks = false;
  Loaded l = buildKernel(t, o, settings);
  std::vector<JitDraw> out(static_cast<size_t>(l.lanes));
  if (precision == Precision::F64) {
    std::vector<double> u(out.size()), z(out.size());
    l.draw(seed, firstPath, k, u.data(), z.data());
    for (size_t i = 0; i < out.size(); ++i) out[i] = {u[i], z[i]};
  } else {
    std::vector<float> u(out.size()), z(out.size());
    l.draw(seed, firstPath, k, u.data(), z.data());
    for (size_t i = 0; i < out.size(); ++i) out[i] = {u[i], z[i]};
  }
  return out;
}

JitMath cpuJitMath(const EngineSettings& settings, Precision precision, const std::vector<double>& args) {
  const bool f64 = precision == Precision::F64;
  const std::string source = cpuJitPrelude(precision) + R"(
}  // namespace

extern "C" TL_EXPORT void tapelab_cpujit_math(const void* in, std::size_t n, void* e, void* xe, void* l, void* xl) {
  const T* x = static_cast<const T*>(in);
  for (std::size_t i = 0; i + W <= n; i += W) {
    const B b = B::load_unaligned(x + i);
    tl_exp(b).store_unaligned(static_cast<T*>(e) + i);
    xsimd::exp(b).store_unaligned(static_cast<T*>(xe) + i);
    tl_log(b).store_unaligned(static_cast<T*>(l) + i);
    xsimd::log(b).store_unaligned(static_cast<T*>(xl) + i);
  }
}
)";
  JitLibrary lib = loadJit({source}, f64 ? "math-probe-fp64" : "math-probe-fp32", jitToolchain(settings));
  using Fn = void (*)(const void*, std::size_t, void*, void*, void*, void*);
  auto fn = reinterpret_cast<Fn>(lib.symbol("tapelab_cpujit_math"));
  const size_t n = (args.size() + 63) / 64 * 64;  // a multiple of every lane count
  JitMath out;
  auto run = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> in(n, T(1)), e(n), xe(n), l(n), xl(n);
    for (size_t i = 0; i < args.size(); ++i) in[i] = static_cast<T>(args[i]);
    fn(in.data(), n, e.data(), xe.data(), l.data(), xl.data());
    for (size_t i = 0; i < args.size(); ++i) {
      out.args.push_back(in[i]);
      out.exp.push_back(e[i]);
      out.xsimdExp.push_back(xe[i]);
      out.log.push_back(l[i]);
      out.xsimdLog.push_back(xl[i]);
    }
  };
  if (f64)
    run(0.0);
  else
    run(0.0f);
  return out;
}

}  // namespace tapelab
