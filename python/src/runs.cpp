// Engines, kernels and runs. A run's configuration is resolved as the CLI's:
// RunConfig from the TAPELAB_* variables (api/knobs.h), then the `knobs`
// dictionary through the same table, then the keywords (the CLI's flags), so
// the same call gives the same kernel and the same bits. The GIL is released
// while a kernel compiles and while it runs.
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <stdexcept>
#include <thread>

#include "api/knobs.h"
#include "api/registry.h"
#include "api/tune.h"
#include "planner/planfile.h"
#include "python/src/bindings.h"
#include "util/files.h"
#include "util/process.h"

namespace tapelab::python {
namespace {

const char* kindName(KernelKind k) { return toString(k); }

// Runs `work` (no Python objects touched) on a worker thread, the GIL released, while this thread
// checks for signals every 50 ms: Ctrl-C raises KeyboardInterrupt promptly. The work is told to
// stop (util/process.h requestInterrupt: engines check between blocks and dispatches, a compiler
// child is ended) and is waited for, so nothing it uses outlives the call; then the
// KeyboardInterrupt (or whatever the signal handler raised) propagates.
template <class F>
auto interruptible(F work) -> decltype(work()) {
  using R = decltype(work());
  std::optional<R> result;
  std::exception_ptr failure;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false, signalled = false;
  {
    py::gil_scoped_release release;
    std::thread worker([&] {
      try {
        result.emplace(work());
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      done = true;
      cv.notify_all();
    });
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu);
        if (cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) break;
      }
      if (signalled) continue;
      py::gil_scoped_acquire hold;
      if (PyErr_CheckSignals() != 0) {  // the handler raised (KeyboardInterrupt): stop the work, keep the error
        signalled = true;
        requestInterrupt();
      }
    }
    worker.join();
    if (signalled) clearInterrupt();
  }
  if (signalled) throw py::error_already_set();
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

// paths= and seed= as the CLI's --paths and --seed take them, each error one line: an int (a bool
// is not one), paths 1 to 2^48, seed 0 to 2^64 - 1; None: the variable, else the default.
uint64_t countArgument(const py::object& v, const char* flag, const char* variable, uint64_t fallback, bool paths) {
  if (v.is_none()) {
    const auto text = knobValue(variable);
    if (!text) return fallback;
    return paths ? parsePathCount(*text, variable) : parseUnsigned(*text, variable);
  }
  const std::string shown = py::repr(v).cast<std::string>().substr(0, 40);
  if (py::isinstance<py::bool_>(v) || !py::isinstance<py::int_>(v))
    throw std::invalid_argument(std::string(flag) + ": expected an integer, got " +
                                py::str(v.get_type().attr("__name__")).cast<std::string>() + " " + shown);
  return paths ? parsePathCount(py::str(v).cast<std::string>(), flag) : parseUnsigned(py::str(v).cast<std::string>(), flag);
}

std::vector<std::string> kindNames(const std::vector<KernelKind>& kinds) {
  std::vector<std::string> out;
  for (KernelKind k : kinds) out.emplace_back(kindName(k));
  return out;
}

// A knob's value as the environment would hold it.
std::string knobText(const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "1" : "0";
  return py::str(v).cast<std::string>();
}

// knobs={"TAPELAB_MAX_GROUPS": 4, ...}: each through api/knobs.cpp's table, as if set in the environment.
void applyKnobs(RunConfig& c, const py::dict& knobs) {
  for (const auto& [key, value] : knobs) {
    const std::string name = py::str(key).cast<std::string>();
    const std::string text = knobText(value);
    const Knob* knob = nullptr;
    for (const Knob& k : knobTable())
      if (name == k.variable) knob = &k;
    if (!knob) throw std::invalid_argument("knobs: unknown variable '" + name + "' (README.md lists them)");
    if (name == "TAPELAB_CACHE_DIR") {
      c.engineSettings.cacheDir = resolveCacheDir(text.c_str(), nullptr, nullptr);
    } else if (!knob->apply) {
      throw std::invalid_argument("knobs: " + name + " is not a knob of a run here (paths= and seed= are keywords)");
    } else {
      knob->apply(c, text, knob->variable);
    }
  }
}

// --engine auto (cli/cmd_run.cpp's rule): the first usable real GPU, then cpu-jit, then the reference.
std::string pickEngine(const std::string& requested, const EngineSettings& settings) {
  if (requested != "auto") return requested;
  for (const char* name : {"cuda", "vulkan", "opencl"}) {
    const EngineCaps c = engineCaps(findEngine(name), settings);
    if (c.usable && !c.cpuDevice) return name;
  }
  if (engineCaps(findEngine("cpu-jit"), settings).usable) return "cpu-jit";
  return "reference";
}

int positive(const std::optional<int>& v, const char* flag) {
  if (v && *v < 1) throw std::invalid_argument(std::string(flag) + ": expected a positive integer");
  return v.value_or(0);
}

RunConfig runConfig(const std::optional<std::string>& engine, const std::shared_ptr<PlanHandle>& plan,
                    const std::optional<std::string>& strategy, const py::object& checkpoint,
                    std::optional<int> ckptNodes, std::optional<int> seglen, std::optional<int> inner,
                    std::optional<int> budget, const std::optional<std::string>& kernel,
                    const std::optional<std::string>& layout, const std::optional<std::string>& precision,
                    bool greeks, const std::optional<std::string>& dump, const std::optional<std::string>& config,
                    const py::dict& knobs) {
  RunConfig c = RunConfig::fromEnvironment();
  applyKnobs(c, knobs);
  if (config) c.userConfig = parseConfigText(*config, "config");  // names and values now, the engine's fields at compile
  if (engine) c.engine = *engine;
  if (!checkpoint.is_none()) c.checkpoint = Checkpoint::parse(knobText(checkpoint), "--checkpoint");
  if (ckptNodes) c.ckptNodes = positive(ckptNodes, "--ckpt-nodes");
  if (strategy) c.strategy = *strategy;
  if (seglen) c.segLen = positive(seglen, "--seglen");
  if (inner) c.innerSegments = positive(inner, "--inner");
  if (budget) c.budget = positive(budget, "--budget");
  if (kernel) c.kernel = parseKernelKind(*kernel, "--kernel");
  if (layout)  // retired with --layout: the scratch buffer's layout is a field of config= (engine/config.h)
    throw std::invalid_argument("layout= is retired: use config=\"layout=" + *layout + "\" (tapelab config --list)");
  if (precision) {
    if (*precision == "fp32") c.precision = Precision::F32;
    else if (*precision == "fp64") c.precision = Precision::F64;
    else throw std::invalid_argument("precision: expected fp32 or fp64, got '" + *precision + "'");
  }
  c.greeks = greeks;
  if (dump) c.dumpDir = *dump;
  if (plan) c.plan = plan->plan;  // wins over a TAPELAB_PLAN file, as a keyword wins over its variable
  // A plan keyword and a TAPELAB_STRATEGY (or a strategy keyword and TAPELAB_PLAN): the keyword wins,
  // the variable is listed in not_used (api/knobs.h); keywords on both sides are refused at compile.
  preferFlagsOverVariables(c, [&](const char* variable) {
    const std::string v = variable;
    return (v == "TAPELAB_PLAN" && plan) || (v == "TAPELAB_STRATEGY" && strategy) ||
           (v == "TAPELAB_CKPT" && !checkpoint.is_none()) || (v == "TAPELAB_SEGLEN" && seglen) ||
           (v == "TAPELAB_INNER" && inner) || (v == "TAPELAB_BUDGET" && budget);
  });
  c.engine = pickEngine(c.engine, c.engineSettings);
  c.promptInterrupts = true;  // a GPU run's launches short enough that Ctrl-C stops it within ~50 ms
  return c;
}

std::shared_ptr<KernelHandle> compileKernel(std::shared_ptr<const Tape> tape, const std::optional<std::string>& engine,
                                            std::shared_ptr<PlanHandle> plan, const std::optional<std::string>& strategy,
                                            const py::object& checkpoint, std::optional<int> ckptNodes,
                                            std::optional<int> seglen, std::optional<int> inner,
                                            std::optional<int> budget, const std::optional<std::string>& kernel,
                                            const std::optional<std::string>& layout,
                                            const std::optional<std::string>& precision, bool greeks, int markets,
                                            const std::optional<std::string>& dump,
                                            const std::optional<std::string>& config, const py::dict& knobs,
                                            const std::vector<std::vector<double>>& sets) {
  if (plan && plan->structure != structureHash(*tape))
    throw std::invalid_argument("--plan: the plan was made for another tape (" + plan->tape->name + ")");
  const RunConfig c = runConfig(engine, plan, strategy, checkpoint, ckptNodes, seglen, inner, budget, kernel, layout,
                                precision, greeks, dump, config, knobs);
  if (markets < 1 || markets > 8) throw std::invalid_argument("--markets: expected 1..8, got " + std::to_string(markets));
  auto k = std::make_shared<KernelHandle>();
  k->tape = tape;
  k->engine = c.engine;
  // sets: the markets run() will price, where the caller knows them: what every dispatch's markets share is
  // read once (config shared_inputs), and run() refuses markets that differ in it.
  k->pricer = interruptible([&] { return MonteCarlo::of(*tape).config(c).markets(markets).sets(sets).build(); });
  const Plan& resolved = k->pricer.options().plan;
  if (plan && resolved.bounds == plan->plan.bounds && resolved.inner == plan->plan.inner) {
    k->plan = plan;
  } else {
    k->plan = std::make_shared<PlanHandle>();
    k->plan->plan = resolved;
    k->plan->tape = tape;
    k->plan->structure = structureHash(*tape);
    if (!plan && c.checkpoint.mode == Checkpoint::Mode::Segments) k->plan->requested = c.checkpoint.segments;
  }
  return k;
}

std::shared_ptr<ResultHandle> runKernel(KernelHandle& k, const std::vector<std::vector<double>>& sets, uint64_t paths,
                                        uint64_t seed) {
  if (sets.empty()) throw std::invalid_argument("no markets to price");
  for (const auto& s : sets)
    if (static_cast<int>(s.size()) != k.tape->numInputs())
      throw std::invalid_argument("a market has " + std::to_string(s.size()) + " inputs; the tape has " +
                                  std::to_string(k.tape->numInputs()));
  if (paths < 2) throw std::invalid_argument("--paths: need at least 2 paths for a standard error");
  auto r = std::make_shared<ResultHandle>();
  r->plan = k.plan;
  r->inputSets = sets;
  interruptible([&] {
    std::lock_guard<std::mutex> lock(k.running);
    r->result = k.pricer.runMarkets(sets, paths, seed);
    r->stats = k.pricer.stats();
    return true;
  });
  // Not finite: a RuntimeWarning with the CLI's words (cli/cli.h warnNonFinite), never silence.
  const std::string bad = nonFiniteEstimates(r->result.run, r->result.kernel, r->result.inputNames);
  if (!bad.empty() &&
      PyErr_WarnEx(PyExc_RuntimeWarning,
                   ("tapelab: not finite: " + bad + " (a path's value, or a sum over paths, overflowed or is undefined)").c_str(),
                   1) != 0)
    throw py::error_already_set();
  return r;
}

const MarketResult& market(const ResultHandle& r, size_t m) {
  if (m >= r.result.run.markets.size())
    throw py::index_error("market " + std::to_string(m) + " of " + std::to_string(r.result.run.markets.size()));
  return r.result.run.markets[m];
}

// The JSON number the CLI prints: a finite double, or its text for NaN/Inf.
py::object number(double v) {
  if (std::isfinite(v)) return py::float_(v);
  return py::str(std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

py::dict statsDict(const KernelStats& s) {
  py::dict d;
  d["registers"] = s.registers;
  d["spill_bytes"] = s.spillBytes;
  d["spill_store_bytes"] = s.spillStoreBytes;
  d["scratch_bytes"] = s.scratchBytes;
  d["scratch_bytes_per_path"] = s.scratchBytesPerPath;
  d["source_bytes"] = s.sourceBytes;
  d["compile_seconds"] = s.compileSeconds;
  d["cache_hit"] = s.cacheHit;
  d["notes"] = s.notes;
  d["source_path"] = s.sourcePath;
  d["config_unused"] = s.configUnused;
  return d;
}

// Where a GPU run's time went (engine.h DispatchTiming), a dict per dispatch; None where not timed.
py::list dispatchList(const RunResult& run) {
  py::list out;
  for (const DispatchTiming& t : run.dispatches) {
    py::dict d;
    d["groups"] = t.groups;
    d["ready_seconds"] = t.readySeconds;
    d["sum_seconds"] = t.sumSeconds;
    d["kernel_seconds"] = t.kernelSeconds >= 0 ? py::object(py::float_(t.kernelSeconds)) : py::none();
    d["gap_seconds"] = t.gapSeconds >= 0 ? py::object(py::float_(t.gapSeconds)) : py::none();
    out.append(d);
  }
  return out;
}

// `tapelab price --json`'s object for one market (cli/cli.cpp resultJson), as a dict.
py::dict resultDict(const ResultHandle& h, size_t m) {
  const Result& r = h.result;
  const MarketResult& mr = market(h, m);
  py::dict d, greeks, greeksStderr;
  if (r.kernel.greeks)
    for (size_t i = 0; i < r.inputNames.size(); ++i) {
      greeks[py::str(r.inputNames[i])] = number(mr.greeks.at(i));
      greeksStderr[py::str(r.inputNames[i])] = number(mr.greeksStderr.at(i));
    }
  d["engine"] = r.engine;
  d["kernel"] = r.kernel.kind == KernelKind::Plain ? "plain" : "checkpointed";
  d["kernel_kind"] = kindName(r.kernel.kind);
  d["config"] = configText(r.kernel.config, r.engine);
  d["math"] = toString(r.kernel.config.math);
  d["tuned"] = r.tuned;
  d["provenance"] = r.provenance.text();  // as --json: where the configuration, plan and kind came from
  d["not_used"] = r.notUsed;  // as --json: the requests the kernel does not follow, and why ([] when none)
  d["segments"] = r.kernel.plan.segments();
  d["strategy"] = r.kernel.plan.strategy;
  d["precision"] = toString(r.kernel.precision);
  d["paths"] = r.run.paths;
  d["seed"] = r.run.seed;
  d["seconds"] = r.run.seconds;
  d["paths_per_second"] = r.pathsPerSecond();
  d["value"] = number(mr.value);
  d["stderr"] = number(mr.valueStderr);
  if (r.kernel.kind == KernelKind::Scratch) d["layout"] = toString(r.kernel.config.layout);
  {  // as --json: the estimates that are not finite, only when there are some
    RunResult one;
    one.markets.push_back(mr);
    const std::string bad = nonFiniteEstimates(one, r.kernel, r.inputNames);
    if (!bad.empty()) {
      py::list items;
      for (size_t at = 0; at <= bad.size();) {
        const size_t comma = std::min(bad.find(", ", at), bad.size());
        items.append(bad.substr(at, comma - at));
        at = comma + 2;
      }
      d["non_finite"] = items;
    }
  }
  d["greeks"] = greeks;
  d["greeks_stderr"] = greeksStderr;
  py::dict stats;
  stats["registers"] = h.stats.registers;
  stats["spill_bytes"] = h.stats.spillBytes;
  stats["compile_seconds"] = h.stats.compileSeconds;
  stats["cache_hit"] = h.stats.cacheHit;
  if (!h.stats.notes.empty()) stats["notes"] = h.stats.notes;
  d["kernel_stats"] = stats;
  return d;
}

py::dict engineDict(const EngineEntry& e, const EngineSettings& settings) {
  const EngineCaps c = engineCaps(e, settings);
  py::dict d;
  d["name"] = e.name;
  d["summary"] = e.summary;
  d["usable"] = c.usable;
  d["compile_only"] = c.compileOnly;
  d["cpu_device"] = c.cpuDevice;
  d["reason"] = c.reason;
  d["kinds"] = kindNames(c.kinds);
  std::vector<std::string> precisions;
  if (c.fp32) precisions.emplace_back("fp32");
  if (c.fp64) precisions.emplace_back("fp64");
  d["precisions"] = precisions;
  d["default_precision"] = toString(c.defaultPrecision);
  d["max_markets"] = c.maxMarkets;
  return d;
}

}  // namespace

// tapelab.tune: the search of api/tune.h, as `tapelab tune` runs it; a dict of what it found.
py::dict tuneJob(std::shared_ptr<const Tape> tape, const std::optional<std::string>& engine, int markets,
                 const py::object& pathsArg, const py::object& seedArg, double budgetSeconds, int repeats,
                 const std::vector<std::string>& strategies, const std::vector<int>& segments, int plans,
                 bool compileOnly, bool store, const std::optional<std::string>& precision, bool greeks,
                 const std::optional<std::string>& config, const py::dict& knobs, const py::object& progress) {
  RunConfig c = runConfig(engine, nullptr, std::nullopt, py::none(), std::nullopt, std::nullopt, std::nullopt,
                          std::nullopt, std::nullopt, std::nullopt, precision, greeks, std::nullopt, config, knobs);
  if (c.engine == "auto") throw std::invalid_argument("engine: tune one engine at a time");
  TuneOptions o;
  o.markets = markets;
  o.paths = pathsArg.is_none() ? 0 : countArgument(pathsArg, "paths", "TAPELAB_PATHS", 0, true);
  o.seed = countArgument(seedArg, "seed", "TAPELAB_SEED", 42, false);
  o.budgetSeconds = budgetSeconds;
  o.repeats = repeats;
  o.strategies = strategies;
  o.segments = segments;
  o.plans = plans;
  o.compileOnly = compileOnly;
  o.store = store;
  if (!progress.is_none())
    o.progress = [progress](const std::string& line) {
      py::gil_scoped_acquire hold;
      progress(line);
    };
  const TuneResult r = interruptible([&] { return tune(*tape, c, o); });
  py::list rows;
  for (const TuneCandidate& t : r.candidates) {
    py::dict d;
    d["plan"] = t.plan;
    d["kind"] = kindName(t.kind);
    d["segments"] = t.cuts.segments();
    d["peak_live"] = t.metrics.peakLive;
    d["recompute_cost"] = t.metrics.recomputeCost;
    d["config"] = configText(t.config, c.engine);
    d["step"] = t.step;
    d["status"] = t.statusText();
    d["bits"] = std::string(toString(t.bits));
    d["mpaths_per_s"] = t.mpathsPerSecond;
    d["median_s"] = t.median;
    d["spread"] = t.spread;
    d["seconds"] = t.seconds;
    d["registers"] = t.stats.registers;
    d["local_bytes"] = t.stats.spillBytes;
    rows.append(d);
  }
  py::dict out;
  out["engine"] = c.engine;
  out["device"] = r.key.device;
  out["markets"] = r.key.markets;
  out["precision"] = toString(r.key.precision);
  out["math"] = toString(r.key.math);
  out["paths"] = r.paths;
  out["compile_only"] = r.compileOnly;
  out["seconds"] = r.seconds;
  out["budget_spent"] = r.budgetSpent;
  out["candidates"] = rows;
  out["winner"] = r.winner >= 0 ? py::object(rows[r.winner]) : py::none();
  out["defaults"] = r.defaults >= 0 ? py::object(rows[r.defaults]) : py::none();
  out["stored"] = r.stored;
  return out;
}

void bindRuns(py::module_& m) {
  m.def("_unknown_variables", &unknownVariables,
        "a line per TAPELAB_* variable set here that tapelab does not read (warned about at import)");
  m.def(
      "engines",
      [](const py::dict& knobs) {
        RunConfig c;
        c.engineSettings = engineSettingsFromEnvironment();
        applyKnobs(c, knobs);
        py::list out;
        for (const EngineEntry& e : engineRegistry()) out.append(engineDict(e, c.engineSettings));
        return out;
      },
      py::arg("knobs") = py::dict(),
      "Every engine tapelab knows, usable here or not: name, usable, compile_only, reason, kinds, precisions, ...");

  py::class_<KernelStats>(m, "KernelStats", "What the compiler and driver say about a kernel; -1 = not reported.")
      .def_readonly("registers", &KernelStats::registers, "registers per thread (GPU compilers), -1 when not reported")
      .def_readonly("spill_bytes", &KernelStats::spillBytes, "local memory (spills and stack frame) per thread in bytes, -1 when not reported")
      .def_readonly("spill_store_bytes", &KernelStats::spillStoreBytes, "of which register spills, where the compiler says (ptxas: spill stores), else -1")
      .def_readonly("scratch_bytes", &KernelStats::scratchBytes, "bytes of the scratch buffer the kernel allocates (scratch kind), -1 when not reported")
      .def_readonly("scratch_bytes_per_path", &KernelStats::scratchBytesPerPath, "scratch kind: the scratch bytes one path in flight holds (its slots), else -1")
      .def_readonly("source_bytes", &KernelStats::sourceBytes, "bytes of the generated source the compiler read, -1 where not reported")
      .def_readonly("compile_seconds", &KernelStats::compileSeconds, "time the kernel took to compile (0 from a cache)")
      .def_readonly("cache_hit", &KernelStats::cacheHit, "whether the kernel came from a compiled-kernel cache")
      .def_readonly("notes", &KernelStats::notes, "free text: the compiler's and driver's statistics by name")
      .def_readonly("source_path", &KernelStats::sourcePath, "the generated source's file where dump= wrote it, else empty")
      .def("to_dict", &statsDict, "the statistics as a dict, keyed as `tapelab price --json` prints kernel_stats")
      .def("__repr__", [](const KernelStats& s) { return "KernelStats(" + py::repr(statsDict(s)).cast<std::string>() + ")"; },
           "KernelStats({...}) with to_dict()'s keys");

  py::class_<KernelHandle, std::shared_ptr<KernelHandle>>(m, "Kernel", "A compiled kernel: run it many times.")
      .def_readonly("engine", &KernelHandle::engine, "the engine it runs on (auto resolved)")
      .def_property_readonly("tape", [](const KernelHandle& k) { return std::const_pointer_cast<Tape>(k.tape); },
                             "the tape it prices")
      .def_readonly("plan", &KernelHandle::plan, "the plan it runs (tapelab.Plan; the plain plan for a plain kernel)")
      .def_property_readonly("kind", [](const KernelHandle& k) { return kindName(k.pricer.options().kind); },
                             "plain, register, scratch or tangent")
      .def_property_readonly("precision", [](const KernelHandle& k) { return toString(k.pricer.options().precision); },
                             "fp32 or fp64 (the engine's default unless precision= was given)")
      .def_property_readonly("layout", [](const KernelHandle& k) { return toString(k.pricer.options().config.layout); },
                             "the scratch buffer's layout: aos or soa")
      .def_property_readonly("greeks", [](const KernelHandle& k) { return k.pricer.options().greeks; },
                             "whether it computes the Greeks (False: value only)")
      .def_property_readonly("markets", [](const KernelHandle& k) { return k.pricer.options().markets; },
                             "input sets per dispatch")
      .def_property_readonly("stats", [](const KernelHandle& k) { return k.pricer.stats(); },
                             "what the compiler and driver said (tapelab.KernelStats)")
      .def_property_readonly("not_used", [](const KernelHandle& k) { return k.pricer.notUsed(); },
                             "the requests (strategy=, seglen=, budget=, inner=) the kernel does not follow, one line "
                             "each saying why and what forces them, as the CLI's --json not_used; [] when none")
      .def_property_readonly("provenance", [](const KernelHandle& k) { return k.pricer.provenance().text(); },
                             "where the configuration, plan and kind came from (default, tuned or user), as the "
                             "CLI's --json provenance")
      .def("_run", &runKernel, py::arg("sets"), py::arg("paths"), py::arg("seed"),
           "prices the input sets (lists of input values) with paths and seed (Kernel.run checks its keywords)");

  py::class_<ResultHandle, std::shared_ptr<ResultHandle>>(m, "Result", "One run: a result per market.")
      .def_property_readonly("engine", [](const ResultHandle& r) { return r.result.engine; }, "the engine that ran")
      .def_property_readonly("kind", [](const ResultHandle& r) { return kindName(r.result.kernel.kind); },
                             "the kernel kind: plain, register, scratch or tangent")
      .def_property_readonly("segments", [](const ResultHandle& r) { return r.result.kernel.plan.segments(); },
                             "the plan's top-level segments (1: plain)")
      .def_property_readonly("strategy", [](const ResultHandle& r) { return r.result.kernel.plan.strategy; },
                             "the plan's strategy")
      .def_property_readonly("precision", [](const ResultHandle& r) { return toString(r.result.kernel.precision); },
                             "fp32 or fp64")
      .def_property_readonly("layout", [](const ResultHandle& r) { return toString(r.result.kernel.config.layout); },
                             "the scratch buffer's layout: aos or soa")
      .def_property_readonly("has_greeks", [](const ResultHandle& r) { return r.result.kernel.greeks; },
                             "whether the run computed Greeks")
      .def_property_readonly("paths", [](const ResultHandle& r) { return r.result.run.paths; }, "paths per market")
      .def_property_readonly("seed", [](const ResultHandle& r) { return r.result.run.seed; }, "the draws' seed")
      .def_property_readonly("seconds", [](const ResultHandle& r) { return r.result.run.seconds; },
                             "wall time of the run, compile excluded")
      .def_property_readonly("paths_per_second", [](const ResultHandle& r) { return r.result.pathsPerSecond(); },
                             "market-paths per second of the run (paths x markets / seconds)")
      .def_property_readonly("setup_seconds", [](const ResultHandle& r) { return r.result.run.setupSeconds; },
                             "GPU engines: packing and uploading the inputs, before the first dispatch")
      .def_property_readonly("dispatches", [](const ResultHandle& r) { return dispatchList(r.result.run); },
                             "GPU engines: a dict per dispatch (groups, ready_seconds, sum_seconds, kernel_seconds and "
                             "gap_seconds: CUDA with knobs={'TAPELAB_TIMELINE': 1}, else None); empty elsewhere")
      .def_property_readonly("input_names", [](const ResultHandle& r) { return r.result.inputNames; },
                             "the tape's inputs, in the order of greek_array's columns")
      .def_readonly("input_sets", &ResultHandle::inputSets, "the markets priced, in order")
      .def_readonly("kernel_stats", &ResultHandle::stats, "the kernel's statistics (tapelab.KernelStats)")
      .def_readonly("plan", &ResultHandle::plan, "the plan the kernel ran (tapelab.Plan)")
      .def_property_readonly("not_used", [](const ResultHandle& r) { return r.result.notUsed; },
                             "the requests the kernel that ran does not follow, and why (Kernel.not_used); [] when none")
      .def("__len__", [](const ResultHandle& r) { return r.result.run.markets.size(); }, "number of markets priced")
      .def("_values", [](const ResultHandle& r) {
        std::vector<double> v, e;
        for (const MarketResult& m : r.result.run.markets) {
          v.push_back(m.value);
          e.push_back(m.valueStderr);
        }
        return std::make_pair(v, e);
      }, "(values, standard errors), one per market (Result.values reads these)")
      .def("_greeks", [](const ResultHandle& r) {
        std::vector<std::vector<double>> g, e;
        for (const MarketResult& m : r.result.run.markets) {
          g.push_back(r.result.kernel.greeks ? m.greeks : std::vector<double>{});
          e.push_back(r.result.kernel.greeks ? m.greeksStderr : std::vector<double>{});
        }
        return std::make_pair(g, e);
      }, "(Greeks, standard errors), a list per market (Result.greek_array reads these)")
      .def("to_dict", &resultDict, py::arg("market") = 0,
           "market `market` as `tapelab price --json` prints it (a list of these with --ladder)");

  m.def("_tune", &tuneJob, py::arg("tape"), py::arg("engine"), py::arg("markets"), py::arg("paths"), py::arg("seed"),
        py::arg("budget_seconds"), py::arg("repeats"), py::arg("strategies"), py::arg("segments"), py::arg("plans"),
        py::arg("compile_only"), py::arg("store"), py::arg("precision"), py::arg("greeks"), py::arg("config"),
        py::arg("knobs"), py::arg("progress"), "the search behind tapelab.tune (api/tune.h): a dict of what it found");
  m.def("_compile", &compileKernel, py::arg("tape"), py::arg("engine") = py::none(), py::arg("plan") = nullptr,
        py::arg("strategy") = py::none(), py::arg("checkpoint") = py::none(), py::arg("ckpt_nodes") = py::none(),
        py::arg("seglen") = py::none(), py::arg("inner") = py::none(), py::arg("budget") = py::none(),
        py::arg("kernel") = py::none(), py::arg("layout") = py::none(), py::arg("precision") = py::none(),
        py::arg("greeks") = true, py::arg("markets") = 1, py::arg("dump") = py::none(), py::arg("config") = py::none(),
        py::arg("knobs") = py::dict(), py::arg("sets") = std::vector<std::vector<double>>{},
        "the kernel behind tapelab.compile (its keywords checked there)");
  m.def("_paths_and_seed", [](const py::object& paths, const py::object& seed) {
    // The CLI's defaults: the keyword, else TAPELAB_PATHS / TAPELAB_SEED, else 100000 and 42.
    return std::make_pair(countArgument(paths, "paths", "TAPELAB_PATHS", 100000, true),
                          countArgument(seed, "seed", "TAPELAB_SEED", 42, false));
  }, py::arg("paths"), py::arg("seed"), "(paths, seed) as the CLI reads --paths and --seed, checked, with its defaults");
}

}  // namespace tapelab::python
