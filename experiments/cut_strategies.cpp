// cut_strategies: every cut strategy on every tape of the study, at a ladder of
// segment counts, with every plan metric (planner/metrics.h) to CSV, then a
// PNG of peak_live and persistent against segment count per strategy, and a
// Pareto PNG: peak_live against weighted recompute_cost, every strategy (flat,
// nested, budget) and count one point, the front drawn
// (experiments/plot_cut_strategies.py, run with /usr/bin/python3).
//
//   cut_strategies [--out DIR | --out FILE.csv] [--segments A-B | --segments N,N,...]
//                  [--strategies a,b,...] [--plan FILE] [--threads N] [--no-plot] [--quick]
//
// Tapes: european and asian calls at 50/100/150/252/500 steps, basket calls
// of 1/5/10/20 assets at 252 steps, and random tapes (tape/random_tape.h) of
// 1,000, 5,000 and 20,000 nodes, narrow (short-lived values: a pipe) and wide
// (long-lived ones). Segment counts: every count 2..128 on tapes under 20,000
// nodes, the ladder 2..16, 20, 24, ..., 128 (27 counts) on larger ones
// (optimal and auto take seconds per plan on the 179,114-node 20-asset
// basket); --segments overrides both. One CSV row per (tape, strategy,
// requested count), plus the plain kernel's row per tape. --quick: four small
// tapes at 2, 4, 8 and 16 segments (CTest's smoke test). --tape FILE (repeatable)
// adds a user's tape, --only-tapes leaves the study's out. Default output:
// $TMPDIR/tapelab-cut_strategies/cut_strategies.csv and .png beside it (outside
// the source tree; the path is printed).
// --plan FILE (tapelab plan --out) adds one row: that plan, on the study tape
// it was made for, under the name of the strategy that wrote it (the file's "strategy"; "plan-file" when
// it has none).
// The CSV is written whole once every plan is made (util/files.h's
// writeOutputFile: through links, never over a --tape or --plan file, which is
// refused before the run); the PNGs likewise (checked before the run, written by
// the script through experiments/drivers/careful.py). Exit 0 on success, 1 when
// the plot script failed or the CSV could not be written, 2 on bad flags.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include "cli/options.h"
#include "planner/metrics.h"
#include "planner/planfile.h"
#include "planner/strategies.h"
#include "tape/products/products.h"
#include "tape/random_tape.h"
#include "tape/textformat.h"
#include "util/files.h"
#include "util/threads.h"
#include "util/process.h"

using namespace tapelab;

