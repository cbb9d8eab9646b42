#include "engine/config.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace tapelab {

namespace {

constexpr const char* kSums[] = {"registers", "local"};
constexpr const char* kMath[] = {"ieee", "approx", "glsl"};
constexpr const char* kMarkets[] = {"copies", "loop"};
constexpr const char* kDraws[] = {"redraw", "stored", "prefill"};
constexpr const char* kReduce[] = {"device", "beside", "host"};
constexpr const char* kOnOff[] = {"off", "on"};
constexpr const char* kPhilox[] = {"rolled", "unrolled"};
constexpr const char* kLoops[] = {"unrolled", "rolled"};
constexpr const char* kTrip[] = {"calls", "step"};
constexpr const char* kFirstTerms[] = {"add", "set"};
constexpr const char* kAhead[] = {"off", "on", "loops", "rows", "prefetch"};
constexpr const char* kLayout[] = {"soa", "aos"};
constexpr const char* kOrder[] = {"sequential", "joint"};
constexpr const char* kRolledAdjoints[] = {"parity", "copy"};

template <size_t N>
const char* nameOf(const char* const (&names)[N], int i) {
  return i >= 0 && size_t(i) < N ? names[i] : "?";
}

}  // namespace

const char* toString(KahanPlace p) { return nameOf(kSums, int(p)); }
const char* toString(MathContract m) { return nameOf(kMath, int(m)); }
const char* toString(MarketCode m) { return nameOf(kMarkets, int(m)); }
const char* toString(DrawSource d) { return nameOf(kDraws, int(d)); }
const char* toString(SumsPlace s) { return nameOf(kReduce, int(s)); }
const char* toString(ScratchLayout l) { return nameOf(kLayout, int(l)); }
const char* toString(MarketOrder o) { return nameOf(kOrder, int(o)); }
const char* toString(AheadLoads a) { return nameOf(kAhead, int(a)); }

namespace {

using C = KernelConfig;
using S = const std::string;

// value among `names` (index = the enum's value), else "<what>: expected a|b|c, got 'v'".
int pick(S& value, S& what, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i)
    if (value == names[i]) return static_cast<int>(i);
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) list += (i ? "|" : "") + names[i];
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

const std::vector<std::string> kGpu = {"vulkan", "opencl", "cuda", "hip"};

// A declaration, built in one expression: its type from the member it sets, then its attributes.
struct Declare : ConfigField {
  // An enumeration (or a bool: index 0 false, 1 true): `names` in the enum's order.
  template <class T, size_t N>
  static Declare choice(const char* name, T C::*member, const char* const (&names)[N]) {
    Declare d;
    d.name = name;
    d.choices.assign(names, names + N);
    for (size_t i = 0; i < N; ++i) d.values += (i ? "|" : "") + std::string(names[i]);
    d.get = [member, names = d.choices](const C& c) { return names[int(c.*member)]; };
    d.set = [member, names = d.choices](C& c, S& v, S& w) { c.*member = static_cast<T>(pick(v, w, names)); };
    return d;
  }
  static Declare integer(const char* name, int C::*member, int lo, int hi) {
    Declare d;
    d.name = name;
    d.values = std::to_string(lo) + ".." + std::to_string(hi);
    d.get = [member](const C& c) { return std::to_string(c.*member); };
    d.set = [member, lo, hi](C& c, S& v, S& w) { c.*member = tapelab::integer(v, w, lo, hi); };
    return d;
  }
  // The choices in the order people read them (and a search tries them), where it is not the enum's.
  Declare& listed(std::vector<std::string> order) {
    choices = std::move(order);
    values.clear();
    for (size_t i = 0; i < choices.size(); ++i) values += (i ? "|" : "") + choices[i];
    return *this;
  }
  Declare& parsedBy(std::function<void(C&, S&, S&)> parse) { set = std::move(parse); return *this; }
  Declare& on(std::vector<std::string> e) { engines = std::move(e); return *this; }
  Declare& changesBits(const char* why) { keepsBits = false; bitsReason = why; return *this; }
  Declare& aroundTheKernel() { shapesKernel = false; return *this; }
  Declare& what(const char* text) { help = text; return *this; }
  Declare& byDefault(std::vector<FieldDefault> d) { defaults = std::move(d); return *this; }
  Declare& searching(std::vector<std::string> v) { search = std::move(v); return *this; }
  Declare& actsWhere(std::vector<FieldRequirement> r) { requires_ = std::move(r); return *this; }
  Declare& actsOn(FieldKernels k) { kernels = std::move(k); return *this; }
};

