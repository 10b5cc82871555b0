#!/usr/bin/env python3
"""Prints every scalar in a TensorBoard event file (or a run's folder of them)
as "tag step value" lines,
read with TensorBoard's own reader (needs `pip install tensorboard`).
chief/reporting/event_writer_test checks EventWriter's files against it.

Usage: read_events.py EVENT_FILE|RUN_FOLDER
"""
import sys

from tensorboard.backend.event_processing import event_accumulator


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: read_events.py EVENT_FILE")
    # size_guidance 0: keep every scalar, not a sample.
    accumulator = event_accumulator.EventAccumulator(
        sys.argv[1], size_guidance={event_accumulator.SCALARS: 0})
    accumulator.Reload()
    for tag in sorted(accumulator.Tags()[event_accumulator.SCALARS]):
        for event in accumulator.Scalars(tag):
            print(tag, event.step, repr(event.value))


if __name__ == "__main__":
    main()
