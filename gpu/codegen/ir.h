// The kernel as data: what the passes (emit.cpp lists them) build and the printer (print.h) prints.
//
// A KernelIR is a tree of statements (declarations, assignments, blocks, loops, ifs, Kahan additions,
// barriers, comments) over small expression trees, plus the kernel's frame (precision, workgroup size,
// launch bound, the helpers it defines). Every decision is made by the time a KernelIR exists: where a
// value lives is already a name or an array element or a scratch address, what is fenced is a call of
// tl_opq, which draws a block computes is a declaration. The printer spells each node with a dialect's
// table and decides nothing (Halide's Stmt/Expr printed by CodeGen_C; tinygrad's UOps and renderer).
//
// Expressions print without added parentheses: a pass that needs them says so with Paren, so the text
// of a kernel is exactly what its passes built.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "tape/op.h"

namespace tapelab::ir {

// Types a kernel declares: T (the precision's scalar), U (32-bit unsigned), four U (a Philox call's
// words), two T (a Box-Muller pair), int (the market loop's index).
enum class Type : uint8_t { Scalar, Uint, Uint4, Scalar2, Int };

struct Expr;
using E = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind : uint8_t {
    Var,       // name
    Param,     // one of the ABI's scalar parameters (emit.h): name
    LocalId,   // the lane's index in its workgroup
    GroupId,   // the workgroup's index
    Float,     // a T literal: number
    Uint,      // a U literal: integer
    Int,       // an int literal: integer
    Binary,    // args[0] name args[1]: name is the operator ("+", "<", "^", ">>=", ...)
    Prefix,    // name args[0]: "++", "-", "!"
    Paren,     // (args[0])
    Select,    // args[0] ? args[1] : args[2]
    Index,     // args[0][args[1]]
    Member,    // args[0].name
    Call,      // name(args...): a helper of the kernel (tl_opq, tl_drawWords, ...)
    Function,  // the dialect's spelling of ops.def's function `name` (exp, log, sqrt, fma, ...)(args...)
    CastUint,  // args[0] converted to U
    CastScalar,  // args[0] converted to T, C style "(T)x" without parentheses around x
    Bits,      // T's bits as its same-width unsigned integer: args[0]
    FromBits,  // the T whose bits are args[0]
    Rule,      // ops.def's rule `name` of op `op`, its identifiers bound below
  };
  Kind kind = Kind::Var;
  std::string name;
  double number = 0;
  int64_t integer = 0;
  std::vector<E> args;
  // Rule: the op, and what its identifiers a, b, c, r, d stand for (args[0..4], null where unused);
  // `fence`: the key of the opaque identity its fenced occurrences are read through (null: none).
  Op op = Op::Const;
  E fence;
};

E var(std::string name);
E param(std::string name);
E localId();
E groupId();
E lit(double value);
E ulit(int64_t value);
E ilit(int64_t value);
E bin(E left, std::string op, E right);
E prefix(std::string op, E x);
E paren(E x);
E select(E cond, E x, E y);
E index(E array, E i);
E member(E x, std::string field);
E call(std::string helper, std::vector<E> args);
E fn(std::string function, std::vector<E> args);
E castUint(E x);
E castScalar(E x);
E bits(E x);
E fromBits(E x);
// ops.def's rule `text` of `op` with a, b, c, r, d bound (null: the rule does not read it).
E rule(Op op, std::string text, E a, E b, E c, E r, E d, E fence);

struct Stmt {
  enum class Kind : uint8_t {
    Comment,    // text
    Declare,    // [const ] type name[ = init]; array > 0: type name[array]; shared: workgroup memory
    Assign,     // target = value;
    AddAssign,  // target += value;
    Block,      // {  // text, then body, then }
    Seq,        // body, no braces (a draw scope, a group of lines)
    Loop,       // for (type text = init; cond; step) {  // note (rolled: the dialect's don't-unroll spellings)
    If,         // if (cond) {, body, }
    Kahan,      // target (sum) += value with compensation comp; viaCells: the sum read first (local memory)
    Barrier,    // the workgroup barrier
    Line,       // body on one line, separated by spaces
    Prefetch,   // value (an element of a global buffer, read by a later trip) fetched into the cache ahead of its
                // read: the dialect's prefetch; no value changes
  };
  Kind kind = Kind::Comment;
  std::string text;  // Comment and Block: the comment; Declare and Loop: the variable's name
  Type type = Type::Scalar;
  bool isConst = false;
  bool shared = false;   // Declare: in workgroup memory (the dialect's blockShared)
  bool rolled = false;   // Loop: kept rolled (the dialect's don't-unroll spellings)
  int unrollBy = 1;      // Loop, rolled: its trips unrolled this many at a time (the dialect's unroll spelling)
  bool viaCells = false;  // Kahan: sum and comp are cells of memory, read into a temporary first
  bool precise = false;  // Declare of T: the dialect's no-contraction qualifier (GLSL's precise)
  // Declare of T: an adjoint, a sum of terms whose zero's sign reaches no result (first_terms.h); Assign: the
  // setting of an adjoint array's element in a market loop's body, where elements at indices that differ as
  // expressions are different elements (the build's rows and arrays: first_terms.h)
  bool adjoint = false;
  int array = 0;         // Declare: elements (0: a scalar)
  std::string note;      // Declare: a comment after it on its line; Loop: after its header
  // Draws (the draws pass, draws.h): a statement that reads draw `draw` (-1: none); a Seq that is a draw
  // scope (drawPrefix non-empty) computes each Philox call and Box-Muller pair once, before the first of
  // its direct children that reads one, named with drawPrefix and keyed with drawKey's two words.
  int64_t draw = -1;
  std::string drawPrefix, drawKey;
  E drawBase;  // a draw scope whose Philox calls are those of its statements' draws plus this many groups
  // A draw scope of carried draws (loop_trip=step): its statements' draw k is draw k + drawStep of the path,
  // the Philox call and Box-Muller pair computed where that draw starts one and kept for the next trips.
  E drawStep;
  E target, value, comp, init, cond, step;
  std::vector<Stmt> body;
};

