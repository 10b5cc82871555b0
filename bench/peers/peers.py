#!/usr/bin/env python3
"""peers.py: bench_kernels' training step in PyTorch or TensorFlow, on CPU (or PyTorch on a GPU).

Times the step that bench/bench_kernels.cc times for pstrain, so that
bench/peers/run.sh can print pstrain / peer ratios:
  - models as model/zoo/model_zoo.cc builds them for 784 inputs, 10 classes:
    mlp_relu: dense 784->256, relu, dense 256->128, relu, dense 128->10;
    cnn (LeNet): conv 5x5x20 valid, relu, maxpool 2x2, conv 5x5x50 valid,
    relu, maxpool 2x2, dense 800->500, relu, dense 500->10;
    wide_mlp: dense 784->2048, relu, dense 2048->2048, relu, dense 2048->10;
    weights glorot-uniform, biases zero;
  - per step: forward, softmax cross-entropy (mean over the batch), the
    gradients of every variable (none for the input), then plain SGD with
    learning rate 0.01;
  - data: 8 batches of uniform [0, 1) pixels and uniform random labels,
    cycled, made before the clock starts;
  - timing as bench_kernels' TimePerCall: warm-up calls (at least 3 and a
    fifth of a repeat) estimate the cost, then each of --repeats repeats
    times enough steps to last about --train_repeat_s; the median repeat
    counts. The last step's loss is read back inside each repeat, so queued
    work (if any) is finished before the clock stops.

Thread settings hold for a whole process, so each run measures one peer at
one thread count (run.sh starts one process per peer and thread count):
  PyTorch: torch.set_num_threads(T), torch.set_num_interop_threads(1);
    NCHW (its default layout), torch.optim.SGD (no momentum).
    --device=cuda: the model and the 8 batches on GPU 0 (copied there
    before the clock starts), eager mode, and torch.cuda.synchronize()
    after each repeat's steps; with --host_params, the step of a
    parameter-server worker instead (bench_kernels' step for pstrain): the
    batch and the parameters copied from host memory to the GPU, the
    gradients back, SGD on the host. TensorFlow runs on the CPU only.
  TensorFlow: intra-op threads T, inter-op threads 1; variables and tf.nn
    ops in one tf.function step (no XLA: jit_compile=False), NHWC.

Output: one JSON object per line on stdout. First
  {"kind": "info", "peer": ..., "version": ..., "threads": T, ...details}
then per model and batch size
  {"kind": "result", "peer": ..., "model": ..., "threads": T, "batch": B,
   "examples_per_s": X, "ms_per_step": Y}
A peer that cannot be imported prints {"kind": "skip", "peer": ...,
"reason": ...} and exits 0, so the caller can go on with the others.
"""

import argparse
import json
import os
import statistics
import sys
import time

MODELS = ("mlp_relu", "cnn", "wide_mlp")
MLP_WIDTHS = {"mlp_relu": [784, 256, 128, 10], "wide_mlp": [784, 2048, 2048, 10]}
LEARNING_RATE = 0.01
NUM_BATCHES = 8
NUM_CLASSES = 10
SIDE = 28  # 784 inputs: a 28x28x1 image for the cnn


def emit(obj):
    print(json.dumps(obj), flush=True)


def time_per_call(step, finish, repeat_s, repeats):
    """Seconds per call of step(), as bench_kernels' TimePerCall."""
    warmup_calls = 0
    warm_start = time.perf_counter()
    while warmup_calls < 3 or time.perf_counter() - warm_start < repeat_s / 5:
        step()
        warmup_calls += 1
    finish()
    estimate = (time.perf_counter() - warm_start) / warmup_calls
    calls = max(1, round(repeat_s / estimate))
    per_call = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            step()
        finish()
        per_call.append((time.perf_counter() - start) / calls)
    return statistics.median(per_call)


