#!/usr/bin/env python3
"""ddp_mnist.py: pstrain's MNIST mlp_relu job in PyTorch DistributedDataParallel, on CPU.

What a user with a dense model would run instead of a parameter server:
--num_workers processes on 127.0.0.1, one DDP rank each, gloo all-reduce of
the gradients (the mean over the ranks) after every step, on the CPU. The
job is pstrain's `--model=mlp_relu` on MNIST, as model/zoo/model_zoo.cc builds it:
  - dense 784->256, relu, dense 256->128, relu, dense 128->10 (logits);
    weights glorot-uniform (torch's xavier_uniform_: Keras' fans), biases 0;
  - softmax cross-entropy, the mean over the batch; plain SGD
    (torch.optim.SGD, no momentum) at --learning_rate (0.3: pstrain's
    recommended rate for mlp_relu at batch 100);
  - --batch_size examples per rank and step (100, pstrain's default), so one
    step trains num_workers * batch_size examples with the mean of the ranks'
    gradients: pstrain's --mode=sync with every worker aggregated;
  - data: the four idx .gz files in --data_dir (default $MNIST_DIR), read
    with gzip and numpy, pixels / 255 as pstrain's idx reader does; each
    epoch a permutation of the 60,000 training examples seeded by
    --seed + epoch, rank r taking every num_workers-th example from r
    (DistributedSampler's split), in batches of --batch_size.

Threads: torch.set_num_threads(--threads) in each rank (default 1, and 1
inter-op thread). pstrain's tasks are single-threaded by default
(--intra_op_threads=1), and with 2 ranks on a 2-core machine one thread
each fills the cores; more threads per rank only oversubscribe them (and
PyTorch's OpenMP threads spin while they wait). gloo's communication runs
on threads of its own, as pstrain's transport does. On a larger machine give
--threads=cores/num_workers.

Timing: the ranks load the data, build the model and wrap it in DDP, meet
at a barrier, then the clock starts. Every --eval_every_steps steps (and at
the end) the ranks meet at a barrier, rank 0 evaluates the 10,000 test
examples and tells every rank whether --target_accuracy is reached, and they
meet again; the time between those barriers is left out of the training time
(pstrain's chief evaluates beside the workers, which go on training).
examples_per_s = steps * num_workers * batch_size / training time.
seconds_to_target: training time at the first evaluation at or above
--target_accuracy (null if none). Training stops there, or after
--train_steps steps; --run_to_budget trains all --train_steps steps anyway
(so that two systems train the same examples).

Output: one JSON line on stdout (rank 0), e.g.
  {"system": "ddp", "backend": "gloo", "torch_version": ..., "num_workers": 2,
   "batch_size": 100, "threads": 1, "learning_rate": 0.3, "steps": 1500,
   "examples": 300000, "train_seconds": ..., "examples_per_s": ...,
   "eval_seconds": ..., "wall_seconds": ..., "target_accuracy": 0.97,
   "seconds_to_target": ..., "steps_to_target": ..., "examples_to_target": ...,
   "final_test_accuracy": ..., "final_test_loss": ..., "evals": [[step,
   train seconds, test accuracy], ...]}
Exit status 0 with that line, 1 on any failure (the reason on stderr), 2 on
bad flags. --help works without torch installed.

  ddp_mnist.py [--data_dir=DIR] [--num_workers=2] [--batch_size=100]
      [--learning_rate=0.3] [--threads=1] [--target_accuracy=0.97]
      [--train_steps=1500] [--eval_every_steps=250] [--run_to_budget]
      [--seed=1] [--port=0]
"""

import argparse
import gzip
import json
import os
import socket
import sys
import time

