// The knobs (api/knobs.h): every TAPELAB_* variable reaches its field of
// RunConfig, DispatchOptions or EngineSettings through the one table, a bad value
// is a one-line error naming the variable; and the layers keep to themselves:
// no library reads the environment, no include runs upward, and a test
// includes only what its folder's CMakeLists links.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "api/knobs.h"
#include "tests/common/test_util.h"

using namespace tapelab;
using testutil::ScopedEnv;
namespace fs = std::filesystem;

namespace {

// The variables the tests below set; each is unset for the scope of a test.
struct CleanKnobs {
  std::vector<std::unique_ptr<ScopedEnv>> unset;
  CleanKnobs() {
    for (const Knob& k : knobTable()) unset.push_back(std::make_unique<ScopedEnv>(k.variable, nullptr));
  }
};

struct Case {
  const char* variable;
  const char* value;  // a good value
  std::function<bool(const RunConfig&)> reached;
  const char* bad;    // a malformed value, or nullptr when any text is accepted
};

const std::vector<Case>& cases() {
  static const std::vector<Case> list = {
      {"TAPELAB_ENGINE", "cpu-jit", [](const RunConfig& c) { return c.engine == "cpu-jit"; }, nullptr},
      {"TAPELAB_CKPT", "12", [](const RunConfig& c) { return c.checkpoint == Checkpoint::count(12); }, "0"},
      {"TAPELAB_CKPT_NODES", "100", [](const RunConfig& c) { return c.ckptNodes == 100; }, "-1"},
      {"TAPELAB_STRATEGY", "optimal", [](const RunConfig& c) { return c.strategy == "optimal"; }, nullptr},
      {"TAPELAB_SEGLEN", "40", [](const RunConfig& c) { return c.segLen == 40; }, "4x"},
      {"TAPELAB_MAX_NODES", "5000000", [](const RunConfig& c) { return c.maxNodes == 5000000u; }, "0"},
      {"TAPELAB_COMPILE_TIMEOUT", "2.5", [](const RunConfig& c) { return c.engineSettings.compileTimeout == 2.5; }, "-1"},
      {"TAPELAB_KERNEL", "scratch", [](const RunConfig& c) { return c.kernel == KernelKind::Scratch; }, "fancy"},
      {"TAPELAB_DUMP", "/tmp/d", [](const RunConfig& c) { return c.dumpDir == "/tmp/d"; }, nullptr},
      {"TAPELAB_CONFIG", "lanes=2,math=approx",
       [](const RunConfig& c) { return requestText(c.userConfig) == "lanes=2,math=approx" && c.userConfig.what == "TAPELAB_CONFIG"; },
       "lanes"},
      {"TAPELAB_PATH_OFFSET", "4294967396", [](const RunConfig& c) { return c.dispatch.pathOffset == 4294967396u; },
       "12x"},
      {"TAPELAB_MAX_GROUPS", "0x10", [](const RunConfig& c) { return c.dispatch.maxGroups == 16u; }, "4294967296"},
      {"TAPELAB_SCRATCH_BUDGET", "4096", [](const RunConfig& c) { return c.dispatch.scratchBudget == 4096u; }, "0"},
      {"TAPELAB_TIMELINE", "1", [](const RunConfig& c) { return c.dispatch.timeline; }, "yes"},
      {"TAPELAB_THREADS", "3", [](const RunConfig& c) { return c.engineSettings.threads == 3u; }, "two"},
      {"TAPELAB_DEVICE_TIMEOUT", "0.25", [](const RunConfig& c) { return c.engineSettings.deviceTimeout == 0.25; }, "-1"},
      {"TAPELAB_VULKAN_DEVICE", "llvmpipe", [](const RunConfig& c) { return c.engineSettings.vulkan.device == "llvmpipe"; },
       nullptr},
      {"TAPELAB_OPENCL_DEVICE", "1", [](const RunConfig& c) { return c.engineSettings.opencl.device == "1"; }, nullptr},
      {"TAPELAB_CUDA_DEVICE", "2", [](const RunConfig& c) { return c.engineSettings.cuda.device == 2u; }, "gpu0"},
      {"TAPELAB_CUDA_ARCH", "sm_80",
       [](const RunConfig& c) { return c.engineSettings.cuda.archMajor == 8 && c.engineSettings.cuda.archMinor == 0; },
       "ampere"},
      {"TAPELAB_HIP_ARCH", "gfx942", [](const RunConfig& c) { return c.engineSettings.hip.arch == "gfx942"; }, nullptr},
      {"TAPELAB_CXX", "clang++", [](const RunConfig& c) { return c.engineSettings.cpuJit.compiler == "clang++"; }, nullptr},
      {"TAPELAB_JIT_PCH", "0", [](const RunConfig& c) { return !c.engineSettings.cpuJit.precompiledHeader; }, "off"},
      {"TAPELAB_CACHE_DIR", "/tmp/tl-cache", [](const RunConfig& c) { return c.engineSettings.cacheDir == "/tmp/tl-cache"; },
       nullptr},
  };
  return list;
}

}  // namespace

