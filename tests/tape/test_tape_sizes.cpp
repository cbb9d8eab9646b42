// Sizes before recording (tape/products/catalog.cpp): every product's node estimate against its
// recording over a grid of small parameters, and the bound that refuses a product of sizes each
// in range but too large together, before anything is recorded (issue 49).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tape/products/products.h"

using namespace tapelab;

namespace {

// A few values of each integer parameter (the smallest accepted, and small ones above it).
std::vector<double> probes(const products::ProductParam& q) {
  if (!q.integer) return {q.defaultValue};
  std::vector<double> out;
  for (double v : {q.lo, q.lo + 1, q.lo + 2, q.lo + 7})
    if (v <= q.hi) out.push_back(v);
  return out;
}

}  // namespace

TEST(Sizes, EveryEstimateIsAtLeastTheRecordingAndAtMostTenPercentAbove) {
  int checked = 0;
  for (const products::ProductInfo& info : products::catalog()) {
    // Every combination of the integer parameters' probes (the others at their defaults).
    std::vector<products::ProductParams> points{{}};
    for (const products::ProductParam& q : info.params) {
      std::vector<products::ProductParams> next;
      for (const products::ProductParams& p : points)
        for (double v : probes(q)) {
          products::ProductParams x = p;
          x[q.name] = v;
          next.push_back(x);
        }
      points = next;
    }
    for (const products::ProductParams& p : points) {
      Tape t;
      try {
        t = products::byName(info.name, p);
      } catch (const std::invalid_argument&) {
        continue;  // a combination the product refuses (heat's even points, buckets over steps)
      }
      const double estimate = products::sizeOf(info.name, p).nodes;
      std::string where = info.name;
      for (const auto& [k, v] : p) where += " " + k + "=" + std::to_string(static_cast<long long>(v));
      EXPECT_GE(estimate, t.size()) << where;
      EXPECT_LE(estimate, 1.1 * t.size() + 64) << where;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(Sizes, TheDefaultsAndTheSTACA2ShapesAreExact) {
  // The wide products at their defaults, and the 10-asset 1,260-step basket the bound keeps in.
  EXPECT_EQ(products::sizeOf("hestonbasket", {{"assets", 10}, {"steps", 1260}}).nodes, 440323);
  EXPECT_LT(440323, products::kDefaultMaxNodes);
  for (const char* name : {"bucketed", "localvol", "hestonbasket", "lmm", "asian", "heat"})
    EXPECT_EQ(products::sizeOf(name, products::ProductParams{}).nodes,
              products::byName(name, products::ProductParams{}).size()) << name;
  EXPECT_EQ(products::sizeOf("lmm", {{"forwards", 80}}).nodes, 70797);
}

TEST(Sizes, AProductTooLargeTogetherIsRefusedBeforeRecordingNamingItsSizes) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    products::byName("heat", {{"points", 10001}, {"steps", 1000000}});
    FAIL() << "a 5e10-node heat tape was recorded";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "product 'heat': steps=1000000, points=10001 make about 5e+10 nodes, over the bound of 2000000 "
              "(raise it with --max-nodes N or TAPELAB_MAX_NODES)");
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
  EXPECT_THROW(products::byName("basket", {{"assets", 1000}, {"steps", 1000000}}), std::invalid_argument);
  EXPECT_THROW(products::byName("neural", {{"hidden", 256}, {"steps", 1000000}}), std::invalid_argument);
  EXPECT_THROW(products::byName("worstof", {{"assets", 200}, {"steps", 1000000}}), std::invalid_argument);
  // Raised, the same product records; lowered, a small one is refused.
  EXPECT_EQ(products::byName("asian", {{"steps", 500000}}, 3.1e6).size(), 3000024);
  EXPECT_THROW(products::byName("asian", products::ProductParams{}, 1000), std::invalid_argument);
  EXPECT_EQ(products::byName("asian", products::ProductParams{}, 1536).size(), 1536);
}
