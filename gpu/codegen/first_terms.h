// The first-terms pass: an adjoint that starts at zero takes its first term instead of adding it to zero.
//
// The build pass declares each adjoint of a block at zero and adds every term of the adjoint rules to it
// (`d = 0; d += t1; d += t2`). IEEE arithmetic cannot drop the first addition: 0 + t is t except for t = -0,
// where it is +0, so the compiler keeps an addition of zero per adjoint (on the 7-market Asian's register
// kernel 48 of the reverse market loop's 198 sm_90 instructions). The pass declares the adjoint where its
// first term is added, with that term as its value (`d = t1; d += t2`).
//
// Same bits: the two differ only in the sign of a zero adjoint. An adjoint is a sum of terms linear in the
// output's seed, so the sign of its zero reaches only other zeros' signs; every result is a Kahan sum
// started at +0 (then a reduction of such sums), and under round-to-nearest a sum started at +0 is never
// -0, so adding -0 or +0 to it gives the same bits. Only declarations the build marks as adjoints
// (ir::Stmt::adjoint) are touched, never a forward value, where a zero's sign can reach a result (1 / x).
//
// Where: a scalar adjoint declared at literal zero in a statement list whose next statement naming it, in
// the same list, is `d += t` with t not reading d. Anything else (a first term inside a nested block or
// loop, a read before any addition) keeps the zero. Likewise an element of an adjoint array that a market
// loop's body sets to zero (`tl_dbm[own row + m] = 0`, the build marks it ir::Stmt::adjoint) and adds to
// later in the same list: its first addition sets it, so the trip no longer stores a zero and loads it back
// (the compiler cannot tell the trip's own row from the later trip's row it reads in between; the build
// knows they differ: elements at indices that differ as expressions are different elements there).
#pragma once
#include <string>

#include "gpu/codegen/ir.h"

namespace tapelab {

struct FirstTerms {
  int set = 0;   // adjoints declared with their first term
  int kept = 0;  // adjoints declared at zero whose first term could not take their place
};

FirstTerms setFirstTerms(ir::KernelIR& kernel);
std::string toText(const FirstTerms& terms);

}  // namespace tapelab