LAYER_WIDTHS = [784, 256, 128, 10]
TRAIN_EXAMPLES = 60000


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n", 1)[0],
        epilog="The module docstring (head -60 of this file) has the details.")
    parser.add_argument("--data_dir", default=os.environ.get("MNIST_DIR", ""),
                        help="folder of MNIST's four idx .gz files (default $MNIST_DIR)")
    parser.add_argument("--num_workers", type=int, default=2, help="DDP ranks (processes)")
    parser.add_argument("--batch_size", type=int, default=100, help="examples per rank and step")
    parser.add_argument("--learning_rate", type=float, default=0.3, help="plain SGD's rate")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads in each rank (default 1: 2 ranks, 2 cores)")
    parser.add_argument("--target_accuracy", type=float, default=0.97,
                        help="stop at the first evaluation at or above this test accuracy")
    parser.add_argument("--train_steps", type=int, default=1500,
                        help="step budget (one step: num_workers * batch_size examples)")
    parser.add_argument("--eval_every_steps", type=int, default=250,
                        help="evaluate on the test set every this many steps (0: at the end only)")
    parser.add_argument("--run_to_budget", action="store_true",
                        help="train all --train_steps steps even after the target is reached")
    parser.add_argument("--seed", type=int, default=1, help="seed of the weights and the shuffling")
    parser.add_argument("--port", type=int, default=0,
                        help="rendezvous port on 127.0.0.1 (0: a free one)")
    args = parser.parse_args(argv)
    for name in ("num_workers", "batch_size", "threads", "train_steps"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1")
    if args.eval_every_steps < 0:
        parser.error("--eval_every_steps must be >= 0")
    if not 0 < args.target_accuracy <= 1:
        parser.error("--target_accuracy must be in (0, 1]")
    if not args.data_dir:
        parser.error("no MNIST folder: pass --data_dir=DIR or set MNIST_DIR")
    return args


def read_idx(path, expect_dims):
    """An idx file (gzip or plain) as a numpy array of uint8."""
    import numpy as np

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError(f"{path}: not an idx file of unsigned bytes")
    dims = data[3]
    if dims != expect_dims:
        raise ValueError(f"{path}: {dims} dimensions, expected {expect_dims}")
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims)
    if body.size != int(np.prod(shape)):
        raise ValueError(f"{path}: {body.size} bytes of data for shape {shape}")
    return body.reshape(shape)


def find(data_dir, stem):
    for name in (stem + ".gz", stem):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"no {stem}.gz (or {stem}) in {data_dir}")


def load_mnist(data_dir):
    """(train x, train y, test x, test y): float32 pixels / 255, shape (N, 784); int64 labels."""
    import numpy as np

    def images(stem):
        raw = read_idx(find(data_dir, stem), 3)
        return (raw.reshape(raw.shape[0], -1).astype(np.float32) / 255.0)

    def labels(stem):
        return read_idx(find(data_dir, stem), 1).astype(np.int64)

    return (images("train-images-idx3-ubyte"), labels("train-labels-idx1-ubyte"),
            images("t10k-images-idx3-ubyte"), labels("t10k-labels-idx1-ubyte"))


def build_model(seed):
    import torch
    from torch import nn

    torch.manual_seed(seed)
    layers = []
    for a, b in zip(LAYER_WIDTHS, LAYER_WIDTHS[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])  # logits: no relu after the last layer
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)
    return model


def evaluate(model, x, y, batch=1000):
    """(accuracy, mean loss) on the whole set."""
    import torch
    import torch.nn.functional as F

    correct, loss_sum = 0, 0.0
    with torch.no_grad():
        for start in range(0, x.shape[0], batch):
            logits = model(x[start:start + batch])
            target = y[start:start + batch]
            loss_sum += F.cross_entropy(logits, target, reduction="sum").item()
            correct += (logits.argmax(dim=1) == target).sum().item()
    return correct / x.shape[0], loss_sum / x.shape[0]


