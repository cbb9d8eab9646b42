#include "tape/op.h"

namespace tapelab {

std::optional<Op> opFromName(std::string_view word) {
  for (const OpInfo& o : kOps)
    if (o.name == word) return o.op;
  return std::nullopt;
}

}  // namespace tapelab
