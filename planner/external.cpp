#include "planner/external.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "planner/costs.h"
#include "planner/liveness.h"
#include "planner/metrics.h"
#include "planner/optimal.h"
#include "planner/planfile.h"
#include "tape/textformat.h"
#include "util/files.h"
#include "util/process.h"

namespace tapelab {

extern const char kExactScript[];  // planner/exact.py, embedded by planner/CMakeLists.txt

namespace {

namespace fs = std::filesystem;

// A fresh directory under $TMPDIR, removed (with what the process left in it) when it goes.
class WorkDir {
 public:
  WorkDir() {
    std::error_code ec;  // the standard library's temporary directory ($TMPDIR, else /tmp)
    const fs::path tmp = fs::temp_directory_path(ec);
    std::string pattern = (ec ? std::string("/tmp") : tmp.string()) + "/tapelab-strategy-XXXXXX";
    if (!mkdtemp(pattern.data())) throw StrategyProcessError("strategy process: cannot make a temporary directory in " + pattern);
    path_ = pattern;
  }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void writeText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) throw StrategyProcessError("strategy process: cannot write " + path);
}

// The process's last non-empty line of output, for the one-line error.
std::string lastLine(const std::string& output) {
  std::istringstream in(output);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  if (last.size() > 200) last = last.substr(0, 200) + "...";
  return last.empty() ? "(no output)" : last;
}

int32_t defaultBudget(const Tape& t, const PlanOptions& o) {
  if (o.budget > 0) return o.budget;
  if (o.budget < 0) throw std::invalid_argument("the most values live at once (--budget) must be positive");
  return o.markets > 0 ? registerBudget(o.markets) : planMetrics(t, planWindow(t, o)).peakLive;
}

std::vector<int32_t> blocksOf(const Tape& t, const PlanOptions& o, Plan (*strategy)(const Tape&, const PlanOptions&)) {
  if (o.segments <= 1) return {0, t.size()};
  return strategy(t, o).bounds;
}

}  // namespace

std::string tapeSummaryJson(const Tape& t, const PlanOptions& o, const std::vector<int32_t>& blocks, int32_t budget,
                            const std::vector<int32_t>& front) {
  using Json = nlohmann::ordered_json;
  const int32_t n = t.size();
  const CostModel& costs = CostModel::measured();
  Json j;
  j["format"] = "tapelab-summary 1";
  j["tape"] = {{"name", t.name}, {"nodes", n}, {"structure", structureHash(t)}};
  j["output"] = t.output;
  Json ops = Json::array(), args = Json::array(), weight = Json::array(), reads = Json::array();
  for (int32_t i = 0; i < n; ++i) {
    ops.push_back(std::string(info(t.op[i]).name));
    Json a = Json::array();
    for (int k = 0; k < arity(t.op[i]); ++k) a.push_back(t.arg(i, k));
    args.push_back(std::move(a));
    weight.push_back(costs.of(t.op[i]));
    Json r = Json::array();
    if (arity(t.op[i]) > 0) {
      const AdjointReads ar = adjointReads(t.op[i]);
      for (int k = 0; k < arity(t.op[i]); ++k)
        if (ar.arg(k)) r.push_back(t.arg(i, k));
      if (ar.r) r.push_back(i);
    }
    reads.push_back(std::move(r));
  }
  j["op"] = std::move(ops);
  j["args"] = std::move(args);
  j["weight"] = std::move(weight);
  j["adjoint_reads"] = std::move(reads);
  const std::vector<int32_t> last = lastUse(t);
  j["last_use"] = last;
  j["adjoints_live"] = adjointsLive(t, last);
  j["inputs"] = t.inputNodes;
  j["request"] = {{"segments", o.segments}, {"budget", budget}, {"blocks", blocks}, {"time_limit", o.solveSeconds},
                  {"clock", o.solveClock}};
  if (!front.empty()) j["request"]["front"] = front;
  return j.dump() + "\n";
}

