// Importing a checkpoint_schedules schedule (planner/schedules.h): replay its actions, record which
// bookmark each stored state and each reversed range came from, then build the cut tree.
#include "planner/schedules.h"

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "planner/nested.h"
#include "planner/planfile.h"
#include "util/files.h"

namespace tapelab {
namespace {

constexpr uint64_t kMaxScheduleBytes = uint64_t{64} << 20;
constexpr int64_t kMaxSteps = int64_t{1} << 24;

enum class Kind { Forward, Reverse, Copy, Move, EndForward, EndReverse };
enum class Store { Ram, Disk, Work, None };

struct Action {
  Kind kind{};
  int64_t a = 0, b = 0;       // Forward n0, n1; Reverse n1, n0; Copy/Move n
  bool ics = false, adj = false;
  Store from{}, to{};         // Forward: `to` is its storage
};

// "Forward(0, 4, True, False, StorageType.RAM)" and the other five, as checkpoint_schedules prints them.
Action parseAction(const std::string& text, const std::string& where) {
  static const std::regex shape(R"(^\s*(Forward|Reverse|Copy|Move|EndForward|EndReverse)\((.*)\)\s*$)");
  std::smatch m;
  if (!std::regex_match(text, m, shape))
    throw PlanFileError(where + ": expected a checkpoint_schedules action such as Forward(0, 4, True, False, "
                        "StorageType.RAM), got '" + text.substr(0, 60) + "'");
  std::vector<std::string> args;
  const std::string inner = m[2];
  for (size_t p = 0; p < inner.size();) {
    const size_t q = std::min(inner.find(',', p), inner.size());
    std::string s = inner.substr(p, q - p);
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
    args.push_back(s);
    p = q + 1;
  }
  const std::string name = m[1];
  static const std::map<std::string, size_t> arity{{"Forward", 5}, {"Reverse", 3}, {"Copy", 3}, {"Move", 3},
                                                   {"EndForward", 0}, {"EndReverse", 0}};
  if (args.size() != arity.at(name))
    throw PlanFileError(where + ": " + name + " takes " + std::to_string(arity.at(name)) + " arguments, got " +
                        std::to_string(args.size()));
  auto integer = [&](const std::string& s) {
    if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos)
      throw PlanFileError(where + ": " + name + ": expected a step number, got '" + s.substr(0, 20) + "'");
    return std::stoll(s);
  };
  auto boolean = [&](const std::string& s) {
    if (s != "True" && s != "False") throw PlanFileError(where + ": " + name + ": expected True or False, got '" + s.substr(0, 20) + "'");
    return s == "True";
  };
  auto store = [&](const std::string& s) {
    static const std::map<std::string, Store> names{{"StorageType.RAM", Store::Ram}, {"StorageType.DISK", Store::Disk},
                                                    {"StorageType.WORK", Store::Work}, {"StorageType.NONE", Store::None}};
    auto it = names.find(s);
    if (it == names.end()) throw PlanFileError(where + ": " + name + ": expected StorageType.RAM, DISK, WORK or NONE, got '" + s.substr(0, 30) + "'");
    return it->second;
  };
  Action x;
  static const std::map<std::string, Kind> kinds{{"Forward", Kind::Forward}, {"Reverse", Kind::Reverse},
                                                 {"Copy", Kind::Copy}, {"Move", Kind::Move},
                                                 {"EndForward", Kind::EndForward}, {"EndReverse", Kind::EndReverse}};
  x.kind = kinds.at(name);
  if (x.kind == Kind::Forward) {
    x.a = integer(args[0]), x.b = integer(args[1]), x.ics = boolean(args[2]), x.adj = boolean(args[3]), x.to = store(args[4]);
  } else if (x.kind == Kind::Reverse) {
    x.a = integer(args[0]), x.b = integer(args[1]);
    boolean(args[2]);
  } else if (x.kind == Kind::Copy || x.kind == Kind::Move) {
    x.a = integer(args[0]), x.from = store(args[1]), x.to = store(args[2]);
  }
  return x;
}

// What the replay found: for each bookmark (a stored forward state), in the order the schedule made them,
// its pieces: a state stored from it (a cut) or a range reversed from it.
struct Piece {
  bool cut = false;
  int64_t lo = 0, hi = 0;  // cut: the cut's step; range: [lo, hi)
  int64_t advance = 0;     // cut: which advance stored it (one per restore; the forward sweep is 0)
};

class Replay {
 public:
  Replay(int64_t steps, std::string file)
      : steps_(steps), file_(std::move(file)), depsFrom_(size_t(steps), -1), frontier_(steps) {}

