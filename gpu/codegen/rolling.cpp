#include "gpu/codegen/rolling.h"

#include <algorithm>
#include <numeric>

#include "tape/philox.h"

namespace tapelab {

bool RolledLoop::isExported(int32_t offset) const { return std::binary_search(exported.begin(), exported.end(), offset); }

namespace {

// Iteration k's shape: each offset's copies per market and tangent slots.
bool sameShape(const StoragePlan& s, const TapeLoop& L, int32_t k, int32_t k2) {
  for (int32_t o = 0; o < L.period; ++o) {
    const int32_t i = L.node(k, o), j = L.node(k2, o);
    if (s.nodes[i].copies != s.nodes[j].copies) return false;
    if (!s.tangents.of.empty() && s.tangents.of[i] != s.tangents.of[j]) return false;
  }
  return true;
}

std::string notRolled(const std::string& why) { return "loops=rolled: " + why + ", written out"; }

// Why one-step trips cannot carry the loop's draws ("" when they can): each iteration's draws, in node order,
// must be consecutive from iteration 0's first, that one the first draw of a Philox call.
std::string whyNotStepwise(const Tape& tape, const TapeLoop& L) {
  int64_t next = -1, first = -1;
  for (int32_t k = 0; k < L.count; ++k)
    for (int32_t o = 0; o < L.period; ++o) {
      const int32_t i = L.node(k, o);
      if (tape.op[i] != Op::Randn) continue;
      const int64_t d = static_cast<int64_t>(tape.imm[i]);
      if (first < 0) first = next = d;
      if (d != next) return "the loop's draws are not read in order, one after another";
      ++next;
    }
  if (first < 0) return "the loop draws nothing";
  if (first % kDrawsPerCall != 0) return "the loop's first draw does not start a Philox call";
  return "";
}

}  // namespace

RolledLoop planRolling(const Tape& tape, const KernelOptions& options, const StoragePlan& storage) {
  RolledLoop r;
  if (!options.config.loopsRolled) return r;
  const bool forwardOnly = options.kind == KernelKind::Tangent || (options.kind == KernelKind::Plain && !options.greeks);
  if (!forwardOnly) {  // a register kernel's segments: planRolledSegments
    if (options.config.loopTripStep) r.stepWhyNot = "loop_trip=step: the time loop of forward-only kernels only";
    if (options.kind != KernelKind::Register || !options.greeks)
      r.whyNot = notRolled(options.kind == KernelKind::Plain ? "the plain kernel keeps every value for its reverse sweep"
                                                             : std::string("a ") + toString(options.kind) + " kernel");
    return r;
  }
  r.loop = findLoop(tape);
  const TapeLoop& L = r.loop;
  if (!L.found()) {
    r.whyNot = notRolled("no time loop in the tape (planner/loops.h)");
    return r;
  }
  // Whole Philox calls per trip: unroll * drawStride a multiple of 4.
  const int64_t stride = L.drawStride < 0 ? -L.drawStride : L.drawStride;
  r.unroll = stride == 0 ? 1 : static_cast<int32_t>(kDrawsPerCall / std::gcd<int64_t>(stride, kDrawsPerCall));
  if (options.config.loopTripStep && r.unroll == 1) {
    r.stepWhyNot = "loop_trip=step: a trip of one step draws whole Philox calls already";
  } else if (options.config.loopTripStep) {
    r.stepWhyNot = whyNotStepwise(tape, L);
    r.stepwise = r.stepWhyNot.empty();
    if (r.stepwise) r.unroll = 1;
    else r.stepWhyNot = "loop_trip=step: " + r.stepWhyNot + ", trips of whole Philox calls";
  }
  // The shape is steady from the iteration `steady` on; the template reads iteration templateStart - 1.
  int32_t steady = L.count - 1;
  while (steady > 0 && sameShape(storage, L, steady - 1, L.count - 1)) --steady;
  r.templateStart = std::max(1, steady + 1);
  r.iterations = L.count / r.unroll * r.unroll;
  if (r.templateStart + r.unroll > L.count || r.iterations < r.unroll) {
    r.whyNot = notRolled("the loop's " + std::to_string(L.count) + " iterations settle too late for a body of " +
                         std::to_string(r.unroll));
    return r;
  }
  // Carried offsets, and those the nodes after the loop read from its last iteration.
  std::vector<uint8_t> exported(L.period, 0);
  for (const TapeLoop::BodyNode& b : L.body)
    for (int k = 0; k < 3; ++k)
      if (b.kind[k] == TapeLoop::Arg::Carried) exported[b.ref[k]] = 1;
  const int32_t after = L.node(r.iterations, 0), last = L.node(r.iterations - 1, 0);
  for (int32_t i = after; i < tape.size(); ++i)
    forEachArg(tape, i, [&](int32_t j) {
      if (j >= last && j < after) exported[j - last] = 1;
    });
  if (tape.output >= last && tape.output < after) exported[tape.output - last] = 1;
  for (int32_t o = 0; o < L.period; ++o)
    if (exported[o]) r.exported.push_back(o);
  r.rolled = true;
  return r;
}

std::string toText(const RolledLoop& r, const Tape& tape) {
  if (!r.rolled) return (r.whyNot.empty() ? std::string("not asked") : r.whyNot) + "\n";
  std::string s = toText(r.loop, tape);
  s += std::string(r.stepwise ? "rolled, draws carried from trip to trip: " : "rolled: ") + std::to_string(r.trips()) +
       " trips of " + std::to_string(r.unroll) + " iteration(s), body from iteration " +
       std::to_string(r.templateStart) + ", " + std::to_string(r.loop.count - r.iterations) + " written out after; carried offsets";
  for (int32_t o : r.exported) s += " " + std::to_string(o);
  return s + "\n";
}

}  // namespace tapelab