namespace {

struct StudyTape {
  std::string family;  // european, asian, basket, random
  int steps = 0, assets = 0;
  Tape tape;
};

Tape randomStudyTape(const std::string& style, int32_t nodes, uint64_t seed) {
  RandomTapeOptions o;
  o.nodes = nodes;
  o.inputs = 5;
  o.draws = nodes / 20;
  if (style == "narrow") {
    o.reach = 2.0;
    o.farProbability = 0.01;
  } else {
    o.reach = 8.0;
    o.farProbability = 0.1;
  }
  Tape t = randomTape(seed, o);
  t.name = "random-" + style + "-" + std::to_string(nodes);
  return t;
}

std::vector<StudyTape> studyTapes(bool quick) {
  std::vector<StudyTape> tapes;
  if (quick) {
    tapes.push_back({"european", 50, 0, products::europeanCall(50)});
    tapes.push_back({"asian", 50, 0, products::asianCall(50)});
    tapes.push_back({"basket", 20, 5, products::basketCall(5, 20)});
    tapes.push_back({"random", 0, 0, randomStudyTape("narrow", 400, 1)});
    return tapes;
  }
  for (int steps : {50, 100, 150, 252, 500}) tapes.push_back({"european", steps, 0, products::europeanCall(steps)});
  for (int steps : {50, 100, 150, 252, 500}) tapes.push_back({"asian", steps, 0, products::asianCall(steps)});
  for (int assets : {1, 5, 10, 20}) tapes.push_back({"basket", 252, assets, products::basketCall(assets, 252)});
  uint64_t seed = 1;
  for (const char* style : {"narrow", "wide"})
    for (int32_t nodes : {1000, 5000, 20000}) tapes.push_back({"random", 0, 0, randomStudyTape(style, nodes, seed++)});
  return tapes;
}

std::vector<int> ladder() {
  std::vector<int> v;
  for (int s = 2; s <= 16; ++s) v.push_back(s);
  for (int s = 20; s <= 128; s += s < 32 ? 4 : s < 64 ? 8 : 16) v.push_back(s);
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<int> parseSegments(const std::string& s) {
  std::vector<int> v;
  const auto dash = s.find('-');
  if (dash != std::string::npos && s.find(',') == std::string::npos) {
    const int a = parsePositiveInt(s.substr(0, dash), "--segments"), b = parsePositiveInt(s.substr(dash + 1), "--segments");
    if (a > b) throw std::invalid_argument("--segments: " + s + " is an empty range");
    for (int x = a; x <= b; ++x) v.push_back(x);
  } else {
    for (const std::string& item : split(s, ',')) v.push_back(parsePositiveInt(item, "--segments"));
  }
  if (v.empty()) throw std::invalid_argument("--segments: no counts in '" + s + "'");
  return v;
}

// The study tape a plan file was made for, and its plan; a file for none of them is an error
// naming the file and the tapes.
std::pair<size_t, Plan> planForStudyTape(const std::string& file, const std::vector<StudyTape>& tapes) {
  std::string names;
  for (size_t k = 0; k < tapes.size(); ++k) {
    try {
      return {k, readPlanFile(file, tapes[k].tape)};
    } catch (const PlanFileError& e) {
      // Another tape's plan names tape.nodes or tape.structure; anything else is wrong with the file.
      if (std::string(e.what()).rfind(file + ": tape.", 0) != 0) throw;
    }
    names += (names.empty() ? "" : ", ") + tapes[k].tape.name;
  }
  throw PlanFileError(file + ": tape: made for none of the study tapes (" + names + ")");
}

struct Job {
  size_t tape;
  std::string strategy;
  int segments;
};

struct Result {
  Plan plan;
  PlanMetrics metrics;
  double seconds = 0;
};

std::string csvRow(const StudyTape& st, const std::string& strategy, int requested, const Result& r,
                   const PlanMetrics& plain) {
  std::string cuts;
  for (int s = 1; s < r.plan.segments(); ++s) cuts += (s > 1 ? " " : "") + std::to_string(r.plan.bounds[s]);
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s,%s,%d,%d,%d,%s,%d,%d,%d,%d,%d,%lld,%d,%d,%d,%.17g,%d,%.17g,", st.tape.name.c_str(),
                st.family.c_str(), st.steps, st.assets, st.tape.size(), strategy.c_str(), requested, r.metrics.segments,
                r.metrics.persistent, r.metrics.peakLive, r.metrics.scratchSlots,
                static_cast<long long>(r.metrics.recomputeOps), r.metrics.peakSegment, plain.persistent, plain.peakLive,
                r.seconds, r.metrics.depth, r.metrics.recomputeCost);
  return std::string(buf) + "\"" + cuts + "\"\n";
}

// The study's tapes (none with --only-tapes), then each --tape FILE, checked.
std::vector<StudyTape> tapesOf(const cli::Flags& f, bool quick) {
  namespace fs = std::filesystem;
  std::vector<StudyTape> tapes = f.given("only-tapes") ? std::vector<StudyTape>{} : studyTapes(quick);
  for (const std::string& path : f.all("tape")) {  // a user's tapes, as the study's
    Tape t;
    try {
      t = readTapeFile(path);
    } catch (const TapeParseError& e) {
      throw cli::UsageError(e.what());
    }
    if (const std::string problem = validate(t); !problem.empty()) throw cli::UsageError(path + ": " + problem);
    if (t.name.empty()) t.name = fs::path(path).stem().string();
    tapes.push_back({"file:" + fs::path(path).filename().string(), 0, 0, std::move(t)});
  }
  if (tapes.empty()) throw cli::UsageError("--only-tapes: give --tape FILE");
  return tapes;
}

// Every job's plan and metrics, on `threads` threads; the first failure, if any, as a message.
std::string makePlans(const std::vector<Job>& jobs, const std::vector<StudyTape>& tapes, unsigned threads,
                      std::vector<Result>& results) {
  // Longest first, so one slow plan does not finish alone at the end.
  std::vector<size_t> order(jobs.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return tapes[jobs[x].tape].tape.size() > tapes[jobs[y].tape].tape.size(); });
  results.assign(jobs.size(), Result{});
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failureMutex;
  auto worker = [&] {
    try {
      for (size_t k; (k = next.fetch_add(1)) < order.size();) {
        const Job& j = jobs[order[k]];
        const Tape& t = tapes[j.tape].tape;
        PlanOptions o;
        o.segments = j.segments;
        Result& r = results[order[k]];
        const auto s0 = std::chrono::steady_clock::now();
        r.plan = makeStrategyPlan(j.strategy, t, o);
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
        r.metrics = planMetrics(t, r.plan);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failureMutex);
      if (!failure) failure = std::current_exception();
      next = order.size();
    }
  };
  const unsigned ran = runWorkers(threads, worker);  // util/threads.h: never an abort
  if (ran < threads) std::fprintf(stderr, "cut_strategies: %u of %u threads could be started\n", ran, threads);
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      return e.what();
    }
  }
  return "";

}