namespace {

// Runs a strategy process (the protocol in external.h) in `dir` and returns the path of the file it
// wrote; `guard`: seconds of wall time before it is ended as hung.
std::string runProcessFor(const Tape& t, const PlanOptions& o, const std::string& command, const std::string& who,
                          const WorkDir& dir, const std::vector<int32_t>& blocks, int32_t budget,
                          const std::vector<int32_t>& front, double guard) {
  const std::string tapeFile = dir.file("tape.tape"), summary = dir.file("summary.json"), out = dir.file("plan.json");
  writeText(tapeFile, writeTape(t));
  writeText(summary, tapeSummaryJson(t, o, blocks, budget, front));
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", o.solveSeconds);
  const std::vector<std::string> argv{"/bin/sh", "-c", command + " \"$@\"", "sh", "--tape", tapeFile, "--summary", summary,
                                      "--out", out, "--segments", std::to_string(o.segments), "--budget",
                                      std::to_string(budget), "--time-limit", limit};
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      guard > 0 ? Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(guard * 1000)) : Clock::time_point::max();
  const ProcessResult r = runProcess(argv, deadline);
  if (r.interrupted) throw Interrupted();
  char guardText[32];
  std::snprintf(guardText, sizeof guardText, "%g", guard);
  if (r.timedOut) throw StrategyProcessError(who + ": ran past its time limit of " + std::string(guardText) + " s (ended; no plan)");
  if (r.status == 3) throw StrategyUnavailable(who + ": cannot run here: " + lastLine(r.output));
  if (r.status != 0)
    throw StrategyProcessError(who + (r.status < 0 ? ": " + r.error : ": exit " + std::to_string(r.status)) + ": " +
                               lastLine(r.output));
  if (!fs::is_regular_file(out)) throw StrategyProcessError(who + ": exited 0 but wrote no plan file (--out)");
  return out;
}

double clockFactor(const PlanOptions& o) { return o.solveClock == "cpu" ? kCpuClockGuard : 1; }

std::string exactCommand(const WorkDir& dir) {
  const std::string script = dir.file("exact.py");
  writeText(script, kExactScript);
  // Debian's Python, the one scripts/setup.sh installs highspy for (a virtual environment's may lack it).
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  return python + " '" + script + "'";
}

}  // namespace

Plan runStrategyCommand(const Tape& t, const PlanOptions& o, const std::string& command, const std::string& label,
                        const std::vector<int32_t>& blocks, int32_t budget) {
  if (command.empty()) throw std::invalid_argument("strategy cmd: give the command with --strategy-cmd \"python3 mine.py\"");
  const std::string who = "strategy process '" + command + "'";
  WorkDir dir;
  const std::string out = runProcessFor(t, o, command, who, dir, blocks, budget, {}, clockFactor(o) * o.solveSeconds + 10);
  try {
    Plan p = readPlanFile(out, t);
    if (p.strategy == "file") p.strategy = label;
    return p;
  } catch (const PlanFileError& e) {
    std::string why = e.what();
    if (why.rfind(out, 0) == 0) why = why.substr(out.size() + 2);  // "FILE: field: reason" -> "field: reason"
    throw StrategyProcessError(who + ": its plan: " + why);
  }
}

Plan planCommand(const Tape& t, const PlanOptions& o) {
  return runStrategyCommand(t, o, o.strategyCommand, "cmd", blocksOf(t, o, planWindow), defaultBudget(t, o));
}

Plan planExact(const Tape& t, const PlanOptions& o) {
  WorkDir dir;
  return runStrategyCommand(t, o, exactCommand(dir), "exact", blocksOf(t, o, planOptimal), defaultBudget(t, o));
}

std::vector<ExactPoint> planExactFront(const Tape& t, const PlanOptions& o, std::vector<int32_t> budgets) {
  std::sort(budgets.begin(), budgets.end());
  budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
  if (budgets.empty() || budgets.front() < 1) throw std::invalid_argument("exact front: the budgets must be positive");
  WorkDir dir;
  const std::string command = exactCommand(dir), who = "strategy process 'exact' (front)";
  const std::string out = runProcessFor(t, o, command, who, dir, blocksOf(t, o, planOptimal), budgets.back(), budgets,
                                        clockFactor(o) * o.solveSeconds * double(budgets.size()) + 10);
  try {
    const nlohmann::json j = nlohmann::json::parse(readInputText(out, kMaxPlanBytes));
    if (j.value("format", "") != "tapelab-front 1") throw StrategyProcessError(who + ": its front: not a tapelab-front 1 file");
    std::vector<ExactPoint> points;
    for (const auto& p : j.at("points")) {
      ExactPoint e;
      e.budget = p.at("budget").get<int32_t>();
      e.status = p.at("status").get<std::string>();
      if (p.contains("plan")) {
        e.plan = parsePlanFile(p["plan"].dump(), t, who + ": budget " + std::to_string(e.budget));
        e.hasPlan = true;
      }
      points.push_back(std::move(e));
    }
    if (points.size() != budgets.size()) throw StrategyProcessError(who + ": its front has " + std::to_string(points.size()) +
                                                                    " points for " + std::to_string(budgets.size()) + " budgets");
    return points;
  } catch (const PlanFileError& e) {
    throw StrategyProcessError(std::string(e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw StrategyProcessError(who + ": its front: " + e.what());
  } catch (const InputError& e) {
    throw StrategyProcessError(who + ": its front: " + e.what());
  }
}

}  // namespace tapelab
