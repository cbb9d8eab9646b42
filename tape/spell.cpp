#include "tape/spell.h"

namespace tapelab {

std::string spell(std::string_view expr, const std::function<std::string(std::string_view)>& rename) {
  auto isIdent = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  std::string out;
  for (size_t i = 0; i < expr.size();) {
    if (isIdent(expr[i])) {
      size_t j = i;
      while (j < expr.size() && isIdent(expr[j])) ++j;
      out += rename(expr.substr(i, j - i));
      i = j;
    } else {
      out += expr[i++];
    }
  }
  return out;
}

}  // namespace tapelab