// An integer field that also takes names for values outside its range (cuda.carveout's driver and fit,
// market_unroll's whole): "name|...|lo..hi".
Declare integerOrNamed(const char* name, int C::*member, int lo, int hi, std::vector<std::pair<std::string, int>> named) {
  Declare d = Declare::integer(name, member, lo, hi);
  std::string words;  // "driver, fit"
  for (const auto& [word, value] : named) words += (words.empty() ? "" : ", ") + word;
  d.values.clear();
  for (const auto& [word, value] : named) d.values += word + "|";
  d.values += std::to_string(lo) + ".." + std::to_string(hi);
  d.get = [member, named](const C& c) {
    for (const auto& [word, value] : named)
      if (c.*member == value) return word;
    return std::to_string(c.*member);
  };
  d.parsedBy([member, named, lo, hi, words](C& c, S& v, S& w) {
    for (const auto& [word, value] : named)
      if (v == word) {
        c.*member = value;
        return;
      }
    try {
      c.*member = tapelab::integer(v, w, lo, hi);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(w + ": expected " + words + " or an integer from " + std::to_string(lo) + " to " +
                                  std::to_string(hi) + ", got '" + v + "'");
    }
  });
  return d;
}

constexpr const char* kBlocks = "changes the blocks' composition, so the sums' rounding: kernels compared for bits share it";
constexpr const char* kTangentRounding =
    "changes a tangent kernel's Greeks in rounding (never its values, the plain kernel's bits); no other kernel";

// Fields that were, and why they are not: named in the refusal instead of "no field".
constexpr std::pair<const char*, const char*> kRetiredFields[] = {
    {"quantile", "version 4 of the draws (Box-Muller pairs, docs/tape-format.md) has no quantile to branch on, "
                 "select or gather"},
    {"gather_groups", "it lost everywhere it was timed (papers/findings.md, \"The tails gathered\"), and its "
                      "quantile=gather went with version 3 of the draws"},
};

