#!/usr/bin/env python3
"""Checks that no library function is longer than 80 lines (issue 48), so that
a function stays one thing a reader can hold in mind.

A function's length is its lines from the first line of its signature (its
template <...> line, when it has one) to its closing brace, both included:
free functions and methods defined in .cc files, member functions defined
inside their class in headers, constructors with their initializer lists,
and CUDA kernels alike. A lambda counts as part of the function around it,
as does a class local to the function; a lambda outside any function (one
stored in a variable at namespace scope) is no function here. Functions are
named as written, with the class around them for those defined inside
their class (Chief::Run, ChiefService::HandleWorker).

Library code is every .cc, .h and .cu file of the repository but tests/,
bench/, fuzz/, tools/, the *_test.cc files and those in a folder named
testing/. A function listed in EXEMPT ("path:Name", with its reason) may be
longer; the entry covers every function of that name in that file, and one
that covers no function over 80 lines any more is a breach too. Prints each
breach as FILE:LINE: what, and exits 1 when there is one. A file the parser
cannot follow (braces that do not balance, a closing brace out of the column
of its signature) is a breach as well, so a change of layout cannot hide a
long function.

usage: scripts/check_function_length.py [--list N | --self-test]
  --list N     prints every library function longer than N lines with its
               length, longest first, and exits 0
  --self-test  checks the parser against C++ snippets of known layout
"""
import bisect
import os
import re
import subprocess
import sys

MAX_LINES = 80
SKIP_FOLDERS = ("tests/", "bench/", "fuzz/", "tools/")
EXEMPT = {}


def is_library(path):
    return (not path.startswith(SKIP_FOLDERS) and not path.endswith("_test.cc") and
            "testing" not in path.split("/")[:-1])


# ---------------------------------------------------------------------------
# The parser.

class ParseError(Exception):
    def __init__(self, line, message):
        super().__init__(message)
        self.line = line


def strip_code(text):
    """Returns text with comments, string and character literals (raw strings
    too) and preprocessor lines blanked to spaces; the quotes of a string stay,
    and every newline stays where it was, so offsets and lines still match."""
    out = list(text)
    n = len(text)
    i = 0
    in_pp = False        # inside a preprocessor directive (to its unescaped end of line)
    line_blank = True    # only whitespace so far on this line

    def blank(start, end):
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            if not (in_pp and i > 0 and text[i - 1] == "\\"):
                in_pp = False
            line_blank = True
            i += 1
            continue
        if c == "#" and line_blank:
            in_pp = True
        if not c.isspace():
            line_blank = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
            continue
        if in_pp:  # no literal of a directive holds a comment start, nor a newline
            out[i] = " "
            i += 1
            continue
        if c == '"':
            prefix = re.search(r"(?<![\w])(?:u8|u|U|L)?R$", text[max(0, i - 3):i])
            if prefix:  # a raw string: R"delim( ... )delim"
                open_paren = text.find("(", i)
                delim = text[i + 1:open_paren]
                close = text.find(")" + delim + '"', open_paren)
                if open_paren < 0 or close < 0:
                    raise ParseError(text.count("\n", 0, i) + 1, "unterminated raw string")
                end = close + len(delim) + 1
                blank(i + 1, end)
            else:
                end = i + 1
                while end < n and text[end] != '"':
                    if text[end] == "\n":
                        raise ParseError(text.count("\n", 0, i) + 1, "unterminated string")
                    end += 2 if text[end] == "\\" else 1
                blank(i + 1, end)
            i = end + 1
            continue
        if c == "'":
            token = re.search(r"[\w.]*$", text[max(0, i - 64):i]).group(0)
            if token[:1].isdigit():  # a digit separator: 1'000'000
                i += 1
                continue
            end = i + 1
            while end < n and text[end] != "'":
                if text[end] == "\n":
                    raise ParseError(text.count("\n", 0, i) + 1, "unterminated character")
                end += 2 if text[end] == "\\" else 1
            blank(i + 1, end)
            i = end + 1
            continue
        i += 1
    return "".join(out)


TYPE_START = re.compile(
    r"^(?:template\s*<.*?>\s*)?(?:(?:typedef|export|inline)\s+)?"
    r"(class|struct|union|enum|namespace)\b(.*)$", re.S)
