#!/usr/bin/env python3
"""The C++ listings of the documentation, as programs that are compiled and run.

Every ```cpp fence of a page (README.md, README.zh-CN.md, docs/**/*.md) is
preceded by a marker that says how it is compiled (docs/listings/README.md):

  <!-- listing: program -->             a whole program: built and run
  <!-- listing: top NAME -->            namespace-scope code of the page's program NAME
  <!-- listing: body NAME -->           statements of NAME's main(), in page order, one scope
  <!-- listing: block NAME -->          statements of NAME's main(), in a scope of their own
  <!-- listing: rejected NAME REGEX --> must not compile: in NAME's main() after the
                                        bodies and blocks above it, in a scope of its own;
                                        the first error must be a dimtensor diagnosis, and
                                        REGEX (a CMake regex) must be found in the diagnostics
  <!-- listing: rejected-by-compiler NAME REGEX -->
                                        the same, for code the compiler itself rejects before
                                        any dimtensor diagnosis (C++ rules, not dimtensor's)

NAME's program includes the harness docs/listings/NAME.hpp first when there is
one: its text before a line `// @main` is at namespace scope, the rest starts
main().  A fence without a marker, a marker without a fence, or a program with
neither a harness nor a top piece is an error: the page's author hears of it at
configure time.

  doc_listings.py generate --source-dir S --out DIR --manifest FILE PAGE...
      writes one .cpp per program and per rejected listing under DIR (rewritten
      only when changed) and FILE, the CMake calls that build and test them
      (cmake/DocListings.cmake);
  doc_listings.py check --source-dir S --build-dir B PAGE...
      compiles, links and runs the programs and checks the rejected listings
      with the compiler directly, against B's libdimtensor.a: for a writer of
      pages, without CMake.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^\s*<!--\s*listing:\s*(?P<kind>program|top|body|block|rejected-by-compiler|rejected)"
                    r"(?:\s+(?P<name>[a-z0-9_]+))?(?:\s+(?P<regex>.*?))?\s*-->\s*$")
ANY_MARKER = re.compile(r"^\s*<!--\s*listing:")
FENCE_OPEN = re.compile(r"^(?P<indent>\s*)```+\s*(?P<lang>[A-Za-z0-9_+-]*)")


class PageError(Exception):
    pass


class Listing:
    def __init__(self, page, line, kind, name, regex, text):
        self.page, self.line, self.kind, self.name, self.regex, self.text = page, line, kind, name, regex, text


def read_listings(path, rel):
    """The page's C++ listings with their markers, in page order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    listings = []
    pending = None  # (line number, match) of a marker not yet followed by its fence
    i = 0
    while i < len(lines):
        line = lines[i]
        if ANY_MARKER.match(line):
            m = MARKER.match(line)
            if not m:
                raise PageError(f"{rel}:{i + 1}: a listing marker must read `<!-- listing: KIND [NAME] [REGEX] -->`, "
                                f"KIND one of program, top, body, block, rejected")
            if pending:
                raise PageError(f"{rel}:{pending[0]}: a listing marker without its ```cpp fence")
            pending = (i + 1, m)
            i += 1
            continue
        fence = FENCE_OPEN.match(line)
        if fence:
            lang = fence.group("lang").lower()
            indent = fence.group("indent")
            start = i + 1
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
                i += 1
            i += 1  # the closing fence
            if lang in ("cpp", "c++", "cxx"):
                if not pending:
                    raise PageError(f"{rel}:{start}: a ```cpp listing without a marker: put "
                                    f"`<!-- listing: KIND [NAME] -->` on the line before it (docs/listings/README.md)")
                m = pending[1]
                kind, name, regex = m.group("kind"), m.group("name"), m.group("regex")
                if kind != "program" and not name:
                    raise PageError(f"{rel}:{pending[0]}: `{kind}` needs the name of the page's program")
                if kind == "program" and (name or regex):
                    raise PageError(f"{rel}:{pending[0]}: `program` takes no name: the listing is the whole program")
                rejected = kind.startswith("rejected")
                if rejected and not regex:
                    raise PageError(f"{rel}:{pending[0]}: `rejected {name}` needs the regex of the diagnostic")
                if not rejected and regex:
                    raise PageError(f"{rel}:{pending[0]}: `{kind} {name}` takes nothing after the name")
                if rejected and ";" in regex:
                    raise PageError(f"{rel}:{pending[0]}: the regex must not hold `;` (CMake lists): write `.`")
                listings.append(Listing(rel, start + 1, kind, name, regex, "\n".join(body)))
                pending = None
            elif pending:
                raise PageError(f"{rel}:{pending[0]}: a listing marker before a ```{lang} fence: markers are for C++")
            continue
        if pending and line.strip():
            raise PageError(f"{rel}:{pending[0]}: a listing marker must stand right before its ```cpp fence")
        i += 1
    if pending:
        raise PageError(f"{rel}:{pending[0]}: a listing marker without its ```cpp fence")
    return listings


