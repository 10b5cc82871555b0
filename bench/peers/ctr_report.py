#!/usr/bin/env python3
"""ctr_report.py: the table of bench/peers/ctr_run.sh from the files of one run.

Reads, in the results folder that ctr_run.sh fills:
  settings.json       the job's settings (rows, steps, batch, data folder, ...);
  tf.json             ctr_tf.py's JSON line (absent when TensorFlow was skipped);
  pstrain.json        {"system": "pstrain", "seconds": wall} after a run, or
                      {"system": "pstrain", "skipped": reason};
  pstrain.log         run_local.sh's console (--quiet: the chief's lines with a
                      "[chief] " prefix), and pstrain-run/chief.log, the
                      chief's own log (read first where it exists). From the
                      chief: "Test-AUC: X", "Test-LogLoss: X", "Global-Step: N",
                      "Total Time: Xs", and its progress lines "step S/T (P%),
                      R steps/s, ..., elapsed E, ETA ...";
  DATA/problem.json   "bayes_test_auc" (or "bayes_auc"), "bayes_test_log_loss",
                      "test_ctr" (else the test file gives the test CTR).
steps/s: global steps per second after the first 10% of the steps. pstrain's
comes from its progress lines: the first one at or past 10% of the steps and
the last one, (step difference) / (elapsed difference). With fewer than two
such lines it falls back to the whole run (Global-Step / Total Time), and so
does TensorFlow's figure in the ratio (its steps_per_sec_all), so both sides
are measured alike. Prints one markdown table and a summary line
"ratio pstrain/tensorflow steps/s: X (AUC difference pstrain - tensorflow:
+Y)"; writes results.jsonl. Only the standard library.
"""

import json
import math
import os
import re
import sys

from peer_json import read_json

PROGRESS = re.compile(r"step (\d+)/(\d+) \([0-9.]+%\), ([0-9.]+) steps/s, .*elapsed ([^,]+), ETA")
WARMUP_FRACTION = 0.1


def seconds_of(text):
    """The chief's elapsed time: "12.3 s", "4m05s" or "1h02m"."""
    text = text.strip()
    m = re.fullmatch(r"([0-9.]+) s", text)
    if m:
        return float(m.group(1))
    m = re.fullmatch(r"(\d+)m(\d+)s", text)
    if m:
        return 60 * int(m.group(1)) + int(m.group(2))
    m = re.fullmatch(r"(\d+)h(\d+)m", text)
    if m:
        return 3600 * int(m.group(1)) + 60 * int(m.group(2))
    return None


def chief_lines(folder):
    path = os.path.join(folder, "pstrain-run", "chief.log")
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    path = os.path.join(folder, "pstrain.log")
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return [line[len("[chief] "):] for line in f.read().splitlines()
                if line.startswith("[chief] ")]


def last_value(lines, key, cast=float):
    value = None
    for line in lines:
        m = re.match(rf"^{re.escape(key)}:\s*([-0-9.eE+]+)", line.strip())
        if m:
            value = cast(m.group(1))
    return value


def parse_pstrain(folder, steps):
    """pstrain's figures from its chief, or None when it printed no Test-AUC."""
    lines = chief_lines(folder)
    auc = last_value(lines, "Test-AUC")
    if auc is None:
        return None
    r = {"system": "pstrain", "auc": auc, "log_loss": last_value(lines, "Test-LogLoss"),
         "global_step": last_value(lines, "Global-Step", lambda v: int(float(v)))}
    total = last_value(lines, "Total Time")
    if r["global_step"] and total:
        r["steps_per_sec_all"] = r["global_step"] / total
        r["train_seconds"] = total
    progress = []
    for line in lines:
        m = PROGRESS.search(line)
        if m:
            t = seconds_of(m.group(4))
            if t is not None:
                progress.append((int(m.group(1)), t))
    warm = [p for p in progress if p[0] >= WARMUP_FRACTION * steps]
    if len(warm) >= 2 and warm[-1][1] > warm[0][1] and warm[-1][0] > warm[0][0]:
        r["steps_per_sec"] = (warm[-1][0] - warm[0][0]) / (warm[-1][1] - warm[0][1])
        r["warmup_steps"] = warm[0][0]
    wall = read_json(os.path.join(folder, "pstrain.json")) or {}
    if "seconds" in wall:
        r["seconds"] = wall["seconds"]
    return r


def test_ctr(path):
    clicks = total = 0
    try:
        with open(path) as f:
            for line in f:
                total += 1
                clicks += line.startswith("1")
    except OSError:
        return None
    return clicks / total if total else None