TYPE_NAME = re.compile(
    r"^\s*(?:(?:[A-Z_][A-Z0-9_]*(?:\s*\([^()]*\))?|\[\[.*?\]\]|alignas\s*\([^()]*\))\s+)*"
    r"([A-Za-z_]\w*)", re.S)
EXTERN_BLOCK = re.compile(r'^extern\s*"[^"]*"\s*$')
ACCESS = re.compile(r"^(?:public|private|protected)\s*:$")
TEMPLATE_ARGS = r"(?:<(?:[^<>(){};]|<[^<>(){};]*>)*>)"
NAME_BEFORE_PARAMS = re.compile(
    r"((?:[A-Za-z_]\w*\s*" + TEMPLATE_ARGS + r"?\s*::\s*)*"
    r"(?:~\s*)?(?:operator\s*(?:@+|\[\s*\]|new\b\s*(?:\[\s*\])?|delete\b\s*(?:\[\s*\])?|"
    r"[-+*/%^&|~!=<>,]+|\"\s*\"\s*\w+|[A-Za-z_][\w\s:*&]*?)|[A-Za-z_]\w*)\s*" +
    TEMPLATE_ARGS + r"?)\s*$", re.S)
NOT_NAMES = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof",
             "alignas", "static_assert", "noexcept", "throw", "new", "delete", "__attribute__",
             "requires", "do", "else", "try"}
QUALIFIERS = {"const", "volatile", "override", "final", "noexcept", "try", "throw", "mutable"}


def paren_groups(statement):
    """The (open, close) offsets of the outermost parenthesised groups."""
    groups, depth, opened = [], 0, 0
    for k, ch in enumerate(statement):
        if ch == "(":
            if depth == 0:
                opened = k
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                groups.append((opened, k))
    return groups