// The fields of a GPU kernel's blocks and storage, first in the text.
std::vector<ConfigField> blockAndStorageFields() {
  return {
      Declare::integer("workgroup", &C::workgroup, 32, 256)
          .listed({"32", "64", "128", "256"})
          .parsedBy([](C& c, S& v, S& w) {
            const int n = integer(v, w, 32, 256);
            if (n & (n - 1)) throw std::invalid_argument(w + ": expected 32|64|128|256, got '" + v + "'");
            c.workgroup = n;
          })
          .on(kGpu)
          .changesBits(kBlocks)
          .what("lanes per workgroup (a block is workgroup x lanes paths; the reduction tree is over the workgroup)")
          .byDefault({{"opencl", "256"}}),
      Declare::integer("lanes", &C::lanes, 1, 64)
          .on(kGpu)
          .changesBits(kBlocks)
          .what("paths each lane prices per dispatch (a block is workgroup x lanes paths)")
          .byDefault({{"cuda", "1"}, {"hip", "1"}, {"opencl", "1"}})
          .searching({"1", "2", "4"}),
      Declare::choice("sums", &C::sums, kSums)
          .on(kGpu)
          .what("where each lane keeps its Kahan sums across its paths: registers, or workgroup-local memory where "
                "they fit 48 KiB (else registers, reported unused)")
          .byDefault({{"cuda", "registers"}, {"hip", "registers"}, {"vulkan", "registers"}, {"opencl", "registers"}}),
      Declare::choice("market_order", &C::marketOrder, kOrder)
          .on(kGpu)
          .what("register and scratch kernels with Greeks and several markets: each leaf segment of the reverse sweep "
                "computes its draws once, then recomputes and reverses one market after another (its live set no "
                "longer grows with the markets; the bookmarks still do), or every market at once (H200, 7 markets, "
                "4M paths: sequential ran cuda 608 against 544 Mpath/s, vulkan 836 against 445)")
          .actsOn({{"register", "scratch"}, true, true}),
      Declare::choice("markets", &C::markets, kMarkets)
          .on(kGpu)
          .what("register kernels with several markets in sequential order: one copy of a segment's code per market, "
                "or a rolled loop over one copy (persistent per-market values in arrays)")
          .byDefault({{"cuda", "loop"}, {"hip", "loop"}, {"opencl", "loop"}, {"vulkan", "loop"}})
          .actsWhere({{"market_order", "sequential"}}),
      Declare::choice("draws", &C::draws, kDraws)
          .on(kGpu)
          .what("checkpointed kernels with Greeks: a recomputed segment draws its normals again, or reads the forward "
                "sweep's from the scratch buffer (4 or 8 bytes a draw per lane), or a loop computes every draw of the "
                "path into that buffer before the forward sweep and both sweeps read them")
          .byDefault({{"cuda", "stored"}, {"hip", "stored"}, {"opencl", "stored"}, {"vulkan", "prefill", false, 1}}),
      Declare::integer("prefill_ahead", &C::prefillAhead, 0, 4)
          .on(kGpu)
          .what("draws=prefill: forward segment s loads its draws once segment s-1-N has computed its last persistent "
                "value (0: the segment before; more: earlier loads, more registers holding them)")
          .searching({"0", "1", "2"})
          .actsWhere({{"draws", "prefill"}, {"opaque", "on"}}),
      Declare::choice("layout", &C::layout, kLayout)
          .on(kGpu)
          .what("the scratch buffer (a scratch kernel's values, the draws stored or prefilled): each slot's lanes side "
                "by side, coalesced (soa), or each lane's slots side by side (aos); a kernel with no buffer (plain, "
                "tangent, a register kernel that redraws) reports it unused")
          .actsOn({{"register", "scratch"}}),
  };
}