// Calls f(name) for every variable an expression names (a Rule's bound identifiers and fence included), and
// for a statement every variable it declares, reads or writes, its body's included: what the rewrite passes
// (first_terms.h, loads_ahead.h) ask of a statement.
template <class F>
void forEachVar(const E& e, F&& f) {
  if (!e) return;
  if (e->kind == Expr::Kind::Var) f(e->name);
  for (const E& a : e->args) forEachVar(a, f);
  forEachVar(e->fence, f);
}

Stmt comment(std::string text);
Stmt declare(Type type, std::string name, E init = nullptr, bool isConst = false);
// A T, precise (GLSL): every value of the tape and its adjoints and sums.
Stmt declareT(std::string name, E init = nullptr);
Stmt declareArray(std::string name, int elements, bool shared);  // precise T name[elements]
Stmt withNote(Stmt s, std::string note);
Stmt assign(E target, E value);
Stmt addAssign(E target, E value);
Stmt block(std::string label, std::vector<Stmt> body = {});
Stmt seq(std::vector<Stmt> body = {});
Stmt drawScope(std::string prefix, std::string key, std::vector<Stmt> body = {});
Stmt readsDraw(Stmt s, int64_t draw);
Stmt loop(Type type, std::string var, E init, E cond, E step, bool rolled, std::string label,
          std::vector<Stmt> body = {});
Stmt ifThen(E cond, std::vector<Stmt> body = {});
Stmt kahan(E sum, E comp, E term, bool viaCells);
Stmt barrier();
Stmt line(std::vector<Stmt> parts);
Stmt prefetch(E element);

// A statement's own expressions (not its body's), null ones included, in order: target, value, comp, init, cond,
// step, drawBase, drawStep.
inline std::array<const E*, 8> exprsOf(const Stmt& s) {
  return {&s.target, &s.value, &s.comp, &s.init, &s.cond, &s.step, &s.drawBase, &s.drawStep};
}
inline std::array<E*, 8> exprsOf(Stmt& s) {
  return {&s.target, &s.value, &s.comp, &s.init, &s.cond, &s.step, &s.drawBase, &s.drawStep};
}

// e rebuilt bottom up: each node's arguments and fence first, then f(node) (the node itself, or what replaces
// it; a replacement is not walked again); a subtree f leaves alone is shared, not copied.
template <class F>
E rewrite(const E& e, F&& f) {
  if (!e) return e;
  bool changed = false;
  std::vector<E> args;
  args.reserve(e->args.size());
  for (const E& a : e->args) {
    args.push_back(rewrite(a, f));
    changed = changed || args.back() != a;
  }
  E fence = rewrite(e->fence, f);
  if (!changed && fence == e->fence) return f(e);
  Expr copy = *e;
  copy.args = std::move(args);
  copy.fence = std::move(fence);
  return f(std::make_shared<const Expr>(std::move(copy)));
}

// Calls f(e) for every expression of a statement (exprsOf) and of its body's, in order; stops and returns true
// at the first f that returns true.
template <class F>
bool anyExpr(const Stmt& s, F&& f) {
  for (const E* e : exprsOf(s))
    if (f(*e)) return true;
  for (const Stmt& b : s.body)
    if (anyExpr(b, f)) return true;
  return false;
}

template <class F>
void forEachVar(const Stmt& s, F&& f) {
  if (s.kind == Stmt::Kind::Declare || s.kind == Stmt::Kind::Loop) f(s.text);
  for (const E* e : exprsOf(s)) forEachVar(*e, f);
  for (const Stmt& b : s.body) forEachVar(b, f);
}

// The same expression, node for node (the rewrite passes' test for one element of an array).
bool same(const E& a, const E& b);

// The helpers a kernel defines before its entry point (print.cpp spells them per dialect).
struct Helpers {
  bool philoxRolled = true;   // Philox's ten rounds as a rolled loop (else unrolled)
  bool outlineDraws = false;  // tl_philox and tl_boxMuller kept out of line
  bool approxSqrt = false;    // the dialect's helpers for math=approx (CUDA's tl_sqrt_approx)
};

struct KernelIR {
  std::string dialect;                    // the dialect the passes built it for
  Precision precision = Precision::F32;
  bool approxMath = false;                // ops.def's functions in the dialect's approximate spellings
  int workgroupSize = 64;
  int reductionElements = 64;             // tl_red's elements
  int minBlocks = 0;                      // the launch bound's second number (0: none)
  bool dontUnrollPrologue = false;        // the dialect's prologue for rolled loops
  std::vector<std::string> header;        // comment lines after the prologue, each without "// "
  Helpers helpers;
  std::vector<Stmt> body;                 // the entry point's statements
};

}  // namespace tapelab::ir
