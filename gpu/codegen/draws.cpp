#include "gpu/codegen/draws.h"

#include <set>
#include <stdexcept>
#include <vector>

#include "tape/philox.h"

namespace tapelab {

namespace {

// The components of a Philox call's four words (every dialect's uint4Type).
constexpr const char* kWordFields[4] = {"x", "y", "z", "w"};

void scope(std::vector<ir::Stmt>& body, const std::string& prefix, const std::string& key, const ir::E& base);

// Statements outside any scope: descend, a scope opens where a Seq says so.
void visit(std::vector<ir::Stmt>& body) {
  for (ir::Stmt& s : body) {
    if (s.draw >= 0) throw std::logic_error("draws pass: a statement reads draw " + std::to_string(s.draw) + " outside a draw scope");
    if (!s.drawPrefix.empty())
      scope(s.body, s.drawPrefix, s.drawKey, s.drawBase);
    else
      visit(s.body);
  }
}

void scope(std::vector<ir::Stmt>& body, const std::string& prefix, const std::string& key, const ir::E& base) {
  std::set<uint32_t> groups, pairs;
  std::vector<ir::Stmt> out;
  out.reserve(body.size());
  for (ir::Stmt& s : body) {
    if (s.draw >= 0) {
      const uint32_t k = static_cast<uint32_t>(s.draw), group = k / kDrawsPerCall;
      const std::string words = drawGroupName(prefix, group);
      if (groups.insert(group).second)
        out.push_back(ir::declare(ir::Type::Uint4, words,
                                  ir::call("tl_drawWords", {base ? ir::bin(ir::ulit(group), "+", base) : ir::ulit(group),
                                                            ir::var("tl_pathLo"), ir::var("tl_pathHi"),
                                                            ir::var(key + "0"), ir::var(key + "1")}),
                                  true));
      if (pairs.insert(k / 2).second) {
        const uint32_t first = pairFirstWord(k);
        out.push_back(ir::declare(ir::Type::Scalar2, drawPairName(prefix, k),
                                  ir::call("tl_boxMuller", {ir::member(ir::var(words), kWordFields[first]),
                                                            ir::member(ir::var(words), kWordFields[first + 1])}),
                                  true));
      }
    } else if (!s.drawPrefix.empty()) {
      scope(s.body, s.drawPrefix, s.drawKey, s.drawBase);
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

void scopeDraws(ir::KernelIR& kernel) { visit(kernel.body); }

}  // namespace tapelab
