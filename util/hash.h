// The one content hash: XXH3-128 (libxxhash), for every cache key and dump name.
#pragma once
#include <string>
#include <string_view>

namespace tapelab {

// XXH3-128 of `bytes` as 32 lowercase hex digits (high half first).
std::string contentHash(std::string_view bytes);

}  // namespace tapelab