// The fields of the code it runs (its contract, loops and tangents), after them.
std::vector<ConfigField> codeFields() {
  return {
      Declare::choice("math", &C::math, kMath)
          .changesBits("changes what exp, log, sqrt and division compute: kernels compared for bits share it")
          .what("the accuracy contract: ieee (the language's full-accuracy functions), approx (fp32 on cuda, hip, "
                "opencl: the hardware's approximate instructions), glsl (Vulkan: GLSL.std.450's precision, its only "
                "contract)")
          .byDefault({{"vulkan", "glsl"}}),
      Declare::choice("philox", &C::philoxUnrolled, kPhilox)
          .listed({"unrolled", "rolled"})
          .on(kGpu)
          .what("Philox's ten rounds unrolled, or a rolled loop (CPU-served devices compile faster)")
          .byDefault({{"cuda", "unrolled"}, {"hip", "unrolled"}, {"opencl", "unrolled"}, {"vulkan", "unrolled"},
                      {"vulkan", "rolled", true}}),
      Declare::choice("loops", &C::loopsRolled, kLoops)
          .on(kGpu)
          .what("forward-only kernels (tangent; plain without Greeks): the tape's time loop (planner/loops.h) written "
                "once and run, a few steps a trip so each trip draws whole Philox calls, instead of every step written "
                "out; register kernels: their alike segments (the periodic strategy's, their default where they roll) "
                "written once and run forward and in reverse, at one market or several in the market loop: a fraction "
                "of the code, the same operations in the same order")
          .byDefault({{"cuda", "rolled"}, {"hip", "rolled"}, {"opencl", "rolled"}, {"vulkan", "rolled"}}),
      Declare::choice("loop_trip", &C::loopTripStep, kTrip)
          .on(kGpu)
          .what("loops=rolled, forward-only kernels: a trip of the time loop is the fewest steps that draw whole Philox "
                "calls (calls: each call and Box-Muller pair written once in the body), or one step (step: a body a "
                "fraction of the size, the call and the pair computed in the trips that start them and carried to the "
                "next, as a hand-written loop does); the same operations: the same bits")
          .actsWhere({{"loops", "rolled"}}),
      Declare::choice("closed_forms", &C::closedForms, kOnOff)
          .listed({"on", "off"})
          .on(kGpu)
          .changesBits(kTangentRounding)
          .what("tangent kernels: a value homogeneous of degree one in an input x (x times what x does not reach: a "
                "Black-Scholes spot's path, its sum) carries no tangent in x; where it is read by one that is not, its "
                "tangent is value * (1 / x) (planner/closed_forms.h; x = 0: not finite)")
          .byDefault({{"cuda", "on"}, {"hip", "on"}, {"opencl", "on"}, {"vulkan", "on"}}),
      Declare::choice("tangent_fma", &C::tangentFma, kOnOff)
          .listed({"on", "off"})
          .on(kGpu)
          .changesBits(kTangentRounding)
          .what("tangent kernels: a tangent whose terms are a product and a sum, t_a * b + t_b * a, written as one "
                "fused multiply-add, fma(t_b, a, t_a * b): one rounding less, one instruction less (values are never "
                "fused)")
          .byDefault({{"cuda", "on"}, {"hip", "on"}, {"opencl", "on"}, {"vulkan", "on"}}),
      Declare::integer("tangent_chunk", &C::tangentChunk, 0, 1'000'000)
          .what("tangent kernels: the most inputs one kernel differentiates by; more are split into chunks of N, a "
                "kernel each, run one after another on the same paths (the forward sweep once a chunk; the value "
                "checked alike in every chunk; each Greek the unchunked kernel's bits): a wide tape's tangent kernel "
                "compiles in parts (engine/tangent_chunks.h); 0: every input in one kernel where the field is named, else, on "
                "a GPU engine, auto's chunk: one kernel where its written-out terms are within 35,000 (about 1.3 MB "
                "of CUDA), else the fewest chunks within it, up to 32 (planner/tangent_chunk.h)")
          .actsOn({{"tangent"}, true, false})
          .searching({"0"}),  // not searched: each value compiles the tangent kernel again, whole or in parts
  };
}