TEST(ApiKnobs, EveryVariableReachesItsField) {
  CleanKnobs clean;
  const RunConfig defaults = RunConfig::fromEnvironment();
  for (const Case& c : cases()) {
    ScopedEnv env(c.variable, c.value);
    EXPECT_FALSE(c.reached(defaults)) << c.variable << " is already " << c.value << " by default";
    EXPECT_TRUE(c.reached(RunConfig::fromEnvironment())) << c.variable << "=" << c.value;
  }
}

TEST(ApiKnobs, BadValuesAreOneLineErrorsNamingTheVariable) {
  CleanKnobs clean;
  for (const Case& c : cases()) {
    if (!c.bad) continue;
    ScopedEnv env(c.variable, c.bad);
    try {
      RunConfig::fromEnvironment();
      ADD_FAILURE() << c.variable << "=" << c.bad << " accepted";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(std::string(c.variable) + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(std::string("'") + c.bad + "'"), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
  // The engine-level read sees only engine knobs: a bad run knob does not stop `tapelab engines`.
  ScopedEnv ckpt("TAPELAB_CKPT", "0");
  EXPECT_NO_THROW(engineSettingsFromEnvironment());
  // Nor does the read below the run, which a front end binding run variables to flags makes.
  EXPECT_NO_THROW(RunConfig::fromEnvironmentWithoutRunKnobs());
  ScopedEnv threads("TAPELAB_THREADS", "0");
  EXPECT_THROW(engineSettingsFromEnvironment(), std::invalid_argument);
  EXPECT_THROW(RunConfig::fromEnvironmentWithoutRunKnobs(), std::invalid_argument);
}

// TAPELAB_CONFIG is checked for names and values when read; which engine takes a field is checked
// when the engine is known (tests/api/test_api_config.cpp). A bad item's message names the variable
// and the item.
TEST(ApiKnobs, ConfigVariableIsCheckedWhenRead) {
  CleanKnobs clean;
  EXPECT_TRUE(RunConfig::fromEnvironment().userConfig.empty());
  for (const char* bad : {"lanes", "lanes=", "=4", "lanes=4,,sums=local", "colour=red", "sums=global", "lanes=2,lanes=4"}) {
    ScopedEnv env("TAPELAB_CONFIG", bad);
    try {
      RunConfig::fromEnvironment();
      ADD_FAILURE() << "TAPELAB_CONFIG=" << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("TAPELAB_CONFIG", 0), 0u) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  // Fields of any engine pass here: cuda.reduce on a vulkan run is refused by resolveConfig.
  ScopedEnv cudaOnly("TAPELAB_CONFIG", "cuda.reduce=host");
  EXPECT_NO_THROW(RunConfig::fromEnvironment());
}

// The variables the kernel configuration replaced are gone: one variable holds the whole kernel.
TEST(ApiKnobs, NoKernelVariableButTheConfig) {
  for (const Knob& k : knobTable())
    for (const char* retired : {"TAPELAB_KAHAN_LOCAL", "TAPELAB_CUDA_MIN_BLOCKS", "TAPELAB_PATHS_PER_LANE",
                                "TAPELAB_APPROX_MATH", "TAPELAB_CUDA_APPROX_MATH", "TAPELAB_QUANTILE_SELECT",
                                "TAPELAB_CUDA_OUTLINE_DRAWS", "TAPELAB_STORE_DRAWS", "TAPELAB_MARKET_LOOP",
                                "TAPELAB_SHARED_CONSTANTS", "TAPELAB_DRAW_LOOP", "TAPELAB_DEVICE_SUMS",
                                "TAPELAB_CUDA_SUMS_BESIDE", "TAPELAB_OPAQUE", "TAPELAB_UNROLL_DRAWS", "TAPELAB_JIT_CHUNK",
                                "TAPELAB_JIT_PART", "TAPELAB_SCRATCH_LAYOUT", "TAPELAB_MARKET_ORDER"})
      EXPECT_NE(std::string(k.variable), retired) << retired << " is a field of TAPELAB_CONFIG now";
}

// A retired kernel variable still set is refused, one line naming it and what replaces it: ignoring
// it would run the defaults while the user believes the variable took effect.
TEST(ApiKnobs, ARetiredKernelVariableIsRefusedNamingItsField) {
  CleanKnobs clean;
  const std::vector<std::pair<const char*, const char*>> retired = {
      {"TAPELAB_KAHAN_LOCAL", "--config sums="},        {"TAPELAB_CUDA_MIN_BLOCKS", "--config min_blocks="},
      {"TAPELAB_PATHS_PER_LANE", "--config lanes="},    {"TAPELAB_APPROX_MATH", "--config math=approx"},
      {"TAPELAB_CUDA_APPROX_MATH", "--config math=approx"}, {"TAPELAB_QUANTILE_SELECT", "has no quantile"},
      {"TAPELAB_CUDA_OUTLINE_DRAWS", "--config outline_draws="}, {"TAPELAB_STORE_DRAWS", "--config draws="},
      {"TAPELAB_MARKET_LOOP", "--config markets="},     {"TAPELAB_SHARED_CONSTANTS", "--config shared_constants="},
      {"TAPELAB_DRAW_LOOP", "no replacement"},          {"TAPELAB_DEVICE_SUMS", "--config cuda.reduce="},
      {"TAPELAB_CUDA_SUMS_BESIDE", "--config cuda.reduce=beside"}, {"TAPELAB_OPAQUE", "--config opaque="},
      {"TAPELAB_UNROLL_DRAWS", "--config philox="},     {"TAPELAB_JIT_CHUNK", "--config jit.chunk="},
      {"TAPELAB_JIT_PART", "--config jit.part="},       {"TAPELAB_SCRATCH_LAYOUT", "--config layout="},
      {"TAPELAB_MARKET_ORDER", "--config market_order="}};
  for (const auto& [variable, replacement] : retired) {
    {
      ScopedEnv empty(variable, "");  // empty is unset, as for every variable
      EXPECT_NO_THROW(RunConfig::fromEnvironment()) << variable;
    }
    ScopedEnv env(variable, "1");
    for (const auto& read : std::vector<std::function<void()>>{[] { RunConfig::fromEnvironment(); },
                                                              [] { RunConfig::fromEnvironmentWithoutRunKnobs(); },
                                                              [] { engineSettingsFromEnvironment(); }}) {
      try {
        read();
        ADD_FAILURE() << variable << "=1 was accepted";
      } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind(std::string(variable) + " is retired: ", 0), 0u) << what;
        EXPECT_NE(what.find(replacement), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      }
    }
  }
}

// The flags of the retired kernel variables (--layout, --market-order) are one line naming the field
// that replaced them, with the value given where the field takes it: what the CLI says for them.
TEST(ApiKnobs, ARetiredFlagNamesTheFieldThatReplacedIt) {
  EXPECT_EQ(retiredFlag("--layout", "aos"), "--layout is retired: use --config layout=aos (tapelab config --list)");
  EXPECT_EQ(retiredFlag("--market-order", "joint"),
            "--market-order is retired: use --config market_order=joint (tapelab config --list)");
  EXPECT_EQ(retiredFlag("--market-order", "serial"),
            "--market-order is retired: use --config market_order=sequential|joint (tapelab config --list)");
  EXPECT_EQ(retiredFlag("--layout"), "--layout is retired: use --config layout=soa|aos (tapelab config --list)");
  EXPECT_FALSE(retiredFlag("--paths", "1").has_value());
  EXPECT_FALSE(retiredFlag("--config", "layout=aos").has_value());
  for (const auto& [flag, value] : {std::pair{"--layout", "soa"}, std::pair{"--market-order", "sequential"}}) {
    const std::string line = *retiredFlag(flag, value);
    const size_t at = line.find("--config ") + 9;
    const std::string text = line.substr(at, line.find(' ', at) - at);
    EXPECT_EQ(requestText(parseConfigText(text)), text) << flag << ": a field of the configuration";
  }
}

// Seconds as a decimal, 0 meaning no limit; anything that is not a finite decimal in [0, 1e9] is refused.
TEST(ApiKnobs, DeviceTimeoutIsSecondsWithZeroForNoLimit) {
  CleanKnobs clean;
  EXPECT_EQ(engineSettingsFromEnvironment().deviceTimeout, 600.0);
  for (const auto& [text, seconds] : std::vector<std::pair<const char*, double>>{
           {"0", 0.0}, {"1e-6", 1e-6}, {"0.000001", 1e-6}, {"600", 600.0}, {"1e9", 1e9}}) {
    ScopedEnv env("TAPELAB_DEVICE_TIMEOUT", text);
    EXPECT_EQ(engineSettingsFromEnvironment().deviceTimeout, seconds) << text;
  }
  for (const char* bad : {"-1", "-0.5", "10s", "inf", "nan", "1e10", " 5", "0x10", "1,5"}) {
    ScopedEnv env("TAPELAB_DEVICE_TIMEOUT", bad);
    try {
      engineSettingsFromEnvironment();
      ADD_FAILURE() << "TAPELAB_DEVICE_TIMEOUT=" << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), std::string("TAPELAB_DEVICE_TIMEOUT: expected seconds, a decimal from 0 (no limit) "
                                                   "to 1e9, got '") + bad + "'");
    }
  }
}

TEST(ApiKnobs, TheTableListsEveryCaseOnceAndTheDocsNameEveryVariable) {
  std::set<std::string> variables;
  for (const Knob& k : knobTable()) {
    EXPECT_TRUE(variables.insert(k.variable).second) << k.variable << " twice";
    EXPECT_NE(std::string(k.meaning), "") << k.variable;
  }
  for (const Case& c : cases()) EXPECT_EQ(variables.count(c.variable), 1u) << c.variable;
  std::ifstream in(fs::path(TAPELAB_SOURCE_DIR) / "docs" / "cli.md");
  ASSERT_TRUE(in) << "docs/cli.md is missing";
  std::stringstream doc;
  doc << in.rdbuf();
  for (const std::string& v : variables)
    if (v.rfind("TAPELAB_", 0) == 0) {
      EXPECT_NE(doc.str().find(v), std::string::npos) << v << " is not in docs/cli.md";
    }
}

TEST(ApiKnobs, CacheDirectoryAndVulkanLoaderKey) {
  CleanKnobs clean;
  ScopedEnv xdg("XDG_CACHE_HOME", "/x");
  ScopedEnv home("HOME", "/h");
  EXPECT_EQ(engineSettingsFromEnvironment().cacheDir, "/x/tapelab");
  {
    ScopedEnv off("TAPELAB_CACHE_DIR", "off");
    EXPECT_EQ(engineSettingsFromEnvironment().cacheDir, "");
  }
  {
    ScopedEnv noXdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(engineSettingsFromEnvironment().cacheDir, "/h/.cache/tapelab");
  }
  const std::string before = engineSettingsFromEnvironment().vulkan.loaderKey;
  ScopedEnv icd("VK_ICD_FILENAMES", "/somewhere/icd.json");
  EXPECT_NE(engineSettingsFromEnvironment().vulkan.loaderKey, before);
  EXPECT_NE(engineSettingsFromEnvironment().vulkan.loaderKey.find("/somewhere/icd.json"), std::string::npos);
}

TEST(ApiKnobs, EnvUnsignedParsesAndNamesTheVariable) {
  const char* name = "TAPELAB_TEST_KNOB";
  {
    ScopedEnv unset(name, nullptr);
    EXPECT_EQ(envUnsigned(name, 7), 7u);
  }
  {
    ScopedEnv empty(name, "");
    EXPECT_EQ(envUnsigned(name, 7), 7u);
  }
  {
    ScopedEnv dec(name, "18446744073709551615");
    EXPECT_EQ(envUnsigned(name, 0), UINT64_MAX);
  }
  {
    ScopedEnv hex(name, "0x10");
    EXPECT_EQ(envUnsigned(name, 0, 1, 16), 16u);
  }
  for (const char* bad : {"x", "12x", "-1", "+3", " 3", "0x", "18446744073709551616"}) {
    ScopedEnv env(name, bad);
    EXPECT_THROW(envUnsigned(name, 0), std::invalid_argument) << bad;
  }
  ScopedEnv range(name, "0");
  try {
    envUnsigned(name, 5, 1, 4);
    ADD_FAILURE() << "0 is outside [1, 4]";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "TAPELAB_TEST_KNOB: expected an integer from 1 to 4, got '0'");
  }
}

