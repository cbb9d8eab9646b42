#include "api/tuning.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tape/philox.h"
#include "util/files.h"
#include "util/hash.h"

namespace tapelab {

namespace fs = std::filesystem;

namespace {

constexpr uintmax_t kMaxEntryBytes = 1 << 20;  // an entry is a few hundred bytes; a plan a few KiB

fs::path entryPath(const std::string& cacheDir, const TuningKey& key) {
  return fs::path(cacheDir) / "tune" / (contentHash(key.text()) + ".json");
}

}  // namespace

std::string TuningKey::text() const {
  return "tapelab-tuning 1\ndraws " + std::to_string(kDrawsVersion) + "\nengine " + engine + "\ndevice " + device +
         "\ntape " + tape + "\nmarkets " +
         std::to_string(markets) + "\nprecision " + toString(precision) + "\nmath " + toString(math) +
         "\ngreeks " + (greeks ? "yes" : "no") + "\n";
}

std::optional<TunedWinner> loadTuned(const std::string& cacheDir, const TuningKey& key) {
  if (cacheDir.empty()) return std::nullopt;
  const fs::path path = entryPath(cacheDir, key);
  // A regular file of a sane size holding this key only (util/files.h): not a link to a device,
  // a FIFO or a directory, not another job's entry.
  const std::optional<std::string> bytes = readCacheEntry(path, key.text(), kMaxEntryBytes);
  if (!bytes) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(*bytes);
    if (j.at("key").get<std::string>() != key.text()) return std::nullopt;  // another job's entry
    TunedWinner w;
    w.config = j.at("config").get<std::string>();
    const std::string kind = j.at("kind").get<std::string>();
    if (kind == "plain") w.kind = KernelKind::Plain;
    else if (kind == "register") w.kind = KernelKind::Register;
    else if (kind == "scratch") w.kind = KernelKind::Scratch;
    else if (kind == "tangent") w.kind = KernelKind::Tangent;
    else return std::nullopt;  // a kind this version does not know: as without an entry
    w.planLabel = j.at("plan_label").get<std::string>();
    w.plan = j.at("plan").get<std::string>();
    w.mpathsPerSecond = j.at("mpaths_per_s").get<double>();
    w.defaultsMpathsPerSecond = j.at("defaults_mpaths_per_s").get<double>();
    w.paths = j.at("paths").get<uint64_t>();
    w.when = j.at("when").get<std::string>();
    if (j.contains("margin") && j.contains("noise")) {
      w.margin = j.at("margin").get<double>();
      w.noise = j.at("noise").get<double>();
    }
    w.path = path.string();
    return w;
  } catch (const std::exception&) {
    return std::nullopt;  // not ours, or damaged past the checksum's reach: no winner
  }
}

bool storeTuned(const std::string& cacheDir, const TuningKey& key, TunedWinner& winner, std::string* error) {
  if (cacheDir.empty()) {
    if (error) *error = "no cache directory (TAPELAB_CACHE_DIR=off)";
    return false;
  }
  nlohmann::json j;
  j["key"] = key.text();
  j["config"] = winner.config;
  j["kind"] = toString(winner.kind);
  j["plan_label"] = winner.planLabel;
  j["plan"] = winner.plan;
  j["mpaths_per_s"] = winner.mpathsPerSecond;
  j["defaults_mpaths_per_s"] = winner.defaultsMpathsPerSecond;
  j["paths"] = winner.paths;
  j["when"] = winner.when;
  if (std::isfinite(winner.margin) && std::isfinite(winner.noise)) {
    j["margin"] = winner.margin;
    j["noise"] = winner.noise;
  }
  const fs::path path = entryPath(cacheDir, key);
  winner.path = path.string();
  return writeCacheEntry(path, key.text(), j.dump(1) + "\n", error);
}

std::string tunedNote(const TunedWinner& w) {
  char buf[200];
  if (std::isfinite(w.margin) && std::isfinite(w.noise) && w.margin > std::max(0.01, w.noise))
    std::snprintf(buf, sizeof buf, " (%+.1f%% against the defaults beyond a noise of %.1f%%, tuned %s)", 100 * w.margin,
                  100 * w.noise, w.when.c_str());
  else if (std::isfinite(w.margin) && std::isfinite(w.noise))
    std::snprintf(buf, sizeof buf, " (%+.1f%% against the defaults, within a noise of %.1f%%: kept by "
                  "--store-within-noise, tuned %s)", 100 * w.margin, 100 * w.noise, w.when.c_str());
  else
    std::snprintf(buf, sizeof buf, " (tuned %s; its margin over the defaults was not measured: tapelab tune again)",
                  w.when.c_str());
  return w.path + buf;
}

bool forgetTuned(const std::string& cacheDir, const TuningKey& key) {
  if (cacheDir.empty()) return false;
  std::error_code ec;
  return fs::remove(entryPath(cacheDir, key), ec);  // a link is removed, never followed
}

}  // namespace tapelab
