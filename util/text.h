// Text a one-line message echoes from a user's input (a flag's value, a file's bytes, a variable):
// written so that it cannot break the line, move the terminal's cursor or be cut mid-character.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace tapelab {

// `text` with every control character written out: \n, \r, \t, \e (ESC), else \xHH (DEL too).
// Other bytes, UTF-8 included, as they are. Every error line the CLI, the drivers and the Python
// module print goes through it (cli/options.h runCommandLine, python/src/module.cpp); Python's
// twin is experiments/drivers/careful.py one_line.
std::string escapeControls(std::string_view text);

// `text` cut to at most maxBytes on a UTF-8 character boundary, "..." added where it was cut.
std::string shortened(std::string_view text, size_t maxBytes);

}  // namespace tapelab