  void run(const std::vector<Action>& actions) {
    top_.insert(0);
    for (size_t k = 0; k < actions.size(); ++k) {
      where_ = file_ + ": actions[" + std::to_string(k) + "]";
      if (ended_) fail("an action after EndReverse");
      const Action& x = actions[k];
      const Kind next = k + 1 < actions.size() ? actions[k + 1].kind : Kind::EndReverse;
      switch (x.kind) {
        case Kind::Forward: forward(x); break;
        case Kind::EndForward:
          if (!primal_) fail("EndForward twice");
          if (pos_ != steps_) fail("EndForward at step " + std::to_string(pos_) + ": the forward sweep ends at step " + std::to_string(steps_));
          primal_ = false;
          break;
        case Kind::Reverse: reverse(x); break;
        case Kind::Copy: case Kind::Move: transfer(x, next); break;
        case Kind::EndReverse:
          if (frontier_ != 0) fail("EndReverse with steps [0, " + std::to_string(frontier_) + ") not reversed");
          ended_ = true;
          break;
      }
    }
    where_ = file_ + ": actions";
    if (!ended_) fail("no EndReverse: the schedule stops with steps [0, " + std::to_string(frontier_) + ") not reversed");
  }

  const std::set<int64_t>& top() const { return top_; }
  const std::map<int64_t, std::vector<Piece>>& pieces() const { return pieces_; }
  [[noreturn]] void fail(const std::string& why) const { throw PlanFileError(where_ + ": " + why); }

 private:
  void step(int64_t n, const char* what) const {
    if (n < 0 || n > steps_) fail(std::string(what) + " step " + std::to_string(n) + " outside 0.." + std::to_string(steps_));
  }
  void forward(const Action& x) {
    step(x.a, "Forward from"), step(x.b, "Forward to");
    if (x.a >= x.b) fail("Forward(" + std::to_string(x.a) + ", " + std::to_string(x.b) + ") advances no step");
    if (x.a != pos_) fail("Forward from step " + std::to_string(x.a) + " but the working state is at step " + (pos_ < 0 ? std::string("none") : std::to_string(pos_)));
    if (x.ics) {
      if (primal_) top_.insert(x.a), origin_ = x.a;
      else if (x.a != origin_) pieces_[origin_].push_back({true, x.a, 0, advance_}), origin_ = x.a, snapshots_.insert(x.a);
      stored_.insert(x.a);
    }
    if (x.adj)
      for (int64_t s = x.a; s < x.b; ++s) depsFrom_[size_t(s)] = origin_;
    pos_ = x.b;
  }
  void reverse(const Action& x) {
    if (primal_) fail("Reverse before EndForward");
    if (x.a != frontier_) fail("Reverse from step " + std::to_string(x.a) + " but the steps reversed so far start at " + std::to_string(frontier_));
    if (x.b >= x.a || x.b < 0) fail("Reverse(" + std::to_string(x.a) + ", " + std::to_string(x.b) + ") reverses no step");
    // One range per run of steps whose dependencies came from the same bookmark (one, unless a Reverse
    // spans the work of several).
    int64_t hi = x.a;
    for (int64_t s = x.a - 1; s >= x.b; --s) {
      const int64_t from = depsFrom_[size_t(s)];
      if (from < 0) fail("Reverse of step " + std::to_string(s) + " whose adjoint dependencies no Forward stored");
      depsFrom_[size_t(s)] = -1;
      if (s == x.b || depsFrom_[size_t(s - 1)] != from) {
        pieces_[from].push_back({false, s, hi, 0});
        hi = s;
      }
    }
    frontier_ = x.b;
  }
  void transfer(const Action& x, Kind next) {
    step(x.a, "Copy/Move of");
    if (x.to != Store::Work) {  // between stores, or a deletion (to NONE)
      if (x.kind == Kind::Move && x.to == Store::None && x.from != Store::Work) stored_.erase(x.a);
      return;
    }
    const bool restore = next == Kind::Forward || (next != Kind::Reverse && stored_.count(x.a));
    if (!restore) {
      if (x.a >= steps_ || depsFrom_[size_t(x.a)] < 0) fail("loads the adjoint dependencies of step " + std::to_string(x.a) + ", which no Forward stored");
      return;
    }
    if (!stored_.count(x.a)) fail("restores the state at step " + std::to_string(x.a) + ", which no Forward stored (write_ics)");
    if (!top_.count(x.a) && !snapshots_.count(x.a)) fail("restores step " + std::to_string(x.a) + " stored in the forward sweep but not kept");
    if (x.kind == Kind::Move) stored_.erase(x.a);
    pos_ = x.a;
    origin_ = x.a;
    ++advance_;
  }

