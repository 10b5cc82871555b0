#!/usr/bin/env python3
"""Checks rules of the code that once made tend to regrow (issue 48):

  one clock     library code reads time through common/clock.h (MonotonicClock,
                SteadyClock()), never std::chrono::steady_clock itself, so that
                tests can hand any class a FakeClock;
  one wire      only transport/ includes a ZeroMQ header, or transport/frames.h
                (messages as ZeroMQ frames), and not in the headers every
                service includes (PLAIN_MESSAGE_HEADERS);
  reply types   a reply's type comes from ReplyTypeOf (transport/message_types.h),
                the one table of which reply answers which request: no
                MessageType::...Reply is written by hand but the generic
                ErrorReply;
  model folders model/ keeps at its top only the Model interface and what every
                model shares (MODEL_TOP); layers, click models, the zoo
                and models over several devices go in model/layers/,
                model/ctr/, model/zoo/ and model/parallel/.

tests/ and the files listed in EXEMPT (each with its reason) are not checked;
an exemption no rule needs any more is a breach too. Prints each breach as
FILE:LINE: the line, and exits 1 when there is one.

usage: scripts/check_rules.py
"""
import os
import re
import subprocess
import sys

# What the code above the transport includes to read and write messages: no
# ZeroMQ in them either.
PLAIN_MESSAGE_HEADERS = {"transport/message.h", "transport/message_types.h",
                         "transport/request_context.h"}
RULES = [
    ("one clock", re.compile(r"std::chrono::steady_clock"),
     lambda path: not path.startswith("common/clock.")),
    ("one wire", re.compile(r'#\s*include\s*(<zmq(\.hpp|\.h|_addon\.hpp)>|"transport/frames\.h")'),
     lambda path: not path.startswith("transport/") or path in PLAIN_MESSAGE_HEADERS),
    ("reply types", re.compile(r"MessageType::(?!ErrorReply\b)\w+Reply\b"),
     lambda path: not path.startswith("transport/message_types.")),
]
MODEL_TOP = {"CMakeLists.txt", "model.h", "sequential_model.h", "sequential_model.cc",
             "validation.h", "validation.cc", "ensure_buffer.h", "ensure_buffer.cc",
             "device_io.h", "device_io.cc", "model_test.cc", "model_device_test.cc",
             "fake_device_kernels.h", "fake_device_kernels.cc", "model_test_util.h",
             "model_test_util.cc"}
MODEL_KINDS = {"layers", "ctr", "zoo", "parallel"}
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
    "fuzz/make_corpus.cc": "writes the seed corpus as encoded frames",
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
    breaches += misplaced_model_files(root)
    for breach in breaches:
        print(breach)
    print(f"check_rules.py: {len(breaches)} breaches of {len(RULES) + 1} rules in {len(files)} files",
          file=sys.stderr if breaches else sys.stdout)
    return 1 if breaches else 0


def misplaced_model_files(root):
    """The rule 'model folders': files at model/'s top that are not MODEL_TOP,
    and subfolders that are not a kind of MODEL_KINDS."""
    paths = subprocess.check_output(["git", "ls-files", "model"], cwd=root, text=True).split()
    breaches = []
    for path in paths:
        parts = path.split("/")
        if len(parts) == 2 and parts[1] not in MODEL_TOP:
            kinds = ", ".join(f"model/{kind}/" for kind in sorted(MODEL_KINDS))
            breaches.append(f"{path}: model folders: put it in one of {kinds} by kind, or list "
                            "it in MODEL_TOP")
        elif len(parts) > 2 and parts[1] not in MODEL_KINDS:
            breaches.append(f"{path}: model folders: model/{parts[1]}/ is not one of the kinds "
                            "(MODEL_KINDS)")
    return breaches


if __name__ == "__main__":
    sys.exit(main())
