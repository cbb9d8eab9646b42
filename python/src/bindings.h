// The tapelab Python module's C++ half (_tapelab): what each part binds, and the
// objects Python holds. The Python half (python/tapelab/__init__.py) adds NumPy
// views, Python strategies and the keyword front door on top.
#pragma once
#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/montecarlo.h"
#include "planner/metrics.h"
#include "planner/plan.h"
#include "tape/tape.h"
#include "util/process.h"

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

// The .tape file read_tape read a tape from ({} for a tape made any other way): Tape.write and Plan.write
// never replace it, as `tapelab tape x.tape --out x.tape` and `plan x.tape --out x.tape` refuse to.
std::vector<std::string> tapeSources(const std::shared_ptr<const Tape>& tape);

// Runs a reader on this thread without the GIL (a FIFO may keep it waiting), so that a signal cutting
// its blocking call short (Ctrl-C while it waits for a writer) runs Python's handlers: KeyboardInterrupt
// propagates, not an error about the file (PEP 475). `read` touches no Python object.
template <typename F>
auto readInterruptibly(F&& read) {
  InterruptedCallCheck check(+[] {
    py::gil_scoped_acquire hold;
    return PyErr_CheckSignals() != 0;
  });
  try {
    py::gil_scoped_release release;
    return read();
  } catch (const Interrupted&) {
    if (PyErr_Occurred()) throw py::error_already_set();
    throw;
  }
}

// Errors as the CLI prints them: "tapelab: <what>"; ValueError for invalid
// input (exit 2), EngineUnavailable (a RuntimeError) for exit 3, RuntimeError else.
void bindErrors(py::module_& m);
void bindTapes(py::module_& m);
void bindPlans(py::module_& m);
void bindRuns(py::module_& m);

}  // namespace tapelab::python
