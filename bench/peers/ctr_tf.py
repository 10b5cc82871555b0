#!/usr/bin/env python3
"""ctr_tf.py: TensorFlow 1's parameter-server training of the click job.

The sparse peer of pstrain's `--dataset=criteo --model=wide_deep` job, run by
bench/peers/ctr_run.sh; TensorFlow comes from its venv (PyPI), never a
dependency of pstrain. The job, as pstrain's:
  - data: a click log in Criteo's layout (examples/make_ctr_problem.py):
    tab-separated label (0/1), 13 integer features (may be empty or
    negative), 26 categorical features (hex strings, may be empty);
  - preprocessing, once per task before training, in TensorFlow ops:
    integers: empty or negative -> 0, then log(1 + x); categorical field f
    (0..25): tf.strings.to_hash_bucket_fast("f<f>:<value>", ROWS), one key
    per field per example (an empty value is a key of its own: "f3:");
    and, as pstrain's --criteo_integer_fields (unless --no_integer_fields),
    each integer as field 26 + j, its value floor(4 log(1 + x)) ("neg"
    below 0, "" when empty): F = 39 keys per example (26 without);
  - --model=wide_deep (default): wide = a [ROWS, 1] table, the F keys'
    weights summed;
    deep = a [ROWS, 8] table shared by every field, the F keys' rows
    concatenated (F * 8) with the 13 dense features -> dense 64 relu -> dense
    32 relu -> dense 1; logit = deep + wide; sigmoid cross-entropy, the mean
    over the batch. Both tables: tf.compat.v1.fixed_size_partitioner(num_ps),
    looked up with tf.compat.v1.nn.embedding_lookup_sparse (partition
    strategy "mod", combiner "sum"); the deep lookup sees one id per
    (example, field) row, so its sum is that key's row. Tables start uniform
    in [-0.05, 0.05] (as pstrain's EmbeddingTableConfig::init_scale), dense
    kernels glorot uniform, biases 0; every variable placed by
    replica_device_setter (round-robin over the ps tasks);
  - --model=deepfm (as docs CTR-MODELS.md, Guo et al. 2017): the same wide
    table plus a dense weight per dense feature (the LR part), FM over the
    F field embeddings e_f (a [ROWS, 16] table, --embed_dim):
    0.5 * sum_k [(sum_f e_f,k)^2 - sum_f e_f,k^2], and an MLP over
    concat(e_f..., dense) -> 256 relu -> 128 relu -> 1; logit = LR + FM +
    MLP;
  - --model=dcn_v2 (Wang et al. 2021, stacked): x0 = concat(e_f..., dense)
    (39 * 16 + 13 = 637), 3 full-rank cross layers x_{l+1} = x0 * (W_l x_l
    + b_l) + x_l, then MLP 256 relu -> 128 relu -> 1; no wide table;
  - --optimizer=adagrad (default; tf.compat.v1.train.AdagradOptimizer,
    initial accumulator 0.1) for everything: sparse gradients
    (IndexedSlices) go to SparseApplyAdagrad on the ps, touching only the
    rows in the batch; --optimizer=adam: tf.compat.v1.train.AdamOptimizer
    (betas 0.9, 0.999, epsilon 1e-8), which is NOT lazy: its sparse apply
    decays the moments of every row each step;
  - async: each worker runs its own steps, its gradient applied on arrival,
    until the global step reaches --train_steps; worker 0 is TensorFlow's
    chief (it initializes the variables; the others wait for them);
  - each worker reads the whole training file and takes batches of
    --batch_size from its own shuffle of it, a new one every epoch.

Timing (the chief's clock): steps/s = the global steps made between the first
step at which the chief saw the global step reach --warmup_fraction (10%) of
--train_steps and the end of training, over the time between. Then the chief
waits for every worker to finish and evaluates the final model on the whole
test set: the exact AUC (Mann-Whitney: ranks of the scores, ties at their
average rank, numpy) and the log-loss (p clipped to [1e-7, 1 - 1e-7]).

Modes:
  launcher (no --job_name): starts --num_ps ps and --num_workers worker
    tasks of this program as its own subprocesses on 127.0.0.1 with free
    ports (each task's log in --log_dir), waits for the workers, then ends
    the ps tasks; on any failure, a timeout or SIGINT/SIGTERM it ends every
    child it started (by its PID, nothing else) and exits 1. Prints one JSON
    line: {"system": "tensorflow", "steps_per_sec", "auc", "log_loss",
    "seconds" (the launcher's wall time, start-up and evaluation included),
    "train_seconds", "steps_per_sec_all" (the whole training), ...}.
  task (--job_name=ps|worker --task_index=I --ps_hosts=... --worker_hosts=...):
    one task; the chief writes its result to --result_file.

Threads: every task's tf.distribute.Server and session run with
--intra_op_threads and --inter_op_threads (default 1 and 1: pstrain's tasks
are single-threaded by default; gRPC keeps threads of its own).
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

NUM_INT = 13
NUM_CAT = 26
EMBED_DIM = 8  # wide_deep
HIDDEN = (64, 32)
DEEP_EMBED_DIM = 16  # deepfm and dcn_v2
DEEP_HIDDEN = (256, 128)
CROSS_LAYERS = 3
INIT_SCALE = 0.05
INITIAL_ACCUMULATOR = 0.1
EVAL_BATCH = 8192


# ------------------------------------------------------------------ launcher


def free_ports(n):
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def die_with_parent():
    """preexec_fn: the child gets SIGTERM when the launcher dies (Linux)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def tail(path, lines=1):
    try:
        with open(path, errors="replace") as f:
            text = [line.rstrip() for line in f if line.strip()]
        return " | ".join(text[-lines:]) or "(empty log)"
    except OSError:
        return "(no log)"