  int64_t steps_;
  std::string file_, where_;
  std::vector<int64_t> depsFrom_;  // per step: the bookmark its stored adjoint dependencies came from (-1: none)
  std::set<int64_t> top_, snapshots_, stored_;
  std::map<int64_t, std::vector<Piece>> pieces_;
  int64_t frontier_, pos_ = 0, origin_ = 0, advance_ = 0;
  bool primal_ = true, ended_ = false;
};

// The cut tree of bookmark o's segment [o, e), in steps, from o's pieces k.. (in the order the schedule made
// them): the ranges reversed from o at the top, then a cut c (its segment [c, f) has c's own tree), and
// below c whatever o does next (a further advance from o: its first sub-segment cut again).
CutTree buildTree(const Replay& r, int64_t o, int64_t e, size_t k, int depth) {
  if (depth > kMaxPlanDepth) r.fail("nested deeper than " + std::to_string(kMaxPlanDepth) + " levels");
  static const std::vector<Piece> none;
  auto it = r.pieces().find(o);
  const std::vector<Piece>& pieces = it == r.pieces().end() ? none : it->second;
  std::vector<int64_t> ranges;  // starts of the ranges reversed from o at the top, top down
  int64_t f = e;
  for (; k < pieces.size() && !pieces[k].cut; ++k) {
    const Piece& p = pieces[k];
    if (p.hi != f || p.lo < o) r.fail("steps [" + std::to_string(p.lo) + ", " + std::to_string(p.hi) + ") reversed from step " + std::to_string(o) + " out of its order: not a nested schedule");
    ranges.push_back(p.lo);
    f = p.lo;
  }
  std::reverse(ranges.begin(), ranges.end());  // ascending
  if (k == pieces.size()) {  // a leaf, or a chain of the ranges
    if (f != o) r.fail("steps [" + std::to_string(o) + ", " + std::to_string(f) + ") are not reversed from the state at step " + std::to_string(o) + ": not a nested schedule");
    CutTree c;
    c.cuts.assign(ranges.begin() + 1, ranges.end());
    c.chain = c.cuts.size() > 0;
    return c;
  }
  const Piece& cut = pieces[k];
  if (cut.lo <= o || cut.lo >= f) r.fail("the state at step " + std::to_string(cut.lo) + ", stored from step " + std::to_string(o) + ", lies outside [" + std::to_string(o) + ", " + std::to_string(f) + "): not a nested schedule");
  CutTree t, above = buildTree(r, cut.lo, f, 0, depth + 1);
  t.cuts.push_back(static_cast<int32_t>(cut.lo));
  t.inner.push_back(buildTree(r, o, cut.lo, k + 1, depth + 1));
  auto c = r.pieces().find(cut.lo);
  const bool sameAdvance = c != r.pieces().end() && !c->second.empty() && c->second[0].cut && c->second[0].advance == cut.advance;
  if (sameAdvance && !above.leaf() && !above.chain) {  // the advance that stored c went on: one level
    t.cuts.insert(t.cuts.end(), above.cuts.begin(), above.cuts.end());
    if (above.inner.empty()) above.inner.resize(above.cuts.size() + 1);
    for (CutTree& x : above.inner) t.inner.push_back(std::move(x));
  } else {
    t.inner.push_back(std::move(above));
  }
  for (int64_t s : ranges) t.cuts.push_back(static_cast<int32_t>(s)), t.inner.push_back(CutTree{});  // leaves
  if (std::all_of(t.inner.begin(), t.inner.end(), [](const CutTree& x) { return x.leaf(); })) t.inner.clear();
  return t;
}

// Steps to nodes.
void toNodes(CutTree& t, const std::vector<int32_t>& starts) {
  for (int32_t& c : t.cuts) c = starts[size_t(c)];
  for (CutTree& c : t.inner) toNodes(c, starts);
}

// The actions tapelab's kernel runs (planner/schedules.h, "Export"), in steps.
class Exporter {
 public:
  explicit Exporter(const std::vector<int32_t>& stepOf) : stepOf_(stepOf) {}
  std::vector<std::string> out;

