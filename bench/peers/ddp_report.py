#!/usr/bin/env python3
"""ddp_report.py: the table of bench/peers/ddp_run.sh from the files of one run.

Reads, in the results folder that ddp_run.sh fills:
  settings.json        the job (workers, batch, examples, target, repeats, ...);
  MODE-R.json          per pstrain run (MODE async or sync, round R):
                       {"seconds": wall, "steps": S, "examples_per_step": E}
                       or {"failed": reason};
  MODE-R-run/          its run folder: metrics.jsonl (one line per evaluation:
                       time since the chief opened training, global step,
                       test_accuracy, examples_per_sec) and chief.log
                       ("Test-Accuracy: X", "Global-Step: N");
  ddp-R.json           ddp_mnist.py's JSON line, or {"failed": reason}.
Per run: examples/s (pstrain: global steps * examples per step / the time of
metrics.jsonl's last line, as DDP counts its own; the chief's
examples_per_sec, which counts every example pushed, is kept in
results.jsonl), seconds and examples to the first evaluation at or above the
target, the final test accuracy and the wall time. Per system: the median
over the rounds (and the range). Ratios against DDP from the medians:
examples/s pstrain / DDP, time to target DDP / pstrain (above 1: pstrain is
faster), and the range of the per-round ratios. Prints one markdown table and
"ratio pstrain MODE/ddp examples/s: X" lines; writes results.jsonl. Only the
standard library.
"""

import json
import os
import re
import statistics
import sys

from peer_json import read_json

SYSTEMS = ("async", "sync", "ddp")
LABELS = {"async": "pstrain async", "sync": "pstrain sync (all workers)", "ddp": "PyTorch DDP"}


def last_value(path, key):
    value = None
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(rf"{re.escape(key)}:\s*([-0-9.eE+]+)", line)
                if m:
                    value = float(m.group(1))
    except OSError:
        pass
    return value


def pstrain_run(folder, mode, r, target):
    note = read_json(os.path.join(folder, f"{mode}-{r}.json"))
    if note is None:
        return None
    if "failed" in note:
        return {"system": mode, "round": r, "failed": note["failed"]}
    rows = []
    try:
        with open(os.path.join(folder, f"{mode}-{r}-run", "metrics.jsonl")) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        pass
    if not rows:
        return {"system": mode, "round": r, "failed": "no metrics.jsonl"}
    per_step = note["examples_per_step"]
    last = rows[-1]
    chief_log = os.path.join(folder, f"{mode}-{r}-run", "chief.log")
    accuracy = last_value(chief_log, "Test-Accuracy")
    if accuracy is None:
        accuracy = last.get("test_accuracy")
    hit = next((row for row in rows if row.get("test_accuracy", 0) >= target), None)
    return {
        "system": mode, "round": r, "steps": last["step"],
        "examples": last["step"] * per_step,
        "train_seconds": last["time"],
        "examples_per_s": last["step"] * per_step / last["time"],
        "chief_examples_per_sec": last.get("examples_per_sec"),
        "seconds_to_target": hit["time"] if hit else None,
        "examples_to_target": hit["step"] * per_step if hit else None,
        "final_test_accuracy": accuracy,
        "wall_seconds": note.get("seconds"),
        "evals": [[row["step"], row["time"], row.get("test_accuracy")] for row in rows],
    }


def ddp_run(folder, r):
    out = read_json(os.path.join(folder, f"ddp-{r}.json"))
    if out is None:
        return None
    if "failed" in out:
        return {"system": "ddp", "round": r, "failed": out["failed"]}
    return {
        "system": "ddp", "round": r, "steps": out["steps"], "examples": out["examples"],
        "train_seconds": out["train_seconds"], "examples_per_s": out["examples_per_s"],
        "seconds_to_target": out["seconds_to_target"],
        "examples_to_target": out["examples_to_target"],
        "final_test_accuracy": out["final_test_accuracy"],
        "wall_seconds": out["wall_seconds"], "torch_version": out.get("torch_version"),
        "threads_in_use": out.get("threads_in_use"), "evals": out.get("evals"),
    }


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, spec, none="-"):
    return none if value is None else format(value, spec)


