#!/usr/bin/env python3
"""README's first job from Python: MNIST on a local cluster (2 ps, 2 workers,
async), the last metrics row, the test set predicted in this process from
numpy (against the chief's Test-Accuracy), and a plot of the run in mnist.png.

  MNIST_DIR=~/mnist python examples/python/train_mnist.py   (after pip install .)
"""
import gzip
import os
import re

import matplotlib.pyplot as plt
import numpy as np
import pstrain

mnist = os.environ["MNIST_DIR"]
run = pstrain.LocalCluster(num_ps=2, num_workers=2).train(
    model="mlp_relu", dataset="mnist", data_dir=mnist, train_steps=3000, eval_every_steps=250)
run.wait()
metrics = run.metrics()
print(metrics.iloc[-1][["step", "time", "train_loss", "test_accuracy", "examples_per_sec"]])

with gzip.open(f"{mnist}/t10k-images-idx3-ubyte.gz") as f:
    images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28, 1)
with gzip.open(f"{mnist}/t10k-labels-idx1-ubyte.gz") as f:
    labels = np.frombuffer(f.read(), np.uint8, offset=8)
probabilities = pstrain.load(run.model_path).predict(images.astype(np.float32) / 255)
accuracy = float(np.mean(probabilities.argmax(1) == labels))
chief = re.search(r"Test-Accuracy: ([0-9.]+)", run.logs("chief")).group(1)
print(f"in process: Test-Accuracy {accuracy:.4f}; the chief's: {chief}")

ax = metrics.plot(x="step", y=["train_loss", "test_loss"], logy=True)
metrics.plot(x="step", y="test_accuracy", secondary_y=True, ax=ax)
plt.savefig("mnist.png")
print(f"model: {run.model_path}; plot: mnist.png")
