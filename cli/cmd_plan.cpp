// tapelab plan: where a strategy cuts a tape and what the plan costs
// (planner/metrics.h), next to the plain kernel; --all compares every
// strategy (or a list) over a range of segment counts, says on stderr how far
// it got, and sums up with the Pareto front of peak_live against weighted
// recompute cost.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "api/knobs.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/plan_parts.h"
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

// --from-schedule FILE: a checkpoint_schedules schedule's plan (cli/cmd_plan_schedule.cpp).
Row scheduleRow(const Flags& f, const Tape& t) {
  Row r;
  const auto t0 = std::chrono::steady_clock::now();
  r.plan = planFromScheduleFlag(f, t);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.strategy = r.plan.strategy;
  r.requested = r.plan.segments();
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
  if (segments > t.size() && !f.given("checkpoint")) return t.size();  // the default stops at a short tape's nodes
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

// --all's strategies: --strategy A,B,... or --strategies A,B,... in the order given (a name once), else
// every strategy. --all ignores TAPELAB_STRATEGY (the variable names the strategy of a run).
std::vector<std::string> allStrategies(const Flags& f) {
  if (f.onCommandLine("strategy") && f.given("strategies"))
    throw UsageError("--strategy and --strategies name the same list: give one of them");
  const std::string flag = f.onCommandLine("strategy") ? "strategy" : "strategies";
  std::vector<std::string> names;
  if (f.onCommandLine("strategy") || f.given("strategies")) {
    try {
      for (const std::string& n : parseNameList(*f.text(flag), f.label(flag)))
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    for (const std::string& n : names) checkStrategy(n, f.label(flag));
    return names;
  }
  for (const StrategyEntry& s : strategies()) names.push_back(s.name);
  return names;
}

// One point of the summary: a plan's register-pressure proxy against what it recomputes.
struct FrontPoint {
  std::string strategy;
  int requested = 1;
  PlanMetrics metrics;
};

bool dominates(const PlanMetrics& a, const PlanMetrics& b) {
  return a.peakLive <= b.peakLive && a.recomputeCost <= b.recomputeCost &&
         (a.peakLive < b.peakLive || a.recomputeCost < b.recomputeCost);
}

// The plans no other plan beats on both peak_live and weighted recompute_cost (the plain kernel among
// them: it recomputes nothing), by peak_live; of plans with the same strategy, segments and both numbers,
// the one asked with the fewest segments.
std::vector<FrontPoint> paretoFront(const std::vector<FrontPoint>& points) {
  std::vector<FrontPoint> front;
  for (const FrontPoint& p : points) {
    if (std::any_of(points.begin(), points.end(), [&](const FrontPoint& q) { return dominates(q.metrics, p.metrics); }))
      continue;
    const bool same = std::any_of(front.begin(), front.end(), [&](const FrontPoint& q) {
      return q.strategy == p.strategy && q.metrics.segments == p.metrics.segments &&
             q.metrics.peakLive == p.metrics.peakLive && q.metrics.recomputeCost == p.metrics.recomputeCost;
    });
    if (!same) front.push_back(p);
  }
  std::stable_sort(front.begin(), front.end(), [](const FrontPoint& a, const FrontPoint& b) {
    if (a.metrics.peakLive != b.metrics.peakLive) return a.metrics.peakLive < b.metrics.peakLive;
    return a.metrics.recomputeCost < b.metrics.recomputeCost;
  });
  return front;
}

// Plans every (strategy, segment count) job on every core (strategies are pure functions of the tape and
// the options). stderr says when each strategy's plans are all made, with the time they took and the time
// since the start, and every 5 s how many plans are made: a long --all is never silent.
std::vector<Row> planAll(const Tape& t, const std::vector<std::string>& names, int from, int to, const PlanOptions& base) {
  struct Job {
    size_t strategy;
    int segments;
  };
  std::vector<Job> jobs;
  for (size_t s = 0; s < names.size(); ++s)
    for (int segs = from; segs <= to; ++segs) jobs.push_back({s, segs});
  std::vector<Row> rows(jobs.size());
  std::vector<size_t> left(names.size(), static_cast<size_t>(to - from + 1));
  std::vector<double> seconds(names.size(), 0.0);
  const auto start = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::mutex mu;
  std::condition_variable changed;
  size_t made = 0, strategiesDone = 0;
  auto lastLine = start;
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  const unsigned threads =
      std::max(1u, std::min<unsigned>({std::thread::hardware_concurrency(), 16u, static_cast<unsigned>(jobs.size())}));
  unsigned running = threads;
  auto worker = [&] {
    try {
      for (size_t k; (k = next.fetch_add(1)) < jobs.size();) {
        rows[k] = planRow(t, names[jobs[k].strategy], jobs[k].segments, base);
        std::lock_guard<std::mutex> lock(mu);
        ++made;
        const size_t s = jobs[k].strategy;
        seconds[s] += rows[k].seconds;
        if (--left[s] == 0) {
          ++strategiesDone;
          std::fprintf(stderr, "plan --all: %s: %d plans, %.1f s of planning (elapsed %.1f s, %zu/%zu strategies)\n",
                       names[s].c_str(), to - from + 1, seconds[s], since(start), strategiesDone, names.size());
          lastLine = std::chrono::steady_clock::now();
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!failure) failure = std::current_exception();
      next = jobs.size();
    }
    std::lock_guard<std::mutex> lock(mu);
    --running;
    changed.notify_all();
  };
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {  // the system's thread limit: the threads started share the work
      std::lock_guard<std::mutex> lock(mu);
      running -= threads - i;
      break;
    }
  }
  if (pool.empty()) {  // not one thread: this one plans (and counts itself out)
    running = 1;
    worker();
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    while (running > 0) {
      changed.wait_for(lock, std::chrono::milliseconds(500));
      if (running > 0 && since(lastLine) >= 5.0) {
        std::string open;  // the strategies still planning, with how far each got
        const size_t per = static_cast<size_t>(to - from + 1);
        for (size_t s = 0; s < names.size(); ++s)
          if (left[s] > 0 && left[s] < per)
            open += (open.empty() ? "" : ", ") + names[s] + " " + std::to_string(per - left[s]) + "/" + std::to_string(per);
        std::fprintf(stderr, "plan --all: %zu/%zu plans made%s%s%s, %zu/%zu strategies done (elapsed %.1f s)\n", made,
                     jobs.size(), open.empty() ? "" : " (", open.c_str(), open.empty() ? "" : ")", strategiesDone,
                     names.size(), since(start));
        lastLine = std::chrono::steady_clock::now();
      }
    }
  }
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
  return rows;
}

std::string frontJson(const std::vector<FrontPoint>& front) {
  std::vector<std::string> items;
  for (const FrontPoint& p : front) {
    Json j;
    j.str("strategy", p.strategy).integer("requested_segments", p.requested).integer("segments", p.metrics.segments)
        .integer("depth", p.metrics.depth).integer("peak_live", p.metrics.peakLive)
        .number("recompute_cost", p.metrics.recomputeCost).integer("recompute_ops", p.metrics.recomputeOps);
    items.push_back(j.done());
  }
  return jsonArray(items);
}

// The plan options the flags give (--seglen, --inner, --budget, --strategy-cmd, the solver's, --markets).
PlanOptions planOptions(const Flags& f) {
  PlanOptions base;
  if (f.given("seglen")) base.segLen = f.positive("seglen");
  if (f.given("inner")) base.innerSegments = f.positive("inner");
  if (f.given("budget")) base.budget = f.positive("budget");
  if (auto cmd = f.text("strategy-cmd")) base.strategyCommand = *cmd;
  if (auto s = f.text("solve-seconds")) base.solveSeconds = parseSeconds(*s, f.label("solve-seconds"));
  if (auto s = f.text("solve-clock")) base.solveClock = parseSolveClock(*s, f.label("solve-clock"));
  if (f.given("markets")) {
    base.markets = f.positive("markets");
    if (base.markets > 8) throw UsageError("--markets: expected 1..8, got " + std::to_string(base.markets));
  }
  return base;
}

// --strategy without --all: one name, checked.
std::optional<std::string> onlyStrategyOf(const Flags& f, bool all) {
  std::optional<std::string> onlyStrategy;
  if (!all) {
    if (f.given("strategies")) throw UsageError("--strategies lists the strategies of --all: give --all, or one --strategy");
    if (f.given("strategy")) {
      onlyStrategy = *f.text("strategy");
      if (onlyStrategy->find(',') != std::string::npos)
        throw UsageError(f.label("strategy") + ": one strategy without --all, got '" + *onlyStrategy +
                         "' (a list: plan --all, or run --strategy A,B)");
      checkStrategy(*onlyStrategy, f.label("strategy"));
    }
  }
  return onlyStrategy;
}

const std::vector<std::string> kPlanHeader{"kernel",        "strategy",      "segments",       "depth",
                                           "persistent",    "peak_live",     "scratch_slots",  "recompute_ops",
                                           "recompute_cost", "peak_segment"};

std::vector<std::string> plainCells(const PlanMetrics& plain) {
  std::vector<std::string> r{"plain", "plain"};
  for (auto& c : metricCells(plain)) r.push_back(c);
  return r;
}

// One plan (--checkpoint, --strategy; or --from-schedule): its metrics, cuts and segments, or --front.
int planOne(const Flags& f, const Tape& t, const PlanOptions& base, const std::optional<std::string>& onlyStrategy,
            const PlanMetrics& plain) {
  const bool json = f.given("json");
  if (f.given("min-segments") || f.given("max-segments")) throw UsageError("--min-segments and --max-segments need --all");
  const int segments = parseSegments(f, t);
  if (f.given("front")) return planFront(f, t, base, segments);
  const Row r = f.given("from-schedule") ? scheduleRow(f, t)
                                         : planRow(t, onlyStrategy.value_or(base.strategyCommand.empty()
                                                                                ? *f.textOrDefault("strategy")
                                                                                : "cmd"),
                                                   segments, base);
  if (auto out = f.text("to-schedule")) writeSchedule(f, t, r.plan, *out);
  if (auto out = f.text("out")) {
    // util/files.h: through links, never replacing a special file, never the run's own tape.
    writeOutputFile(*out, planFileText(t, r.plan, segments), inputsOf(f), "--out");
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
  std::printf("%s\ncuts: %s\n\n", table(kPlanHeader, {plainCells(plain), cut}).c_str(), cutsText(r.plan).c_str());
  if (r.plan.perValue)
    std::printf("per-value: keeps %zu values besides inputs and output; the cuts are the reverse sweep's blocks\n",
                r.plan.keep.size());
  if (const Plan::Solver& s = r.plan.solver; !s.status.empty())
    std::printf("solver: %s: %s, objective %.6g, bound %.6g, gap %.4g, %.3g s\n\n", s.solverName.c_str(), s.status.c_str(),
                s.objective, s.bound, s.gap, s.seconds);
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

// --all: every strategy at every segment count, and their Pareto front.
int planEvery(const Flags& f, const Tape& t, const PlanOptions& base, const PlanMetrics& plain) {
  const bool json = f.given("json");
  if (f.onCommandLine("checkpoint")) throw UsageError("--all takes --min-segments and --max-segments, not --checkpoint");
  if (f.given("out")) throw UsageError("--out writes one plan: not with --all");
  if (f.given("front")) throw UsageError("--front is one set of blocks (--checkpoint): not with --all");
  if (f.given("from-schedule") || f.given("to-schedule")) throw UsageError("--from-schedule and --to-schedule are one plan's: not with --all");
  const int lo = f.integer("min-segments"), hi = f.integer("max-segments");
  if (lo < 1) throw UsageError("--min-segments: expected a positive integer, got " + std::to_string(lo));
  if (hi < 1) throw UsageError("--max-segments: expected a positive integer, got " + std::to_string(hi));
  if (lo > hi) throw UsageError("--min-segments " + std::to_string(lo) + " is above --max-segments " + std::to_string(hi));
  const int from = std::min(lo, t.size()), to = std::min(hi, t.size());
  const std::vector<Row> rows = planAll(t, allStrategies(f), from, to, base);
  std::vector<FrontPoint> points{{"plain", 1, plain}};
  for (const Row& r : rows) points.push_back({r.strategy, r.requested, r.metrics});
  const std::vector<FrontPoint> front = paretoFront(points);
  if (json) {
    std::vector<std::string> items;
    for (const Row& r : rows) items.push_back(rowJson(r, false, t));
    Json j;
    j.field("tape", tapeJson(t)).field("plain", metricsJson(plain)).field("rows", jsonArray(items))
        .field("pareto_front", frontJson(front));
    std::printf("%s\n", j.done().c_str());
    return kExitOk;
  }
  std::vector<std::string> allHeader{"kernel",        "strategy",      "requested",     "segments",
                                     "depth",         "persistent",    "peak_live",     "scratch_slots",
                                     "recompute_ops", "recompute_cost", "peak_segment", "plan_ms"};
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> p = plainCells(plain);
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
  std::vector<std::vector<std::string>> frontRows;
  for (const FrontPoint& p : front) {
    char cost[32];
    std::snprintf(cost, sizeof cost, "%.0f", p.metrics.recomputeCost);
    frontRows.push_back({p.strategy, std::to_string(p.requested), std::to_string(p.metrics.segments),
                         std::to_string(p.metrics.depth), std::to_string(p.metrics.peakLive), cost});
  }
  std::printf("\nPareto front of peak_live against weighted recompute_cost: the %zu of %zu plans (plain included) "
              "that no other plan matches on both and beats on one:\n%s",
              front.size(), points.size(),
              table({"strategy", "requested", "segments", "depth", "peak_live", "recompute_cost"}, frontRows).c_str());
  return kExitOk;
}

int plan(const Flags& f) {
  const Tape t = tapeFrom(f);
  const bool all = f.given("all");
  const PlanOptions base = planOptions(f);
  const std::optional<std::string> onlyStrategy = onlyStrategyOf(f, all);
  const PlanMetrics plain = planMetrics(t, plainPlan(t));
  return all ? planEvery(f, t, base, plain) : planOne(f, t, base, onlyStrategy, plain);
}

}  // namespace

Runner setupPlan(CLI::App& app) {
  // The registry's list, as docs/strategies.md copies it between its markers (CTest docs_help checks the copy).
  std::string list;
  for (const auto* group : {&strategies(), &processStrategies()})
    for (const StrategyEntry& s : *group) list += "  " + s.name + std::string(20 - s.name.size(), ' ') + s.summary + "\n";
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
  f->knob("strategy", "NAME", "window", "with --all, a list: only these (A,B,...)");
  f->value("strategies", "A,B,...", "--all: only these strategies, in this order (as --strategy A,B,...)");
  f->knob("checkpoint", "SEGMENTS", "16", "off = 1; auto: " + std::to_string(RunConfig().segments) +
                                              " from --ckpt-nodes nodes");
  f->knob("ckpt-nodes", "N", std::to_string(RunConfig().ckptNodes));
  f->knob("seglen", "N", "", "uniform: N nodes per segment instead of a segment count");
  f->knob("inner", "N");
  f->knob("strategy-cmd", "COMMAND", "", "strategy cmd: a strategy process writes the plan (docs/strategies.md)");
  f->knob("solve-seconds", "S", "60");
  f->knob("solve-clock", "wall|cpu", "wall");
  f->knob("budget", "B", "", "default: with --markets, the register-file default for M markets, else window's peak_live at that segment count");
  f->value("markets", "M", "budget: derive the default budget for a register kernel of M markets per dispatch (1-8): min(212, 400/M), from the sm_90 calibration (runs)");
  f->value("out", "FILE", "write the plan to FILE (a plan file: run it with --plan FILE)");
  f->value("front", "B1,B2,...", "with --strategy exact: the Pareto front, the optimum at each budget (peak_live) "
                                 "of the list over the same blocks (--out-dir DIR writes each plan)");
  f->value("out-dir", "DIR", "--front: write each budget's plan to DIR/exact-B.json");
  f->value("from-schedule", "FILE", "the plan is this checkpoint_schedules schedule over the tape's time steps "
                                    "(a schedule file: python/tapelab/schedules.py, planner/schedules.h)");
  f->value("to-schedule", "FILE", "write the plan as a checkpoint_schedules schedule file (cuts at step starts)");
  f->flag("all", "one row per strategy and segment count, with the plain kernel; progress on stderr; the summary is "
                 "the Pareto front of peak_live against weighted recompute_cost");
  f->value("min-segments", "A", "--all: smallest segment count", "2");
  f->value("max-segments", "B", "--all: largest segment count (both capped at the node count)", "32");
  f->flag("json", "print JSON instead of tables (numbers with 17 significant digits)");
  return [f] { return plan(*f); };
}

}  // namespace tapelab::cli