  void forward(int64_t a, int64_t b, bool ics, bool adj) {
    out.push_back("Forward(" + num(a) + ", " + num(b) + ", " + yes(ics) + ", " + yes(adj) + ", StorageType." +
                  (ics ? "RAM" : "WORK") + ")");  // stored states (and adjoint dependencies with them) in RAM
  }
  void restore(int64_t a, bool last) {
    out.push_back(std::string(last ? "Move(" : "Copy(") + num(a) + ", StorageType.RAM, StorageType.WORK)");
  }
  void reverse(int64_t b, int64_t a) { out.push_back("Reverse(" + num(b) + ", " + num(a) + ", True)"); }
  void drop(int64_t a) { out.push_back("Move(" + num(a) + ", StorageType.RAM, StorageType.NONE)"); }

  // Segment [a, b) of tree `t`. The state at a is stored (RAM) unless `inWork`: the working state is at a
  // and nothing stored it, so the first advance stores it (tapelab holds a bookmark at every cut; a leaf's
  // is dropped after its reverse). `last`: no later block restores a.
  void segment(int64_t a, int64_t b, const CutTree& t, bool last, bool inWork) {
    int uses = 0;
    auto from = [&](bool lastUse, int64_t to, bool adj) {  // the working state to step `to`, from a
      if (uses++ > 0 || !inWork) restore(a, lastUse);
      if (a < to) forward(a, to, uses == 1 && inWork, adj);
    };
    if (t.leaf()) {
      from(last, b, true);
      reverse(b, a);
      if (inWork) drop(a);
      return;
    }
    std::vector<int64_t> at{a};
    for (int32_t c : t.cuts) at.push_back(stepOf_[size_t(c)]);
    at.push_back(b);
    const size_t parts = at.size() - 1;
    if (t.chain) {
      for (size_t i = parts; i-- > 0;) {
        from(last && i == 0, at[i], false);
        forward(at[i], at[i + 1], false, true);
        reverse(at[i + 1], at[i]);
      }
      return;
    }
    from(false, at[1], false);
    for (size_t i = 1; i + 1 < parts; ++i) forward(at[i], at[i + 1], true, false);
    const CutTree leaf;
    for (size_t i = parts; i-- > 0;)
      segment(at[i], at[i + 1], t.inner.empty() ? leaf : t.inner[i], i == 0 ? last : true, i + 1 == parts);
  }

 private:
  static std::string num(int64_t v) { return std::to_string(v); }
  static std::string yes(bool v) { return v ? "True" : "False"; }
  const std::vector<int32_t>& stepOf_;
};

}  // namespace