// The fields of the IR's rewrites and of its market loops.
std::vector<ConfigField> rewriteFields() {
  return {
      Declare::choice("opaque", &C::opaque, kOnOff)
          .listed({"on", "off"})
          .on(kGpu)
          .what("the opaque identity on bookmark reads and fences (off: experiments only; the compiler may then merge "
                "a recompute with the first computation)")
          .searching({"on"}),
      Declare::choice("first_terms", &C::firstTermsSet, kFirstTerms)
          .listed({"set", "add"})
          .on(kGpu)
          .what("kernels with Greeks: an adjoint declared with its first term (set) instead of zero plus it (add): an "
                "addition of zero less per adjoint, which IEEE arithmetic cannot drop (0 + -0 is +0); the sign of a "
                "zero adjoint reaches no result, every Greek being a sum started at +0 (gpu/codegen/first_terms.h)")
          .searching({"set"}),
      Declare::choice("loads_ahead", &C::loadsAhead, kAhead)
          .on({"opencl", "cuda", "hip"})
          .what("rolled loops: a read of an array the loop does not write loaded one trip ahead, while this trip's work "
                "runs, instead of waited for when the trip starts: in the market loops (on: a register kernel's "
                "bookmarks in its reverse sweep, one market ahead; rows: also the arrays a market loop writes only at "
                "each market's own elements, the per-market adjoint rows, until the trip first writes them), or in "
                "every rolled loop (loops: the rolled "
                "segments' stored draws and bookmarks one trip ahead too; more registers), or the market loops and, "
                "into L2, the stored draws a rolled segments' next trip reads (prefetch: CUDA's prefetch.L2, OpenCL's "
                "prefetch(); no register held) (gpu/codegen/loads_ahead.h; "
                "not Vulkan: lavapipe returned other bits for the rotated reads of a 3-market register kernel, "
                "2026-12-06)")
          .byDefault({{"cuda", "on"}, {"hip", "on"}, {"opencl", "on"}}),
      Declare::integer("workgroup_rows", &C::workgroupRows, 0, 4096)
          .on({"cuda", "hip"})
          .what("the per-lane arrays loops index by a variable (a register kernel's per-market adjoint rows and "
                "bookmarks), the most read and written first, up to N elements a lane, in workgroup memory, a column a "
                "lane, instead of local memory: N * workgroup * 4 bytes (fp32) more workgroup memory, which the "
                "launch bound's blocks must fit (min_blocks); 0: local memory (gpu/codegen/workgroup_rows.h)")
          .searching({"0", "48"}),
      integerOrNamed("market_unroll", &C::marketUnroll, 1, 64, {{"whole", kUnrollWhole}})
          .on({"opencl", "cuda", "hip"})
          .what("the market loops (markets=loop, several markets a dispatch) unrolled N markets at a time by the "
                "kernel compiler (#pragma unroll N), or every market (whole, as N at least the market count: arrays "
                "indexed by the market may then live in registers), 1: kept rolled; the same statements for each "
                "market in the same order, the same bits (not Vulkan: GLSL spells only whole unrolling)")
          .actsWhere({{"markets", "loop"}})
          .actsOn({{"register"}, false, true})  // markets=loop's market loops are the register kernels
          // cuda's register kernels at several markets, with min_blocks=8 and cuda.reduce=device: 3,350.3 against
          // 3,130.9 Mpath/s at 7 (H100, runs/h100-2026-12-06h call 2)
          .byDefault({{"cuda", "whole", false, 0, "register"}, {"cuda", "1", false, 1, "register"}})
          .searching({"1"}),
      Declare::choice("rolled_adjoints", &C::rolledAdjointsCopy, kRolledAdjoints)
          .on(kGpu)
          .what("register kernels whose segments roll around the market loop: the adjoints that cross from a trip to "
                "the one before it, in two rows of a per-lane array chosen by the trip's parity (parity), or read from "
                "one row and written to the other, copied back at the trip's end (copy: a copy more a trip, but every "
                "index fixed, so with the market loop unrolled whole, market_unroll, they may live in registers); "
                "the same operations on the same values: the same bits")
          .actsWhere({{"loops", "rolled"}, {"markets", "loop"}})
          .actsOn({{"register"}, true, true})
          .searching({"parity"}),
  };
}

