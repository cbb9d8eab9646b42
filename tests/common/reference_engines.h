// The reference engines by their registry names, and a run as MonteCarlo makes
// it, for tests that link the reference but not the registry (which links every
// backend, api/registry.cpp): the same factory and rules the registry uses.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/settings.h"
#include "planner/plan.h"
#include "reference/reference.h"

namespace tapelab::testutil {

// "reference", "reference-f32" or "reference-mp", as the registry makes them.
inline std::unique_ptr<Engine> makeReference(const std::string& name, const EngineSettings& settings = {}) {
  if (name == "reference") return makeReferenceEngine(ReferenceScalar::Double, settings);
  if (name == "reference-f32") return makeReferenceEngine(ReferenceScalar::Float, settings);
  if (name == "reference-mp") return makeReferenceEngine(ReferenceScalar::Multiprecision, settings);
  throw std::invalid_argument("not a reference engine: '" + name + "'");
}

// The part of api/montecarlo.h's Result the tests read, without linking the front door.
struct PlainRun {
  std::vector<std::string> inputNames;
  RunResult run;
  double price() const { return run.markets.at(0).value; }
  double priceStderr() const { return run.markets.at(0).valueStderr; }
  double greek(const std::string& input) const { return run.markets.at(0).greeks.at(index(input)); }
  double greekStderr(const std::string& input) const { return run.markets.at(0).greeksStderr.at(index(input)); }

 private:
  size_t index(const std::string& input) const {
    for (size_t i = 0; i < inputNames.size(); ++i)
      if (inputNames[i] == input) return i;
    throw std::invalid_argument("no input named '" + input + "'");
  }
};

// MonteCarlo::of(tape).on(engine).build().run(paths, seed) with the default
// RunConfig on a tape below automatic checkpointing's 768 nodes (its ckptNodes): the plain
// kernel with Greeks in the engine's own precision (api/montecarlo.cpp's
// resolveKernel). `inputs` empty: the tape's defaults.
inline PlainRun runPlainOnReference(const Tape& tape, uint64_t paths, uint64_t seed, std::vector<double> inputs = {},
                                    const std::string& engine = "reference") {
  if (tape.size() >= 768) throw std::invalid_argument("runPlainOnReference: MonteCarlo would checkpoint this tape");
  const std::unique_ptr<Engine> e = makeReference(engine);
  const EngineCaps caps = e->caps();
  KernelOptions o;
  o.precision = caps.fp64 && !caps.fp32 ? Precision::F64 : caps.fp32 && !caps.fp64 ? Precision::F32 : caps.defaultPrecision;
  o.plan = plainPlan(tape);
  if (inputs.empty()) inputs = tape.inputDefaults;
  return {tape.inputNames, e->compile(tape, o)->run({inputs}, paths, seed)};
}

}  // namespace tapelab::testutil
