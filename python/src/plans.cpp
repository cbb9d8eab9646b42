// Plans: a built-in strategy's, or any cuts (flat or nested) read the way plan
// files are read (planner/planfile.h), so a Python strategy's cuts get the plan
// file's checks and messages; metrics and plan-file text out.
#include <pybind11/stl.h>

#include <chrono>
#include <stdexcept>

#include "planner/metrics.h"
#include "planner/planfile.h"
#include "planner/schedules.h"
#include "planner/strategies.h"
#include "python/src/bindings.h"
#include "util/files.h"

namespace tapelab::python {
namespace {

std::shared_ptr<PlanHandle> handle(Plan plan, std::shared_ptr<const Tape> tape, int requested, double seconds) {
  auto h = std::make_shared<PlanHandle>();
  h->structure = structureHash(*tape);
  h->plan = std::move(plan);
  h->tape = std::move(tape);
  h->requested = requested;
  h->seconds = seconds;
  return h;
}

const PlanMetrics& metricsOf(PlanHandle& h) {
  if (!h.metrics) h.metrics = planMetrics(*h.tape, h.plan);
  return *h.metrics;
}

int positive(std::optional<int> v, const char* flag) {
  if (v && *v < 1) throw std::invalid_argument(std::string(flag) + ": expected a positive integer");
  return v.value_or(0);
}

std::shared_ptr<PlanHandle> strategyPlan(std::shared_ptr<const Tape> tape, const std::string& name, int segments,
                                         std::optional<int> seglen, std::optional<int> inner,
                                         std::optional<int> budget) {
  PlanOptions o;
  o.segments = segments;
  o.segLen = positive(seglen, "--seglen");
  o.innerSegments = positive(inner, "--inner");
  o.budget = positive(budget, "--budget");
  Plan plan;
  double seconds = 0;
  {
    py::gil_scoped_release release;  // optimal and budget search take seconds on long tapes
    const auto t0 = std::chrono::steady_clock::now();
    plan = makeStrategyPlan(name, *tape, o);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return handle(std::move(plan), std::move(tape), segments, seconds);
}

// The file's "requested_segments" (0 when absent), so that a plan read back writes the same text.
int requestedIn(const std::string& validPlanText) {
  const bool bom = validPlanText.rfind("\xEF\xBB\xBF", 0) == 0;  // the reader skips one; Python's json does not
  const py::object root = py::module_::import("json").attr("loads")(bom ? validPlanText.substr(3) : validPlanText);
  const py::object value = root.attr("get")("requested_segments", 0);
  return value.cast<int>();
}

std::vector<int32_t> cutsOf(const Plan& p) { return {p.bounds.begin() + 1, p.bounds.end() - 1}; }

py::dict metricsDict(const PlanMetrics& m) {
  py::dict d;
  d["segments"] = m.segments;
  d["persistent"] = m.persistent;
  d["peak_live"] = m.peakLive;
  d["scratch_slots"] = m.scratchSlots;
  d["recompute_ops"] = m.recomputeOps;
  d["recompute_cost"] = m.recomputeCost;
  d["depth"] = m.depth;
  d["peak_segment"] = m.peakSegment;
  return d;
}

}  // namespace

void bindPlans(py::module_& m) {
  py::class_<PlanMetrics>(m, "Metrics", "What a plan costs (planner/metrics.h); the names of `tapelab plan --json`.")
      .def_readonly("segments", &PlanMetrics::segments, "top-level segments of the plan (1: plain)")
      .def_readonly("persistent", &PlanMetrics::persistent, "values held for the whole kernel")
      .def_readonly("peak_live", &PlanMetrics::peakLive, "most values live at once: the register-pressure proxy")
      .def_readonly("scratch_slots", &PlanMetrics::scratchSlots, "slots a scratch kernel's buffer needs per path")
      .def_readonly("recompute_ops", &PlanMetrics::recomputeOps, "operations the reverse sweep recomputes")
      .def_readonly("recompute_cost", &PlanMetrics::recomputeCost, "recompute_ops weighted by op cost")
      .def_readonly("depth", &PlanMetrics::depth, "levels of cuts: 0 plain, 1 flat, 2 two-level, ...")
      .def_readonly("peak_segment", &PlanMetrics::peakSegment, "-1: forward sweep, else the segment holding the peak")
      .def("to_dict", &metricsDict, "the metrics as a dict, keyed as `tapelab plan --json` prints them")
      .def("__eq__", [](const PlanMetrics& a, const PlanMetrics& b) {
        return a.segments == b.segments && a.persistent == b.persistent && a.peakLive == b.peakLive &&
               a.scratchSlots == b.scratchSlots && a.recomputeOps == b.recomputeOps &&
               a.recomputeCost == b.recomputeCost && a.depth == b.depth && a.peakSegment == b.peakSegment;
      }, "every metric equal")
      .def("__repr__", [](const PlanMetrics& m) { return "Metrics(" + py::repr(metricsDict(m)).cast<std::string>() + ")"; },
           "Metrics({...}) with to_dict()'s keys");

  py::class_<PlanHandle, std::shared_ptr<PlanHandle>>(m, "Plan", "Where a tape's kernel cuts it (planner/plan.h).")
      .def_property_readonly("strategy", [](const PlanHandle& h) { return h.plan.strategy; },
                             "the strategy's name (a built-in's, python:NAME for a function, or the file's label)")
      .def_property_readonly("segments", [](const PlanHandle& h) { return h.plan.segments(); }, "top-level segments")
      .def_property_readonly("depth", [](const PlanHandle& h) { return h.plan.depth(); },
                             "levels of cuts: 0 plain, 1 flat, 2 two-level, ...")
      .def_property_readonly("nested", [](const PlanHandle& h) { return h.plan.nested(); },
                             "whether some segment is cut again (inner is not None)")
      .def_property_readonly("bounds", [](const PlanHandle& h) { return h.plan.bounds; },
                             "segment bounds: 0, the cuts, the node count")
      .def_property_readonly("cuts", [](const PlanHandle& h) { return cutsOf(h.plan); }, "the top-level cuts")
      .def_property_readonly(
          "inner",
          [](const PlanHandle& h) -> py::object {
            if (!h.plan.nested()) return py::none();
            return py::module_::import("json").attr("loads")(planInnerJson(h.plan));
          },
          "None for a flat plan, else the plan file's \"inner\": one entry per segment, None or "
          "{\"cuts\": [...], \"chain\": bool, \"inner\": [...]}")
      .def_property_readonly("persistent", [](const PlanHandle& h) { return h.plan.persistent; },
                             "nodes whose values the kernel keeps for the whole reverse sweep")
      .def_property_readonly("crossing", [](const PlanHandle& h) { return h.plan.crossing; },
                             "per segment boundary, the nodes whose values cross it (planner/plan.h)")
      .def_property_readonly("scratch_slots", [](const PlanHandle& h) { return h.plan.scratchSlots; },
                             "slots a scratch kernel's buffer needs per path")
      .def_readonly("requested_segments", &PlanHandle::requested,
                    "the segment count asked for (budget and auto choose their own: see segments)")
      .def_readonly("seconds", &PlanHandle::seconds, "time the strategy took")
      .def_property_readonly("tape", [](const PlanHandle& h) { return std::const_pointer_cast<Tape>(h.tape); },
                             "the tape the plan cuts")
      .def_property_readonly("metrics", [](PlanHandle& h) { return metricsOf(h); },
                             "what the plan costs (tapelab.Metrics), computed once")
      .def(
          "to_json", [](const PlanHandle& h) { return planFileText(*h.tape, h.plan, h.requested); },
          "the plan file's text (tapelab plan --out writes the same)")
      .def(
          "write",
          [](const PlanHandle& h, const std::string& path) {
            // As tapelab plan --out (util/files.h): through links, never replacing a special file or the tape's file.
            writeOutputFile(path, planFileText(*h.tape, h.plan, h.requested), tapeSources(h.tape), "--out");
          },
          py::arg("path"), "write the plan file (run it with plan=tapelab.read_plan(path, tape) or --plan)")
      .def("same_cuts", [](const PlanHandle& a, const PlanHandle& b) {
        return a.structure == b.structure && a.plan.bounds == b.plan.bounds && a.plan.inner == b.plan.inner;
      }, py::arg("other"), "the same cuts (flat and nested) on the same tape structure, whatever the strategy's name")
      .def("__repr__", [](PlanHandle& h) {
        return "<tapelab.Plan " + h.plan.strategy + ": " + std::to_string(h.plan.segments()) + " segments, depth " +
               std::to_string(h.plan.depth()) + ", peak_live " + std::to_string(metricsOf(h).peakLive) + ">";
      }, "<tapelab.Plan STRATEGY: N segments, depth D, peak_live P>");

  m.def("_plan_strategy", &strategyPlan, py::arg("tape"), py::arg("name"), py::arg("segments"),
        py::arg("seglen") = py::none(), py::arg("inner") = py::none(), py::arg("budget") = py::none(),
        "a built-in strategy's plan (tapelab.plan(tape, NAME, ...)); the GIL is released while it plans");
  m.def(
      "_plain_plan", [](std::shared_ptr<const Tape> tape) { return handle(plainPlan(*tape), tape, 1, 0); },
      py::arg("tape"), "the plain kernel's plan: one segment, no cuts");
  m.def(
      "parse_plan",
      [](const std::string& text, std::shared_ptr<const Tape> tape, const std::string& file, std::optional<int> requested,
         double seconds) {
        Plan plan = parsePlanFile(text, *tape, file);
        return handle(std::move(plan), tape, requested.value_or(requestedIn(text)), seconds);
      },
      py::arg("text"), py::arg("tape"), py::arg("file") = "<string>", py::arg("requested") = py::none(),
      py::arg("seconds") = 0.0, "A plan file's text as a plan for `tape` (ValueError 'tapelab: FILE: field: reason').");
  m.def(
      "read_plan",
      [](const std::string& path, std::shared_ptr<const Tape> tape) {
        std::string text;  // readPlanFile's limit and words (util/files.h InputFile)
        try {
          readInterruptibly([&] {
            InputFile in(path, kMaxPlanBytes);
            for (std::string_view chunk; !(chunk = in.next()).empty();) text.append(chunk);
          });
        } catch (const InputError& e) {
          throw PlanFileError(path + ": (file): " + e.what());
        }
        Plan plan = parsePlanFile(text, *tape, path);
        return handle(std::move(plan), tape, requestedIn(text), 0);
      },
      py::arg("path"), py::arg("tape"), "Reads a plan file (tapelab plan --out, Plan.write) for `tape`.");
  m.def(
      "_plan_from_schedule",
      [](std::shared_ptr<const Tape> tape, const std::string& text, const std::string& file, const std::string& name) {
        Plan plan = planFromSchedule(*tape, text, file, name);
        const int segments = plan.segments();
        return handle(std::move(plan), tape, segments, 0);
      },
      py::arg("tape"), py::arg("text"), py::arg("file"), py::arg("name"),
      "a schedule file's text (planner/schedules.h) as a plan for `tape` (tapelab.schedules.from_schedule)");
  m.def(
      "_schedule_text", [](const PlanHandle& h) { return scheduleOfPlan(*h.tape, h.plan); }, py::arg("plan"),
      "the plan as a schedule file's text (tapelab.schedules.to_schedule)");
  m.def(
      "_write_output",
      [](const std::string& path, const std::string& text, const std::string& flag) {
        writeOutputFile(path, text, {}, flag);
      },
      py::arg("path"), py::arg("text"), py::arg("flag"), "util/files.h writeOutputFile: the careful writer");
  m.def("strategies", [] {
    py::dict d;
    for (const StrategyEntry& s : strategies()) d[py::str(s.name)] = s.summary;
    return d;
  }, "the built-in strategies by name, with a line each");
}

}  // namespace tapelab::python
