#include "planner/loops.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

namespace tapelab {

namespace {

// Node i + p repeats node i: the same op and constant, each argument either `p` further on or the same
// node (a quick test; classify and follows check draws and each argument's kind).
bool repeats(const Tape& t, int32_t i, int32_t p) {
  const int32_t j = i + p;
  if (t.op[i] != t.op[j] || t.op[i] == Op::Input) return false;
  if (t.op[i] == Op::Const && !(t.imm[i] == t.imm[j] || (t.imm[i] != t.imm[i] && t.imm[j] != t.imm[j]))) return false;
  for (int k = 0; k < arity(t.op[i]); ++k) {
    const int32_t x = t.arg(i, k), y = t.arg(j, k);
    if (y != x + p && y != x) return false;
  }
  return true;
}

// The periods worth trying: the most frequent distances between nodes of one op a few occurrences apart,
// and between the nodes drawing k and k + d (a step that draws d normals).
std::vector<int32_t> candidatePeriods(const Tape& t) {
  constexpr int kApart = 8, kDrawsPerStep = 64;
  std::unordered_map<int, std::vector<int32_t>> seen;  // op: its last kApart positions
  std::unordered_map<int32_t, int64_t> opVotes, drawVotes;
  std::map<int64_t, int32_t> drawAt;  // draw index: its first node
  for (int32_t i = 0; i < t.size(); ++i) {
    std::vector<int32_t>& last = seen[static_cast<int>(t.op[i])];
    for (int32_t j : last) ++opVotes[i - j];
    last.push_back(i);
    if (last.size() > kApart) last.erase(last.begin());
    if (t.op[i] == Op::Randn) drawAt.emplace(static_cast<int64_t>(t.imm[i]), i);
  }
  for (const auto& [k, at] : drawAt)
    for (int d = 1; d <= kDrawsPerStep; ++d)
      if (auto it = drawAt.find(k + d); it != drawAt.end() && it->second > at) ++drawVotes[it->second - at];
  // The most voted of each kind: within a step an op's repeats outvote the step itself, which the draws find.
  std::vector<int32_t> periods;
  for (const auto* votes : {&opVotes, &drawVotes}) {
    std::vector<std::pair<int64_t, int32_t>> ranked;
    for (const auto& [distance, n] : *votes)
      if (distance <= t.size() / 2) ranked.push_back({-n, distance});
    std::sort(ranked.begin(), ranked.end());
    for (size_t k = 0; k < ranked.size() && k < 8; ++k)
      if (std::find(periods.begin(), periods.end(), ranked[k].second) == periods.end()) periods.push_back(ranked[k].second);
  }
  return periods;
}

// The draw stride a run of period p starting at i would have: the first draw's step (0 without draws).
int64_t drawStrideFrom(const Tape& t, int32_t i, int32_t p) {
  for (int32_t j = i; j + p < t.size() && j < i + p; ++j)
    if (t.op[j] == Op::Randn && t.op[j + p] == Op::Randn)
      return static_cast<int64_t>(t.imm[j + p]) - static_cast<int64_t>(t.imm[j]);
  return 0;
}

// The arguments of iteration 1 classified against iteration 0; false where they cannot be.
bool classify(const Tape& t, TapeLoop& L) {
  L.body.assign(L.period, {});
  L.initOf.assign(L.period, -1);
  for (int32_t o = 0; o < L.period; ++o) {
    const int32_t n0 = L.node(0, o), n1 = L.node(1, o);
    if (t.op[n0] != t.op[n1] || t.op[n0] == Op::Input) return false;
    if (t.op[n0] == Op::Const && !(t.imm[n0] == t.imm[n1])) return false;
    if (t.op[n0] == Op::Randn && static_cast<int64_t>(t.imm[n1]) - static_cast<int64_t>(t.imm[n0]) != L.drawStride) return false;
    for (int k = 0; k < arity(t.op[n0]); ++k) {
      const int32_t x0 = t.arg(n0, k), x1 = t.arg(n1, k);
      TapeLoop::BodyNode& b = L.body[o];
      if (x1 >= L.node(1, 0)) {  // this iteration's
        b.kind[k] = TapeLoop::Arg::Local;
        b.ref[k] = x1 - L.node(1, 0);
        if (x0 != x1 - L.period) return false;
      } else if (x1 >= L.begin) {  // the previous iteration's; iteration 0 reads the initial value
        b.kind[k] = TapeLoop::Arg::Carried;
        b.ref[k] = x1 - L.begin;
        if (x0 >= L.begin) return false;
        int32_t& init = L.initOf[b.ref[k]];
        if (init >= 0 && init != x0) return false;
        init = x0;
      } else {
        b.kind[k] = TapeLoop::Arg::Invariant;
        b.ref[k] = x1;
        if (x0 != x1) return false;
      }
    }
  }
  return true;
}

// Node o of iteration k (k >= 2) is the body's: node o of iteration k-1 a period on, its arguments as
// classified.
bool follows(const Tape& t, const TapeLoop& L, int32_t k, int32_t o) {
  const int32_t i = L.node(k - 1, o), j = L.node(k, o);
  if (t.op[i] != t.op[j]) return false;
  if (t.op[j] == Op::Const && !(t.imm[i] == t.imm[j])) return false;
  if (t.op[j] == Op::Randn && static_cast<int64_t>(t.imm[j]) - static_cast<int64_t>(t.imm[i]) != L.drawStride) return false;
  for (int a = 0; a < arity(t.op[j]); ++a) {
    const TapeLoop::BodyNode& b = L.body[o];
    const int32_t want = b.kind[a] == TapeLoop::Arg::Invariant ? b.ref[a] : t.arg(i, a) + L.period;
    if (t.arg(j, a) != want) return false;
  }
  return true;
}

// The iterations that follow the body (from 2 on: each against the one before).
int32_t iterationsFollowing(const Tape& t, const TapeLoop& L) {
  for (int32_t k = 2; k < L.count; ++k)
    for (int32_t o = 0; o < L.period; ++o)
      if (!follows(t, L, k, o)) return k;
  return L.count;
}

// Shortens the loop until every node after it, and the output, reads only its last iteration.
void keepReadersOfTheLastIteration(const Tape& t, TapeLoop& L) {
  for (bool changed = true; changed && L.found();) {
    changed = false;
    const int32_t last = L.node(L.count - 1, 0);
    auto shortenTo = [&](int32_t j) {  // keep the iterations before node j's
      L.count = (j - L.begin) / L.period;
      changed = true;
    };
    if (L.contains(t.output)) shortenTo(t.output);
    for (int32_t i = L.end(); i < t.size() && !changed && L.found(); ++i)
      for (int k = 0; k < arity(t.op[i]) && !changed; ++k) {
        const int32_t x = t.arg(i, k);
        if (L.contains(x) && x < last) shortenTo(x + L.period);
      }
  }
}

TapeLoop loopFor(const Tape& t, int32_t p, int32_t minCount) {
  TapeLoop best;
  const int32_t n = t.size();
  for (int32_t s = 0; s + p < n;) {
    int32_t e = s;
    while (e + p < n && repeats(t, e, p)) ++e;
    if (e - s >= p * (minCount - 1)) {
      const int64_t draw = drawStrideFrom(t, s, p);
      // The run [s, e) repeats; iteration 0 may start up to a period earlier (its carried arguments differ).
      for (int32_t b = std::max(0, s - p); b <= s; ++b) {
        TapeLoop L;
        L.begin = b;
        L.period = p;
        L.drawStride = draw;
        L.count = (e + p - b) / p;
        if (L.count < 2 || !classify(t, L)) continue;
        L.count = iterationsFollowing(t, L);
        keepReadersOfTheLastIteration(t, L);
        if (L.count >= minCount && L.count * L.period > best.count * best.period) best = L;
        break;
      }
    }
    s = std::max(e, s + 1);
  }
  return best;
}

}  // namespace

TapeLoop findLoop(const Tape& tape, int32_t minCount) {
  TapeLoop best;
  if (tape.size() < 2 * minCount) return best;
  for (int32_t p : candidatePeriods(tape)) {
    TapeLoop L = loopFor(tape, p, std::max(minCount, 2));
    if (L.count * L.period > best.count * best.period) best = std::move(L);
  }
  if (!best.found()) best = TapeLoop{};
  return best;
}

std::string toText(const TapeLoop& L, const Tape& tape) {
  if (!L.found()) return "no loop\n";
  std::string s = "begin " + std::to_string(L.begin) + ", period " + std::to_string(L.period) + ", count " +
                  std::to_string(L.count) + ", draw stride " + std::to_string(L.drawStride) + "\n";
  static const char* const kArg[] = {"", "local ", "carried ", "invariant "};
  for (int32_t o = 0; o < L.period; ++o) {
    s += "  +" + std::to_string(o) + " " + std::string(name(tape.op[L.node(0, o)]));
    for (int k = 0; k < 3; ++k)
      if (L.body[o].kind[k] != TapeLoop::Arg::None)
        s += std::string(" ") + kArg[static_cast<int>(L.body[o].kind[k])] + std::to_string(L.body[o].ref[k]);
    if (L.initOf[o] >= 0) s += " (initially node " + std::to_string(L.initOf[o]) + ")";
    s += "\n";
  }
  return s;
}

}  // namespace tapelab
