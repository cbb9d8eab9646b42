// The tuning cache: the winner `tapelab tune` found for one job, kept so that later runs of the same
// job use it. A job is (the draws' version, engine, device and driver, tape structure, markets per dispatch,
// precision, math contract, Greeks or not): TuningKey. (The draws' version, tape/philox.h kDrawsVersion: a
// winner timed under other draws is another job's.) An entry holds its whole key and is used only when that key equals the
// asking run's, so an entry can never serve another job (a renamed file, a hash collision, a file
// copied from another machine); a missing, unreadable or foreign entry is no winner.
//
// Where: <cache dir>/tune/<XXH3-128 of the key>.json (util/files.h resolves the cache directory),
// written atomically; at most 1 MiB read, regular files only.
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "engine/engine.h"
#include "tape/tape.h"

namespace tapelab {

struct TuningKey {
  std::string engine;
  std::string device;     // EngineCaps::reason: the device, its driver and API version
  std::string tape;       // planner/planfile.h structureHash: ops, arguments, output, input count
  int markets = 1;
  Precision precision = Precision::F32;
  MathContract math = MathContract::Ieee;
  bool greeks = true;     // value and Greeks, or the value only
  std::string text() const;  // one line per field, what the entry stores and compares
};

struct TunedWinner {
  std::string config;       // configText of the winner (engine/config.h)
  KernelKind kind = KernelKind::Plain;
  std::string planLabel;    // "window 16", "plain", ...
  std::string plan;         // the plan as a plan file (planner/planfile.h), "" for plain
  double mpathsPerSecond = 0;          // the winner's, as the tuner measured it
  double defaultsMpathsPerSecond = 0;  // the engine's defaults', in the same search
  uint64_t paths = 0;       // per run, as timed
  // The winner's gain over the defaults (their medians, less 1) and the noise it beat (the wider relative
  // range of the two), both from interleaved runs of the two in the search that stored it; NaN in entries
  // written before the tuner measured them.
  double margin = std::nan("");
  double noise = std::nan("");
  std::string when;         // UTC time of the search
  std::string path;         // where it was read from or written to (filled by load/store)
};

// The entry for `key` under cacheDir ("" = no cache: nullopt).
std::optional<TunedWinner> loadTuned(const std::string& cacheDir, const TuningKey& key);
// Writes it; returns false with *error when it cannot (the tuner reports it).
bool storeTuned(const std::string& cacheDir, const TuningKey& key, TunedWinner& winner, std::string* error);
// How a run using the entry says so: "PATH (+31.0% against the defaults beyond a noise of 4.2%, tuned
// 2026-12-06T10:00:00Z)".
std::string tunedNote(const TunedWinner& winner);
// Deletes the entry for `key` if any (tapelab tune --forget).
bool forgetTuned(const std::string& cacheDir, const TuningKey& key);

}  // namespace tapelab