class Terminated(Exception):
    pass


def launch(args):
    start = time.perf_counter()
    log_dir = os.path.abspath(args.log_dir)
    os.makedirs(log_dir, exist_ok=True)
    result_file = os.path.join(log_dir, "result.json")
    if os.path.exists(result_file):
        os.remove(result_file)
    ports = free_ports(args.num_ps + args.num_workers)
    ps_hosts = ",".join(f"127.0.0.1:{p}" for p in ports[:args.num_ps])
    worker_hosts = ",".join(f"127.0.0.1:{p}" for p in ports[args.num_ps:])
    common = [sys.executable, os.path.abspath(__file__),
              f"--ps_hosts={ps_hosts}", f"--worker_hosts={worker_hosts}",
              f"--result_file={result_file}"]
    for name in ("train_file", "test_file", "rows", "train_steps", "batch_size",
                 "learning_rate", "seed", "intra_op_threads", "inter_op_threads",
                 "warmup_fraction", "model", "optimizer", "embed_dim"):
        common.append(f"--{name}={getattr(args, name)}")

    def on_signal(signum, _frame):
        raise Terminated(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    children = []  # (name, Popen, log path)
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.setdefault("PYTHONUNBUFFERED", "1")
    try:
        tasks = [("ps", i) for i in range(args.num_ps)]
        tasks += [("worker", i) for i in range(args.num_workers)]
        for job, index in tasks:
            name = f"{job}-{index}"
            log = os.path.join(log_dir, f"{name}.log")
            with open(log, "w") as out:
                proc = subprocess.Popen(
                    common + [f"--job_name={job}", f"--task_index={index}"],
                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    env=env, preexec_fn=die_with_parent)
            children.append((name, proc, log))
        print(f"ctr_tf.py: {args.num_ps} ps, {args.num_workers} workers on {ps_hosts} / "
              f"{worker_hosts}; logs in {log_dir}", file=sys.stderr, flush=True)
        deadline = time.monotonic() + args.timeout_s
        workers = [c for c in children if c[0].startswith("worker")]
        while True:
            for name, proc, log in children:
                rc = proc.poll()
                if rc is not None and (rc != 0 or name.startswith("ps")):
                    raise RuntimeError(f"{name} exited {rc}: {tail(log)}")
            if all(proc.poll() == 0 for _, proc, _ in workers):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"not done after --timeout_s={args.timeout_s}")
            time.sleep(0.2)
        with open(result_file) as f:
            result = json.load(f)
    except (RuntimeError, Terminated, OSError, ValueError) as e:
        print(f"ctr_tf.py: failed: {e}", file=sys.stderr, flush=True)
        return 1
    finally:
        stop_children(children)
    result["seconds"] = time.perf_counter() - start
    print(json.dumps(result), flush=True)
    return 0