def spread(values, spec):
    """"median (min-max)" of the values, or the one value."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if len(values) == 1:
        return format(values[0], spec)
    return (f"{format(statistics.median(values), spec)} "
            f"({format(min(values), spec)}-{format(max(values), spec)})")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ddp_report.py RESULTS_FOLDER")
    folder = sys.argv[1]
    settings = read_json(os.path.join(folder, "settings.json")) or {}
    target = settings.get("target_accuracy", 0.97)
    repeats = settings.get("repeats", 1)
    runs = {s: [] for s in SYSTEMS}
    for r in range(1, repeats + 1):
        for s in SYSTEMS:
            run = ddp_run(folder, r) if s == "ddp" else pstrain_run(folder, s, r, target)
            if run is not None:
                runs[s].append(run)
    if settings:
        print(f"job: MNIST mlp_relu, plain SGD {settings['learning_rate']}, batch "
              f"{settings['batch_size']} per worker, {settings['num_workers']} workers "
              f"(pstrain: + {settings['num_ps']} ps + the chief), {settings['examples']} "
              f"training examples per run, the test set every {settings['eval_every_examples']}, "
              f"target test accuracy {target}, {settings['threads']} thread(s) per task; "
              f"{settings['cores']} cores ({settings['cpu']}), load average at the start "
              f"{settings['load_start']}; commit {settings['commit']}, {settings['date']}")
    ddp_version = next((r["torch_version"] for r in runs["ddp"] if r.get("torch_version")), None)
    if ddp_version:
        print(f"PyTorch {ddp_version}, DistributedDataParallel, gloo, CPU")
    for s in SYSTEMS:
        for r in runs[s]:
            if "failed" in r:
                print(f"{LABELS[s]}, round {r['round']}: failed: {r['failed']}")

    good = {s: [r for r in runs[s] if "failed" not in r] for s in SYSTEMS}
    summary = {}
    for s in SYSTEMS:
        if not good[s]:
            continue
        summary[s] = {key: median([r[key] for r in good[s]]) for key in
                      ("examples_per_s", "seconds_to_target", "examples_to_target",
                       "final_test_accuracy", "wall_seconds")}
        summary[s]["reached"] = sum(r["seconds_to_target"] is not None for r in good[s])
    if not summary:
        print("\nno system has figures")
        return 1

    def round_ratios(s, key, invert):
        """The ratio of each round where both s and DDP have the figure."""
        out = []
        by_round = {r["round"]: r for r in good["ddp"]}
        for r in good[s]:
            d = by_round.get(r["round"])
            if d and r.get(key) and d.get(key):
                out.append(d[key] / r[key] if invert else r[key] / d[key])
        return out

    columns = ["system", "runs", "examples/s", "s to target", "examples to target",
               "final test accuracy", "wall s", "examples/s / DDP", "time to target: DDP / this"]
    print()
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    records = []
    ratios = {}
    for s in SYSTEMS:
        if s not in summary:
            continue
        m, rs = summary[s], good[s]
        speed_ratio = time_ratio = None
        if s != "ddp" and "ddp" in summary:
            d = summary["ddp"]
            if m["examples_per_s"] and d["examples_per_s"]:
                speed_ratio = m["examples_per_s"] / d["examples_per_s"]
            if m["seconds_to_target"] and d["seconds_to_target"]:
                time_ratio = d["seconds_to_target"] / m["seconds_to_target"]
            ratios[s] = (speed_ratio, time_ratio, round_ratios(s, "examples_per_s", False),
                         round_ratios(s, "seconds_to_target", True))

        def ratio_text(value, per_round):
            if value is None:
                return "-"
            if len(per_round) > 1:
                return f"{value:.2f} ({min(per_round):.2f}-{max(per_round):.2f})"
            return f"{value:.2f}"

        reached = f" [{m['reached']}/{len(rs)} reached]" if m["reached"] < len(rs) else ""
        print("| " + " | ".join([
            LABELS[s], str(len(rs)),
            spread([r["examples_per_s"] for r in rs], ",.0f"),
            spread([r["seconds_to_target"] for r in rs], ".2f") + reached,
            spread([r["examples_to_target"] for r in rs], ",.0f"),
            spread([r["final_test_accuracy"] for r in rs], ".4f"),
            spread([r["wall_seconds"] for r in rs], ".1f"),
            "1.00" if s == "ddp" else ratio_text(speed_ratio, ratios.get(s, (0, 0, [], []))[2]),
            ("1.00" if m["seconds_to_target"] else "-") if s == "ddp"
            else ratio_text(time_ratio, ratios.get(s, (0, 0, [], []))[3]),
        ]) + " |")
        records.append({"kind": "summary", "system": s, **m, "runs": len(rs),
                        "examples_per_s_vs_ddp": speed_ratio,
                        "ddp_seconds_to_target_over_this": time_ratio})
    print()
    print("Medians over the rounds (min-max in brackets; ratios: of the medians, and the range "
          "of the per-round ratios). examples/s: training examples over the training time "
          "(pstrain: from the chief opening training to its last evaluation; DDP: after set-up, "
          "evaluations left out). s to target: training time at the first evaluation at or "
          "above the target. wall s: the whole run, start-up and data loading included.")
    for s, (speed, time_ratio, _, _) in ratios.items():
        print(f"ratio pstrain {s}/ddp examples/s: {fmt(speed, '.2f')}; "
              f"time to {target} DDP/pstrain {s}: {fmt(time_ratio, '.2f')}")
    with open(os.path.join(folder, "results.jsonl"), "w") as f:
        for s in SYSTEMS:
            for r in runs[s]:
                f.write(json.dumps({"kind": "run", **r}) + "\n")
        for obj in records:
            f.write(json.dumps(obj) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
