"""Spec and feature-file builders: their files as the executables parse them."""

import pytest

from pstrain.cluster import LocalCluster
from pstrain.run import RunFailed
from pstrain.spec import Features, ModelSpec


def test_model_spec_text_is_the_documented_format():
    spec = (ModelSpec().conv(5, 20, activation="relu").maxpool().conv("3x3", 8, stride=2,
                                                                         padding="same")
            .dense(500, activation="relu").batchnorm(momentum=0.9, activation="relu")
            .dropout(0.3).dense("classes").learning_rate(0.1)
            .lr_schedule("cosine", decay_steps=5000, warmup_steps=200, min=0.001)
            .weight_decay(0.0005).augment("crop", "flip"))
    assert spec.text() == (
        "conv 5x5 20 relu\nmaxpool 2\nconv 3x3 8 stride 2 same\ndense 500 relu\n"
        "batchnorm momentum 0.9 relu\ndropout 0.3\ndense classes\nlearning_rate 0.1\n"
        "lr_schedule cosine decay_steps 5000 warmup_steps 200 min 0.001\n"
        "weight_decay 0.0005\naugment crop,flip\n")
    with pytest.raises(ValueError, match="activation"):
        ModelSpec().dense(3, activation="tanh")


def test_features_text_and_name_checks():
    features = (Features(dim=8).categorical("user", 0, buckets=100)
                .multi_hot("history", 2, buckets=50, table="items", combiner="mean",
                           max_length=5, weighted=True)
                .numeric("age", "I1").numeric("count", "I2", bucketize=[0, 1, 5]))
    assert features.text() == (
        "dim 8\nuser categorical 0 buckets=100\n"
        "history multi_hot 2 buckets=50 table=items combiner=mean max_length=5 weighted\n"
        "age numeric I1 log1p\ncount numeric I2 bucketize=0,1,5\n")
    with pytest.raises(ValueError, match="twice"):
        Features().categorical("a", 0).categorical("a", 1)
    with pytest.raises(ValueError, match="letters"):
        Features().categorical("a b", 0)


def test_a_built_model_trains(bin_dir, csv_problem, tmp_run_dir):
    spec = ModelSpec().dense(16, activation="relu").dropout(0.1).dense("classes").learning_rate(0.2)
    run = LocalCluster(num_ps=1, num_workers=1).train(model=spec, train_steps=60,
                                                      run_dir=tmp_run_dir, **csv_problem)
    try:
        assert run.wait(progress=False) == 0
    finally:
        run.stop()
    assert (tmp_run_dir / "model.spec").read_text() == spec.text()
    assert "model=spec-" in run.logs("chief")  # the job names a spec model so


def test_a_bad_spec_line_is_refused_by_the_projects_parser(bin_dir, csv_problem, tmp_run_dir):
    spec = ModelSpec().dense(16, activation="relu").maxpool(3).dense("classes")
    with pytest.raises(RunFailed, match=r"model\.spec:2: expected 'maxpool 2'"):
        LocalCluster(num_ps=1, num_workers=1).train(
            model=spec, train_steps=60, run_dir=tmp_run_dir, **csv_problem).wait(progress=False)


def test_a_click_model_with_a_feature_file_trains(bin_dir, tmp_path, tmp_run_dir):
    import numpy as np

    rng = np.random.default_rng(3)
    for name, rows in (("train", 800), ("test", 200)):
        users, items = rng.integers(0, 20, rows), rng.integers(0, 30, rows)
        clicks = ((users + items) % 3 == 0).astype(int)
        (tmp_path / f"{name}.ffm").write_text("".join(
            f"{c} 0:{u}:1 1:{i}:1\n" for c, u, i in zip(clicks, users, items)))
    features = Features(dim=8).categorical("user", 0, buckets=64).categorical("item", 1,
                                                                            buckets=64)
    spec = ModelSpec().embedding(8).wide().dense(16, activation="relu").dense("classes")
    run = LocalCluster(num_ps=2, num_workers=1).train(
        model=spec, features=features, dataset="libffm", train_file=tmp_path / "train.ffm",
        test_file=tmp_path / "test.ffm", train_steps=100, run_dir=tmp_run_dir)
    try:
        assert run.wait(progress=False) == 0
    finally:
        run.stop()
    assert (tmp_run_dir / "model.features").read_text() == features.text()
    assert "test_auc" in run.metrics().columns
