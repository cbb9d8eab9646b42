// Pieces of tapelab compare beside cli/cmd_compare.cpp (the job from its flags, the kernels built and
// timed): what a comparison decided and measured, and its output as a table or JSON (cmd_compare_print.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/montecarlo.h"
#include "cli/peer_file.h"
#include "tape/tape.h"

namespace tapelab::cli {

// One row: a kernel kind at a market count on one engine, timed (or the error that cost it its numbers).
struct CompareRow {
  std::string engine, kernel;
  std::string plan;  // "plain", "window 16", ...: the strategy and segments the row ran
  int segments = 1;
  int markets = 1;
  std::vector<double> ladderMs;
  double medianMs = 0;
  Result result;  // of the last ladder
  KernelStats stats;
  std::string identical;  // "yes", "NO", or "-" for the plain row
  std::string error;      // the compile or run failed: the message (the row has no numbers)
};

// "1 market", "4 markets": for messages.
inline std::string marketsLabel(int m) { return std::to_string(m) + (m == 1 ? " market" : " markets"); }

// Everything compare decides from its flags before it builds a kernel.
struct CompareJob {
  Tape tape;
  RunConfig cfg;
  uint64_t paths = 0, seed = 0;
  int ladders = 0, fusedMarkets = 0;
  std::optional<std::string> peerPath;
  std::vector<PeerRow> peers;
  int steps = 0;
  std::vector<std::string> engines;
  bool split = false;  // over MPI ranks (api/ranks.h)
  std::vector<std::optional<std::string>> strategyRuns;
  std::vector<KernelKind> kinds;
  std::vector<std::vector<double>> ladder;
  std::string ladderName;
  int spot = 0, ladderPoints = 0;  // the ladder's input (the article's: spot)
  size_t center = 0;
};

// What the engines' sections print after the rows.
struct EngineConfig {
  std::string engine, config, tuned, provenance;  // provenance: the configuration's (Provenance::text's config=)
};
struct CompareOut {
  std::vector<CompareRow> rows;
  std::vector<EngineConfig> engineConfigs;
  std::vector<std::string> autoKinds;  // what `--kernel auto` (price, run with nothing named) runs, per engine
};

// The rows, the engines' configurations and auto's kinds: one JSON object, or the table with its notes (and
// --peer's ratios).
void printJson(const CompareJob& job, const CompareOut& out);
void printTable(const CompareJob& job, const CompareOut& out);

}  // namespace tapelab::cli
