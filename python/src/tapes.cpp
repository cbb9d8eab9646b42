// Tapes: products and .tape files in, nodes out as byte columns (NumPy views in
// tapelab/__init__.py), the liveness a strategy writer wants.
#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>

#include "api/knobs.h"
#include "planner/liveness.h"
#include "planner/planfile.h"
#include "python/src/bindings.h"
#include "tape/op.h"
#include "tape/philox.h"
#include "tape/products/products.h"
#include "tape/textformat.h"

namespace tapelab::python {
namespace {

template <typename T>
py::bytes column(const std::vector<T>& v) {
  return py::bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// The same checks and messages as the CLI's --product/--steps/--assets/--param.
std::shared_ptr<Tape> product(const std::string& name, std::optional<int> steps, std::optional<int> assets,
                              const std::map<std::string, double>& params, std::optional<double> maxNodes) {
  // The size bound: max_nodes=, else TAPELAB_MAX_NODES (the CLI's --max-nodes), else the default.
  double bound = static_cast<double>(RunConfig{}.maxNodes);
  if (maxNodes) {
    if (!(*maxNodes >= 1 && *maxNodes <= 1099511627776.0) || *maxNodes != std::floor(*maxNodes))
      throw std::invalid_argument("max_nodes: expected a whole number from 1 to 2^40");
    bound = *maxNodes;
  } else if (const auto v = knobValue("TAPELAB_MAX_NODES")) {
    bound = static_cast<double>(parseUnsigned(*v, "TAPELAB_MAX_NODES", 1, uint64_t{1} << 40));
  }
  products::ProductParams p = params;
  if (steps) {
    if (*steps < 1 || *steps > 1000000) throw std::invalid_argument("--steps: expected 1..1000000, got " + std::to_string(*steps));
    p["steps"] = *steps;
  }
  if (assets) {
    if (*assets < 1 || *assets > 1000) throw std::invalid_argument("--assets: expected 1..1000, got " + std::to_string(*assets));
    if (name != "basket" && name != "worstof" && name != "hestonbasket")
      throw std::invalid_argument("--assets applies to --product basket, worstof or hestonbasket only");
    p["assets"] = *assets;
  }
  try {
    return std::make_shared<Tape>(products::byName(name, p, bound));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--product: ") + e.what());
  }
}

// The catalog: one dict per product (name, summary, params: name -> (default, help)).
py::list catalog() {
  py::list out;
  for (const products::ProductInfo& p : products::catalog()) {
    py::dict params;
    for (const products::ProductParam& q : p.params) params[q.name.c_str()] = py::make_tuple(q.defaultValue, q.help);
    py::dict d;
    d["name"] = p.name;
    d["summary"] = p.summary;
    d["params"] = params;
    out.append(d);
  }
  return out;
}

// read_tape's tapes and the files they came from (tapeSources), until the tape is gone.
std::mutex sourcesMutex;
std::map<const Tape*, std::pair<std::weak_ptr<const Tape>, std::string>> sources;

std::shared_ptr<Tape> withSource(std::shared_ptr<Tape> t, const std::string& path) {
  std::lock_guard<std::mutex> lock(sourcesMutex);
  for (auto it = sources.begin(); it != sources.end();) it = it->second.first.expired() ? sources.erase(it) : std::next(it);
  sources[t.get()] = {t, path};
  return t;
}

std::shared_ptr<Tape> checked(Tape t, const std::string& file) {
  const std::string problem = validate(t);
  if (!problem.empty()) throw std::invalid_argument(file + ": " + problem);
  return std::make_shared<Tape>(std::move(t));
}

}  // namespace

std::vector<std::string> tapeSources(const std::shared_ptr<const Tape>& tape) {
  std::lock_guard<std::mutex> lock(sourcesMutex);
  const auto it = sources.find(tape.get());
  if (it == sources.end() || it->second.first.lock() != tape) return {};
  return {it->second.second};
}

void bindTapes(py::module_& m) {
  py::class_<Tape, std::shared_ptr<Tape>>(m, "Tape",
                                          "One Monte-Carlo path's arithmetic: a flat list of nodes (tape/tape.h).")
      .def_readonly("name", &Tape::name, "the tape's name (a product's, the .tape file's comment line, a Recorder's)")
      .def_property_readonly("nodes", &Tape::size, "number of nodes (len(tape))")
      .def("__len__", &Tape::size, "number of nodes")
      .def_readonly("inputs", &Tape::inputNames, "input names, in input order")
      .def_readonly("output", &Tape::output, "the node whose value is priced")
      .def_property_readonly("draws", &Tape::drawCount, "largest draw index + 1")
      .def_property_readonly("pipe_width", &pipeWidth,
                             "fewest values live across a cut in the middle half of the tape (planner/liveness.h)")
      .def_property_readonly("structure", &structureHash, "XXH3-128 of the structure: what a plan depends on")
      .def("_column",
           [](const Tape& t, const std::string& which) -> py::bytes {
             if (which == "op") return column(t.op);
             if (which == "a") return column(t.a);
             if (which == "b") return column(t.b);
             if (which == "c") return column(t.c);
             if (which == "imm") return column(t.imm);
             if (which == "input_nodes") return column(t.inputNodes);
             if (which == "defaults") return column(t.inputDefaults);
             if (which == "last_use") return column(lastUse(t));
             if (which == "live_across") return column(liveAcross(t, lastUse(t)));
             if (which == "first_reverse_read") return column(firstReverseRead(t));
             throw std::invalid_argument("no tape column '" + which + "'");
           },
           py::arg("which"), "one node column as raw bytes (tapelab.Tape's NumPy properties read these)")
      .def("text", &writeTape, "the tape in the .tape text format")
      .def("write", [](const std::shared_ptr<Tape>& t, const std::string& path) { writeTapeFile(*t, path, tapeSources(t)); },
           py::arg("path"), "write the tape as a .tape file (never over the file read_tape read it from)")
      .def("__repr__", [](const Tape& t) {
        return "<tapelab.Tape " + t.name + ": " + std::to_string(t.size()) + " nodes, " +
               std::to_string(t.numInputs()) + " inputs>";
      }, "<tapelab.Tape NAME: N nodes, K inputs>");

  m.def("_product", &product, py::arg("name"), py::arg("steps") = py::none(), py::arg("assets") = py::none(),
        py::arg("params") = std::map<std::string, double>{}, py::arg("max_nodes") = py::none(),
        "A product's tape (tapelab.product).");
  m.def("_catalog", &catalog, "every product, its summary and parameters");
  m.def(
      "_draws",
      [](uint64_t seed, uint64_t firstPath, uint64_t paths, uint32_t count) {
        std::vector<double> z(static_cast<size_t>(paths) * count);
        for (uint64_t p = 0; p < paths; ++p)
          for (uint32_t k = 0; k < count; ++k) z[p * count + k] = drawNormal<double>(seed, firstPath + p, k);
        return py::bytes(reinterpret_cast<const char*>(z.data()), z.size() * sizeof(double));
      },
      py::arg("seed"), py::arg("first_path"), py::arg("paths"), py::arg("count"),
      "the fp64 draws k < count of paths [first_path, first_path + paths) under seed (tape/philox.h), row by row");
  m.def(
      "read_tape",
      [](const std::string& path) { return withSource(checked(readInterruptibly([&] { return readTapeFile(path); }), path), path); },
      py::arg("path"), "Reads a .tape file; ValueError 'tapelab: FILE:LINE: reason' when malformed.");
  m.def(
      "parse_tape",
      [](const std::string& text, const std::string& file, const std::string& name) {
        std::shared_ptr<Tape> t = checked(parseTape(text, file), file);
        if (!name.empty()) t->name = name;
        return t;
      },
      py::arg("text"), py::arg("file") = "<string>", py::arg("name") = "",
      "Parses .tape text; `file` names it in errors, `name` (if given) names the tape.");
  m.def("op_names", [] {
    std::vector<std::string> names;
    for (const OpInfo& o : kOps) names.emplace_back(o.name);
    return names;
  }, "op spellings, indexed by op code (tape/ops.def)");
}

}  // namespace tapelab::python
