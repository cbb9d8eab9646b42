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

// Whether `element` (an array's element) occurs in e, or anywhere in s (read or written).
bool mentions(const ir::E& e, const ir::E& element) {
  if (!e) return false;
  if (ir::same(e, element)) return true;
  for (const ir::E& a : e->args)
    if (mentions(a, element)) return true;
  return mentions(e->fence, element);
}
bool mentions(const ir::Stmt& s, const ir::E& element) {
  return ir::anyExpr(s, [&](const ir::E& e) { return mentions(e, element); });
}

// An adjoint array's element set to zero in a market loop's body (ir::Stmt::adjoint on an Assign): where the
// next statement of the list that mentions the element is `element += t` with t not reading it, that
// statement sets it to t and the zero goes. Elements at indices that differ as expressions are different
// elements there (the build's rows by the trip's parity, a market's element of each array), so statements
// between that mention the array elsewhere do not stop it.
void setElements(std::vector<ir::Stmt>& list, std::vector<uint8_t>& drop, FirstTerms& count) {
  for (size_t j = 0; j < list.size(); ++j) {
    const ir::Stmt& z = list[j];
    if (z.kind != ir::Stmt::Kind::Assign || !z.adjoint || !isZero(z.value) || !z.target ||
        z.target->kind != ir::Expr::Kind::Index)
      continue;
    bool set = false;
    for (size_t k = j + 1; k < list.size(); ++k) {
      ir::Stmt& s = list[k];
      if (!mentions(s, z.target)) continue;
      if (s.kind == ir::Stmt::Kind::AddAssign && ir::same(s.target, z.target) && !mentions(s.value, z.target)) {
        s.kind = ir::Stmt::Kind::Assign;
        set = true;
      }
      break;
    }
    if (set) {
      drop[j] = 1;
      ++count.set;
    } else {
      ++count.kept;
    }
  }
}

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
  setElements(list, drop, count);
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