// The engines' own choices: launch bounds, shared arrays, outlining, and the run around the kernel, last.
std::vector<ConfigField> engineFields() {
  return {
      Declare::integer("min_blocks", &C::minBlocks, 0, 32)
          .on({"cuda", "hip"})
          .what("__launch_bounds__(workgroup, N): the compiler caps registers to fit N blocks per multiprocessor (HIP "
                "reads it as its occupancy hint); 0: no second bound")
          .byDefault({{"cuda", "12"},
                      {"cuda", "10", false, 1},
                      {"cuda", "10", false, 0, "tangent"},
                      {"cuda", "8", false, 0, "register"},  // with market_unroll=whole (2026-12-06h)
                      {"cuda", "6", false, 1, "register"}})
          .searching({"0", "6", "8", "10", "12"}),
      Declare::choice("shared_constants", &C::sharedConstants, kOnOff)
          .listed({"on", "off"})
          .on({"cuda", "hip"})
          .what("markets=loop: its arrays of values no draw reaches (the same in every lane) in workgroup-shared "
                "memory where they fit beside the Kahan sums, else per lane")
          .actsWhere({{"markets", "loop"}}),
      Declare::choice("outline_draws", &C::outlineDraws, kOnOff)
          .listed({"on", "off"})
          .on(kGpu)
          .what("Philox and Box-Muller as functions the compiler must not inline: one copy in the kernel instead of "
                "one per draw (CUDA, HIP __noinline__; OpenCL noinline; Vulkan SPIR-V's DontInline, which NVIDIA's "
                "driver honours: its one-market Asian ran 12x slower, 2026-12-03b)")
          .byDefault({{"cuda", "on", false, 1}, {"hip", "on", false, 1}, {"opencl", "on", false, 1}}),
      Declare::choice("shared_inputs", &C::sharedInputs, kOnOff)
          .listed({"on", "off"})
          .on(kGpu)
          .what("several markets: the inputs equal in every market of a dispatch (a spot ladder's strike, vol, rate, "
                "maturity) read once, and the values no other input reaches computed once per path (their adjoints "
                "stay per market); off: every value once per market")
          .searching({"on"}),
      Declare::choice("cuda.reduce", &C::cudaSums, kReduce)
          .on({"cuda"})
          .aroundTheKernel()
          .what("where each dispatch's partials are added, in double and block order: a reduction kernel behind it on "
                "the device, one beside the next kernel on a stream of the greatest priority, or on the host")
          // device for the register kernels at several markets: beside the next dispatch, the sums slowed the
          // market_unroll=whole kernel's later dispatches by up to 20% (H100, runs/h100-2026-12-06h call 2)
          .byDefault({{"cuda", "beside"}, {"cuda", "device", false, 0, "register"}, {"cuda", "beside", false, 1, "register"}})
          .searching({"device", "beside"}),
      integerOrNamed("cuda.carveout", &C::cudaCarveout, 0, 100, {{"driver", kCarveoutDriver}, {"fit", kCarveoutFit}})
          .on({"cuda"})
          .aroundTheKernel()
          .what("the split of each multiprocessor's 256 KB between workgroup memory and the L1 cache the kernel asks "
                "the driver for (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT): N percent of the most workgroup "
                "memory, the rest L1, which caches local memory (a register kernel's per-market rows and bookmarks); "
                "the driver follows it even where the blocks the registers allow no longer fit, so a low N can cost "
                "the occupancy (H100 2026-12-06f, the 252-step Asian's 7-market register kernel, fp32, math=ieee, 4M paths: "
                "3,143.7 Mpath/s at 25 against 3,090.8 at driver and 933.4 at 0); driver: the driver's own choice (135 KB of workgroup memory for that kernel's "
                "49 KB, its local loads hitting L1 in 34%); fit: the least that keeps the blocks a multiprocessor holds "
                "under the driver's split, computed when the kernel is loaded (said in the kernel's notes; the same kernel "
                "3,135.8 against 3,083.0, H100 2026-12-06g; the register kernels' default at several markets)")
          .byDefault({{"cuda", "driver"}, {"cuda", "fit", false, 0, "register"}, {"cuda", "driver", false, 1, "register"}})
          .searching({"driver", "fit", "25"}),
      Declare::integer("cuda.dispatches", &C::cudaDispatches, 1, 4)
          .on({"cuda"})
          .aroundTheKernel()
          .what("the most dispatches a run is cut into, each of whole waves and at least four of them (more: one "
                "dispatch's partials added or copied back while the next runs; fewer: fewer partly idle SMs where "
                "one dispatch ends and the next starts); the blocks and their sums stay where they are")
          .searching({"1", "4"}),
      Declare::integer("jit.chunk", &C::jitChunk, 1, 1'000'000)
          .on({"cpu-jit"})
          .what("most tape nodes per generated C++ function")
          .searching({"64", "256", "1024"}),
      Declare::integer("jit.part", &C::jitPart, 1, 1'000'000)
          .on({"cpu-jit"})
          .what("most tape nodes per translation unit: a longer tape's C++ is split into units compiled side by side")
          .searching({"512", "4096"}),
  };
}

}  // namespace

