#!/usr/bin/env python3
"""Summarizes experiment runs: one folder per run under RUNS, each holding the
metrics.jsonl a chief wrote. Writes table.md and PNG plots into RESULTS.

  summarize_runs.py accuracy RUNS RESULTS   # sync_vs_async.sh: accuracy over time
  summarize_runs.py shards RUNS RESULTS     # tune_shards.sh: throughput and balance
  summarize_runs.py sweep RUNS RESULTS      # sweep.sh: jobs by validation accuracy
  summarize_runs.py ensemble RUNS RESULTS   # sweep.sh: the top three's ensemble
"""
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

TARGET_ACCURACY = 0.97


def read_metrics(run_dir, name):
    """The records of RUN_DIR/metrics.jsonl (exits when there are none)."""
    path = os.path.join(run_dir, "metrics.jsonl")
    if not os.path.exists(path):
        sys.exit(f"summarize_runs.py: {path} is missing: did run {name} fail?")
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    if not records:
        sys.exit(f"summarize_runs.py: {path} is empty")
    return records


def load_runs(runs_dir):
    """[(name, [metrics records])]: run folders are named "NN-name", NN giving
    the order."""
    runs = []
    for folder in sorted(os.listdir(runs_dir)):
        if not os.path.isdir(os.path.join(runs_dir, folder)):
            continue
        name = folder.split("-", 1)[1] if "-" in folder else folder
        runs.append((name, read_metrics(os.path.join(runs_dir, folder), name)))
    return runs


