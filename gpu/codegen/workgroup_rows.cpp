#include "gpu/codegen/workgroup_rows.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace tapelab {

namespace {

using ir::E;
using ir::Expr;
using ir::Stmt;

struct Use {
  int elements = 0;
  int declarations = 0;
  double weight = 0;      // reads and writes, each times the trips of the loops around it
  bool variable = false;  // some index is not a literal
  bool whole = false;     // named other than as an indexed array (the pass leaves it)
};

bool literal(const E& e) { return e->kind == Expr::Kind::Int || e->kind == Expr::Kind::Uint; }

void uses(const E& e, double times, bool asBase, std::map<std::string, Use>& out) {
  if (!e) return;
  if (e->kind == Expr::Kind::Var) {
    if (!asBase) out[e->name].whole = true;
    return;
  }
  if (e->kind == Expr::Kind::Index && e->args[0]->kind == Expr::Kind::Var) {
    Use& u = out[e->args[0]->name];
    u.weight += times;
    u.variable = u.variable || !literal(e->args[1]);
    uses(e->args[1], times, false, out);
    return;
  }
  for (const E& a : e->args) uses(a, times, false, out);
  uses(e->fence, times, false, out);
}

// The trips of `for (v = 0; v < N; ...)` with N a literal, else 1.
double tripsOf(const Stmt& loop) {
  const E& c = loop.cond;
  if (c && c->kind == Expr::Kind::Binary && c->name == "<" && literal(c->args[1])) return std::max<int64_t>(1, c->args[1]->integer);
  return 1;
}

// The workgroup memory the kernel declares already: tl_red and the shared arrays (elements).
int64_t sharedElements(const std::vector<Stmt>& body) {
  int64_t n = 0;
  for (const Stmt& s : body) {
    if (s.kind == Stmt::Kind::Declare && s.shared) n += std::max(s.array, 1);
    n += sharedElements(s.body);
  }
  return n;
}

void uses(const std::vector<Stmt>& body, double times, std::map<std::string, Use>& out) {
  for (const Stmt& s : body) {
    if (s.kind == Stmt::Kind::Declare && s.array > 0 && !s.shared) {
      ++out[s.text].declarations;
      out[s.text].elements = s.array;
    } else if (s.kind == Stmt::Kind::Declare) {
      out[s.text].whole = true;  // a scalar or a shared array of that name: not a lane's array
    }
    for (const E* e : ir::exprsOf(s)) uses(*e, times, false, out);
    uses(s.body, s.kind == Stmt::Kind::Loop ? times * tripsOf(s) : times, out);
  }
}

// A moved array's element i at lane tl_lid's column: (i) * workgroup + tl_lid.
E column(const E& e, const std::set<std::string>& moved, int workgroup) {
  return ir::rewrite(e, [&](const E& n) {
    if (n->kind != Expr::Kind::Index || n->args[0]->kind != Expr::Kind::Var || !moved.count(n->args[0]->name)) return n;
    return ir::index(n->args[0], ir::bin(ir::bin(ir::paren(n->args[1]), "*", ir::ulit(workgroup)), "+", ir::var("tl_lid")));
  });
}

void column(std::vector<Stmt>& body, const std::set<std::string>& moved, int workgroup) {
  for (Stmt& s : body) {
    if (s.kind == Stmt::Kind::Declare && s.array > 0 && !s.shared && moved.count(s.text)) {
      s.shared = true;
      s.array *= workgroup;
      s.note = s.note.empty() ? "a column a lane" : s.note + "; a column a lane";
    }
    for (E* e : ir::exprsOf(s)) *e = column(*e, moved, workgroup);
    column(s.body, moved, workgroup);
  }
}

}  // namespace

WorkgroupRows moveRowsToWorkgroup(ir::KernelIR& kernel, int maxElements, int scalarBytes) {
  WorkgroupRows out;
  std::map<std::string, Use> all;
  uses(kernel.body, 1, all);
  std::vector<std::pair<std::string, Use>> arrays;
  for (const auto& [name, u] : all)
    if (u.elements > 0 && u.variable && !u.whole && u.declarations == 1) arrays.emplace_back(name, u);
  std::stable_sort(arrays.begin(), arrays.end(), [](const auto& a, const auto& b) {
    return a.second.weight / a.second.elements > b.second.weight / b.second.elements;
  });
  std::set<std::string> moved;
  const int64_t before = (kernel.reductionElements + sharedElements(kernel.body)) * scalarBytes;
  for (const auto& [name, u] : arrays) {
    if (out.elements + u.elements > maxElements) {
      out.left.push_back(name + " (" + std::to_string(u.elements) + " elements: over workgroup_rows=" +
                         std::to_string(maxElements) + " with the " + std::to_string(out.elements) + " before it)");
      continue;
    }
    const int64_t bytes = before + int64_t{out.elements + u.elements} * kernel.workgroupSize * scalarBytes;
    if (bytes > kStaticWorkgroupBytes) {
      out.left.push_back(name + " (" + std::to_string(u.elements) + " elements: " + std::to_string(bytes) +
                         " bytes of workgroup memory, over the " + std::to_string(kStaticWorkgroupBytes) +
                         " a kernel may declare)");
      continue;
    }
    out.elements += u.elements;
    out.moved.emplace_back(name, u.elements);
    moved.insert(name);
  }
  if (!moved.empty()) column(kernel.body, moved, kernel.workgroupSize);
  out.bytes = out.elements * kernel.workgroupSize * scalarBytes;
  return out;
}

std::string toText(const WorkgroupRows& rows) {
  std::string s = "a lane's " + std::to_string(rows.elements) + " elements in workgroup memory (" +
                  std::to_string(rows.bytes) + " bytes a workgroup)\n";
  for (const auto& [name, n] : rows.moved) s += "  moved " + name + "[" + std::to_string(n) + "]\n";
  for (const std::string& l : rows.left) s += "  left " + l + "\n";
  return s;
}

}  // namespace tapelab
