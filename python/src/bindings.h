// The tapelab Python module's C++ half (_tapelab): what each part binds, and the
// objects Python holds. The Python half (python/tapelab/__init__.py) adds NumPy
// views, Python strategies and the keyword front door on top.
#pragma once
#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "api/montecarlo.h"
#include "planner/metrics.h"
#include "planner/plan.h"
#include "tape/tape.h"

namespace tapelab::python {

namespace py = pybind11;

// A plan and the tape it cuts (plans are checked against the tape they run on).
struct PlanHandle {
  Plan plan;
  std::shared_ptr<const Tape> tape;
  std::string structure;  // structureHash(*tape)
  int requested = 0;      // the strategy's requested segment count; 0 when none
  double seconds = 0;     // time the strategy took
  std::optional<PlanMetrics> metrics;  // counted on first use
};

// A compiled kernel: runs any number of times (several Python threads take turns).
struct KernelHandle {
  std::string engine;
  std::shared_ptr<const Tape> tape;
  std::shared_ptr<PlanHandle> plan;
  Pricer pricer;
  std::mutex running;
};

// One run's results, with the kernel's statistics at the time.
struct ResultHandle {
  Result result;
  KernelStats stats;
  std::shared_ptr<PlanHandle> plan;
  std::vector<std::vector<double>> inputSets;  // the markets, in order
};

// Errors as the CLI prints them: "tapelab: <what>"; ValueError for invalid
// input (exit 2), EngineUnavailable (a RuntimeError) for exit 3, RuntimeError else.
void bindErrors(py::module_& m);
void bindTapes(py::module_& m);
void bindPlans(py::module_& m);
void bindRuns(py::module_& m);

}  // namespace tapelab::python
