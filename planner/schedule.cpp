#include "planner/schedule.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "planner/liveness.h"

namespace tapelab {
namespace {

class Lowering {
 public:
  Lowering(const Tape& t, const Plan& p) : tape_(t), plan_(p), lastRead_(lastUse(t)) {}

  Schedule run() {
    Schedule s;
    s.kernelAdjoints = kernelAdjointsOf(tape_, plan_);
    if (plan_.perValue) {
      for (int seg = plan_.segments() - 1; seg >= 0; --seg) s.blocks.push_back(perValueLeaf(plan_.begin(seg), plan_.end(seg)));
      s.depth = 1;
      return s;
    }
    for (int seg = plan_.segments() - 1; seg >= 0; --seg) {
      const CutTree* tree = plan_.inner.empty() ? nullptr : &plan_.inner[static_cast<size_t>(seg)];
      s.blocks.push_back(lower(plan_.begin(seg), plan_.end(seg), plan_.begin(seg), tree, 1));
    }
    s.depth = deepest_;
    return s;
  }

 private:
  ScheduleBlock perValueLeaf(int32_t begin, int32_t end) {
    ScheduleBlock b;
    b.perValue = true;
    b.begin = begin;
    b.end = b.advanceEnd = end;
    b.recompute = recomputeClosure(tape_, begin, end, plan_.isPersistent);
    b.from = b.recompute.empty() ? begin : std::min(begin, b.recompute.front());
    std::vector<uint8_t> mine(static_cast<size_t>(tape_.size()), 0);
    for (int32_t j : b.recompute) mine[j] = 1;
    auto import = [&](int32_t j) {
      if (!mine[j] && plan_.isPersistent[j]) b.imports.push_back(j);
    };
    for (int32_t i : b.recompute) forEachArg(tape_, i, import);
    for (int32_t i = begin; i < end; ++i) forEachAdjointRead(i, import);
    std::sort(b.imports.begin(), b.imports.end());
    b.imports.erase(std::unique(b.imports.begin(), b.imports.end()), b.imports.end());
    b.importDepth.assign(b.imports.size(), 0);
    collectAdjoints(b, {});
    return b;
  }

  template <class F>
  void forEachAdjointRead(int32_t i, F&& f) const {
    const Op op = tape_.op[i];
    if (arity(op) == 0) return;
    const AdjointReads r = adjointReads(op);
    for (int k = 0; k < arity(op); ++k)
      if (r.arg(k)) f(tape_.arg(i, k));
    if (r.r) f(i);
  }

  ScheduleBlock lower(int32_t begin, int32_t end, int32_t from, const CutTree* tree, int depth) {
    deepest_ = std::max(deepest_, depth);
    ScheduleBlock b;
    b.depth = depth;
    b.begin = begin;
    b.end = end;
    b.from = from;
    if (!tree || tree->leaf()) {
      b.kind = ScheduleBlock::Kind::Leaf;
      b.advanceEnd = end;
      collectImports(b);
      collectAdjoints(b, {});
      return b;
    }
    std::vector<int32_t> bounds{begin};
    bounds.insert(bounds.end(), tree->cuts.begin(), tree->cuts.end());
    bounds.push_back(end);
    collectAdjoints(b, bounds);
    const int children = static_cast<int>(bounds.size()) - 1;
    auto childTree = [&](int k) -> const CutTree* {
      return tree->inner.empty() ? nullptr : &tree->inner[static_cast<size_t>(k)];
    };
    if (tree->chain) {
      b.kind = ScheduleBlock::Kind::Chain;
      b.advanceEnd = from;
      for (int k = children - 1; k >= 0; --k)
        b.children.push_back(lower(bounds[k], bounds[k + 1], begin, nullptr, depth + 1));
      return b;
    }
    b.kind = ScheduleBlock::Kind::Inner;
    b.advanceEnd = bounds[static_cast<size_t>(children) - 1];
    collectImports(b);
    // A value computed before the last cut whose last reader lies in a later
    // sub-segment of this one; a later reader beyond `end` means an enclosing
    // block (or the persistent set) holds it already.
    for (int k = 0; k + 1 < children; ++k)
      for (int32_t j = bounds[k]; j < bounds[k + 1]; ++j)
        if (!plan_.isPersistent[j] && lastRead_[j] < end && lastRead_[j] >= bounds[k + 1]) b.bookmarks.push_back(j);
    held_.push_back({depth, b.bookmarks});
    for (int k = children - 1; k >= 0; --k)
      b.children.push_back(lower(bounds[k], bounds[k + 1], bounds[k], childTree(k), depth + 1));
    held_.pop_back();
    return b;
  }