def slug(rel):
    return re.sub(r"[^A-Za-z0-9]+", "_", re.sub(r"\.md$", "", rel)).strip("_")


def harness(source_dir, name):
    """(namespace-scope text, main() text, path) of docs/listings/NAME.hpp, or None."""
    path = os.path.join(source_dir, "docs", "listings", name + ".hpp")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    top, sep, main = text.partition("\n// @main\n")
    return top, (main if sep else ""), path


def source_line(path, line):
    return f'#line {line} "{path}"\n'


class Unit:
    """One generated translation unit: a program (run) or a rejected listing (must not compile)."""

    def __init__(self, kind, name, page, text, regex=None, line=None):
        self.kind, self.name, self.page, self.text, self.regex, self.line = kind, name, page, text, regex, line
        self.first_other = False


def units_of_page(source_dir, rel, listings):
    page_path = os.path.join(source_dir, rel)
    page_slug = slug(rel)
    units = []
    # Whole programs.
    for listing in listings:
        if listing.kind == "program":
            text = (f"// Generated by scripts/doc_listings.py from {rel}:{listing.line}. Edit the page, not this file.\n"
                    + source_line(page_path, listing.line) + listing.text + "\n")
            units.append(Unit("program", f"{page_slug}_{listing.line}", rel, text))
    # Named programs, in order of first appearance.
    names = []
    for listing in listings:
        if listing.kind != "program" and listing.name not in names:
            names.append(listing.name)
    for name in names:
        pieces = [x for x in listings if x.name == name]
        h = harness(source_dir, name)
        if h is None and not any(x.kind == "top" for x in pieces):
            raise PageError(f"{rel}:{pieces[0].line}: program `{name}` has no top piece and there is no "
                            f"docs/listings/{name}.hpp: nothing includes dimtensor")

        def assemble(upto=None, rejected=None):
            head = [f"// Generated by scripts/doc_listings.py from {rel}: program `{name}`. "
                    f"Edit the page, not this file.\n"]
            if rejected is not None:
                head.append(f"// EXPECT: {rejected.regex}\n")
                if rejected.kind == "rejected-by-compiler":
                    head.append("// EXPECT-FIRST-OTHER: the compiler rejects it by C++'s own rules\n")
            top, main = [], []
            if h is not None:
                top.append(source_line(h[2], 1) + h[0] + "\n")
                if h[1].strip():
                    main.append(source_line(h[2], h[0].count("\n") + 3) + h[1] + "\n")
            for x in pieces:
                if upto is not None and x is upto:
                    break
                if x.kind == "top":
                    top.append(source_line(page_path, x.line) + x.text + "\n")
                elif x.kind == "body":
                    main.append(source_line(page_path, x.line) + x.text + "\n")
                elif x.kind == "block":
                    main.append("{\n" + source_line(page_path, x.line) + x.text + "\n}\n")
            if rejected is not None:
                main.append("#ifdef DIMTENSOR_COMPILE_FAIL\n{\n" + source_line(page_path, rejected.line)
                            + rejected.text + "\n}\n#endif\n")
            return "".join(head) + "".join(top) + "\nint main() {\n" + "".join(main) + "return 0;\n}\n"

        units.append(Unit("program", f"{page_slug}_{name}", rel, assemble()))
        for x in pieces:
            if x.kind.startswith("rejected"):
                units.append(Unit("rejected", f"{page_slug}_{name}_{x.line}", rel, assemble(upto=x, rejected=x),
                                  regex=x.regex, line=x.line))
                units[-1].first_other = x.kind == "rejected-by-compiler"
    return units


def collect(source_dir, pages):
    units = []
    count = {"program": 0, "top": 0, "body": 0, "block": 0, "rejected": 0, "rejected-by-compiler": 0}
    for rel in pages:
        listings = read_listings(os.path.join(source_dir, rel), rel)
        for x in listings:
            count[x.kind] += 1
        units += units_of_page(source_dir, rel, listings)
    return units, count


