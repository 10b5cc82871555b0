#!/usr/bin/env python3
"""The documentation's own checks (Python 3 standard library only).

- Every relative link in README.md, BUILD.md and docs/**/*.md (Markdown
  links, images, reference definitions, HTML href/src) resolves to a file or
  folder in the repository; anchors (#...) are not checked.
- No link points outside the repository: no relative path that climbs out of
  it, no absolute path, no file: URL. Web links (http, https) are allowed.
- No user document names a path of this project's own machines: the
  engineers' "../shared" folder beside a checkout (use $MNIST_DIR or
  ~/mnist), anywhere, code blocks included.
- README.md has at most 300 lines.
- docs/FLAGS.md is what scripts/gen_flags_doc.sh writes from the programs'
  --help (needs the built programs: --bin_dir).

usage: docs_test.py --source_dir DIR [--bin_dir DIR]
Without --bin_dir the FLAGS.md check is skipped (and said so). Exits 1 on
any failure, naming each file, line and link.
"""

import argparse
import os
import re
import subprocess
import sys

README_MAX_LINES = 300

# [text](target "title") and ![alt](target); the target may be <...>.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
# <a href="..."> and <img src="...">
HTML_LINK = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']+)["']""")
CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?\1")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
WEB = ("http://", "https://", "mailto:")


def documents(root):
    """README.md, BUILD.md and every .md file under docs/, as paths from root."""
    found = [name for name in ("README.md", "BUILD.md") if os.path.isfile(os.path.join(root, name))]
    for folder, _, files in sorted(os.walk(os.path.join(root, "docs"))):
        for name in sorted(files):
            if name.endswith(".md"):
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return found


def links(text):
    """(line number, target) of every link outside code blocks and code spans."""
    fence = None
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if fence is None and marker:
            fence = marker.group(1)[0] * len(marker.group(1))
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        prose = CODE_SPAN.sub("", line)
        for pattern in (INLINE_LINK, REFERENCE_DEFINITION, HTML_LINK):
            for match in pattern.finditer(prose):
                target = match.group(1)
                if target.startswith("<") and target.endswith(">"):
                    target = target[1:-1]
                yield number, target


def check_link(root, document, target):
    """What is wrong with `target`, a link in `document`; None when nothing."""
    if target.startswith(WEB):
        return None
    if target.startswith("file:") or SCHEME.match(target):
        return "points outside the repository (a URL that is not a web page)"
    path = target.split("#", 1)[0].split("?", 1)[0]
    if not path:
        return None  # an anchor in the same document
    if path.startswith("/"):
        return "is an absolute path: link within the repository with a relative one"
    resolved = os.path.normpath(os.path.join(root, os.path.dirname(document), path))
    inside = os.path.commonpath([os.path.realpath(root), os.path.realpath(resolved)])
    if inside != os.path.realpath(root):
        return "points outside the repository"
    if not os.path.exists(resolved):
        return "resolves to nothing: " + os.path.relpath(resolved, root) + " does not exist"
    return None


def check_links(root):
    failures = []
    checked = 0
    for document in documents(root):
        with open(os.path.join(root, document), encoding="utf-8") as f:
            text = f.read()
        for number, target in links(text):
            checked += 1
            problem = check_link(root, document, target)
            if problem:
                failures.append(f"{document}:{number}: link '{target}' {problem}")
    return checked, failures


# Paths a user of the project does not have.
PRIVATE_PATHS = ("../shared",)


def check_private_paths(root):
    failures = []
    for document in documents(root):
        with open(os.path.join(root, document), encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                for path in PRIVATE_PATHS:
                    if path in line:
                        failures.append(f"{document}:{number}: names '{path}', a folder only "
                                        "this project's machines have: use $MNIST_DIR or ~/mnist")
    return failures


def check_readme(root):
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        count = len(f.read().splitlines())
    if count > README_MAX_LINES:
        return count, [f"README.md has {count} lines, more than {README_MAX_LINES}"]
    return count, []


def check_flags(root, bin_dir):
    script = os.path.join(root, "scripts", "gen_flags_doc.sh")
    run = subprocess.run(
        ["bash", script, "--check", "--bin_dir=" + bin_dir],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
    )
    if run.returncode == 0:
        return []
    return ["docs/FLAGS.md does not match the programs' --help "
            f"(scripts/gen_flags_doc.sh --check exited {run.returncode}):\n{run.stdout}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source_dir", required=True, help="the repository's root")
    parser.add_argument("--bin_dir", help="the built programs (build/bin)")
    args = parser.parse_args()
    root = os.path.realpath(args.source_dir)

    checked, failures = check_links(root)
    print(f"links: {checked} checked in {len(documents(root))} documents")
    failures += check_private_paths(root)
    lines, readme_failures = check_readme(root)
    failures += readme_failures
    print(f"README.md: {lines} lines (at most {README_MAX_LINES})")
    if args.bin_dir:
        failures += check_flags(root, args.bin_dir)
        print("docs/FLAGS.md: checked against " + args.bin_dir)
    else:
        print("docs/FLAGS.md: not checked (no --bin_dir)")
    for failure in failures:
        print("FAIL " + failure)
    print("docs_test: " + ("FAILED" if failures else "OK"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
