#!/usr/bin/env python3
"""check_function_size.py [--max N] DIR...: no C++ function in DIR longer than N body lines.

A function's body lines are the lines between its opening and its closing brace (comments and
blank lines included: a long comment is part of what a reader has to hold). The scan is simple
on purpose: comments, string and character literals and preprocessor lines are blanked, then
braces are matched. Namespaces, classes, structs, unions and extern "C" blocks are entered; a
brace whose header (the text since the last ';', '{' or '}' at that level) has a parameter list
opens a function definition, and is measured whole (lambdas and local classes inside count as
its lines); any other brace (an initializer, an enum) is skipped. Member functions defined in a
class are found the same way.

Exits 1 listing every function over the limit (path:line, name, body lines), longest first;
0 when none is. `--list` prints the N longest functions whatever their size (for a report).
"""
import argparse
import os
import re
import sys

EXTENSIONS = (".cpp", ".cc", ".h", ".hpp", ".inc")
IDENT_TAIL = re.compile(r"[A-Za-z0-9_>\]]$")


def blank(text):
    """Returns `text` with comments, literals and preprocessor lines replaced by spaces, newlines kept."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:i + 20])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + m.group(1) + '"'
            end = text.find(close, i + len(m.group(0)))
            end = n if end < 0 else end + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
            continue
        if c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
            continue
        if c == "\n":
            line_start = True
        out.append(c)
        i += 1
    return "".join(out)


def match_brace(text, i):
    """Returns the index of the brace closing the one at `i`."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def kind_of(header):
    """'scope' (enter), 'function' (measure), 'init' (a braced member initializer: part of the header) or 'skip'."""
    h = " ".join(header.split())
    h = re.sub(r"\[\[.*?\]\]", " ", h).strip()
    if re.match(r"^(inline\s+)?namespace\b", h) or re.fullmatch(r'extern\s*""', h):
        return "scope"
    before_paren = h.split("(", 1)[0]
    # template <class T> struct X, struct alignas(64) X: a type's body holds members.
    no_template = re.sub(r"^template\s*<.*?>\s*", "", h)
    if re.match(r"^(class|struct|union)\b", no_template) or re.search(r"\b(class|struct|union)\b", before_paren.split("<", 1)[0]):
        return "scope"
    if re.search(r"\benum\b", before_paren):
        return "skip"
    if "(" not in h:
        return "skip"
    if re.search(r"\)\s*(noexcept\s*)?:", h) and IDENT_TAIL.search(h) and not h.endswith(")"):
        # Foo(...) : a_{1}, b_{2} {: the braces of a member initializer, inside the header.
        if not re.search(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?$", h):
            return "init"
    # '=' before the parameter list: a variable's initializer (auto f = [](int) {...}).
    if re.search(r"(^|[^=!<>])=($|[^=])", before_paren) and not re.search(r"\boperator\b", before_paren):
        return "skip"
    return "function"


def name_of(header):
    h = " ".join(header.split())
    m = re.search(r"([~A-Za-z_][A-Za-z0-9_:~<>,\s]*?|operator\s*\S+?)\s*\(", h)
    if not m:
        return h[:60]
    name = m.group(1).split()[-1] if m.group(1).split() else m.group(1)
    return name


def functions(path):
    """Yields (line, name, body_lines) for each function defined in `path`."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    yield from scan(text, 0, len(text))


def scan(text, start, end):
    header_start = start
    i = start
    while i < end:
        c = text[i]
        if c in ";}":
            header_start = i + 1
        elif c == "{":
            header = text[header_start:i]
            kind = kind_of(header)
            close = match_brace(text, i)
            if kind == "scope":
                yield from scan(text, i + 1, close)
            elif kind == "function":
                open_line = text.count("\n", 0, i) + 1
                close_line = text.count("\n", 0, close) + 1
                first = header_start + len(header) - len(header.lstrip())
                yield (text.count("\n", 0, first) + 1, name_of(header), max(close_line - open_line - 1, 0))
            if kind == "init":
                i = close + 1
                continue
            header_start = close + 1
            i = close
        i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=80, help="the most body lines a function may have (80)")
    ap.add_argument("--list", type=int, default=0, metavar="N", help="print the N longest functions and exit 0")
    ap.add_argument("dirs", nargs="+", help="folders to scan (their .cpp and .h files, recursively)")
    args = ap.parse_args()
    found = []
    for d in args.dirs:
        if not os.path.isdir(d):
            print(f"check_function_size: {d} is not a folder", file=sys.stderr)
            return 2
        for root, _, files in os.walk(d):
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    path = os.path.join(root, name)
                    found += [(lines, path, line, fn) for line, fn, lines in functions(path)]
    found.sort(key=lambda t: (-t[0], t[1], t[2]))
    if args.list:
        for lines, path, line, fn in found[:args.list]:
            print(f"{lines:5d}  {path}:{line}  {fn}")
        return 0
    over = [t for t in found if t[0] > args.max]
    if not over:
        print(f"check_function_size: {len(found)} functions in {' '.join(args.dirs)}, none over {args.max} body lines")
        return 0
    print(f"check_function_size: {len(over)} function(s) over {args.max} body lines:")
    for lines, path, line, fn in over:
        print(f"  {path}:{line}: {fn}: {lines} lines")
    return 1


if __name__ == "__main__":
    sys.exit(main())