namespace tapelab {

namespace {

std::string segmentsNot(const std::string& why) { return "loops=rolled: " + why + ", every segment written out"; }

// Block of top-level segment s in a flat plan's schedule (run order: the last segment first).
const ScheduleBlock& blockOf(const Schedule& schedule, int s) {
  return schedule.blocks[schedule.blocks.size() - 1 - static_cast<size_t>(s)];
}

// Segment s is segment t shifted by `shift` nodes: its imports, adjoints, persistent values, adjoint places and
// stored-draw slots (shifted by `slots`) correspond; nodes before `fixedBelow` are the same nodes in both.
bool shifted(const Tape& tape, const KernelOptions& o, const StoragePlan& st, const Schedule& schedule, int t, int s,
             int32_t shift, int32_t fixedBelow, int64_t slots) {
  const ScheduleBlock &a = blockOf(schedule, t), &b = blockOf(schedule, s);
  auto same = [&](const std::vector<int32_t>& x, const std::vector<int32_t>& y) {
    if (x.size() != y.size()) return false;
    for (size_t k = 0; k < x.size(); ++k)
      if (y[k] != (x[k] < fixedBelow ? x[k] : x[k] + shift)) return false;
    return true;
  };
  if (!same(a.imports, b.imports) || !same(a.adjoints, b.adjoints)) return false;
  for (int32_t i = a.begin; i < a.end; ++i) {
    const int32_t j = i + shift;
    if (tape.op[i] != tape.op[j] || o.plan.isPersistent[i] != o.plan.isPersistent[j]) return false;
    if ((st.nodes[i].adjoint == AdjointPlace::None) != (st.nodes[j].adjoint == AdjointPlace::None)) return false;
    if (st.nodes[i].copies != st.nodes[j].copies || st.nodes[i].value != st.nodes[j].value) return false;
    if (st.nodes[i].drawSlot >= 0 && st.nodes[j].drawSlot != st.nodes[i].drawSlot + slots) return false;
  }
  return true;
}

}  // namespace

RolledSegments planRolledSegments(const Tape& tape, const KernelOptions& o, const StoragePlan& storage,
                                  const Schedule* schedule) {
  RolledSegments r;
  if (!o.config.loopsRolled || o.kind != KernelKind::Register || !o.greeks) return r;
  const Plan& plan = o.plan;
  if (const std::string why = rolledSegmentsWhyNot(tape, o); !why.empty()) return r.whyNot = segmentsNot(why), r;
  if (plan.nested() || plan.perValue || !schedule) return r.whyNot = segmentsNot("a nested or per-value plan"), r;
  const TapeLoop L = findLoop(tape);
  if (!L.found()) return r.whyNot = segmentsNot("no time loop in the tape (planner/loops.h)"), r;
  // The longest run of segments of one length, a whole number of iterations, inside the loop.
  int bestFirst = 0, bestTrips = 0;
  for (int s = 0; s < plan.segments();) {
    const int32_t len = plan.end(s) - plan.begin(s);
    int e = s;
    while (e < plan.segments() && plan.end(e) - plan.begin(e) == len && plan.begin(e) >= L.begin && plan.end(e) <= L.end()) ++e;
    if (e - s > bestTrips && len % L.period == 0) bestFirst = s, bestTrips = e - s;
    s = std::max(e, s + 1);
  }
  if (bestTrips < 2)
    return r.whyNot = segmentsNot("no two segments of one length inside the time loop (the periodic strategy cuts so)"), r;
  r.first = bestFirst;
  r.length = plan.end(bestFirst) - plan.begin(bestFirst);
  r.drawShift = static_cast<int64_t>(r.length / L.period) * L.drawStride;
  if (r.drawShift % 4 != 0) return r.whyNot = segmentsNot("a segment draws part of a Philox call"), r;
  const int32_t start = plan.begin(bestFirst);
  // Trips while each segment is the template shifted (its crossing values the template's, shifted).
  r.trips = 1;
  while (r.trips < bestTrips && shifted(tape, o, storage, *schedule, bestFirst, bestFirst + r.trips, r.trips * r.length,
                                        L.begin, r.trips * r.drawShift))
    ++r.trips;
  if (r.trips < 2) return r.whyNot = segmentsNot("its segments are not alike"), r;
  for (int32_t j : blockOf(*schedule, bestFirst).imports)
    if (j >= L.begin && j < start) r.carried.push_back(j);
  // Each crossing value comes from the segment just before and has the copies of its next trip's (a value the
  // markets share before the template and one per market after it has no row shape for every trip).
  for (int32_t j : r.carried) {
    if (j < start - r.length) return r.whyNot = segmentsNot("a value crosses more than one segment"), r;
    if (storage.nodes[j].copies != storage.nodes[j + r.length].copies)
      return r.whyNot = segmentsNot("a crossing value the markets share before the segments and not in them"), r;
  }
  // What the template keeps for the segments after it is what the next one imports from it, shifted.
  for (int32_t i = start; i < start + r.length; ++i)
    if (plan.isPersistent[i] && i != tape.output &&
        !std::binary_search(r.carried.begin(), r.carried.end(), i - r.length))
      return r.whyNot = segmentsNot("a value crosses more than one segment"), r;
  if (storage.marketLoop) {
    // Several markets: a crossing value's copies live in rows of one per-lane array, one element per market
    // (where the written-out kernel keeps it in a lane or workgroup array: the same value either way); its
    // adjoints in two rows, set where each trip first writes them, as the written-out segments' shared arrays
    // are (adjoint_arrays.h): each trip must set exactly its crossing values', and the segment after the trips
    // those it reads from them.
    for (int t = 0; t <= r.trips; ++t) {
      const int s = bestFirst + t;
      if (s >= plan.segments()) return r.whyNot = segmentsNot("the rolled segments end the tape"), r;
      std::vector<int32_t> want, got = storage.adjointArraysSetIn.at(static_cast<size_t>(s));
      for (int32_t j : r.carried)
        if (storage.nodes[j].adjoint != AdjointPlace::None) want.push_back(j + t * r.length);
      std::sort(got.begin(), got.end());
      if (t == r.trips ? !std::includes(got.begin(), got.end(), want.begin(), want.end()) : got != want)
        return r.whyNot = segmentsNot("its segments' adjoint arrays are not set alike"), r;
    }
  }
  r.rolled = true;
  return r;
}

std::string toText(const RolledSegments& r) {
  if (!r.rolled) return (r.whyNot.empty() ? std::string("not asked") : r.whyNot) + "\n";
  std::string s = "segments " + std::to_string(r.first) + ".." + std::to_string(r.first + r.trips - 1) + " rolled: " +
                  std::to_string(r.trips) + " trips of " + std::to_string(r.length) + " nodes, " + std::to_string(r.drawShift) +
                  " draws a trip; carried";
  for (int32_t j : r.carried) s += " " + std::to_string(j);
  return s + "\n";
}

}  // namespace tapelab
