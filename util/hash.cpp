#include "util/hash.h"

#include <cstdio>

// Inlined, so a binary built here needs no libxxhash.so where it runs (the lent H200).
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tapelab {

std::string contentHash(std::string_view bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

}  // namespace tapelab