Plan planFromSchedule(const Tape& t, const std::string& text, const std::string& file, const std::string& strategy) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw PlanFileError(file + ": (json): " + e.what());
  }
  if (!j.is_object()) throw PlanFileError(file + ": expected a JSON object (a schedule file, planner/schedules.h)");
  for (auto& [k, v] : j.items())
    if (k != "format" && k != "steps" && k != "actions" && k != "tape") throw PlanFileError(file + ": " + k + ": unknown key");
  if (!j.contains("format") || j["format"] != kScheduleFormat)
    throw PlanFileError(file + ": format: expected \"" + std::string(kScheduleFormat) + "\"");
  const std::vector<int32_t> starts = stepStarts(t);
  const int64_t steps = int64_t(starts.size()) - 1;
  if (!j.contains("steps") || !j["steps"].is_number_integer() || j["steps"].get<int64_t>() < 1 || j["steps"].get<int64_t>() > kMaxSteps)
    throw PlanFileError(file + ": steps: expected a positive integer");
  if (j["steps"].get<int64_t>() != steps)
    throw PlanFileError(file + ": steps: the schedule has " + std::to_string(j["steps"].get<int64_t>()) + " steps, the tape " +
                        t.name + " " + std::to_string(steps) + " (planner/nested.h stepStarts)");
  if (!j.contains("actions") || !j["actions"].is_array() || j["actions"].empty())
    throw PlanFileError(file + ": actions: expected a list of checkpoint_schedules actions");
  std::vector<Action> actions;
  for (size_t k = 0; k < j["actions"].size(); ++k) {
    const std::string where = file + ": actions[" + std::to_string(k) + "]";
    if (!j["actions"][k].is_string()) throw PlanFileError(where + ": expected a string such as \"EndForward()\"");
    actions.push_back(parseAction(j["actions"][k].get<std::string>(), where));
  }
  Replay r(steps, file);
  r.run(actions);
  std::vector<int64_t> top(r.top().begin(), r.top().end());
  std::vector<CutTree> inner;
  for (size_t i = 0; i < top.size(); ++i) inner.push_back(buildTree(r, top[i], i + 1 < top.size() ? top[i + 1] : steps, 0, 1));
  std::vector<int32_t> bounds;
  for (int64_t s : top) bounds.push_back(static_cast<int32_t>(s));
  if (top.size() == 1 && !inner[0].leaf()) {  // only step 0 kept by the forward sweep: lift one level
    CutTree lifted = std::move(inner[0]);
    bounds.insert(bounds.end(), lifted.cuts.begin(), lifted.cuts.end());
    inner = lifted.chain ? std::vector<CutTree>{} : std::move(lifted.inner);
  }
  for (int32_t& b : bounds) b = starts[size_t(b)];
  bounds.push_back(t.size());
  for (CutTree& c : inner) toNodes(c, starts);
  if (bounds.size() == 2 || std::all_of(inner.begin(), inner.end(), [](const CutTree& c) { return c.leaf(); })) inner.clear();
  try {
    return makePlan(t, bounds, strategy, std::move(inner));
  } catch (const std::invalid_argument& e) {
    throw PlanFileError(file + ": " + e.what());
  }
}

Plan readScheduleFile(const std::string& path, const Tape& t) {
  std::string text;
  try {
    text = readInputText(path, kMaxScheduleBytes);
  } catch (const InputError& e) {
    throw PlanFileError(path + ": (file): " + e.what());
  }
  return planFromSchedule(t, text, path);
}

}  // namespace tapelab

namespace tapelab {

std::string scheduleOfPlan(const Tape& t, const Plan& plan) {
  if (plan.perValue)
    throw std::invalid_argument("a per-value plan has no checkpoint_schedules schedule (its blocks are not steps)");
  const std::vector<int32_t> starts = stepStarts(t);
  std::vector<int32_t> stepOf(size_t(t.size()) + 1, -1);
  for (size_t k = 0; k < starts.size(); ++k) stepOf[size_t(starts[k])] = static_cast<int32_t>(k);
  std::function<void(const CutTree&)> check = [&](const CutTree& c) {
    for (int32_t x : c.cuts)
      if (stepOf[size_t(x)] < 0)
        throw std::invalid_argument("the cut at node " + std::to_string(x) + " is not the start of a time step "
                                    "(planner/nested.h stepStarts): only plans cutting at step starts have a schedule");
    for (const CutTree& i : c.inner) check(i);
  };
  for (int s = 1; s < plan.segments(); ++s) check(CutTree{{plan.begin(s)}, false, {}});
  for (const CutTree& c : plan.inner) check(c);
  Exporter e(stepOf);
  const int64_t steps = int64_t(starts.size()) - 1;
  for (int s = 0; s < plan.segments(); ++s) e.forward(stepOf[size_t(plan.begin(s))], stepOf[size_t(plan.end(s))], true, false);
  e.out.push_back("EndForward()");
  for (int s = plan.segments(); s-- > 0;) {
    const CutTree leaf;
    e.segment(stepOf[size_t(plan.begin(s))], stepOf[size_t(plan.end(s))], plan.inner.empty() ? leaf : plan.inner[size_t(s)],
              true, false);
  }
  e.out.push_back("EndReverse()");
  nlohmann::ordered_json j;
  j["format"] = kScheduleFormat;
  j["steps"] = steps;
  j["tape"] = {{"name", t.name}, {"nodes", t.size()}, {"structure", structureHash(t)}};
  j["actions"] = e.out;
  return j.dump(1) + "\n";
}

}  // namespace tapelab