def stop_children(children):
    """SIGTERM, then SIGKILL after 5 s, to each child still running."""
    for _, proc, _ in children:
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + 5
    for _, proc, _ in children:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -------------------------------------------------------------------- tasks


def session_config(args):
    import tensorflow as tf

    return tf.compat.v1.ConfigProto(
        intra_op_parallelism_threads=args.intra_op_threads,
        inter_op_parallelism_threads=args.inter_op_threads,
        allow_soft_placement=False)


def load(path, rows, integer_fields):
    """(dense [N, 13] float32, keys [N, F] int64, labels [N] float32), numpy.

    Eager TensorFlow ops: decode_csv (empty fields -> ""), the integers'
    max(0, x) and log1p, the categorical strings' hash buckets; with
    integer_fields (F = 39, as pstrain's --criteo_integer_fields) also each
    integer's bucket floor(4 log(1 + x)) ("neg" below 0, "" when empty) as a
    categorical value of field 26 + j; else F = 26.
    """
    import tensorflow as tf

    text = tf.io.read_file(path)
    # Not tf.strings.strip on the whole text: it would also eat the tabs of
    # empty fields at the end of the last line.
    lines = tf.strings.regex_replace(tf.strings.split(text, "\n"), "\r$", "")
    lines = tf.boolean_mask(lines, tf.strings.length(lines) > 0)
    defaults = [[0.0]] + [[""]] * (NUM_INT + NUM_CAT)
    columns = tf.io.decode_csv(lines, record_defaults=defaults, field_delim="\t")
    labels = columns[0].numpy().astype("float32")
    texts = columns[1:1 + NUM_INT]
    ints = [tf.strings.to_number(tf.where(t == "", "0", t), tf.float64) for t in texts]
    dense = tf.math.log1p(tf.maximum(tf.stack(ints, axis=1), 0.0))
    values = [(f, columns[1 + NUM_INT + f]) for f in range(NUM_CAT)]
    if integer_fields:
        for j, (text, x) in enumerate(zip(texts, ints)):
            bucket = tf.strings.as_string(tf.cast(tf.floor(4 * tf.math.log1p(
                tf.maximum(x, 0.0))), tf.int64))
            bucket = tf.where(text == "", "", tf.where(x < 0, "neg", bucket))
            values.append((NUM_CAT + j, bucket))
    keys = tf.stack([tf.strings.to_hash_bucket_fast(tf.strings.join([f"f{f}:", v]), rows)
                     for f, v in values], axis=1)
    return dense.numpy().astype("float32"), keys.numpy(), labels


