// A peer's throughput file for `tapelab compare --peer FILE`: CSV, '#' lines
// and blank lines skipped, the first other line the header. Two layouts:
//   experiments/drivers/peers.py (papers/data/peers-h200.csv): who, formulation,
//     pass, paths, markets, ladder_points, mpath_s (steps optional; more columns ignored)
//   experiments/peers/jax_peers.py: formulation (one | ladder | ladder-loop), pass,
//     paths, markets, mpaths_per_s; who is "jax", a ladder's markets its points
// pass is "price" or "value+5greeks"; Mpath/s counts market-paths, taken from the time column
// (ms: ladder_points x paths per ladder; median_s: markets x paths per call) where there is one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tapelab::cli {

struct PeerRow {
  std::string who, formulation, pass;
  uint64_t paths = 0;
  int markets = 1;       // per call: > 1 is a fused ladder
  int ladderPoints = 1;  // markets priced per ladder
  int steps = -1;        // -1: not given
  double mpathPerSecond = 0;
  int line = 0;
};

// Throws UsageError "FILE:LINE: reason" (or "--peer FILE: ..." when it cannot be read).
std::vector<PeerRow> readPeerFile(const std::string& path);

// The peer rows (not tapelab's own) that a compare row measures the same work as: same pass,
// paths and ladder points, both fused (markets > 1) or both one market per call, and the
// same steps where both are known (steps < 0: unknown).
std::vector<const PeerRow*> matchingPeers(const std::vector<PeerRow>& peers, bool greeks, uint64_t paths,
                                          int points, int markets, int steps);

}  // namespace tapelab::cli
