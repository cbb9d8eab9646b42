#include "gpu/codegen/draws.h"

#include <set>
#include <stdexcept>
#include <vector>

#include "tape/philox.h"

namespace tapelab {

namespace {

// The components of a Philox call's four words (every dialect's uint4Type).
constexpr const char* kWordFields[4] = {"x", "y", "z", "w"};

void scope(ir::Stmt& seq);

// Statements outside any scope: descend, a scope opens where a Seq says so.
void visit(std::vector<ir::Stmt>& body) {
  for (ir::Stmt& s : body) {
    if (s.draw >= 0) throw std::logic_error("draws pass: a statement reads draw " + std::to_string(s.draw) + " outside a draw scope");
    if (!s.drawPrefix.empty())
      scope(s);
    else
      visit(s.body);
  }
}

ir::E drawWordsCall(const ir::E& group, const std::string& key) {
  return ir::call("tl_drawWords", {group, ir::var("tl_pathLo"), ir::var("tl_pathHi"), ir::var(key + "0"), ir::var(key + "1")});
}

// Before a statement of a carried scope that reads draw `draw` (of its trip): k, the path's draw; the call
// where k starts one, the pair where k starts one, both into the carried variables; the draw.
void carriedDraw(std::vector<ir::Stmt>& out, const std::string& prefix, const std::string& key, const ir::E& step,
                 uint32_t draw) {
  using ir::bin, ir::ulit, ir::var;
  const std::string k = prefix + "k" + std::to_string(draw), words = drawCarriedWords(prefix), pair = drawCarriedPair(prefix);
  out.push_back(ir::declare(ir::Type::Uint, k, bin(ulit(draw), "+", step), true));
  auto bitClear = [&](int64_t mask) { return bin(ir::paren(bin(var(k), "&", ulit(mask))), "==", ulit(0)); };
  out.push_back(ir::ifThen(bitClear(kDrawsPerCall - 1), {ir::assign(var(words), drawWordsCall(bin(var(k), ">>", ulit(2)), key))}));
  const ir::E low = bitClear(2);  // the call's first pair (x, y) or its second (z, w)
  out.push_back(ir::ifThen(bitClear(1), {ir::assign(var(pair), ir::call("tl_boxMuller",
      {ir::select(low, ir::member(var(words), kWordFields[0]), ir::member(var(words), kWordFields[2])),
       ir::select(low, ir::member(var(words), kWordFields[1]), ir::member(var(words), kWordFields[3]))}))}));
  out.push_back(ir::declareT(drawStepName(prefix, draw),
                             ir::select(bitClear(1), ir::member(var(pair), "x"), ir::member(var(pair), "y"))));
}

void scope(ir::Stmt& seq) {
  std::vector<ir::Stmt>& body = seq.body;
  const std::string &prefix = seq.drawPrefix, &key = seq.drawKey;
  const ir::E& base = seq.drawBase;
  std::set<uint32_t> groups, pairs;
  std::vector<ir::Stmt> out;
  out.reserve(body.size());
  for (ir::Stmt& s : body) {
    if (s.draw >= 0 && seq.drawStep) {
      carriedDraw(out, prefix, key, seq.drawStep, static_cast<uint32_t>(s.draw));
    } else if (s.draw >= 0) {
      const uint32_t k = static_cast<uint32_t>(s.draw), group = k / kDrawsPerCall;
      const std::string words = drawGroupName(prefix, group);
      if (groups.insert(group).second)
        out.push_back(ir::declare(ir::Type::Uint4, words,
                                  drawWordsCall(base ? ir::bin(ir::ulit(group), "+", base) : ir::ulit(group), key), true));
      if (pairs.insert(k / 2).second) {
        const uint32_t first = pairFirstWord(k);
        out.push_back(ir::declare(ir::Type::Scalar2, drawPairName(prefix, k),
                                  ir::call("tl_boxMuller", {ir::member(ir::var(words), kWordFields[first]),
                                                            ir::member(ir::var(words), kWordFields[first + 1])}),
                                  true));
      }
    } else if (!s.drawPrefix.empty()) {
      scope(s);
    } else {
      visit(s.body);
    }
    out.push_back(std::move(s));
  }
  body = std::move(out);
}

}  // namespace

std::string drawGroupName(const std::string& prefix, uint32_t group) { return prefix + "g" + std::to_string(group); }
std::string drawPairName(const std::string& prefix, uint32_t draw) {
  return drawGroupName(prefix, draw / kDrawsPerCall) + "n" + std::to_string(draw % kDrawsPerCall / 2);
}
std::string drawStepName(const std::string& prefix, uint32_t draw) { return prefix + "d" + std::to_string(draw); }
std::string drawCarriedWords(const std::string& prefix) { return prefix + "dw"; }
std::string drawCarriedPair(const std::string& prefix) { return prefix + "dp"; }

void scopeDraws(ir::KernelIR& kernel) { visit(kernel.body); }

}  // namespace tapelab
