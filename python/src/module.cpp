// _tapelab: the compiled half of the tapelab Python module.
#include <pybind11/pybind11.h>

#include <new>
#include <stdexcept>

#include "engine/engine.h"
#include "planner/planfile.h"
#include "python/src/bindings.h"
#include "tape/textformat.h"
#include "util/text.h"

namespace tapelab::python {

void bindErrors(py::module_& m) {
  // Leaked on purpose: the exception type lives as long as the interpreter.
  static PyObject* unavailable = [&] {
    py::exception<EngineUnavailable> type(m, "EngineUnavailable", PyExc_RuntimeError);
    type.doc() = "The engine exists but cannot run here (the CLI's exit code 3).";
    return type.release().ptr();
  }();
  // The CLI's mapping (cli/main.cpp): a malformed tape or plan file and every
  // std::invalid_argument are invalid input, EngineUnavailable is exit 3.
  py::register_exception_translator([](std::exception_ptr p) {
    auto line = [](const std::exception& e) { return "tapelab: " + escapeControls(e.what()); };  // one line
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::bad_alloc& e) {  // docs/python.md: out of memory is MemoryError, as Python's own
      PyErr_SetString(PyExc_MemoryError, ("tapelab: out of memory (" + escapeControls(e.what()) + ")").c_str());
    } catch (const EngineUnavailable& e) {
      PyErr_SetString(unavailable, line(e).c_str());
    } catch (const TapeParseError& e) {
      PyErr_SetString(PyExc_ValueError, line(e).c_str());
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, line(e).c_str());
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, line(e).c_str());
    }
  });
}

}  // namespace tapelab::python

PYBIND11_MODULE(_tapelab, m) {
  using namespace tapelab::python;
  m.doc() = "tapelab's C++ core: tapes, plans, engines (use the tapelab package, not this module)";
  m.attr("__version__") = TAPELAB_VERSION;
  bindErrors(m);
  bindTapes(m);
  bindPlans(m);
  bindRuns(m);
}
