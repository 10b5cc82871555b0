#!/usr/bin/env python3
"""Summarizes scripts/chaos.sh: reads OUT/MODE/{baseline,run-NN}/ (each run's
chaos.txt, chief.log, launcher.log, kills.log and checkpoints), prints a
Markdown table and a summary line per mode, and writes them to OUT/summary.md.

  chaos_summary.py OUT MODE [MODE...]

Lost updates (see chaos.sh): in a finished run's final checkpoint at step S,
the sum over every trainable (float32) variable of max(0, S - version);
"uncounted" is the sum of max(0, version - S). In sync mode each part's
@sync_step must equal S too (a part at another step counts its difference as
lost). Standard library only.
"""
import os
import re
import struct
import sys
import zlib

FLOAT32 = 0  # dtype codes of common/tensor.h
INT64 = 1


def read_tensor_file(path):
    """{name: (dtype, dims, bytes)} of a tensor file (common/tensor_file.h);
    raises ValueError when it is torn or corrupt."""
    with open(path, "rb") as f:
        b = f.read()
    if len(b) < 20 or b[:8] != b"PSTENSOR":
        raise ValueError(f"{path}: not a tensor file")
    if zlib.crc32(b[:-4]) != struct.unpack("<I", b[-4:])[0]:
        raise ValueError(f"{path}: CRC32 mismatch")
    _, count = struct.unpack_from("<II", b, 8)
    off, out = 16, {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", b, off)
        off += 4
        name = b[off:off + n].decode()
        off += n
        dtype, rank = struct.unpack_from("<BI", b, off)
        off += 5
        dims = struct.unpack_from(f"<{rank}q", b, off)
        off += 8 * rank
        (nbytes,) = struct.unpack_from("<Q", b, off)
        off += 8
        out[name] = (dtype, dims, b[off:off + nbytes])
        off += nbytes
    return out


def scalar_i64(entry):
    return struct.unpack("<q", entry[2])[0]


def final_checkpoint(ckpt_dir, train_steps):
    """(step, [part paths]) of the newest checkpoint with a manifest at a step
    >= train_steps, or None."""
    if not os.path.isdir(ckpt_dir):
        return None
    for name in sorted(os.listdir(ckpt_dir), reverse=True):
        manifest = os.path.join(ckpt_dir, name, "manifest")
        if not os.path.isfile(manifest):
            continue
        step, parts = None, []
        with open(manifest) as f:
            for line in f:
                words = line.split()
                if words[:1] == ["step"]:
                    step = int(words[1])
                elif words[:1] == ["part"]:
                    parts.append(os.path.join(ckpt_dir, name, words[1]))
        if step is not None and step >= train_steps:
            return step, parts
    return None


def lost_updates(run_dir, mode, train_steps):
    """(lost, uncounted) in the final checkpoint, or None when there is none
    (or it cannot be read)."""
    found = final_checkpoint(os.path.join(run_dir, "ckpt"), train_steps)
    if found is None:
        return None
    step, parts = found
    lost = uncounted = 0
    try:
        for path in parts:
            tensors = read_tensor_file(path)
            for name, entry in tensors.items():
                if "@" in name or entry[0] != FLOAT32:
                    continue
                version = scalar_i64(tensors[name + "@version"])
                lost += max(0, step - version)
                uncounted += max(0, version - step)
            if mode == "sync" and "@sync_step" in tensors:
                lost += abs(step - scalar_i64(tensors["@sync_step"]))
    except (OSError, ValueError, KeyError, struct.error) as e:
        print(f"chaos_summary.py: {run_dir}: final checkpoint unreadable: {e}", file=sys.stderr)
        return None
    return lost, uncounted


def last_match(pattern, text, cast=str):
    found = re.findall(pattern, text, re.M)
    return cast(found[-1]) if found else None


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def load_run(run_dir, mode):
    info = dict(line.split("=", 1) for line in read(os.path.join(run_dir, "chaos.txt")).splitlines()
                if "=" in line)
    chief = read(os.path.join(run_dir, "chief.log"))
    launcher = read(os.path.join(run_dir, "launcher.log"))
    steps = int(info.get("train_steps", "0"))
    accuracy = last_match(r"^Test-Accuracy: ([0-9.]+)", chief, float)
    global_step = last_match(r"^Global-Step: ([0-9]+)", chief, int)
    finished = (info.get("launcher_rc") == "0" and accuracy is not None
                and global_step is not None and global_step >= steps)
    by_role = {"chief": 0, "ps": 0, "worker": 0}
    for line in read(os.path.join(run_dir, "kills.log")).splitlines():
        words = line.split()
        if len(words) >= 2:
            by_role[words[1].split("-")[0]] = by_role.get(words[1].split("-")[0], 0) + 1
    return {
        "name": os.path.basename(run_dir),
        "finished": finished,
        "rc": info.get("launcher_rc", "?"),
        "stopped": info.get("stopped", ""),
        "kills": int(info.get("kills", "0")),
        "by_role": by_role,
        "restarts": len(re.findall(r"^run_local\.sh: restarting ", launcher, re.M)),
        "rollbacks": len(re.findall(r"restored checkpoint .* at step", chief)),
        "kill_stalls_s": [int(line) / 1000 for line in
                          read(os.path.join(run_dir, "kill_stalls.log")).split()],
        "stalls": int(info.get("stalls", "0")),
        "global_step": global_step,
        "lost": lost_updates(run_dir, mode, steps) if finished else None,
        "accuracy": accuracy if finished else None,
        "wall_s": int(info.get("wall_s", "0")) / 1000,
    }


def fmt(value, spec=""):
    return "-" if value is None else format(value, spec)


def summarize_mode(out, mode):
    mode_dir = os.path.join(out, mode)
    names = sorted(n for n in os.listdir(mode_dir) if n.startswith("run-"))
    baseline = load_run(os.path.join(mode_dir, "baseline"), mode)
    runs = [load_run(os.path.join(mode_dir, n), mode) for n in names]
    header = ["run", "finished", "launcher exit", "kills (chief/ps/worker)", "restarts",
              "checkpoint restores", "stalls", "stall per kill s (max)", "Global-Step",
              "lost updates (uncounted)", "test accuracy", "wall s"]
    rows = []
    for r in [baseline] + runs:
        lost = "-" if r["lost"] is None else f"{r['lost'][0]} ({r['lost'][1]})"
        k = r["by_role"]
        rows.append([r["name"], "yes" if r["finished"] else "no" + (f": {r['stopped']}" if r["stopped"] else ""),
                     r["rc"], f"{r['kills']} ({k['chief']}/{k['ps']}/{k['worker']})", r["restarts"],
                     r["rollbacks"], r["stalls"],
                     fmt(max(r["kill_stalls_s"]) if r["kill_stalls_s"] else None, ".1f"),
                     fmt(r["global_step"]), lost,
                     fmt(r["accuracy"], ".4f"), f"{r['wall_s']:.1f}"])
    lines = [f"### {mode}", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    done = [r for r in runs if r["finished"]]
    checked = [r for r in runs if r["lost"] is not None]
    accuracy = sum(r["accuracy"] for r in done) / len(done) if done else None
    base = baseline["accuracy"]
    ratio = f"{accuracy / base:.3f}" if accuracy is not None and base else "-"
    kill_stalls = sorted(s for r in runs for s in r["kill_stalls_s"])
    median = kill_stalls[len(kill_stalls) // 2] if kill_stalls else None
    summary = (f"{mode}: finished {len(done)}/{len(runs)}, kills {sum(r['kills'] for r in runs)}, "
               f"checkpoint restores {sum(r['rollbacks'] for r in runs)}, "
               f"stall per kill median {fmt(median, '.1f')} s max "
               f"{fmt(kill_stalls[-1] if kill_stalls else None, '.1f')} s, "
               f"stalls {sum(r['stalls'] for r in runs)}, "
               f"lost_updates {sum(r['lost'][0] for r in checked)} (checked {len(checked)}), "
               f"accuracy {fmt(accuracy, '.4f')} (baseline {fmt(base, '.4f')}, ratio {ratio})")
    if not baseline["finished"]:
        summary += "; the baseline run did not finish"
    return lines, summary


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, modes = sys.argv[1], sys.argv[2:]
    body, summaries = [], []
    for mode in modes:
        lines, summary = summarize_mode(out, mode)
        body += lines + [""]
        summaries.append(summary)
    text = "\n".join(body + summaries) + "\n"
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