def synthetic_batches(batch, seed=2):
    """8 (pixels, labels) pairs as numpy arrays: (B, 784) float32, (B,) int64."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [(rng.random((batch, SIDE * SIDE), dtype=np.float32),
             rng.integers(0, NUM_CLASSES, size=batch, dtype=np.int64))
            for _ in range(NUM_BATCHES)]


# ---------------------------------------------------------------- PyTorch


def torch_setup(threads, device):
    import torch

    if device != "cpu" and not torch.cuda.is_available():
        raise ImportError(f"torch {torch.__version__} sees no CUDA GPU")

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    return {
        "version": torch.__version__,
        "threads_in_use": torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "mkldnn": torch.backends.mkldnn.is_available(),
        "device": device if device == "cpu" else torch.cuda.get_device_name(0),
    }


def torch_model(name):
    import torch
    from torch import nn

    if name in MLP_WIDTHS:
        widths = MLP_WIDTHS[name]
        layers = []
        for a, b in zip(widths, widths[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        model = nn.Sequential(*layers[:-1])  # logits: no relu after the last
    else:
        model = nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(800, 500), nn.ReLU(),
                              nn.Linear(500, NUM_CLASSES))
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Conv2d)):
                # The same fans as pstrain's (Keras') glorot uniform.
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)
    return model


def torch_time(name, batch, repeat_s, repeats, device, host_params=False):
    import torch
    import torch.nn.functional as F

    torch.manual_seed(1)
    model = torch_model(name).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    shape = (-1, 784) if name in MLP_WIDTHS else (-1, 1, SIDE, SIDE)
    data_device = "cpu" if host_params else device
    batches = [(torch.from_numpy(x).reshape(shape).contiguous().to(data_device),
                torch.from_numpy(y).to(data_device)) for x, y in synthetic_batches(batch)]
    # --host_params: the values live in host memory, as a ps worker's do.
    params = list(model.parameters())
    host_values = [p.detach().to("cpu") for p in params]
    state = {"next": 0, "loss": None}

    def step():
        x, y = batches[state["next"]]
        state["next"] = (state["next"] + 1) % NUM_BATCHES
        if host_params:
            with torch.no_grad():
                for p, value in zip(params, host_values):
                    p.copy_(value)
            x, y = x.to(device), y.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if host_params:
            with torch.no_grad():
                for p, value in zip(params, host_values):
                    value.sub_(p.grad.to("cpu"), alpha=LEARNING_RATE)
        else:
            optimizer.step()
        state["loss"] = loss

    def finish():
        state["loss"].item()
        if device != "cpu":
            torch.cuda.synchronize()

    return time_per_call(step, finish, repeat_s, repeats)


# ------------------------------------------------------------- TensorFlow


def tensorflow_setup(threads, device):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.set_visible_devices([], "GPU")
    info = {"version": tf.__version__,
            "threads_in_use": tf.config.threading.get_intra_op_parallelism_threads(),
            "onednn": "unknown"}
    # Whether its oneDNN ops are on: TF_ENABLE_ONEDNN_OPTS=1 or 0 decides;
    # unset, TensorFlow decides from the CPU (2.21 left them off on an
    # AVX2-only AMD EPYC).
    try:
        from tensorflow.python.util import _pywrap_util_port

        info["onednn"] = bool(_pywrap_util_port.IsMklEnabled())
    except (ImportError, AttributeError):
        pass
    return info


def tensorflow_model(name):
    """(variables, train_step): train_step(x, y) is one SGD step, returns the loss."""
    import tensorflow as tf

    glorot = tf.keras.initializers.GlorotUniform(seed=1)

    def variable(shape, zero=False):
        value = tf.zeros(shape) if zero else glorot(shape)
        return tf.Variable(value, dtype=tf.float32)

    if name in MLP_WIDTHS:
        widths = MLP_WIDTHS[name]
        dense = [(variable((a, b)), variable((b,), zero=True))
                 for a, b in zip(widths, widths[1:])]
        convs = []
    else:
        convs = [(variable((5, 5, 1, 20)), variable((20,), zero=True)),
                 (variable((5, 5, 20, 50)), variable((50,), zero=True))]
        dense = [(variable((800, 500)), variable((500,), zero=True)),
                 (variable((500, NUM_CLASSES)), variable((NUM_CLASSES,), zero=True))]
    variables = [v for pair in convs + dense for v in pair]

    def forward(x):
        for w, b in convs:
            x = tf.nn.relu(tf.nn.conv2d(x, w, strides=1, padding="VALID") + b)
            x = tf.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")
        if convs:
            x = tf.reshape(x, (-1, 800))  # NHWC order, as pstrain flattens
        for i, (w, b) in enumerate(dense):
            x = tf.matmul(x, w) + b
            if i + 1 < len(dense):
                x = tf.nn.relu(x)
        return x

    @tf.function(jit_compile=False)
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = forward(x)
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, variables)
        for v, g in zip(variables, grads):
            v.assign_sub(LEARNING_RATE * g)
        return loss

    return variables, train_step


def tensorflow_time(name, batch, repeat_s, repeats, device, host_params=False):
    import numpy as np
    import tensorflow as tf

    _, train_step = tensorflow_model(name)
    shape = (-1, 784) if name in MLP_WIDTHS else (-1, SIDE, SIDE, 1)
    batches = [(tf.constant(np.reshape(x, shape)), tf.constant(y))
               for x, y in synthetic_batches(batch)]
    state = {"next": 0, "loss": None}

    def step():
        x, y = batches[state["next"]]
        state["next"] = (state["next"] + 1) % NUM_BATCHES
        state["loss"] = train_step(x, y)

    def finish():
        state["loss"].numpy()

    return time_per_call(step, finish, repeat_s, repeats)


PEERS = {
    "torch": (torch_setup, torch_time),
    "tensorflow": (tensorflow_setup, tensorflow_time),
}


def int_list(text):
    return [int(v) for v in text.split(",") if v]


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peer", required=True, choices=sorted(PEERS))
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="cuda: GPU 0 (torch only)")
    parser.add_argument("--host_params", action="store_true",
                        help="with --device=cuda: a ps worker's step, as bench_kernels "
                             "times pstrain's: the batch and the parameters copied from "
                             "host memory each step, the gradients back, SGD on the host")
    parser.add_argument("--threads", type=int, default=1,
                        help="intra-op threads for the whole process")
    parser.add_argument("--models", default="mlp_relu,cnn",
                        help="comma-separated, of: " + ", ".join(MODELS))
    parser.add_argument("--batch_sizes", type=int_list, default=[64, 100])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--train_repeat_s", type=float, default=1.0)
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    for m in models:
        if m not in MODELS:
            parser.error(f"unknown model {m!r}; known: {', '.join(MODELS)}")
    if args.threads < 1 or args.repeats < 1 or not args.batch_sizes:
        parser.error("--threads and --repeats must be at least 1, "
                     "--batch_sizes not empty")

    if args.peer == "tensorflow" and args.device != "cpu":
        parser.error("--peer=tensorflow runs on the CPU only")
    if args.host_params and args.device == "cpu":
        parser.error("--host_params needs --device=cuda")

    setup, time_step = PEERS[args.peer]
    try:
        info = setup(args.threads, args.device)
    except ImportError as e:
        emit({"kind": "skip", "peer": args.peer, "reason": f"cannot import: {e}"})
        return 0
    emit({"kind": "info", "peer": args.peer, "threads": args.threads, **info})
    for model in models:
        for batch in args.batch_sizes:
            seconds = time_step(model, batch, args.train_repeat_s, args.repeats, args.device,
                                args.host_params)
            emit({"kind": "result", "peer": args.peer, "model": model,
                  "host_params": args.host_params,
                  "threads": args.threads, "batch": batch,
                  "examples_per_s": batch / seconds,
                  "ms_per_step": 1e3 * seconds})
    return 0


if __name__ == "__main__":
    sys.exit(main())
