#!/usr/bin/env python3
"""No function over LIMIT lines (120) in the C++ of api/, cli/, engine/ and experiments/ (its drivers' mains
included): a long function hides its steps, which then cannot be tested or read alone (issue 51).

A function is a brace block opened outside any other function whose header (the text since the last ';', '{'
or '}') has a parenthesis and is not a namespace, class, struct, union or enum; its length counts the lines
from its opening brace to its closing one. Comments, string and character literals (raw ones too) and
preprocessor lines are blanked first. One line per function over the limit, FILE:LINE: NAME is N lines, and
exit 1 (CTest: function_length). --list prints every function's length instead, longest first."""
import pathlib
import re
import sys

LIMIT = 120
FOLDERS = ("api", "cli", "engine", "experiments")
# Functions still over the limit, each with the most lines it may keep until it is split, and why it waits.
WAITING = {}
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b")
CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else|try|return)\b")


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" or (line_start and c in " \t" and text[i:].lstrip(" \t").startswith("#")):
            j = i
            while j < n and text[j] != "\n":  # a directive, with its continuations
                j = text.index("\n", j) if "\n" in text[j:] else n
                if text[j - 1] == "\\":
                    j += 1
                    continue
                break
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == "R" and text.startswith('"', i + 1) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                line_start = False
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(c)
            line_start = c == "\n" or (line_start and c in " \t")
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        line_start = text[i:j].endswith("\n")
        i = j
    return "".join(out)


def functions(path):
    """(line, name, lines) of each function of a C++ file."""
    text = blank(path.read_text(encoding="utf-8", errors="replace"))
    found, stack, header_start, line = [], [], 0, 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            if any(kind != "scope" for kind, _, _ in stack):
                stack.append(("inner", line, ""))
                continue
            header = " ".join(text[header_start:i].split())
            header = re.sub(r"template\s*<[^{]*?>\s*", "", header)
            if SCOPE.search(header.split("(")[0]) or header.startswith("extern"):
                stack.append(("scope", line, ""))
            elif "(" in header and not CONTROL.match(header):
                name = re.findall(r"([~\w:]+(?:\s*operator\s*\S+)?)\s*\(", header)
                stack.append(("function", line, name[0] if name else header[:40]))
            else:
                stack.append(("data", line, ""))
            header_start = i + 1
        elif c == "}":
            if stack:
                kind, opened, name = stack.pop()
                if kind == "function":
                    found.append((opened, name, line - opened + 1))
            header_start = i + 1
        elif c == ";" and not any(kind != "scope" for kind, _, _ in stack):
            header_start = i + 1
    return found


SAMPLE = r'''namespace a {
struct S {
  int member(int x) const {
    auto f = [](int y) { return y; };
    return f(x);
  }
};
const char* text = "{ not a brace";  // nor } this
#define BRACE {
std::string raw = R"x({)x";
int outer(int n) {
  if (n) {
    return 1'000;
  }
  /* { */
  return 0;
}
}  // namespace a
'''


def self_test():
    """The counter on a sample whose functions are known: a failure here is the script's own bug."""
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write(SAMPLE)
    got = [(name, n) for _, name, n in functions(pathlib.Path(f.name))]
    pathlib.Path(f.name).unlink()
    want = [("member", 4), ("outer", 7)]
    if got != want:
        print(f"check-function-length.py: its counter read {got} from its sample, expected {want}")
        return False
    return True


def main():
    if not self_test():
        return 1
    args = [a for a in sys.argv[1:] if a != "--list"]
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parent.parent)
    rows = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".cpp", ".h", ".hpp", ".cc") and path.is_file():
                rows += [(n, path.relative_to(root), at, name) for at, name, n in functions(path)]
    if "--list" in sys.argv:
        for n, path, at, name in sorted(rows, reverse=True):
            print(f"{n:5d} {path}:{at}: {name}")
        return 0
    bad = 0
    for n, path, at, name in rows:
        most, why = WAITING.get((path.as_posix(), name), (LIMIT, ""))
        if n > most:
            bad += 1
            print(f"{path}:{at}: {name} is {n} lines (at most {most}: split it into named steps)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