def skip_group(text, k):
    """Returns the offset just past the parenthesised group that opens at
    text[k], or k when none opens there."""
    if k >= len(text) or text[k] != "(":
        return k
    depth = 0
    for j in range(k, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j + 1
    return len(text)


def trailer_kind(trailer):
    """What may stand between a function's parameter list and its body: None
    when the text cannot, "init" when it holds a constructor's initializer
    list, "" otherwise (qualifiers, annotations, a trailing return type)."""
    k = 0
    while True:
        while k < len(trailer) and trailer[k].isspace():
            k += 1
        if k == len(trailer) or trailer.startswith("->", k):
            return ""
        if trailer[k] == ":" and not trailer.startswith("::", k):
            return "init"
        if trailer[k] == "&":
            k += 1
            continue
        if trailer.startswith("[[", k):
            end = trailer.find("]]", k)
            if end < 0:
                return None
            k = end + 2
            continue
        word = re.match(r"[A-Za-z_]\w*", trailer[k:])
        if not word:
            return None
        w = word.group(0)
        if w not in QUALIFIERS and not re.fullmatch(r"[A-Z][A-Z0-9_]*", w):
            return None
        k += len(w)
        while k < len(trailer) and trailer[k].isspace():
            k += 1
        k = skip_group(trailer, k)


def classify(statement):
    """Says what a "{" at namespace or class scope opens, given the statement
    text before it: ("scope", class name or "") for a namespace, class, struct,
    union or extern "C" block, ("function", name, has an initializer list),
    or ("data",) for an enum or a braced initializer of a variable."""
    s = statement.strip()
    m = TYPE_START.match(s)
    if m:
        if m.group(1) == "enum":
            return ("data",)
        if m.group(1) == "namespace":
            return ("scope", "")
        name = TYPE_NAME.match(m.group(2))
        return ("scope", name.group(1) if name else "")
    if EXTERN_BLOCK.match(s):
        return ("scope", "")
    s = re.sub(r"\boperator\s*\(\s*\)", lambda op: "operator" + "@" * (len(op.group(0)) - 8), s)
    for opened, closed in paren_groups(s):
        name = NAME_BEFORE_PARAMS.search(s[:opened])
        if not name or name.group(1) in NOT_NAMES:
            continue
        kind = trailer_kind(s[closed + 1:])
        if kind is not None:
            fn = re.sub(r"\s+", "", name.group(1)).replace("@@", "()")
            return ("function", fn, kind == "init")
    return ("data",)


def find_functions(text):
    """Returns (name, first line, last line) of each function defined in the
    C++ text, in order of their closing braces. Raises ParseError when the
    braces do not balance or a closing brace sits out of its column."""
    code = strip_code(text)
    line_starts = [0] + [k + 1 for k, ch in enumerate(code) if ch == "\n"]

    def line_of(offset):
        return bisect.bisect_right(line_starts, offset)

    def column_of(offset):
        return offset - line_starts[line_of(offset) - 1]

    functions = []
    # Each open brace: (kind, data). Kinds: "scope" (file, namespace, class:
    # data is the class name or ""), "function" (data: name, offsets of the
    # signature and of the body's brace), "data" (an initializer or enum at scope level: it ends the
    # statement), "nested" (a brace within a scope-level statement, in its
    # parentheses or initializer list: the statement goes on), "inner" (any
    # brace within a function body or an initializer).
    stack = [("scope", "")]
    start = None      # offset of the first character of the statement at scope level
    parens = 0        # parenthesis depth of that statement
    for k, ch in enumerate(code):
        kind = stack[-1][0]
        if kind != "scope" and kind != "nested":
            if ch == "{":
                stack.append(("inner", None))
            elif ch == "}":
                closed = stack.pop()
                if closed[0] == "function":
                    name, signature, body = closed[1]
                    first, last = line_of(signature), line_of(k)
                    if last != line_of(body) and column_of(k) != column_of(signature):
                        raise ParseError(first, f"the closing brace of {name} at line {last} "
                                         f"is not in the column of its signature")
                    functions.append((name, first, last))
                if closed[0] in ("function", "data"):
                    start, parens = None, 0
            continue
        if kind == "nested":
            if ch == "{":
                stack.append(("nested", None))
            elif ch == "}":
                stack.pop()
            continue
        if ch.isspace():
            continue
        if start is None:
            start = k
        if ch == "(":
            parens += 1
        elif ch == ")":
            parens -= 1
        elif ch == ";" and parens == 0:
            start = None
        elif ch == ":" and parens == 0 and ACCESS.match(code[start:k + 1].strip()):
            start = None
        elif ch == "}":
            if len(stack) == 1 or parens != 0:
                raise ParseError(line_of(k), "a closing brace that closes nothing")
            stack.pop()
            start, parens = None, 0
        elif ch == "{":
            statement = code[start:k]
            if parens > 0:
                stack.append(("nested", None))
                continue
            what = classify(statement)
            before = statement.rstrip()[-1:]
            if what[0] == "function" and what[2] and (before.isalnum() or before in "_>"):
                stack.append(("nested", None))  # member_{x} in an initializer list
            elif what[0] == "function":
                owner = "::".join(data for kind, data in stack if kind == "scope" and data)
                name = f"{owner}::{what[1]}" if owner and "::" not in what[1] else what[1]
                stack.append(("function", (name, start, k)))
            elif what[0] == "scope":
                stack.append(("scope", what[1]))
                start, parens = None, 0
            else:
                stack.append(("data", None))
    if len(stack) != 1 or parens != 0:
        raise ParseError(line_of(len(code)), "the braces or parentheses do not balance")
    return functions


# ---------------------------------------------------------------------------
# The self-test.

SELF_TEST = [
    ("a three-line function", """\
namespace pst {
int Add(int a, int b) {
  return a + b;
}
}  // namespace pst
""", [("Add", 2, 4)]),
    ("a constructor with an initializer list", """\
Chief::Chief(const Options& options, Clock* clock)
    : options_(options),
      clock_{clock},
      ring_(Ring<int>{4}) {
  Start();
}
""", [("Chief::Chief", 1, 6)]),
    ("a class with inline methods", """\
namespace pst {
template <typename T>
class CAPABILITY("mutex") Box final : public Base {
 public:
  explicit Box(T value) : value_(value) {}
  T Get() const REQUIRES(mu_) {
    return value_;
  }
  bool operator()(int x) const {
    return x > 0;
  }

 private:
  struct Inner {
    int Twice(int x) { return 2 * x; }
  };
  std::function<void()> callback_{};
  T value_{};
};
}  // namespace pst
""", [("Box::Box", 5, 5), ("Box::Get", 6, 8), ("Box::operator()", 9, 11),
      ("Box::Inner::Twice", 15, 15)]),
    ("a lambda inside a function", """\
void Run(std::vector<int>* v) {
  std::sort(v->begin(), v->end(), [](int a, int b) {
    return a < b;
  });
  auto f = [&] { return v->size(); };
}
""", [("Run", 1, 6)]),
    ("braces in strings, characters and comments", """\
std::string Json() {  // {
  /* } } */
  std::string s = "{\\"a\\": }";
  char c = '{';
  int n = 1'000;
  return R"x({"b": })x" + s;
}
""", [("Json", 1, 7)]),
    ("namespaces, enums, tables and a kernel", """\
namespace pst {
namespace {
enum class Kind : int { kA, kB };
const int kTable[] = {1, 2, 3};
extern "C" {
int c_function(void) { return 0; }
}
#define BLOCK(x) { x; }
__global__ void Scale(float* x, int n) {
  int i = blockIdx.x;
  if (i < n) { x[i] *= 2; }
}
}  // namespace
template <typename T>
auto Make(T t) -> std::unique_ptr<T> {
  return std::make_unique<T>(t);
}
}  // namespace pst
""", [("c_function", 6, 6), ("Scale", 9, 12), ("Make", 14, 17)]),
]


def self_test():
    failures = 0
    for title, snippet, expected in SELF_TEST:
        found = find_functions(snippet)
        if found != expected:
            failures += 1
            print(f"self-test: {title}: found {found}, expected {expected}", file=sys.stderr)
    try:
        find_functions("void F() {\n  if (x) {\n}\n")
        failures += 1
        print("self-test: an unbalanced brace went unnoticed", file=sys.stderr)
    except ParseError:
        pass
    print(f"check_function_length.py: self-test: {len(SELF_TEST) + 1 - failures} of "
          f"{len(SELF_TEST) + 1} cases pass", file=sys.stderr if failures else sys.stdout)
    return 1 if failures else 0


# ---------------------------------------------------------------------------

def main():
    args = sys.argv[1:]
    if any(arg in ("-h", "--help") for arg in args):
        print(__doc__.strip())
        return 0
    if args == ["--self-test"]:
        return self_test()
    list_over = None
    if args:
        if len(args) != 2 or args[0] != "--list" or not args[1].isdigit():
            print("check_function_length.py: expected --list N or --self-test (see --help)",
                  file=sys.stderr)
            return 2
        list_over = int(args[1])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = [path for path in subprocess.check_output(["git", "ls-files", "*.cc", "*.h", "*.cu"],
                                                      cwd=root, text=True).split()
             if is_library(path)]
    breaches, functions = [], []  # functions: (length, path, line, name)
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        try:
            functions += [(last - first + 1, path, first, name)
                          for name, first, last in find_functions(text)]
        except ParseError as e:
            breaches.append(f"{path}:{e.line}: cannot measure the functions: {e}")
    if list_over is not None:
        for length, path, line, name in sorted(functions, key=lambda f: (-f[0], f[1], f[2])):
            if length > list_over:
                print(f"{path}:{line}: {name}: {length} lines")
        return 0
    used = set()
    long_ones = [f for f in functions if f[0] > MAX_LINES]
    exempt = 0
    for length, path, line, name in long_ones:
        key = f"{path}:{name}"
        if key in EXEMPT:
            used.add(key)
            exempt += 1
        else:
            breaches.append(f"{path}:{line}: {name} is {length} lines, over {MAX_LINES}: split it "
                            f"or list it in EXEMPT with the reason it is one piece")
    for key, reason in EXEMPT.items():
        if key not in used:
            breaches.append(f"{key}: exempt ({reason}) but no function of that name is over "
                            f"{MAX_LINES} lines: drop it")
    for breach in breaches:
        print(breach)
    print(f"check_function_length.py: {len(breaches)} breaches; {len(long_ones)} of "
          f"{len(functions)} library functions in {len(files)} files are over {MAX_LINES} lines, "
          f"{exempt} of them exempt", file=sys.stderr if breaches else sys.stdout)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