  // Values computed before b.from that [from, advanceEnd) reads, and who holds each.
  void collectImports(ScheduleBlock& b) {
    for (int32_t i = b.from; i < b.advanceEnd; ++i)
      forEachArg(tape_, i, [&](int32_t j) {
        if (j < b.from) b.imports.push_back(j);
      });
    std::sort(b.imports.begin(), b.imports.end());
    b.imports.erase(std::unique(b.imports.begin(), b.imports.end()), b.imports.end());
    for (int32_t j : b.imports) {
      int at = -1;
      for (auto h = held_.rbegin(); h != held_.rend() && at < 0; ++h)
        if (std::binary_search(h->second.begin(), h->second.end(), j)) at = h->first;
      if (at < 0 && plan_.isPersistent[j]) at = 0;
      if (at < 0)
        throw std::invalid_argument("lowerPlan: value " + std::to_string(j) + " read by segment [" +
                                    std::to_string(b.begin) + ", " + std::to_string(b.end) +
                                    ") is held nowhere (the plan's persistent set misses it)");
      b.importDepth.push_back(at);
    }
  }

  // Adjoints whose life [j, lastRead[j]] lies inside [begin, end) and, for a
  // block with sub-segments (bounds), not inside one of them.
  void collectAdjoints(ScheduleBlock& b, const std::vector<int32_t>& bounds) {
    size_t k = 0;
    for (int32_t j = b.begin; j < b.end; ++j) {
      if (plan_.isPersistent[j] || lastRead_[j] >= b.end) continue;
      if (!bounds.empty()) {
        while (bounds[k + 1] <= j) ++k;
        if (lastRead_[j] < bounds[k + 1]) continue;  // a sub-segment's own
      }
      b.adjoints.push_back(j);
    }
  }

  const Tape& tape_;
  const Plan& plan_;
  std::vector<int32_t> lastRead_;
  std::vector<std::pair<int, std::vector<int32_t>>> held_;  // (depth, bookmarks) of enclosing inner blocks
  int deepest_ = 0;
};

}  // namespace

std::vector<int32_t> kernelAdjointsOf(const Tape& t, const Plan& p) {
  if (!p.perValue) return p.persistent;
  const std::vector<int32_t> lastRead = lastUse(t);
  std::vector<int32_t> out;
  for (int s = 0; s < p.segments(); ++s)
    for (int32_t j = p.begin(s); j < p.end(s); ++j)
      if (p.isPersistent[j] || lastRead[j] >= p.end(s)) out.push_back(j);
  return out;
}

std::vector<int32_t> recomputeClosure(const Tape& t, int32_t begin, int32_t end, const std::vector<uint8_t>& held) {
  std::vector<uint8_t> want(static_cast<size_t>(end), 0);
  auto mark = [&](int32_t j) {
    if (!held[j]) want[j] = 1;
  };
  for (int32_t i = begin; i < end; ++i) {
    const Op op = t.op[i];
    if (arity(op) == 0) continue;
    const AdjointReads r = adjointReads(op);
    for (int k = 0; k < arity(op); ++k)
      if (r.arg(k)) mark(t.arg(i, k));
    if (r.r) mark(i);
  }
  std::vector<int32_t> out;
  for (int32_t i = end - 1; i >= 0; --i)
    if (want[i]) {
      out.push_back(i);
      forEachArg(t, i, mark);
    }
  std::reverse(out.begin(), out.end());
  return out;
}

Schedule lowerPlan(const Tape& tape, const Plan& plan) {
  if (plan.bounds.size() < 2 || plan.bounds.front() != 0 || plan.bounds.back() != tape.size() ||
      plan.isPersistent.size() != static_cast<size_t>(tape.size()))
    throw std::invalid_argument("lowerPlan: the plan was not made for this tape");
  return Lowering(tape, plan).run();
}

namespace {
std::string nodeList(const std::vector<int32_t>& nodes) {
  std::string s;
  for (int32_t j : nodes) s += " " + std::to_string(j);
  return s.empty() ? " -" : s;
}
void blockText(const ScheduleBlock& b, std::string& out) {
  static const char* const kKinds[] = {"leaf", "inner", "chain"};
  out += std::string(static_cast<size_t>(b.depth - 1) * 2, ' ') + kKinds[static_cast<int>(b.kind)] + " [" +
         std::to_string(b.begin) + ", " + std::to_string(b.end) + ") from " + std::to_string(b.from) + " | imports" +
         nodeList(b.imports) + " | bookmarks" + nodeList(b.bookmarks) + " | adjoints" + nodeList(b.adjoints) + "\n";
  for (const ScheduleBlock& c : b.children) blockText(c, out);
}
}  // namespace

std::string toText(const Schedule& schedule) {
  std::string out = "depth " + std::to_string(schedule.depth) + ", kernel adjoints" + nodeList(schedule.kernelAdjoints) + "\n";
  for (const ScheduleBlock& b : schedule.blocks) blockText(b, out);
  return out;
}

}  // namespace tapelab