def write_table(path, header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def accuracy(runs, results):
    rows = []
    for name, records in runs:
        last = records[-1]
        reached = [r["time"] for r in records if r.get("test_accuracy", 0) >= TARGET_ACCURACY]
        rows.append([name, f"{reached[0]:.1f}" if reached else "not reached",
                     f"{last['test_accuracy']:.4f}", f"{last['steps_per_sec']:.1f}",
                     f"{last['examples_per_sec']:.0f}", int(last.get("stale_gradients_dropped", 0))])
    write_table(os.path.join(results, "table.md"),
                ["run", "time to 97% (s)", "final accuracy", "steps/s", "examples/s",
                 "stale gradients dropped"], rows)
    fig, (by_time, by_step) = plt.subplots(1, 2, figsize=(13, 5))
    for name, records in runs:
        times = [r["time"] for r in records]
        steps = [r["step"] for r in records]
        acc = [r["test_accuracy"] for r in records]
        by_time.plot(times, acc, marker=".", label=name)
        by_step.plot(steps, acc, marker=".", label=name)
    for ax, xlabel in ((by_time, "wall time (s)"), (by_step, "global step")):
        ax.set_xlabel(xlabel)
        ax.set_ylabel("test accuracy")
        ax.axhline(TARGET_ACCURACY, color="grey", linestyle=":", linewidth=1)
        ax.grid(alpha=0.3)
    by_step.legend(fontsize=8, loc="lower right")
    fig.suptitle("MNIST test accuracy: sync vs async")
    fig.tight_layout()
    fig.savefig(os.path.join(results, "accuracy.png"), dpi=110)


BF16 = "_bf16"


def bytes_per_step(last):
    count = sum(1 for k in last if k.startswith("ps") and k.endswith("_bytes_held"))
    moved = sum(last[f"ps{k}_bytes_in"] + last[f"ps{k}_bytes_out"] for k in range(count))
    return moved / max(last["step"], 1)


def wire_ratios(runs, results):
    """wire.md: each "<name>_bf16" run against "<name>" (float32 on the wire)."""
    last = {name: records[-1] for name, records in runs}
    rows = []
    for name, bf16 in last.items():
        f32 = last.get(name[:-len(BF16)]) if name.endswith(BF16) else None
        if f32 is None:
            continue
        rows.append([name[:-len(BF16)], f"{f32['steps_per_sec']:.1f}",
                     f"{bf16['steps_per_sec']:.1f}",
                     f"{bf16['steps_per_sec'] / f32['steps_per_sec']:.2f}",
                     f"{bytes_per_step(f32) / 1e6:.1f}", f"{bytes_per_step(bf16) / 1e6:.1f}",
                     f"{bytes_per_step(bf16) / bytes_per_step(f32):.2f}"])
    write_table(os.path.join(results, "wire.md"),
                ["configuration", "float32 steps/s", "bfloat16 steps/s", "steps/s ratio",
                 "float32 MB/step", "bfloat16 MB/step", "bytes ratio"], rows)


def shards(runs, results):
    rows, labels, rates, loads = [], [], [], []
    for name, records in runs:
        last = records[-1]
        count = sum(1 for k in last if k.startswith("ps") and k.endswith("_bytes_held"))
        held = [last[f"ps{k}_bytes_held"] for k in range(count)]
        moved = sum(last[f"ps{k}_bytes_in"] + last[f"ps{k}_bytes_out"] for k in range(count))
        throughput = moved / last["time"] / 1e6 if last["time"] > 0 else 0
        balance = max(held) / (sum(held) / count)
        rows.append([name, count, f"{last['steps_per_sec']:.1f}", f"{throughput:.0f}",
                     " / ".join(f"{h / 1e6:.1f}" for h in held), f"{balance:.2f}"])
        labels.append(name)
        rates.append(last["steps_per_sec"])
        loads.append([h / 1e6 for h in held])
    write_table(os.path.join(results, "table.md"),
                ["configuration", "ps", "steps/s", "pull+push MB/s", "MB held per shard",
                 "max/mean load"], rows)
    fig, (rate_ax, load_ax) = plt.subplots(1, 2, figsize=(13, 5))
    rate_ax.barh(labels, rates)
    rate_ax.set_xlabel("steps/s")
    labelled = set()
    for i, held in enumerate(loads):
        left = 0
        for k, mb in enumerate(held):
            label = None if k in labelled else f"ps:{k}"
            labelled.add(k)
            load_ax.barh(i, mb, left=left, color=f"C{k}", label=label)
            left += mb
    load_ax.set_yticks(range(len(labels)), labels)
    load_ax.set_xlabel("MB held, stacked by shard")
    load_ax.legend(fontsize=8)
    fig.suptitle("ps shards: throughput and load balance")
    fig.tight_layout()
    fig.savefig(os.path.join(results, "shards.png"), dpi=110)
    wire_ratios(runs, results)
    # Fewest shards within 10% of the best float32 step rate.
    float32 = [(row, rate) for row, rate in zip(rows, rates) if not row[0].endswith(BF16)]
    best = max(rate for _, rate in float32)
    pick = min((r for r in float32 if r[1] >= 0.9 * best), key=lambda r: (r[0][1], -r[1]))
    line = (f"recommendation: {pick[0][0]} ({pick[0][1]} ps, {pick[1]:.1f} steps/s, "
            f"{pick[1] / best:.0%} of the best, load max/mean {pick[0][5]})")
    with open(os.path.join(results, "recommendation.txt"), "w") as f:
        f.write(line + "\n")
    print(line)


def chief_report(run_dir, key):
    """The number after "KEY: " on the last such line of RUN_DIR/chief.log
    (the chief's final report), or None."""
    with open(os.path.join(run_dir, "chief.log")) as f:
        found = re.findall(rf"^{re.escape(key)}: ([0-9.]+)", f.read(), re.MULTILINE)
    return float(found[-1]) if found else None


def sweep(runs_dir, results):
    """sweep.sh's jobs (RESULTS/jobs.tsv: name, grid flags, wall seconds; the
    run folders in RUNS): table.md, best validation accuracy first;
    curves.png; top.txt (the best three's names and flags, best first)."""
    jobs = []
    with open(os.path.join(results, "jobs.tsv")) as f:
        for line in f:
            name, flags, wall = line.rstrip("\n").split("\t")
            run_dir = os.path.join(runs_dir, name)
            report = {key: chief_report(run_dir, key) for key in
                      ("Validation-Accuracy", "Test-Accuracy", "Global-Step")}
            if None in report.values():
                sys.exit(f"summarize_runs.py: {run_dir}/chief.log has no final report")
            jobs.append(dict(name=name, flags=flags.replace("--", ""), wall=float(wall),
                             records=read_metrics(run_dir, name), **report))
    jobs.sort(key=lambda j: (-j["Validation-Accuracy"], -j["Test-Accuracy"], j["name"]))
    write_table(os.path.join(results, "table.md"),
                ["rank", "job", "flags", "validation accuracy", "test accuracy", "global step",
                 "wall s"],
                [[rank, j["name"], j["flags"], f"{j['Validation-Accuracy']:.4f}",
                  f"{j['Test-Accuracy']:.4f}", int(j["Global-Step"]), f"{j['wall']:.1f}"]
                 for rank, j in enumerate(jobs, 1)])
    with open(os.path.join(results, "top.txt"), "w") as f:
        f.writelines(f"{j['name']}\t{j['flags']}\n" for j in jobs[:3])
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for j in sorted(jobs, key=lambda j: j["name"]):
        ax.plot([r["step"] for r in j["records"]],
                [r.get("validation_accuracy", r["test_accuracy"]) for r in j["records"]],
                marker=".", label=f"{j['name']}: {j['flags']}")
    ax.set_xlabel("global step")
    ax.set_ylabel("validation accuracy")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("hyperparameter sweep: validation accuracy by job")
    fig.tight_layout()
    fig.savefig(os.path.join(results, "curves.png"), dpi=110)


def ensemble(_, results):
    """ensemble.md from RESULTS/top.txt and predict --ensemble's output
    (RESULTS/ensemble.txt): which job each member is, the output, and per
    split whether the ensemble beats every member."""
    with open(os.path.join(results, "top.txt")) as f:
        top = [line.rstrip("\n").split("\t") for line in f]
    with open(os.path.join(results, "ensemble.txt")) as f:
        output = f.read()
    lines = output.splitlines()
    splits = next(line.split()[1:] for line in lines if line.startswith("model "))
    rows = {line.split()[0]: [float(v) for v in line.split()[-len(splits):]]
            for line in lines if line.startswith(("top", "ensemble "))}
    md = ["# The top three's ensemble (mean of their class probabilities)", ""]
    md += [f"- top{k}.bin: {name} ({flags})" for k, (name, flags) in enumerate(top, 1)]
    md += ["", "```", output.rstrip("\n"), "```", ""]
    for c, split in enumerate(splits):
        members = {m: acc[c] for m, acc in rows.items() if m != "ensemble"}
        best = max(members, key=members.get)
        mean = rows["ensemble"][c]
        verdict = ("beats every member" if mean > members[best] else
                   "ties the best member" if mean == members[best] else "does not beat every member")
        md.append(f"- {split}: the ensemble's {mean:.4f} {verdict} "
                  f"(best member {best}: {members[best]:.4f})")
    with open(os.path.join(results, "ensemble.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


def main():
    kinds = {"accuracy": accuracy, "shards": shards, "sweep": sweep, "ensemble": ensemble}
    if len(sys.argv) != 4 or sys.argv[1] not in kinds:
        sys.exit(__doc__)
    kind, runs_dir, results = sys.argv[1:]
    os.makedirs(results, exist_ok=True)
    if kind in ("sweep", "ensemble"):
        kinds[kind](runs_dir, results)
    else:
        kinds[kind](load_runs(runs_dir), results)


if __name__ == "__main__":
    main()
