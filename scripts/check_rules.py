#!/usr/bin/env python3
"""Checks rules of the code that once made tend to regrow (issue 48):

  one clock     library code reads time through common/clock.h (MonotonicClock,
                SteadyClock()), never std::chrono::steady_clock itself, so that
                tests can hand any class a FakeClock;
  one wire      only transport/ includes a ZeroMQ header;
  reply types   a reply's type comes from ReplyTypeOf (transport/message_types.h),
                the one table of which reply answers which request: no
                MessageType::...Reply is written by hand but the generic
                ErrorReply.

tests/ and the files listed in EXEMPT (each with its reason) are not checked;
an exemption no rule needs any more is a breach too. Prints each breach as
FILE:LINE: the line, and exits 1 when there is one.

usage: scripts/check_rules.py
"""
import os
import re
import subprocess
import sys

RULES = [
    ("one clock", re.compile(r"std::chrono::steady_clock"),
     lambda path: not path.startswith("common/clock.")),
    ("one wire", re.compile(r'#\s*include\s*[<"]zmq(\.hpp|\.h|_addon\.hpp)[>"]'),
     lambda path: not path.startswith("transport/")),
    ("reply types", re.compile(r"MessageType::(?!ErrorReply\b)\w+Reply\b"),
     lambda path: not path.startswith("transport/message_types.")),
]
EXEMPT = {
    # Benchmarks that measure bare ZeroMQ as the baseline of pstrain's transport.
    "bench/bench_soak.cc": "soaks a ps with raw ZeroMQ peers",
    "bench/in_process_ps.h": "the baseline's bare sockets",
    "bench/transport/bare_zmq.h": "the bare-ZeroMQ baseline",
    "bench/transport/pull_push_rounds.cc": "the bare-ZeroMQ baseline",
    "bench/transport/trainers.h": "the bare-ZeroMQ baseline",
    "bench/bench_shm.cc": "times the shared-memory rings against a wall clock of its own",
    "bench/bench_embedding_memory.cc": "names steady_clock in its description",
    # The fuzzer feeds the ps raw frames, as a stranger on its port would.
    "fuzz/decode_fuzzer.cc": "sends raw ZeroMQ frames",
}


def main():
    if any(arg in ("-h", "--help") for arg in sys.argv[1:]):
        print(__doc__.strip())
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = subprocess.check_output(["git", "ls-files", "*.cc", "*.h", "*.cu"], cwd=root,
                                    text=True).split()
    breaches = []
    for path in files:
        if path.startswith("tests/") or path.endswith("_test.cc"):
            continue
        with open(os.path.join(root, path), encoding="utf-8") as f:
            lines = f.readlines()
        found = [f"{path}:{number}: {name}: {line.strip()}" for name, pattern, applies in RULES
                 if applies(path) for number, line in enumerate(lines, 1) if pattern.search(line)]
        if path not in EXEMPT:
            breaches += found
        elif not found:
            breaches.append(f"{path}: exempt ({EXEMPT[path]}) but breaks no rule: drop it")
    for breach in breaches:
        print(breach)
    print(f"check_rules.py: {len(breaches)} breaches of {len(RULES)} rules in {len(files)} files",
          file=sys.stderr if breaches else sys.stdout)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
