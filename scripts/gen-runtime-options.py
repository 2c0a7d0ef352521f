#!/usr/bin/env python3
"""gen-runtime-options.py - writes docs/runtime-options.md from
runtime/base/rt_flags.inc, the one list of the runtime's options.

  scripts/gen-runtime-options.py            rewrite the document
  scripts/gen-runtime-options.py --check    exit 1 if it is out of date

test/schema/test_runtime_options_doc.py runs the check."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INC = os.path.join(ROOT, "runtime", "base", "rt_flags.inc")
DOC = os.path.join(ROOT, "docs", "runtime-options.md")

FLAG_RE = re.compile(r'^RT_FLAG\(\s*(BOOL|INT|STR)\s*,\s*(\w+)\s*,\s*([^,]+?)\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)',
                     re.M | re.S)
SECTION_RE = re.compile(r"^/\* ---- (.*?) -+ \*/", re.M)
RANGE_RE = re.compile(r"^RT_RANGE\(\s*(\w+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*\)", re.M)
INT_MAX = 2147483647


def read_flags(text):
    """[(section, kind, name, default, description)] in file order; an INT
    flag's kind says its range ("int, 1..256", "int, >= 0")."""
    marks = [(m.start(), m.group(1)) for m in SECTION_RE.finditer(text)]
    ranges = {m.group(1): (int(m.group(2)), int(m.group(3)))
              for m in RANGE_RE.finditer(text)}
    out = []
    for m in FLAG_RE.finditer(text):
        section = ""
        for pos, title in marks:
            if pos < m.start():
                section = title
        kind, name, default, desc = m.groups()
        if kind == "INT":
            lo, hi = ranges[name]  # every INT flag has its range
            if hi != INT_MAX:
                kind = f"INT, {lo}..{hi}"
            elif lo != -INT_MAX:
                kind = f"INT, >= {lo}"
        out.append((section, kind, name, default, desc.replace('\\"', '"')))
    return out


def shown_default(kind, default):
    if kind.startswith("INT"):
        return default
    if kind == "BOOL":
        return {"0": "false", "1": "true"}[default]
    if kind == "STR":
        return "(unset)" if default == "NULL" else default.strip('"')
    return default


def render(flags):
    lines = [
        "# Runtime options",
        "",
        "The runtime reads its options from `__memprof_default_options()` (a",
        "string the program may define), then from the `MEMPROF_OPTIONS`",
        "environment variable; a later value wins.  Options are `name=value`",
        "pairs separated by `:`, `,` or white space; booleans take `0`/`1`,",
        "`false`/`true` or `no`/`yes`; an integer option takes the values its",
        "type column gives.  An unknown option, a bad value or one out of range",
        "is warned about on stderr, with the value, and ignored.",
        "`MEMPROF_OPTIONS=help=1` prints this list with the values in force.",
        "",
        "The defaults never surprise a program: the runtime starts no thread and",
        "writes nothing but the profile (statistics and reports go to stderr).",
        "Each mechanism that only buys speed has an option of its own.",
        "",
        "This file is generated from `runtime/base/rt_flags.inc` by",
        "`scripts/gen-runtime-options.py`; edit that list, not this file.",
    ]
    section = None
    for sec, kind, name, default, desc in flags:
        if sec != section:
            section = sec
            lines += ["", f"## {sec[0].upper() + sec[1:]}", "",
                      "| option | type | default | meaning |", "|---|---|---|---|"]
        desc = desc.replace("<", "&lt;").replace(">", "&gt;")
        lines.append(f"| `{name}` | {kind.lower()} | {shown_default(kind, default)} | {desc} |")
    return "\n".join(lines) + "\n"


def main():
    with open(INC) as f:
        text = render(read_flags(f.read()))
    if "--check" in sys.argv[1:]:
        with open(DOC) as f:
            if f.read() != text:
                print(f"{DOC} is out of date: run scripts/gen-runtime-options.py",
                      file=sys.stderr)
                return 1
        return 0
    tmp = DOC + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, DOC)
    return 0


if __name__ == "__main__":
    sys.exit(main())