def fmt(value, spec):
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else format(value, spec)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ctr_report.py RESULTS_FOLDER")
    folder = sys.argv[1]
    settings = read_json(os.path.join(folder, "settings.json")) or {}
    steps = settings.get("steps", 0)
    data_dir = settings.get("data_dir", "")
    problem = read_json(os.path.join(data_dir, "problem.json")) or {}
    bayes = problem.get("bayes_test_auc", problem.get("bayes_auc"))
    bayes_log_loss = problem.get("bayes_test_log_loss")
    lr_auc = problem.get("lr_test_auc")  # make_ctr_problem.py's logistic regression
    tf = read_json(os.path.join(folder, "tf.json"))
    ps_note = read_json(os.path.join(folder, "pstrain.json")) or {}
    ps = parse_pstrain(folder, steps) if "skipped" not in ps_note else None

    ctr = (problem.get("test_ctr") or (tf or {}).get("test_ctr")
           or test_ctr(os.path.join(data_dir, "test.txt")))
    if settings:
        print(f"click job: {settings.get('model', 'wide_deep')}, {settings['rows']} rows per "
              f"table, {steps} global steps, batch {settings['batch_size']}, "
              f"{settings.get('optimizer', 'adagrad')} {settings['learning_rate']}, "
              f"async, {settings['num_ps']} ps + {settings['num_workers']} workers on "
              f"127.0.0.1, {settings['threads']} thread(s) per task, {settings['cores']} cores")
    if ctr is not None and 0 < ctr < 1:
        entropy = -(ctr * math.log(ctr) + (1 - ctr) * math.log(1 - ctr))
        bayes_text = (f"; the true probabilities' AUC {bayes:.4f}, log-loss "
                      f"{bayes_log_loss:.4f}" if bayes is not None and bayes_log_loss is not None
                      else "")
        lr_text = f"; logistic regression's AUC {lr_auc:.4f}" if lr_auc is not None else ""
        print(f"data: {data_dir}; test CTR {ctr:.4f} (a constant predictor's log-loss: "
              f"{entropy:.4f}){bayes_text}{lr_text}")
    ran_tf = os.path.exists(os.path.join(folder, "tf.log"))
    ran_ps = bool(ps_note) or os.path.exists(os.path.join(folder, "pstrain.log"))
    if tf:
        print(f"tensorflow {tf.get('version')}: {tf.get('intra_op_threads')} intra-op and "
              f"{tf.get('inter_op_threads')} inter-op thread(s) per task, oneDNN "
              f"{tf.get('onednn')}, global step {tf.get('global_step')}")
    elif ran_tf:
        print(f"tensorflow: no figures, ctr_tf.py failed (see {folder}/tf.log)")
    else:
        print("tensorflow: not run (--systems, or it could not be installed)")
    if ps_note.get("skipped"):
        print(f"pstrain: skipped, {ps_note['skipped']}")
    elif ps is None:
        print("pstrain: no figures (its chief printed no Test-AUC line)" if ran_ps
              else "pstrain: not run (--systems)")

    # Both sides after the warm-up where pstrain's progress lines allow it,
    # else both over the whole run.
    basis = "after 10% warm-up"
    if ps and "steps_per_sec" not in ps:
        basis = "whole run"
    key = "steps_per_sec" if basis != "whole run" else "steps_per_sec_all"

    rows, records = [], []
    for r in (tf, ps):
        if not r:
            continue
        rate = r.get(key)
        ratio = diff = None
        if tf and r is not tf:
            if rate and tf.get(key):
                ratio = rate / tf[key]
            if r.get("auc") is not None and tf.get("auc") is not None:
                diff = r["auc"] - tf["auc"]
        name = r["system"] + (f" {r['version']}" if r.get("version") else "")
        rows.append([name, fmt(rate, ".1f"), fmt(r.get("auc"), ".4f"),
                     fmt(r.get("log_loss"), ".4f"), fmt(bayes, ".4f"),
                     fmt(r.get("seconds"), ".1f"),
                     fmt(ratio, ".2f") if r is not tf else "1.00",
                     (f"{diff:+.4f}" if diff is not None else "-") if r is not tf else "0"])
        records.append({"kind": "result", "system": r["system"], "steps_per_sec": rate,
                        "steps_per_sec_basis": basis, "auc": r.get("auc"),
                        "log_loss": r.get("log_loss"), "bayes_auc": bayes,
                        "bayes_log_loss": bayes_log_loss, "test_ctr": ctr,
                        "seconds": r.get("seconds"), "global_step": r.get("global_step"),
                        "ratio_steps_per_sec_vs_tensorflow": ratio if r is not tf else None,
                        "auc_minus_tensorflow": diff if r is not tf else None})
    if not rows:
        print("\nno system has figures")
        return 1
    columns = ["system", f"steps/s ({basis})", "test AUC", "test log-loss", "Bayes AUC",
               "wall s", "steps/s / TF", "AUC - TF"]
    print()
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print("AUC: exact (Mann-Whitney, ties at average rank) over the whole test set; "
          "log-loss with p clipped to [1e-7, 1 - 1e-7]; wall s: the whole run, start-up, "
          "data loading and evaluation included.")
    if tf and ps:
        ratio = records[-1]["ratio_steps_per_sec_vs_tensorflow"]
        diff = records[-1]["auc_minus_tensorflow"]
        print(f"ratio pstrain/tensorflow steps/s: {fmt(ratio, '.2f')} "
              f"(AUC difference pstrain - tensorflow: "
              f"{f'{diff:+.4f}' if diff is not None else '-'})")
    with open(os.path.join(folder, "results.jsonl"), "w") as f:
        for obj in records:
            f.write(json.dumps(obj) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
