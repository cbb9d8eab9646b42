#include "gpu/codegen/first_terms.h"

#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tapelab {

namespace {

using Names = std::unordered_set<std::string_view>;

template <class T>
Names namesIn(const T& x) {
  Names out;
  ir::forEachVar(x, [&](const std::string& n) { out.insert(n); });
  return out;
}

bool isZero(const ir::E& e) { return e && e->kind == ir::Expr::Kind::Float && e->number == 0.0; }

void rewrite(std::vector<ir::Stmt>& list, FirstTerms& count) {
  for (ir::Stmt& s : list) rewrite(s.body, count);
  std::unordered_map<std::string_view, size_t> pending;  // a zero adjoint not named since: its declaration
  std::vector<uint8_t> drop(list.size(), 0);
  for (size_t j = 0; j < list.size(); ++j) {
    ir::Stmt& s = list[j];
    if (!pending.empty()) {
      const Names named = namesIn(s);
      size_t from = list.size();  // the declaration s takes the place of, if any
      for (std::string_view n : named) {
        const auto it = pending.find(n);
        if (it == pending.end()) continue;
        if (from == list.size() && s.kind == ir::Stmt::Kind::AddAssign && s.target->kind == ir::Expr::Kind::Var &&
            s.target->name == n && !namesIn(s.value).count(n))
          from = it->second;
        else
          ++count.kept;
        pending.erase(it);
      }
      if (from != list.size()) {
        ir::Stmt declared = list[from];
        declared.init = s.value;
        declared.draw = s.draw;
        s = std::move(declared);
        drop[from] = 1;
        ++count.set;
      }
    }
    if (s.kind == ir::Stmt::Kind::Declare && s.adjoint && s.array == 0 && isZero(s.init)) pending.emplace(s.text, j);
  }
  count.kept += static_cast<int>(pending.size());  // never named again: dead, left as they are
  std::vector<ir::Stmt> out;
  out.reserve(list.size());
  for (size_t j = 0; j < list.size(); ++j)
    if (!drop[j]) out.push_back(std::move(list[j]));
  list = std::move(out);
}

}  // namespace

FirstTerms setFirstTerms(ir::KernelIR& kernel) {
  FirstTerms count;
  rewrite(kernel.body, count);
  return count;
}

std::string toText(const FirstTerms& terms) {
  return std::to_string(terms.set) + " adjoints declared with their first term, " + std::to_string(terms.kept) +
         " kept at zero (a first term in a nested block, or none)\n";
}

}  // namespace tapelab