// ------------------------------------------------------------------ layers

namespace {

// The layers in data-flow order: a file may include its own folder's headers
// and those of lower layers only. Siblings (reference and gpu/codegen; the GPU
// runtimes) do not include each other.
int layerOf(const std::string& path, std::string* group) {
  static const std::vector<std::pair<std::string, int>> layers = {
      {"util/", 0},       {"tape/", 1},        {"planner/", 2},     {"engine/", 3},      {"reference/", 4},
      {"gpu/codegen/", 4}, {"gpu/host/", 5},   {"gpu/vulkan/", 6},  {"gpu/opencl/", 6},  {"gpu/cuda/", 6},
      {"gpu/hip/", 6},     {"api/", 7},        {"cli/", 8},         {"experiments/", 8}, {"properties/", 8},
      {"bench/", 8},       {"tests/", 8}};
  for (const auto& [prefix, rank] : layers)
    if (path.rfind(prefix, 0) == 0) {
      *group = prefix;
      return rank;
    }
  return -1;
}

std::vector<fs::path> sources(const fs::path& root) {
  std::vector<fs::path> out;
  for (const char* dir : {"util", "tape", "planner", "engine", "reference", "gpu", "api", "cli", "experiments",
                          "properties", "bench", "tests"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir))
      if (e.path().extension() == ".cpp" || e.path().extension() == ".h") out.push_back(e.path());
  return out;
}

}  // namespace

