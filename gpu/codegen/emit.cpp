// emitKernel: the GPU kernel compiler's passes, top to bottom (Halide's lower_impl). Each pass is one
// file with one documented function; each result is kept, printable, in EmittedKernel::passes.
#include "gpu/codegen/emit.h"

#include <functional>
#include <optional>
#include <utility>

#include "planner/closed_forms.h"
#include "gpu/codegen/build.h"
#include "gpu/codegen/draw_keys.h"
#include "gpu/codegen/draws.h"
#include "gpu/codegen/first_terms.h"
#include "gpu/codegen/loads_ahead.h"
#include "gpu/codegen/print.h"
#include "gpu/codegen/recompute.h"
#include "gpu/codegen/rolling.h"
#include "gpu/codegen/storage.h"
#include "gpu/codegen/workgroup_rows.h"
#include "planner/schedule.h"

namespace tapelab {

EmittedKernel emitKernel(const Tape& tape, const KernelOptions& options, const Dialect& dialect) {
  EmittedKernel k;
  auto log = [&](const char* pass, std::string text) { k.passes.push_back({pass, std::move(text)}); };
  const bool checkpointed = options.kind == KernelKind::Register || options.kind == KernelKind::Scratch;

  // Where every value, adjoint and sum lives (validates the options first).
  const StoragePlan storage = planStorage(tape, options, dialect, options.config.workgroup);
  log("storage", toText(storage, tape));
  // What a checkpointed reverse sweep is: its blocks, then what each recomputes.
  std::optional<Schedule> schedule;
  std::optional<RecomputeLists> recompute;
  if (checkpointed && options.greeks) {
    schedule = lowerPlan(tape, options.plan);
    log("schedule", toText(*schedule));
    recompute = recomputeLists(tape, *schedule, storage);
    log("recompute", toText(*recompute));
  }
  // Whether a forward-only kernel rolls the tape's time loop.
  const RolledLoop rolling = planRolling(tape, options, storage);
  const RolledSegments segments = planRolledSegments(tape, options, storage, schedule ? &*schedule : nullptr);
  if (options.config.loopsRolled) log("loops", segments.rolled || !segments.whyNot.empty() ? toText(segments) : toText(rolling, tape));
  // Which tangents a tangent kernel spells in closed form instead of carrying them.
  const ClosedForms closed =
      closedForms(tape, storage.tangents, options.config.closedForms && options.kind == KernelKind::Tangent && options.greeks);
  if (options.kind == KernelKind::Tangent && options.greeks) log("activity", toText(closed, tape));
  // Which value keys each forward segment's prefilled draw loads.
  const DrawLoadKeys drawKeys = drawLoadKeys(tape, options, storage);
  if (!drawKeys.keyNode.empty()) log("draw keys", toText(drawKeys));
  // The kernel as a tree of statements, then where each block computes its draws.
  KernelAnalyses analyses;
  analyses.storage = &storage;
  analyses.schedule = schedule ? &*schedule : nullptr;
  analyses.recompute = recompute ? &*recompute : nullptr;
  analyses.drawKeys = &drawKeys;
  analyses.rolling = &rolling;
  analyses.closed = &closed;
  analyses.segments = &segments;
  analyses.unused = storage.unused;
  if (!rolling.whyNot.empty()) analyses.unused.push_back(rolling.whyNot);
  if (!segments.whyNot.empty()) analyses.unused.push_back(segments.whyNot);
  if (!rolling.stepWhyNot.empty()) analyses.unused.push_back(rolling.stepWhyNot);
  if (options.config.rolledAdjointsCopy && !(segments.rolled && options.markets > 1 && options.greeks))
    analyses.unused.push_back("rolled_adjoints=copy: no segments roll around a market loop");
  if (rolling.rolled && options.config.outlineDraws)
    analyses.unused.push_back("outline_draws=on: the time loop rolls, its draws are written once already (inlined)");
  ir::KernelIR kernel = buildKernel(tape, options, dialect, analyses);
  scopeDraws(kernel);
  // Each adjoint declared with its first term, not zero plus it.
  if (options.greeks && options.kind != KernelKind::Tangent && options.config.firstTermsSet) log("first terms", toText(setFirstTerms(kernel)));
  // The rolled loops' reads of arrays they do not write, one trip ahead.
  if (options.config.loadsAhead != AheadLoads::Off && dialect.name != "glsl") {  // config: not Vulkan (loads_ahead.h)
    if (const LoadsAhead ahead = loadAhead(kernel, options.config.loadsAhead == AheadLoads::Loops,
                                           options.config.loadsAhead == AheadLoads::Rows);
        ahead.reads > 0) {
      log("loads ahead", toText(ahead));
      if (options.config.loadsAhead == AheadLoads::Rows && ahead.ownReads == 0) {  // rows did nothing more than on
        analyses.unused.push_back("loads_ahead=rows: no market loop writes an array only at its own elements, as on");
        kernel.header.push_back("config unused: " + analyses.unused.back());
      }
    } else {  // said where the header says the others (build_kernel.cpp) and in the kernel's stats
      analyses.unused.push_back(std::string("loads_ahead=") + toString(options.config.loadsAhead) +
                                ": no rolled loop reads an array it does not write");
      kernel.header.push_back("config unused: " + analyses.unused.back());
    }
  }
  // The stored draws a rolled segments' next trip reads, into L2 while this trip runs.
  if (options.config.loadsAhead == AheadLoads::Prefetch) {  // where the dialect spells one (dialect.h: not GLSL, HIP)
    const Prefetches fetched = dialect.prefetch.empty() ? Prefetches{} : prefetchAhead(kernel, "scratch");
    if (fetched.reads > 0) {
      log("prefetch", toText(fetched));
    } else {
      analyses.unused.push_back(dialect.prefetch.empty() ? "loads_ahead=prefetch: " + dialect.name + " has no prefetch here, as on"
                                                         : "loads_ahead=prefetch: no rolled segments' loop reads the scratch buffer, as on");
      kernel.header.push_back("config unused: " + analyses.unused.back());
    }
  }
  // The per-lane arrays loops index by a variable, in workgroup memory (CUDA, HIP: declared where they are).
  if (options.config.workgroupRows > 0 && !dialect.blockShared.empty()) {
    const WorkgroupRows rows =
        moveRowsToWorkgroup(kernel, options.config.workgroupRows, options.precision == Precision::F64 ? 8 : 4);
    if (!rows.moved.empty()) {
      log("workgroup rows", toText(rows));
    } else {
      analyses.unused.push_back("workgroup_rows=" + std::to_string(options.config.workgroupRows) + ": " +
                                (rows.left.empty() ? "no per-lane array is indexed by a variable"
                                                   : "no per-lane array indexed by a variable fits: " + rows.left[0]));
      kernel.header.push_back("config unused: " + analyses.unused.back());
    }
  }
  // config market_unroll: said unused where the build wrote no market loop to unroll.
  if (options.config.marketUnroll != 1 && !dialect.unrollPragma.empty()) {
    std::function<bool(const std::vector<ir::Stmt>&)> unrolls = [&](const std::vector<ir::Stmt>& body) {
      for (const ir::Stmt& s : body)
        if ((s.kind == ir::Stmt::Kind::Loop && s.unrollBy > 1) || unrolls(s.body)) return true;
      return false;
    };
    if (!unrolls(kernel.body)) {
      analyses.unused.push_back("market_unroll=" + findConfigField("market_unroll")->get(options.config) +
                                ": the kernel has no market loop (one market, markets=copies, or a tangent kernel)");
      kernel.header.push_back("config unused: " + analyses.unused.back());
    }
  }
  // The text.
  k.source = printKernel(kernel, dialect);

  k.entry = dialect.entry;
  k.dialect = dialect.name;
  k.precision = options.precision;
  k.kind = options.kind;
  k.workgroupSize = options.config.workgroup;
  k.pathsPerLane = options.config.lanes;
  k.markets = options.markets;
  k.numInputs = tape.numInputs();
  k.width = options.greeks ? 1 + tape.numInputs() : 1;
  k.scratchSlots = storage.laneSlots();
  k.segments = checkpointed ? options.plan.segments() : 1;
  k.wrt = options.kind == KernelKind::Tangent ? options.wrt : std::vector<int>{};
  k.configUnused = analyses.unused;
  k.outlinedDraws = kernel.helpers.outlineDraws;
  k.sharedInputs = storage.sharedInputs;
  for (int i : storage.sharedInputs) k.sharedInputNames.push_back(tape.inputNames[i]);
  return k;
}

std::string passesText(const EmittedKernel& kernel) {
  std::string s;
  for (const auto& [pass, text] : kernel.passes) s += "== " + pass + "\n" + text;
  return s;
}

}  // namespace tapelab
