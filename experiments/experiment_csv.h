// What the experiment drivers' CSV rows share: a field quoted as RFC 4180 quotes it (the canonical
// configuration text, kernel notes, a tape's file name: commas and all) and doubles with 17 significant
// digits (enough to read the same bits back).
#pragma once
#include <cstdio>
#include <string>

namespace tapelab::experiments {

inline std::string csvQuoted(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

inline std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace tapelab::experiments
