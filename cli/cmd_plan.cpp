// tapelab plan: where a strategy cuts a tape and what the plan costs
// (planner/metrics.h), next to the plain kernel; --all compares every
// strategy over a range of segment counts.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.h"
#include "cli/commands.h"
#include "planner/liveness.h"
#include "planner/metrics.h"
#include "planner/planfile.h"
#include "planner/strategies.h"
#include "util/files.h"

namespace tapelab::cli {
namespace {

struct Row {
  std::string strategy;
  int requested = 1;
  Plan plan;
  PlanMetrics metrics;
  double seconds = 0;
};

// `base` carries --seglen, --inner and --budget.
Row planRow(const Tape& t, const std::string& strategy, int segments, const PlanOptions& base) {
  Row r;
  r.strategy = strategy;
  r.requested = segments;
  PlanOptions o = base;
  o.segments = segments;
  const auto t0 = std::chrono::steady_clock::now();
  r.plan = makeStrategyPlan(strategy, t, o);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.metrics = planMetrics(t, r.plan);
  return r;
}

std::string peakWhere(const PlanMetrics& m) {
  return m.peakSegment < 0 ? "forward" : std::to_string(m.peakSegment);
}

std::vector<std::string> metricCells(const PlanMetrics& m) {
  char cost[32];
  std::snprintf(cost, sizeof cost, "%.0f", m.recomputeCost);
  return {std::to_string(m.segments), std::to_string(m.depth), std::to_string(m.persistent),
          std::to_string(m.peakLive), std::to_string(m.scratchSlots), std::to_string(m.recomputeOps),
          cost, peakWhere(m)};
}

std::string metricsJson(const PlanMetrics& m) {
  Json j;
  j.integer("segments", m.segments)
      .integer("persistent", m.persistent)
      .integer("peak_live", m.peakLive)
      .integer("scratch_slots", m.scratchSlots)
      .integer("recompute_ops", m.recomputeOps)
      .number("recompute_cost", m.recomputeCost)
      .integer("depth", m.depth)
      .integer("peak_segment", m.peakSegment);
  return j.done();
}

std::string intArray(const std::vector<int32_t>& v, size_t from = 0, size_t to = std::string::npos) {
  std::vector<std::string> items;
  for (size_t i = from; i < v.size() && i < to; ++i) items.push_back(std::to_string(v[i]));
  return jsonArray(items);
}

std::string cutsText(const Plan& p) {
  std::string out;
  for (int s = 1; s < p.segments(); ++s) out += (s > 1 ? " " : "") + std::to_string(p.bounds[s]);
  return out.empty() ? "(none)" : out;
}

std::string tapeJson(const Tape& t) {
  Json j;
  j.str("name", t.name).integer("nodes", t.size()).integer("inputs", t.numInputs()).integer("draws", t.drawCount())
      .str("structure", structureHash(t));  // what a plan file names its tape by
  return j.done();
}

std::string rowJson(const Row& r, bool detail, const Tape& t) {
  Json j;
  j.str("strategy", r.strategy)
      .integer("requested_segments", r.requested)
      .field("cuts", intArray(r.plan.bounds, 1, r.plan.bounds.size() - 1));
  if (r.plan.nested()) j.field("inner", planInnerJson(r.plan));
  j.field("metrics", metricsJson(r.metrics))
      .number("plan_seconds", r.seconds);
  if (detail) {
    const std::vector<int32_t> live = liveAcross(t, lastUse(t));
    std::vector<std::string> segs;
    for (int s = 0; s < r.plan.segments(); ++s) {
      Json g;
      g.integer("begin", r.plan.begin(s)).integer("end", r.plan.end(s));
      if (s + 1 < r.plan.segments())
        g.integer("live_across_end", live[r.plan.end(s)]).field("stored_at_end", intArray(r.plan.storedAt[s]));
      segs.push_back(g.done());
    }
    j.field("persistent_nodes", intArray(r.plan.persistent)).field("segment_list", jsonArray(segs));
  }
  return j.done();
}

int parseSegments(const Flags& f, const Tape& t) {
  const std::string label = f.label("checkpoint");
  Checkpoint c;
  try {
    c = Checkpoint::parse(*f.textOrDefault("checkpoint"), label);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (c.mode == Checkpoint::Mode::Off) return 1;
  if (c.mode == Checkpoint::Mode::Auto) return t.size() >= f.positive("ckpt-nodes") ? RunConfig().segments : 1;
  const int segments = c.segments;
  if (segments > t.size())
    throw UsageError(label + ": " + std::to_string(segments) + " segments exceed the tape's " +
                     std::to_string(t.size()) + " nodes");
  return segments;
}

void checkStrategy(const std::string& name, const std::string& label) {
  try {
    findStrategy(name);
  } catch (const std::invalid_argument& e) {
    throw UsageError(label + ": " + e.what());
  }
}

int plan(const Flags& f) {
  const Tape t = tapeFrom(f);
  const bool json = f.given("json");
  const bool all = f.given("all");
  PlanOptions base;
  if (f.given("seglen")) base.segLen = f.positive("seglen");
  if (f.given("inner")) base.innerSegments = f.positive("inner");
  if (f.given("budget")) base.budget = f.positive("budget");
  if (f.given("markets")) {
    base.markets = f.positive("markets");
    if (base.markets > 8) throw UsageError("--markets: expected 1..8, got " + std::to_string(base.markets));
  }
  std::optional<std::string> onlyStrategy;
  if (f.onCommandLine("strategy") || (!all && f.given("strategy"))) {  // --all ignores TAPELAB_STRATEGY
    onlyStrategy = *f.text("strategy");
    checkStrategy(*onlyStrategy, f.label("strategy"));
  }
  const PlanMetrics plain = planMetrics(t, plainPlan(t));
  const std::vector<std::string> header{"kernel",        "strategy",      "segments",       "depth",
                                        "persistent",    "peak_live",     "scratch_slots",  "recompute_ops",
                                        "recompute_cost", "peak_segment"};
  auto plainCells = [&] {
    std::vector<std::string> r{"plain", "plain"};
    for (auto& c : metricCells(plain)) r.push_back(c);
    return r;
  };

  if (!all) {
    if (f.given("min-segments") || f.given("max-segments")) throw UsageError("--min-segments and --max-segments need --all");
    const int segments = parseSegments(f, t);
    const Row r = planRow(t, onlyStrategy.value_or(*f.textOrDefault("strategy")), segments, base);
    if (auto out = f.text("out")) {
      // util/files.h: through links, never replacing a special file, never the run's own tape.
      writeOutputFile(*out, planFileText(t, r.plan, segments), f.all("file"), "--out");
      if (!json) std::printf("plan written to %s\n", out->c_str());
    }
    if (json) {
      Json j;
      j.field("tape", tapeJson(t)).field("plain", metricsJson(plain)).field("plan", rowJson(r, true, t));
      std::printf("%s\n", j.done().c_str());
      return kExitOk;
    }
    std::printf("%s: %d nodes, %d inputs, %llu draws\n\n", t.name.c_str(), t.size(), t.numInputs(), static_cast<unsigned long long>(t.drawCount()));
    std::vector<std::string> cut{r.plan.segments() > 1 ? "register" : "plain", r.strategy};
    for (auto& c : metricCells(r.metrics)) cut.push_back(c);
    std::printf("%s\ncuts: %s\n\n", table(header, {plainCells(), cut}).c_str(), cutsText(r.plan).c_str());
    const std::vector<int32_t> live = liveAcross(t, lastUse(t));
    std::vector<std::vector<std::string>> segRows;
    for (int s = 0; s < r.plan.segments(); ++s) {
      const bool last = s + 1 == r.plan.segments();
      segRows.push_back({std::to_string(s), std::to_string(r.plan.begin(s)), std::to_string(r.plan.end(s)),
                         std::to_string(r.plan.end(s) - r.plan.begin(s)),
                         last ? "-" : std::to_string(live[r.plan.end(s)]),
                         last ? "-" : std::to_string(r.plan.storedAt[s].size())});
    }
    std::printf("%s", table({"segment", "begin", "end", "nodes", "live_across_end", "stored_at_end"}, segRows).c_str());
    return kExitOk;
  }

  if (f.onCommandLine("checkpoint")) throw UsageError("--all takes --min-segments and --max-segments, not --checkpoint");
  if (f.given("out")) throw UsageError("--out writes one plan: not with --all");
  const int lo = f.integer("min-segments"), hi = f.integer("max-segments");
  if (lo < 1) throw UsageError("--min-segments: expected a positive integer, got " + std::to_string(lo));
  if (hi < 1) throw UsageError("--max-segments: expected a positive integer, got " + std::to_string(hi));
  if (lo > hi) throw UsageError("--min-segments " + std::to_string(lo) + " is above --max-segments " + std::to_string(hi));
  const int from = std::min(lo, t.size()), to = std::min(hi, t.size());
  // Strategies are pure functions of (tape, options): rows are planned on every core.
  std::vector<std::pair<std::string, int>> jobs;
  for (const StrategyEntry& s : strategies()) {
    if (onlyStrategy && s.name != *onlyStrategy) continue;
    for (int segs = from; segs <= to; ++segs) jobs.emplace_back(s.name, segs);
  }
  std::vector<Row> rows(jobs.size());
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failureMutex;
  auto worker = [&] {
    try {
      for (size_t k; (k = next.fetch_add(1)) < jobs.size();) rows[k] = planRow(t, jobs[k].first, jobs[k].second, base);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failureMutex);
      if (!failure) failure = std::current_exception();
      next = jobs.size();
    }
  };
  std::vector<std::thread> pool;
  const unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 16));
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
  const Row* best = nullptr;
  for (const Row& r : rows)
    if (!best || r.metrics.peakLive < best->metrics.peakLive) best = &r;
  if (json) {
    std::vector<std::string> items;
    for (const Row& r : rows) items.push_back(rowJson(r, false, t));
    Json j;
    j.field("tape", tapeJson(t)).field("plain", metricsJson(plain)).field("rows", jsonArray(items));
    std::printf("%s\n", j.done().c_str());
    return kExitOk;
  }
  std::vector<std::string> allHeader{"kernel",        "strategy",      "requested",     "segments",
                                     "depth",         "persistent",    "peak_live",     "scratch_slots",
                                     "recompute_ops", "recompute_cost", "peak_segment", "plan_ms"};
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> p = plainCells();
  p.insert(p.begin() + 2, "1");
  p.push_back("-");
  out.push_back(p);
  for (const Row& r : rows) {
    std::vector<std::string> cells{r.plan.segments() > 1 ? "register" : "plain", r.strategy, std::to_string(r.requested)};
    for (auto& c : metricCells(r.metrics)) cells.push_back(c);
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.3f", r.seconds * 1e3);
    cells.push_back(ms);
    out.push_back(cells);
  }
  std::printf("%s: %d nodes, %d inputs, %llu draws\n\n%s", t.name.c_str(), t.size(), t.numInputs(), static_cast<unsigned long long>(t.drawCount()),
              table(allHeader, out).c_str());
  if (best)
    std::printf("\nleast peak_live: %s at %d segments (requested %d): %d, plain %d\n", best->strategy.c_str(),
                best->metrics.segments, best->requested, best->metrics.peakLive, plain.peakLive);
  return kExitOk;
}

}  // namespace