// Plain, each job's row and the plan file's, tape by tape.
std::string csvText(const std::vector<StudyTape>& tapes, const std::vector<Job>& jobs, const std::vector<Result>& results,
                    const std::vector<PlanMetrics>& plain, const std::optional<std::pair<size_t, Plan>>& filePlan) {
  std::ostringstream csv;
  csv << "tape,family,steps,assets,nodes,strategy,requested_segments,segments,persistent,peak_live,scratch_slots,"
         "recompute_ops,peak_segment,plain_persistent,plain_peak_live,plan_seconds,depth,recompute_cost,cuts\n";
  for (size_t k = 0; k < tapes.size(); ++k) {
    Result p;
    p.plan = plainPlan(tapes[k].tape);
    p.metrics = plain[k];
    csv << csvRow(tapes[k], "plain", 1, p, plain[k]);
    for (size_t j = 0; j < jobs.size(); ++j)
      if (jobs[j].tape == k) csv << csvRow(tapes[k], jobs[j].strategy, jobs[j].segments, results[j], plain[k]);
    if (filePlan && filePlan->first == k) {
      Result r;
      r.plan = filePlan->second;
      r.metrics = planMetrics(tapes[k].tape, r.plan);
      // The strategy that wrote the file keeps its name (a user's process or Python function: its own).
      const std::string name = r.plan.strategy.empty() ? "plan-file" : r.plan.strategy;
      csv << csvRow(tapes[k], name, r.plan.segments(), r, plain[k]);
    }
  }
  return csv.str();
}

// plot_cut_strategies.py draws the figures beside the CSV.
int plotFigures(const std::filesystem::path& csvPath, const std::filesystem::path& pngPath,
                const std::vector<std::string>& inputs) {
  // The script's arguments as they are (no shell), the run's inputs after them: it never draws over one.
  std::vector<std::string> argv = {"/usr/bin/python3", std::string(TAPELAB_SOURCE_DIR) + "/experiments/plot_cut_strategies.py",
                                   csvPath.string(), pngPath.string()};
  for (const std::string& in : inputs)
    if (!in.empty()) argv.push_back(in);
  const ProcessResult r = runProcess(argv);
  std::fputs(r.output.c_str(), stderr);  // its one line: what it wrote, or why it could not
  if (r.interrupted) throw Interrupted();
  if (r.status == 3) return 0;  // matplotlib is not installed (the script said so); the CSV still stands
  if (r.status != 0) {
    std::fprintf(stderr, "cut_strategies: the figures were not drawn (plot_cut_strategies.py %s)\n",
                 r.status < 0 ? r.error.c_str() : ("exit " + std::to_string(r.status)).c_str());
    return r.status == 2 ? 2 : 1;
  }
  return 0;
}