TEST(ApiLayers, NoIncludeRunsUpwardAndOnlyTheKnobsReadTheEnvironment) {
  const fs::path root = TAPELAB_SOURCE_DIR;
  const std::regex include(R"(^\s*#\s*include\s+"([^"]+)\")");
  const std::regex getenvCall(R"(\bgetenv\s*\()");
  const std::set<std::string> factories = {"reference/reference.h", "reference/cpujit/cpujit.h",
                                           "gpu/vulkan/vulkan.h",   "gpu/opencl/opencl.h",
                                           "gpu/cuda/cuda.h",       "gpu/hip/hip.h"};
  int checked = 0;
  for (const fs::path& file : sources(root)) {
    const std::string rel = fs::relative(file, root).generic_string();
    std::string group;
    const int rank = layerOf(rel, &group);
    ASSERT_GE(rank, 0) << rel;
    std::ifstream in(file);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::string where = rel + ":" + std::to_string(n);
      // Harnesses above api/ may read their own knobs; libraries never.
      if (rank < 8 && rel != "api/knobs.cpp") {
        EXPECT_FALSE(std::regex_search(line, getenvCall)) << where << ": reads the environment (api/knobs.cpp does)";
      }
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string target = m[1];
      std::string targetGroup;
      const int targetRank = layerOf(target, &targetGroup);
      if (targetRank < 0) continue;  // a system or generated header
      ++checked;
      // The top (front ends, harnesses, tests) may share helpers with each other.
      EXPECT_TRUE(targetGroup == group || targetRank < rank || (rank == 8 && targetRank == 8)) << where << ": " << group << " includes " << target;
      if (factories.count(target) && rank < 8) {
        EXPECT_TRUE(rel == "api/registry.cpp" || targetGroup == group) << where << ": only the registry knows the backends";
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// ------------------------------------------------------------------ tests

namespace {

std::string fileText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The library targets of the source tree, read from the folders' CMakeLists.txt:
// which targets each links, and whose a header is (the target that compiles the
// .cpp of the same name, else every target of the header's folder).
struct Libraries {
  std::map<std::string, std::set<std::string>> links;
  std::map<std::string, std::string> ownerOfSource;          // "api/knobs.cpp" -> "tapelab_knobs"
  std::map<std::string, std::set<std::string>> inFolder;     // "api/" -> {"tapelab_api", "tapelab_knobs"}

  std::set<std::string> owners(const std::string& header) const {
    const std::string source = header.substr(0, header.rfind('.')) + ".cpp";
    if (ownerOfSource.count(source)) return {ownerOfSource.at(source)};
    std::string folder;  // the longest library folder the header is in
    for (const auto& [dir, names] : inFolder)
      if (header.rfind(dir, 0) == 0 && dir.size() > folder.size()) folder = dir;
    return folder.empty() ? std::set<std::string>{} : inFolder.at(folder);
  }
};

Libraries readLibraries(const fs::path& root) {
  Libraries libs;
  const std::regex addLibrary(R"(add_library\((tapelab_\w+)([^)]*)\))");
  const std::regex linkLibraries(R"(target_link_libraries\((tapelab_\w+)([^)]*)\))");
  const std::regex target(R"(tapelab_\w+)");
  const std::regex source(R"([\w/]+\.cpp)");
  const std::sregex_iterator end;
  for (const char* dir : {"util", "tape", "planner", "engine", "reference", "gpu", "api"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (e.path().filename() != "CMakeLists.txt") continue;
      const std::string text = fileText(e.path());
      const std::string folder = fs::relative(e.path().parent_path(), root).generic_string() + "/";
      for (std::sregex_iterator m(text.begin(), text.end(), addLibrary); m != end; ++m) {
        libs.inFolder[folder].insert((*m)[1]);
        const std::string args = (*m)[2];
        for (std::sregex_iterator s(args.begin(), args.end(), source); s != end; ++s) libs.ownerOfSource[folder + s->str()] = (*m)[1];
      }
      for (std::sregex_iterator m(text.begin(), text.end(), linkLibraries); m != end; ++m) {
        const std::string args = (*m)[2];
        for (std::sregex_iterator t(args.begin(), args.end(), target); t != end; ++t) libs.links[(*m)[1]].insert(t->str());
      }
    }
  return libs;
}

// The arguments of every `call(...)` in `text`, quoted words kept whole.
std::vector<std::vector<std::string>> callArguments(const std::string& text, const std::string& call) {
  std::vector<std::vector<std::string>> calls;
  for (size_t at = text.find(call + "("); at != std::string::npos; at = text.find(call + "(", at + 1)) {
    std::vector<std::string> words(1);
    bool quoted = false;
    for (size_t i = at + call.size() + 1; i < text.size() && (quoted || text[i] != ')'); ++i) {
      const char c = text[i];
      if (c == '"') quoted = !quoted;
      else if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
        if (!words.back().empty()) words.emplace_back();
      } else words.back() += c;
    }
    if (words.back().empty()) words.pop_back();
    calls.push_back(words);
  }
  return calls;
}

// tests/<component>/'s files and the libraries their tapelab_tests() call links;
// a helper header in the folder gets what the folder's calls link together.
std::map<std::string, std::set<std::string>> testLibraries(const fs::path& root) {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& dir : fs::directory_iterator(root / "tests")) {
    if (!fs::exists(dir.path() / "CMakeLists.txt")) continue;
    const std::string folder = "tests/" + dir.path().filename().string() + "/";
    std::set<std::string> folderLibs;
    for (const auto& words : callArguments(fileText(dir.path() / "CMakeLists.txt"), "tapelab_tests")) {
      std::string keyword;
      std::set<std::string> libs;
      std::vector<std::string> sources;
      for (const std::string& w : words) {
        if (std::all_of(w.begin(), w.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)) || c == '_'; })) keyword = w;
        else if (keyword == "LIBRARIES") libs.insert(w);
        else if (keyword == "SOURCES") sources.push_back(w);
      }
      for (const std::string& s : sources) out[folder + s] = libs;
      folderLibs.insert(libs.begin(), libs.end());
    }
    for (const auto& e : fs::directory_iterator(dir.path()))
      if (e.path().extension() == ".h") out[folder + e.path().filename().string()] = folderLibs;
  }
  return out;
}

}  // namespace

// A test includes the headers of the libraries its folder's CMakeLists links
// (and what those link), tests/common/ and its own folder: nothing it would
// reach only through a library it does not name.
TEST(ApiLayers, TestsIncludeOnlyWhatTheirCMakeLinks) {
  const fs::path root = TAPELAB_SOURCE_DIR;
  const Libraries libs = readLibraries(root);
  ASSERT_EQ(libs.owners("api/knobs.h"), std::set<std::string>{"tapelab_knobs"});
  ASSERT_EQ(libs.owners("gpu/host/dispatch.h"), std::set<std::string>{"tapelab_gpu_host"});
  const std::regex include(R"(^\s*#\s*include\s+"([^"]+)\")");
  int checked = 0;
  for (const auto& [file, linked] : testLibraries(root)) {
    const std::string folder = file.substr(0, file.rfind('/') + 1);
    std::set<std::string> reach(linked.begin(), linked.end());
    for (std::vector<std::string> todo(linked.begin(), linked.end()); !todo.empty();) {
      const std::string t = todo.back();
      todo.pop_back();
      if (libs.links.count(t))
        for (const std::string& dep : libs.links.at(t))
          if (reach.insert(dep).second) todo.push_back(dep);
    }
    std::ifstream in(root / file);
    ASSERT_TRUE(in) << file << " is registered but missing";
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string target = m[1];
      const std::string where = file + ":" + std::to_string(n) + ": includes " + target;
      if (target.rfind("tests/", 0) == 0) {
        EXPECT_TRUE(target.rfind("tests/common/", 0) == 0 || target.rfind(folder, 0) == 0) << where << " (another component's test)";
        continue;
      }
      const std::set<std::string> owners = libs.owners(target);
      if (owners.empty()) continue;  // a system or generated header
      ++checked;
      EXPECT_TRUE(std::any_of(owners.begin(), owners.end(), [&](const std::string& o) { return reach.count(o) > 0; }))
          << where << ", of " << *owners.begin() << ", which its tapelab_tests() call does not link";
    }
  }
  EXPECT_GT(checked, 50);
}
