#!/usr/bin/env python3
"""Plots and sums up a scripts/stream_demo.sh run: plot_stream.py OUT PROBLEM_JSON EXPORT_SECS.

Reads OUT/run/metrics.jsonl (a line per file trained: progressive_auc,
window_auc), OUT/lag.tsv (seconds, train_step, served_step) and the chief's
report in OUT/chief.log; writes OUT/progressive.png and OUT/summary.txt."""
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

out, problem_path, export_secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
problem = json.load(open(problem_path))
files = [json.loads(line) for line in open(out + "/run/metrics.jsonl") if '"file"' in line]

# The served model's lag: how long ago training was at the served step.
samples = []
for line in open(out + "/lag.tsv").read().splitlines()[1:]:
    cells = line.split("\t")
    if len(cells) == 3 and cells[1] and cells[2]:
        samples.append((float(cells[0]), float(cells[1]), float(cells[2])))
lags = []
for t, _, served in samples:
    reached = [s for s, step, _ in samples if step >= served]
    if reached and served > 0:
        lags.append(t - min(reached))

fig, ax = plt.subplots(figsize=(7, 4))
x = [f["file"] for f in files]
ax.plot(x, [f["progressive_auc"] for f in files], "o-", label="each file, before training on it")
ax.plot(x, [f["window_auc"] for f in files], "-", label="window of the last 10 files")
ax.axhline(problem["bayes_test_auc"], color="gray", ls="--", label="Bayes-optimal")
if "lr_test_auc" in problem:
    ax.axhline(problem["lr_test_auc"], color="gray", ls=":", label="logistic regression")
ax.set_xlabel("file of the stream")
ax.set_ylabel("progressive AUC")
ax.legend(loc="lower right")
fig.tight_layout()
fig.savefig(out + "/progressive.png", dpi=100)

report = {}
for line in open(out + "/chief.log"):
    for key in ("Test-AUC", "Global-Step", "Total Time"):
        if line.startswith(key + ": "):
            report[key] = line.split(": ", 1)[1].strip()
with open(out + "/summary.txt", "w") as f:
    f.write("files trained: %d, lines: %d\n" % (len(files), sum(x["file_examples"] for x in files)))
    if files:
        f.write("progressive AUC: first file %.4f, last file %.4f, last window %.4f\n" % (
            files[0]["progressive_auc"], files[-1]["progressive_auc"], files[-1]["window_auc"]))
    f.write("Bayes AUC %.4f, logistic regression %s\n" % (
        problem["bayes_test_auc"], problem.get("lr_test_auc", "?")))
    f.write("final: Test-AUC %s at global step %s, %s\n" % (
        report.get("Test-AUC", "?"), report.get("Global-Step", "?"), report.get("Total Time", "?")))
    if lags:
        q = statistics.quantiles(lags, n=10) if len(lags) > 1 else [lags[0]] * 9
        f.write("served model's lag behind training: median %.1f s (%.2f export intervals), "
                "90th percentile %.1f s, over %d samples\n" % (
                    statistics.median(lags), statistics.median(lags) / export_secs, q[8], len(lags)))
    else:
        f.write("served model's lag: not measured (no build/bin/serve)\n")
