// The codegen tests' small tape: every op, two inputs, two draws (test_codegen_emit.cpp's goldens,
// test_codegen_host.cpp's dispatches and sums).
#pragma once
#include "tape/recorder.h"

namespace tapelab::testutil {

// Every op, two inputs, two draws: 25 nodes.
inline Tape smallTape() {
  Recorder rec;
  Var x = rec.input("x", 1.25), y = rec.input("y", 0.75);
  Var z0 = rec.randn(0), z1 = rec.randn(1);
  Var a = exp(x * z0 * 0.5) + sqrt(y);
  Var b = log(a) - y / x;
  Var c = max(b, -a) * min(z1, y);
  Var e = abs(-c) + x;
  rec.output(e * a);
  Tape t = rec.finish();
  t.name = "golden-small";
  return t;
}

}  // namespace tapelab::testutil