def write_if_changed(path, text):
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def cmake_quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def generate(args):
    units, count = collect(args.source_dir, args.pages)
    os.makedirs(args.out, exist_ok=True)
    manifest = ["# Generated by scripts/doc_listings.py: the documentation's listings (cmake/DocListings.cmake).\n"]
    manifest.append(f"set(dimtensor_doc_listing_count {sum(count.values())})\n")
    for kind, n in count.items():
        manifest.append(f"set(dimtensor_doc_listing_count_{kind.replace('-', '_')} {n})\n")
    for u in units:
        path = os.path.join(args.out, u.name + ".cpp")
        write_if_changed(path, u.text)
        if u.kind == "program":
            manifest.append(f"dimtensor_doc_program({u.name} {cmake_quote(path)} {cmake_quote(u.page)})\n")
        else:
            manifest.append(f"dimtensor_doc_rejected({u.name} {cmake_quote(path)} {cmake_quote(u.page)})\n")
    write_if_changed(args.manifest, "".join(manifest))
    print(f"doc_listings: {sum(count.values())} listings in {len(args.pages)} pages "
          + ", ".join(f"{n} {k}" for k, n in count.items())
          + f"; {sum(u.kind == 'program' for u in units)} programs, {sum(u.kind == 'rejected' for u in units)} rejected")


def check(args):
    units, count = collect(args.source_dir, args.pages)
    include = os.path.join(args.source_dir, "include")
    lib = os.path.join(args.build_dir, "libdimtensor.a")
    viz = os.path.join(args.build_dir, "libdimtensor_viz.a")
    flags = ["-std=c++20", "-O0", "-fopenmp", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-Wno-unused-variable",
             "-Wno-unused-but-set-variable", "-I", include, "-DDIMTENSOR_HAS_CBLAS=1"]
    if os.path.exists(viz):
        flags.append("-DDIMTENSOR_HAS_VIZ=1")
    libs = [lib, "-lopenblas"]
    if os.path.exists(viz):
        libs = [viz] + libs + ["-lcairo"]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for u in units:
            if args.only and not re.search(args.only, u.name):
                continue
            src = os.path.join(tmp, u.name + ".cpp")
            with open(src, "w", encoding="utf-8") as f:
                f.write(u.text)
            if u.kind == "program":
                exe = os.path.join(tmp, u.name)
                r = subprocess.run(["g++"] + flags + [src, "-o", exe] + libs, capture_output=True, text=True)
                if r.returncode != 0:
                    failures += 1
                    print(f"FAIL (compile) {u.name}\n{r.stderr[-6000:]}")
                    continue
                r = subprocess.run([exe], capture_output=True, text=True, cwd=tmp)
                if r.returncode != 0:
                    failures += 1
                    print(f"FAIL (run, exit {r.returncode}) {u.name}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
                    continue
                print(f"ok   {u.name}")
            else:
                env = dict(os.environ, LC_ALL="C")
                r = subprocess.run(["g++"] + flags + ["-fsyntax-only", "-fno-diagnostics-show-caret",
                                                      "-DDIMTENSOR_COMPILE_FAIL", src],
                                   capture_output=True, text=True, env=env)
                # The CMake test matches CMake regexes; Python's re agrees on the subset they allow.
                if r.returncode == 0:
                    failures += 1
                    print(f"FAIL (compiled, but is shown rejected) {u.name}")
                elif not u.first_other and not re.search(r"error: static[_ ]assert[^\n]*(failed: |\")dimtensor",
                                                         (re.search(r"[^\n]*error: [^\n]*", r.stderr) or [""])[0]):
                    failures += 1
                    print(f"FAIL (rejected, but the first error is not a dimtensor diagnosis: use "
                          f"rejected-by-compiler if that is meant) {u.name}\n{r.stderr[:6000]}")
                elif not re.search(u.regex, r.stderr, re.S):
                    failures += 1
                    print(f"FAIL (rejected, but not with /{u.regex}/) {u.name}\n{r.stderr[:6000]}")
                else:
                    print(f"ok   {u.name} (rejected)")
    print(f"{failures} failed")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--source-dir", required=True)
    g.add_argument("--out", required=True)
    g.add_argument("--manifest", required=True)
    g.add_argument("pages", nargs="+")
    c = sub.add_parser("check")
    c.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    c.add_argument("--build-dir", default="build/ci")
    c.add_argument("--only", help="regex: only the programs and rejected listings whose name matches")
    c.add_argument("pages", nargs="+")
    args = parser.parse_args()
    try:
        if args.command == "generate":
            generate(args)
            return 0
        return check(args)
    except PageError as e:
        print(f"doc_listings: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