Runner setupPlan(CLI::App& app) {
  std::string list;
  for (const StrategyEntry& s : strategies()) list += "  " + s.name + std::string(20 - s.name.size(), ' ') + s.summary + "\n";
  list.pop_back();
  app.footer("Prints where a strategy cuts the tape and what the plan costs: depth (levels of\n"
             "nested cuts), persistent values, peak_live (most values live at once: the\n"
             "register-pressure proxy), scratch slots, recomputed operations and their weighted\n"
             "cost (PTX instructions per op, planner/costs.h), next to the plain kernel's\n"
             "(definitions: planner/metrics.h). For revolve the segment count is the number of\n"
             "snapshots. --out writes the plan as a file that run, price, compare and the\n"
             "experiment drivers take with --plan (format: planner/planfile.h).\n\n"
             "strategies:\n" + list);
  auto f = std::make_shared<Flags>(app);
  addTapeFlags(*f, TapeSource::FileOrProduct);
  f->knob("strategy", "NAME", "window", "with --all, only this one");
  f->knob("checkpoint", "SEGMENTS", "16", "off = 1; auto: " + std::to_string(RunConfig().segments) +
                                              " from --ckpt-nodes nodes");
  f->knob("ckpt-nodes", "N", std::to_string(RunConfig().ckptNodes));
  f->knob("seglen", "N", "", "uniform: N nodes per segment instead of a segment count");
  f->knob("inner", "N");
  f->knob("budget", "B", "", "default: with --markets, the register-file default for M markets, else window's peak_live at that segment count");
  f->value("markets", "M", "budget: derive the default budget for a register kernel of M markets per dispatch (1-8): min(212, 400/M), from the sm_90 calibration (runs)");
  f->value("out", "FILE", "write the plan to FILE (a plan file: run it with --plan FILE)");
  f->flag("all", "one row per strategy and segment count, with the plain kernel");
  f->value("min-segments", "A", "--all: smallest segment count", "2");
  f->value("max-segments", "B", "--all: largest segment count (both capped at the node count)", "32");
  f->flag("json", "print JSON instead of tables (numbers with 17 significant digits)");
  return [f] { return plan(*f); };
}

}  // namespace tapelab::cli