def run_rank(rank, args, port, started):
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set in this process
        pass
    world = args.num_workers
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    train_x, train_y, test_x, test_y = load_mnist(args.data_dir)
    train_x, train_y = torch.from_numpy(train_x), torch.from_numpy(train_y)
    test_x, test_y = torch.from_numpy(test_x), torch.from_numpy(test_y)
    # Every rank builds the same weights from the seed; DDP broadcasts
    # rank 0's anyway.
    model = DistributedDataParallel(build_model(args.seed))
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate)
    per_rank = train_x.shape[0] // world
    batches_per_epoch = per_rank // args.batch_size
    if batches_per_epoch < 1:
        raise ValueError(f"{per_rank} examples per rank: fewer than one batch of {args.batch_size}")

    def epoch_order(epoch):
        perm = np.random.default_rng(args.seed + epoch).permutation(train_x.shape[0])
        return torch.from_numpy(perm[rank::world][:batches_per_epoch * args.batch_size])

    stop = torch.zeros(1)
    evals = []
    train_seconds = eval_seconds = 0.0
    to_target = None  # (step, train seconds)
    final = None

    def evaluation(step, elapsed):
        """The ranks' evaluation window: rank 0 evaluates and says whether to stop."""
        nonlocal eval_seconds, to_target, final
        dist.barrier()
        start = time.perf_counter()
        if rank == 0:
            accuracy, loss = evaluate(model.module, test_x, test_y)
            evals.append([step, round(elapsed, 4), accuracy])
            final = (accuracy, loss)
            if to_target is None and accuracy >= args.target_accuracy:
                to_target = (step, elapsed)
            stop[0] = 1.0 if (to_target is not None and not args.run_to_budget) else 0.0
        dist.broadcast(stop, src=0)
        dist.barrier()
        eval_seconds += time.perf_counter() - start
        return bool(stop[0] > 0)

    dist.barrier()
    clock = time.perf_counter()  # training time: the clock minus the evaluations
    step = 0
    order = epoch_order(0)
    stopped = False
    while step < args.train_steps:
        epoch, batch_index = divmod(step, batches_per_epoch)
        if batch_index == 0 and step > 0:
            order = epoch_order(epoch)
        index = order[batch_index * args.batch_size:(batch_index + 1) * args.batch_size]
        x, y = train_x[index], train_y[index]
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()  # DDP all-reduces (averages) the gradients here
        optimizer.step()
        step += 1
        if args.eval_every_steps and step % args.eval_every_steps == 0 and step < args.train_steps:
            elapsed = time.perf_counter() - clock - eval_seconds
            if evaluation(step, elapsed):
                stopped = True
                break
    if not stopped:
        elapsed = time.perf_counter() - clock - eval_seconds
        evaluation(step, elapsed)
    train_seconds = time.perf_counter() - clock - eval_seconds
    if rank == 0:
        examples = step * world * args.batch_size
        print(json.dumps({
            "system": "ddp", "backend": "gloo", "torch_version": torch.__version__,
            "num_workers": world, "batch_size": args.batch_size, "threads": args.threads,
            "threads_in_use": torch.get_num_threads(), "learning_rate": args.learning_rate,
            "seed": args.seed, "steps": step, "examples": examples,
            "epochs": round(examples / train_x.shape[0], 3),
            "train_seconds": round(train_seconds, 4),
            "examples_per_s": round(examples / train_seconds, 1),
            "eval_seconds": round(eval_seconds, 4),
            "wall_seconds": round(time.time() - started, 3),
            "target_accuracy": args.target_accuracy,
            "seconds_to_target": None if to_target is None else round(to_target[1], 4),
            "steps_to_target": None if to_target is None else to_target[0],
            "examples_to_target": None if to_target is None else to_target[0] * world * args.batch_size,
            "final_test_accuracy": final[0], "final_test_loss": round(final[1], 5),
            "evals": evals,
        }), flush=True)
    dist.destroy_process_group()


def rank_main(rank, args, port, started):
    try:
        run_rank(rank, args, port, started)
    except Exception as e:  # one line naming the rank, then the traceback
        print(f"ddp_mnist.py: rank {rank}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        raise


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv):
    args = parse_args(argv)
    started = time.time()
    try:
        import torch.multiprocessing as mp
    except ImportError as e:
        print(f"ddp_mnist.py: cannot import torch: {e}", file=sys.stderr)
        return 1
    # gloo on the loopback, whatever the host name resolves to.
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    try:
        # Checked here first: one clear line, not one per rank.
        for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                     "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
            find(args.data_dir, stem)
    except FileNotFoundError as e:
        print(f"ddp_mnist.py: {e}", file=sys.stderr)
        return 1
    port = args.port or free_port()
    try:
        mp.spawn(rank_main, args=(args, port, started), nprocs=args.num_workers, join=True)
    except Exception as e:  # ProcessRaisedException / ProcessExitedException
        first = str(e).strip().splitlines()
        print(f"ddp_mnist.py: a rank failed: {first[-1] if first else type(e).__name__}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