def build_model(args, num_ps, dense_in, keys_in):
    """The logit [B] of --model for placeholders dense_in [B, 13], keys_in [B, F]."""
    import tensorflow as tf

    v1 = tf.compat.v1
    dim = embed_dim(args)
    # No op-level seeds: TF1 gives every initializer op of one seed the same
    # stream, so each partition of a table, and each cross layer of one
    # shape, would start from the same values. The graph's seed
    # (v1.set_random_seed in main) gives each op a stream of its own.
    table_init = v1.random_uniform_initializer(-INIT_SCALE, INIT_SCALE)
    partitioner = v1.fixed_size_partitioner(num_ps)
    # Created in this order (wide first) so wide_deep's placement and start
    # values are as before; dcn_v2 has no wide table.
    wide = None
    if args.model != "dcn_v2":
        wide = v1.get_variable("wide", shape=[args.rows, 1], initializer=table_init,
                               partitioner=partitioner)
    deep = v1.get_variable("embedding", shape=[args.rows, dim], initializer=table_init,
                           partitioner=partitioner)
    batch = tf.shape(keys_in, out_type=tf.int64)[0]
    fields = int(keys_in.shape[1])
    ids = tf.reshape(keys_in, [-1])  # B*F, example-major
    wide_sum = None
    if wide is not None:
        # Wide: a [B, F] SparseTensor, the F weights of each example summed.
        rows = tf.repeat(tf.range(batch), fields)
        cols = tf.tile(tf.range(fields, dtype=tf.int64), [batch])
        wide_ids = tf.SparseTensor(tf.stack([rows, cols], axis=1), ids, [batch, fields])
        wide_sum = v1.nn.embedding_lookup_sparse(list(wide), wide_ids, None,
                                                 partition_strategy="mod", combiner="sum")
    # Deep: one id per (example, field) row, so each sum is that key's row.
    n = batch * fields
    deep_ids = tf.SparseTensor(tf.stack([tf.range(n), tf.zeros([n], tf.int64)], axis=1),
                               ids, [n, 1])
    embedded = v1.nn.embedding_lookup_sparse(list(deep), deep_ids, None,
                                             partition_strategy="mod", combiner="sum")
    x0 = tf.concat([tf.reshape(embedded, [-1, fields * dim]), dense_in], axis=1)
    glorot = v1.glorot_uniform_initializer()
    width = fields * dim + NUM_INT

    def dense(name, x, fan_in, units):
        w = v1.get_variable(f"{name}/kernel", [fan_in, units], initializer=glorot)
        b = v1.get_variable(f"{name}/bias", [units], initializer=v1.zeros_initializer())
        return tf.matmul(x, w) + b

    def mlp(x, fan_in, hidden):
        for i, units in enumerate(hidden + (1,)):
            x = dense(f"dense_{i}", x, fan_in, units)
            if units != 1:
                x = tf.nn.relu(x)
            fan_in = units
        return tf.reshape(x, [-1])

    if args.model == "wide_deep":
        return mlp(x0, width, HIDDEN) + tf.reshape(wide_sum, [-1])
    if args.model == "deepfm":
        # The wide part: the keys' weights and a weight per dense feature.
        linear = tf.reshape(wide_sum + dense("dense_linear", dense_in, NUM_INT, 1), [-1])
        e = tf.reshape(embedded, [-1, fields, dim])
        fm = 0.5 * tf.reduce_sum(tf.square(tf.reduce_sum(e, axis=1))
                                 - tf.reduce_sum(tf.square(e), axis=1), axis=1)
        return linear + fm + mlp(x0, width, DEEP_HIDDEN)
    # dcn_v2, stacked: full-rank cross layers, then the MLP.
    x = x0
    for layer in range(CROSS_LAYERS):
        x = x0 * dense(f"cross_{layer}", x, width, width) + x
    return mlp(x, width, DEEP_HIDDEN)


def embed_dim(args):
    return args.embed_dim or (EMBED_DIM if args.model == "wide_deep" else DEEP_EMBED_DIM)


def onednn_enabled():
    """Whether TensorFlow's oneDNN ops are on (TF_ENABLE_ONEDNN_OPTS, else its default)."""
    try:
        from tensorflow.python.util import _pywrap_util_port

        return bool(_pywrap_util_port.IsMklEnabled())
    except (ImportError, AttributeError):
        return "unknown"


def exact_auc(labels, scores):
    """Mann-Whitney AUC, ties at their average rank."""
    import numpy as np

    order = np.argsort(scores, kind="mergesort")
    _, inverse, counts = np.unique(scores[order], return_inverse=True, return_counts=True)
    average_rank = np.cumsum(counts) - (counts - 1) / 2.0  # 1-based
    ranks = np.empty(len(scores))
    ranks[order] = average_rank[inverse]
    positive = labels == 1
    n1, n0 = int(positive.sum()), int((~positive).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


def log_loss(labels, p):
    import numpy as np

    p = np.clip(p.astype("float64"), 1e-7, 1 - 1e-7)
    return float(-np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p)))