int study(const cli::Flags& f) {
  const bool quick = f.given("quick"), plot = !f.given("no-plot");
  const std::string out = *f.textOrDefault("out");
  const std::vector<int> segmentsFlag = f.given("segments") ? parseSegments(*f.text("segments")) : std::vector<int>{};
  const unsigned threads = static_cast<unsigned>(f.integerIn("threads", 1, 1024));
  std::vector<std::string> strategyNames = split(f.text("strategies").value_or(""), ',');
  if (strategyNames.empty())
    for (const StrategyEntry& s : strategies()) strategyNames.push_back(s.name);
  for (const std::string& name : strategyNames) {
    try {
      findStrategy(name);
    } catch (const std::invalid_argument& e) {
      throw cli::UsageError(std::string("--strategies: ") + e.what());
    }
  }
  const std::string planFile = cli::runConfigFrom(f).planFile;

  namespace fs = std::filesystem;
  fs::path csvPath = out;
  if (csvPath.extension() != ".csv") csvPath /= quick ? "cut_strategies_quick.csv" : "cut_strategies.csv";
  fs::path pngPath = csvPath;
  pngPath.replace_extension(".png");
  std::error_code ec;
  if (csvPath.has_parent_path()) fs::create_directories(csvPath.parent_path(), ec);

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<StudyTape> tapes = tapesOf(f, quick);
  // The CSV is written whole at the end (util/files.h's writeOutputFile); what it would refuse (one of
  // the --tape files or the --plan file, a directory in the CSV's place, ...) is refused now.
  std::vector<std::string> inputs = f.all("tape");
  inputs.push_back(planFile);
  checkOutputFile(csvPath.string(), inputs);
  if (plot) {  // the figures beside the CSV are outputs too (plot_cut_strategies.py writes them as carefully)
    std::vector<std::string> withCsv = inputs;
    withCsv.push_back(csvPath.string());
    for (const fs::path& png : {pngPath, fs::path(pngPath).replace_filename(pngPath.stem().string() + "_pareto.png")})
      checkOutputFile(png.string(), withCsv, "--out (its figure)");
  }
  std::optional<std::pair<size_t, Plan>> filePlan;
  if (!planFile.empty()) filePlan = planForStudyTape(planFile, tapes);  // PlanFileError: FILE: field: reason
  std::vector<PlanMetrics> plain;
  std::vector<Job> jobs;
  for (size_t k = 0; k < tapes.size(); ++k) {
    const Tape& t = tapes[k].tape;
    plain.push_back(planMetrics(t, plainPlan(t)));
    const std::vector<int> counts = !segmentsFlag.empty() ? segmentsFlag
                                    : quick              ? std::vector<int>{2, 4, 8, 16}
                                    : t.size() < 20000   ? parseSegments("2-128")
                                                         : ladder();
    for (const std::string& s : strategyNames)
      for (int c : counts)
        if (c <= t.size()) jobs.push_back({k, s, c});
  }
  std::fprintf(stderr, "cut_strategies: %zu tapes, %zu plans on %u threads\n", tapes.size(), jobs.size(), threads);

  std::vector<Result> results;
  if (const std::string failure = makePlans(jobs, tapes, threads, results); !failure.empty()) {
    std::fprintf(stderr, "cut_strategies: %s\n", failure.c_str());
    return 1;
  }

  const std::string csv = csvText(tapes, jobs, results, plain, filePlan);
  writeOutputFile(csvPath.string(), csv, inputs);  // a failed write: "--out FILE: cannot write: reason", exit 1
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "cut_strategies: wrote %s (%zu rows) in %.1f s\n", csvPath.c_str(),
               jobs.size() + tapes.size() + (filePlan ? 1 : 0), seconds);

  if (!plot) return 0;
  return plotFigures(csvPath, pngPath, inputs);
}

}  // namespace

int main(int argc, char** argv) {
  tapelab::installStopHandlers();  // util/process.h: no temporary file survives a signal; ulimit -f is one line
  tapelab::guardRunInputs();       // util/files.h: no output replaces a file this run read
  CLI::App app("Every cut strategy on every study tape and segment count: plan metrics to CSV, plot to PNG.",
               "cut_strategies");
  cli::useTapelabHelp(app);
  cli::Flags f(app);
  f.value("out", "DIR|FILE.csv", "where the CSV goes (a directory: cut_strategies.csv in it), the PNG beside it",
          (std::filesystem::temp_directory_path() / "tapelab-cut_strategies").string());
  f.repeatable("tape", "FILE.tape", "a tape of yours, studied beside the built-in ones (repeatable)");
  f.flag("only-tapes", "only the --tape files, not the built-in study tapes");
  f.value("segments", "A-B|N,N,...", "segment counts (default: 2-128 on tapes under 20,000 nodes, else 27 from 2 "
                                     "to 128; --quick: 2,4,8,16)");
  f.value("strategies", "a,b,...", "only these strategies (default: every one)");
  f.knob("plan", "FILE", "", "one more row, on the study tape it was made for");
  f.value("threads", "N", "planning threads", std::to_string(std::max(1u, std::thread::hardware_concurrency())));
  f.flag("no-plot", "write the CSV only");
  f.flag("quick", "four small tapes at 2, 4, 8 and 16 segments (CTest's smoke test)");
  return cli::runCommandLine(app, argc, argv, [&] { return study(f); });
}