// The defaults per engine are the fastest exact configuration the H200 records support, field by
// field (papers/findings.md, "Defaults and retired knobs", says which measurements: the IEEE tunes
// of 2026-12-02 where they exist, else the earlier records; cuda's min_blocks at several markets the
// tunes of 2026-12-03, once shared_inputs let 80 registers hold the ladder; OpenCL's one-market draws out
// of line the 2026-12-03b tune, 446 against 290, with version 3's quantile by selection; Vulkan's one-market
// prefilled draws 2026-12-03d, 526 against 470); HIP, never timed, takes CUDA's code-shape fields but no
// launch bound. (Version 4 of the draws, Box-Muller, retired the quantile field and its gathered form:
// every draw does the same work, nothing to branch on, select or gather; papers/findings.md keeps
// their numbers.) cuda's cuda.reduce=beside at every market count and kind: the H100 calls of 2026-12-06
// (runs/h100-2026-12-06/call2: the one-market tangent kernel 1,207.5 Mpath/s against 1,098.0 behind, the
// 7-market one 4,216.3 against 4,009.3; runs/h100-2026-12-06b/call1: the register kernels 897.5 against 822.5
// at one market, 2,160.1 against 2,110.5 at seven, two rounds each). cuda's min_blocks=10 for tangent kernels
// at every market count: the 7-market tangent kernel 4,307.1 against 4,009.3 at 12 (h100-2026-12-06/call2),
// where the register kernel ran 1,998.0 at 10 against 2,160.1 at 12 (h100-2026-12-06b/call1). cuda's min_blocks=6
// for register kernels at one market: the 5 x 252 Heston basket's (126 rolled segments; 96 registers and 1,488 B
// of spill stores at 10) 34.59 Mpath/s against 24.61 at 10, 32.97 at 8 and 30.19 at 0 (h100-2026-12-06c/call8,
// 3 rounds each), where the Asian's and heston's one-market register kernels ran within 1% either way and
// heat's 75.8 against 66.2 (an H200, h100-2026-12-06c/call9, two rounds). OpenCL's
// workgroup 256: its tangent kernel (auto's choice on the Asian) 1,153.3 Mpath/s against 877.9 at 64 at one
// market (runs/h100-2026-12-06c/call1), and at seven 3,509.6 against 3,094.7 at 128 and 2,119.7 at 64
// (h100-2026-12-06c/call3), two rounds each, NVIDIA's OpenCL on the H100. cuda's cuda.carveout=fit for register
// kernels at several markets: the 7-market Asian's 3,135.8 Mpath/s against 3,083.0 at the driver's split
// (h100-2026-12-06g/call1, two rounds) and 3,105.7 against 3,076.1 in the tune of the same session (call 2, three
// repeats); at one market the Asian within 0.5% either way and the zoo's one-market kernels within about 2% both
// ways (the tangent kernel of the 20-asset worst-of +8.4%, the european's -1.5%), so the driver's split there.
const std::vector<ConfigField>& configFields() {
  static const std::vector<ConfigField> table = [] {
    std::vector<ConfigField> t = blockAndStorageFields();
    for (ConfigField& f : codeFields()) t.push_back(std::move(f));
    for (ConfigField& f : rewriteFields()) t.push_back(std::move(f));
    for (ConfigField& f : engineFields()) t.push_back(std::move(f));
    return t;
  }();
  return table;
}

const ConfigField* findConfigField(const std::string& name) {
  for (const ConfigField& f : configFields())
    if (name == f.name) return &f;
  return nullptr;
}

std::vector<std::string> searchValues(const ConfigField& field) {
  return field.search.empty() ? field.choices : field.search;
}

bool keepsBits(const ConfigField& field) { return field.keepsBits; }

bool fieldAppliesTo(const ConfigField& field, const std::string& engine) {
  return field.engines.empty() || std::find(field.engines.begin(), field.engines.end(), engine) != field.engines.end();
}

std::string fieldEngines(const ConfigField& field) {
  std::string out;
  for (const std::string& e : field.engines) out += (out.empty() ? "" : ",") + e;
  return out.empty() ? "*" : out;
}