def run_task(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf

    v1 = tf.compat.v1
    tf.config.threading.set_intra_op_parallelism_threads(args.intra_op_threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.inter_op_threads)
    ps_hosts = args.ps_hosts.split(",")
    worker_hosts = args.worker_hosts.split(",")
    cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})
    server = tf.distribute.Server(cluster, job_name=args.job_name, task_index=args.task_index,
                                  config=session_config(args), start=True)
    if args.job_name == "ps":
        print(f"ps {args.task_index} serving on {ps_hosts[args.task_index]}", flush=True)
        server.join()
        return 0

    is_chief = args.task_index == 0
    num_workers = len(worker_hosts)
    t0 = time.perf_counter()
    dense, keys, labels = load(args.train_file, args.rows, args.integer_fields)
    test = load(args.test_file, args.rows, args.integer_fields) if is_chief else None
    print(f"worker {args.task_index}: {len(labels)} training examples loaded in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)

    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(args.seed)
        device = v1.train.replica_device_setter(
            ps_tasks=len(ps_hosts), worker_device=f"/job:worker/task:{args.task_index}",
            cluster=cluster)
        with v1.device(device):
            global_step = v1.train.get_or_create_global_step()
            # Workers that finished their loop: the chief evaluates once all have.
            done = v1.get_variable("workers_done", [], tf.int64,
                                   initializer=v1.zeros_initializer(), trainable=False)
            dense_in = v1.placeholder(tf.float32, [None, NUM_INT], name="dense")
            keys_in = v1.placeholder(tf.int64, [None, keys.shape[1]], name="keys")
            labels_in = v1.placeholder(tf.float32, [None], name="labels")
            logit = build_model(args, len(ps_hosts), dense_in, keys_in)
            loss = tf.reduce_mean(
                tf.nn.sigmoid_cross_entropy_with_logits(labels=labels_in, logits=logit))
            if args.optimizer == "adam":
                # TF1's Adam: not lazy on sparse gradients (every row's
                # moments decay each step), as SPARSE.md notes.
                optimizer = v1.train.AdamOptimizer(args.learning_rate)
            else:
                optimizer = v1.train.AdagradOptimizer(
                    args.learning_rate, initial_accumulator_value=INITIAL_ACCUMULATOR)
            train_op = optimizer.minimize(loss, global_step=global_step)
            probability = tf.sigmoid(logit)
            mark_done = v1.assign_add(done, 1)
            init = v1.global_variables_initializer()
            uninitialized = v1.report_uninitialized_variables()

        sess = v1.Session(server.target, config=session_config(args))
        if is_chief:
            sess.run(init)
        # Everyone (the chief too, to see its init landed) waits for the variables.
        wait_start = time.monotonic()
        while len(sess.run(uninitialized)):
            if time.monotonic() - wait_start > 600:
                raise RuntimeError("variables not initialized after 600 s")
            time.sleep(0.05)

        rng = np.random.default_rng(args.seed * 1000 + args.task_index)
        n, b = len(labels), args.batch_size
        order, pos = rng.permutation(n), 0
        target = args.train_steps
        warm_step = int(round(args.warmup_fraction * target))
        my_steps, step, last_loss = 0, 0, float("nan")
        loop_start = time.perf_counter()
        warm_time, warm_at = None, None
        next_print = loop_start + 5
        while step < target:
            if pos + b > n:
                order, pos = rng.permutation(n), 0
            idx = order[pos:pos + b]
            pos += b
            _, step, last_loss = sess.run(
                [train_op, global_step, loss],
                {dense_in: dense[idx], keys_in: keys[idx], labels_in: labels[idx]})
            step, last_loss = int(step), float(last_loss)
            my_steps += 1
            now = time.perf_counter()
            if warm_time is None and step >= warm_step:
                warm_time, warm_at = now, step
            if now >= next_print:
                rate = step / (now - loop_start)
                print(f"worker {args.task_index}: global step {step}/{target}, "
                      f"{rate:.1f} steps/s, loss {last_loss:.4f}", flush=True)
                next_print = now + 5
        end = time.perf_counter()
        sess.run(mark_done)
        print(f"worker {args.task_index}: done, {my_steps} steps of its own, global step "
              f"{step}, {end - loop_start:.1f} s", flush=True)
        if not is_chief:
            return 0

        # The final model: once every worker has left its loop.
        while sess.run(done) < num_workers:
            time.sleep(0.05)
        final_step = int(sess.run(global_step))
        test_dense, test_keys, test_labels = test
        p = np.concatenate([
            sess.run(probability, {dense_in: test_dense[i:i + EVAL_BATCH],
                                   keys_in: test_keys[i:i + EVAL_BATCH]})
            for i in range(0, len(test_labels), EVAL_BATCH)])
        result = {
            "system": "tensorflow",
            "version": tf.__version__,
            "steps_per_sec": (step - warm_at) / (end - warm_time) if end > warm_time else None,
            "steps_per_sec_all": step / (end - loop_start),
            "warmup_steps": warm_at,
            "auc": exact_auc(test_labels, p),
            "log_loss": log_loss(test_labels, p),
            "test_examples": int(len(test_labels)),
            "test_ctr": float(test_labels.mean()),
            "train_examples": int(n),
            "train_seconds": end - loop_start,
            "global_step": final_step,
            "chief_steps": my_steps,
            "final_train_loss": float(last_loss),
            "model": args.model, "optimizer": args.optimizer, "embed_dim": embed_dim(args),
            "rows": args.rows, "batch_size": b, "learning_rate": args.learning_rate,
            "train_steps": target, "num_ps": len(ps_hosts), "num_workers": num_workers,
            "intra_op_threads": args.intra_op_threads,
            "inter_op_threads": args.inter_op_threads,
            "onednn": onednn_enabled(),
        }
        tmp = args.result_file + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f)
        os.replace(tmp, args.result_file)
        print(f"chief: {json.dumps(result)}", flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train_file", required=True)
    parser.add_argument("--test_file", required=True)
    parser.add_argument("--rows", type=int, default=100000, help="hash buckets of each table")
    parser.add_argument("--no_integer_fields", dest="integer_fields", action="store_false",
                        help="the 26 categorical fields alone (pstrain's "
                        "--criteo_integer_fields=false)")
    parser.add_argument("--model", choices=("wide_deep", "deepfm", "dcn_v2"), default="wide_deep")
    parser.add_argument("--optimizer", choices=("adagrad", "adam"), default="adagrad")
    parser.add_argument("--embed_dim", type=int, default=0,
                        help=f"0: {EMBED_DIM} for wide_deep, {DEEP_EMBED_DIM} for deepfm and dcn_v2")
    parser.add_argument("--train_steps", type=int, default=3000, help="global steps")
    parser.add_argument("--batch_size", type=int, default=256)
    parser.add_argument("--learning_rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--intra_op_threads", type=int, default=1)
    parser.add_argument("--inter_op_threads", type=int, default=1)
    parser.add_argument("--warmup_fraction", type=float, default=0.1,
                        help="steps/s leaves out the global steps before this share")
    # Launcher.
    parser.add_argument("--num_ps", type=int, default=2)
    parser.add_argument("--num_workers", type=int, default=2)
    parser.add_argument("--log_dir", default="results/peers-ctr/tf")
    parser.add_argument("--timeout_s", type=float, default=3600)
    # One task.
    parser.add_argument("--job_name", choices=("ps", "worker"))
    parser.add_argument("--task_index", type=int, default=0)
    parser.add_argument("--ps_hosts", default="")
    parser.add_argument("--worker_hosts", default="")
    parser.add_argument("--result_file", default="")
    args = parser.parse_args()
    if args.embed_dim < 0:
        parser.error("--embed_dim must be at least 0")
    if min(args.rows, args.train_steps, args.batch_size, args.num_ps, args.num_workers,
           args.intra_op_threads, args.inter_op_threads) < 1:
        parser.error("--rows, --train_steps, --batch_size, --num_ps, --num_workers and the "
                     "thread counts must be at least 1")
    if not 0 <= args.warmup_fraction < 1:
        parser.error("--warmup_fraction must be in [0, 1)")
    if args.job_name is None:
        for path in (args.train_file, args.test_file):
            if not os.path.isfile(path):
                parser.error(f"no such file: {path}")
        return launch(args)
    if not args.ps_hosts or not args.worker_hosts:
        parser.error("a task needs --ps_hosts and --worker_hosts")
    return run_task(args)


if __name__ == "__main__":
    sys.exit(main())
