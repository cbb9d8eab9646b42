#include "gpu/host/compile.h"

#include <cctype>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "util/files.h"
#include "util/hash.h"

namespace tapelab {

std::string dumpSource(const std::string& dir, const std::string& stem, const std::string& ext,
                       const std::string& source) {
  if (dir.empty()) return "";
  const std::string path =
      (std::filesystem::path(dir) / ("tapelab-" + stem + "-" + contentHash(source).substr(0, 12) + "." + ext)).string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  writeOutputFile(path, source, {}, "--dump");  // as every --out: through links, never a special file replaced
  return path;
}

std::string dumpKernel(const std::string& dir, const std::string& stem, const std::string& ext, const EmittedKernel& kernel,
                       const std::string& source) {
  const std::string path = dumpSource(dir, stem, ext, source);
  if (!path.empty()) writeOutputFile(path + ".passes.txt", passesText(kernel), {}, "--dump");
  return path;
}

std::string sourceForError(const std::string& dumped, const std::string& stem, const std::string& ext,
                           const std::string& source) noexcept {
  if (!dumped.empty()) return dumped;
  try {
    return dumpSource((std::filesystem::temp_directory_path() / "tapelab-failed").string(), stem, ext, source);
  } catch (...) {
    return "not dumped: set TAPELAB_DUMP=DIR";
  }
}

std::string logHead(const std::string& log, int lines) {
  std::istringstream in(log);
  std::string line, out;
  int taken = 0;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\0' || std::isspace(static_cast<unsigned char>(line.back()))))
      line.pop_back();
    size_t start = 0;
    while (start < line.size() && std::isspace(static_cast<unsigned char>(line[start]))) ++start;
    if (start == line.size()) continue;
    if (taken == lines) {
      out += " | ...";
      break;
    }
    out += (taken++ ? " | " : "") + line.substr(start);
  }
  return out;
}

void refusePerValuePlan(const KernelOptions& o, const std::string& engine) {
  if (!o.plan.perValue || o.kind != KernelKind::Scratch) return;
  throw EngineUnavailable(engine + ": a per-value plan (strategy " + o.plan.strategy +
                          ") runs as a register kernel, not scratch: it keeps values, not segments' bookmarks (--kernel register)");
}

}  // namespace tapelab