std::string fieldActs(const ConfigField& field, const KernelConfig& config, const KernelShape& kernel) {
  for (const FieldRequirement& r : field.requires_)
    if (findConfigField(r.field)->get(config) != r.value) return std::string(r.field) + "=" + r.value + " not in effect";
  const FieldKernels& k = field.kernels;
  if (!kernel.kind.empty() && !k.kinds.empty() && std::find(k.kinds.begin(), k.kinds.end(), kernel.kind) == k.kinds.end()) {
    std::string kinds;
    for (size_t i = 0; i < k.kinds.size(); ++i) kinds += (i == 0 ? "" : i + 1 == k.kinds.size() ? " or " : ", ") + k.kinds[i];
    return "not a " + kinds + " kernel";
  }
  if (k.greeks && !kernel.greeks) return "value only";
  if (k.severalMarkets && kernel.markets == 1) return "one market per dispatch";
  return "";
}

KernelConfig defaultConfig(const std::string& engine, bool cpuDevice, int markets, const std::string& kind) {
  KernelConfig c;
  for (const ConfigField& f : configFields())
    for (const FieldDefault& d : f.defaults)
      if (d.engine == engine && (!d.cpuDevice || cpuDevice) && (d.markets == 0 || d.markets == markets) &&
          (*d.kind == '\0' || d.kind == kind))
        f.set(c, d.value, f.name);
  return c;
}

bool kindMayQualify(const ConfigField& field) {
  if (!field.keepsBits) return false;  // kernels of every kind compare for bits (a tangent kernel's values too)
  for (const char* read : {"loops", "closed_forms", "tangent_fma", "tangent_chunk", "shared_inputs", "math"})
    if (std::string(field.name) == read) return false;
  return true;
}

namespace {
// "name=value" of every field of the engine (kernelOnly: of those that shape the kernel), joined by commas.
std::string fieldsText(const KernelConfig& config, const std::string& engine, bool kernelOnly) {
  std::string text;
  for (const ConfigField& f : configFields())
    if (fieldAppliesTo(f, engine) && (f.shapesKernel || !kernelOnly))
      text += (text.empty() ? "" : ",") + std::string(f.name) + "=" + f.get(config);
  return text;
}
}  // namespace

std::string configText(const KernelConfig& config, const std::string& engine) { return fieldsText(config, engine, false); }

std::string kernelConfigText(const KernelConfig& config, const std::string& engine) {
  return fieldsText(config, engine, true);
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
      throw std::invalid_argument(what + ": field '" + name + "' applies to " + fieldEngines(*f) + ", not to engine " + engine);
    f->set(config, value, what + ": " + name);
    set.push_back(name);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return set;
}

ConfigRequest parseConfigText(const std::string& text, const std::string& what) {
  ConfigRequest r;
  r.what = what;
  r.fields = applyConfigText(r.values, text, "", what);
  return r;
}

ConfigRequest wholeConfig(const KernelConfig& config, const std::string& engine, const std::string& what) {
  ConfigRequest r;
  r.what = what;
  r.values = config;
  for (const ConfigField& f : configFields())
    if (fieldAppliesTo(f, engine)) r.fields.push_back(f.name);
  return r;
}

void applyConfigRequest(KernelConfig& config, const ConfigRequest& request, const std::string& engine) {
  for (const std::string& name : request.fields) {
    const ConfigField& f = *findConfigField(name);
    if (!engine.empty() && !fieldAppliesTo(f, engine))
      throw std::invalid_argument(request.what + ": field '" + name + "' applies to " + fieldEngines(f) +
                                  ", not to engine " + engine);
    f.set(config, f.get(request.values), request.what + ": " + name);
  }
}

std::string requestText(const ConfigRequest& request) {
  std::string text;
  for (const std::string& name : request.fields)
    text += (text.empty() ? "" : ",") + name + "=" + findConfigField(name)->get(request.values);
  return text;
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
