#include "data/input_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace pst {
namespace {

constexpr int64_t kDim = 2;

// Example i has features (i, -i) and label i % 10, so a batch row tells
// which example it came from and whether its label travelled with it.
Dataset MakeDataset(int64_t size) {
  Dataset dataset;
  dataset.size = size;
  dataset.feature_dim = kDim;
  dataset.num_classes = 10;
  for (int64_t i = 0; i < size; ++i) {
    dataset.features.push_back(static_cast<float>(i));
    dataset.features.push_back(static_cast<float>(-i));
    dataset.labels.push_back(static_cast<int32_t>(i % 10));
  }
  return dataset;
}

InputPipelineOptions Options(int64_t batch_size, int worker_index = 0, int num_workers = 1,
                             uint64_t seed = 7) {
  InputPipelineOptions options;
  options.batch_size = batch_size;
  options.worker_index = worker_index;
  options.num_workers = num_workers;
  options.seed = seed;
  return options;
}

std::unique_ptr<InputPipeline> MustCreate(const Dataset& dataset,
                                          const InputPipelineOptions& options) {
  StatusOr<std::unique_ptr<InputPipeline>> pipeline = InputPipeline::Create(dataset, options);
  CHECK(pipeline.ok()) << pipeline.status().ToString();
  return std::move(pipeline).value();
}

// The example ids of each of the next `num_epochs` epochs, in order, checking
// each batch's shape, rows and position on the way.
std::vector<std::vector<int64_t>> ReadEpochs(InputPipeline& pipeline, int num_epochs) {
  std::vector<std::vector<int64_t>> epochs(num_epochs);
  const int64_t batches = pipeline.batches_per_epoch();
  for (int64_t epoch = 0; epoch < num_epochs; ++epoch) {
    for (int64_t b = 0; b < batches; ++b) {
      StatusOr<PipelineBatch> next = pipeline.Next();
      EXPECT_TRUE(next.ok()) << next.status().ToString();
      if (!next.ok()) return epochs;
      EXPECT_EQ(next->epoch, epoch);
      EXPECT_EQ(next->batch_in_epoch, b);
      EXPECT_EQ(next->batches_per_epoch, batches);
      const Batch& batch = next->batch;
      EXPECT_EQ(batch.feature_dim, kDim);
      EXPECT_EQ(batch.features.size(), batch.size * kDim);
      EXPECT_EQ(batch.labels.size(), static_cast<size_t>(batch.size));
      for (int64_t k = 0; k < batch.size; ++k) {
        const int64_t id = static_cast<int64_t>(batch.features[k * kDim]);
        EXPECT_EQ(batch.features[k * kDim + 1], -static_cast<float>(id));
        EXPECT_EQ(batch.labels[k], id % 10);
        epochs[epoch].push_back(id);
      }
    }
  }
  return epochs;
}

TEST(InputPipelineTest, CreateRejectsBadOptions) {
  const Dataset dataset = MakeDataset(10);
  EXPECT_EQ(InputPipeline::Create(dataset, Options(0)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(InputPipeline::Create(dataset, Options(2, 0, 0)).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(InputPipeline::Create(dataset, Options(2, 3, 3)).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(InputPipeline::Create(dataset, Options(2, -1, 3)).status().code(),
            Code::kInvalidArgument);
  InputPipelineOptions no_queue = Options(2);
  no_queue.prefetch_depth = 0;
  EXPECT_EQ(InputPipeline::Create(dataset, no_queue).status().code(), Code::kInvalidArgument);
  Dataset broken = dataset;
  broken.labels.pop_back();
  EXPECT_EQ(InputPipeline::Create(broken, Options(2)).status().code(), Code::kInvalidArgument);
}

TEST(InputPipelineTest, CreateRejectsShardSmallerThanBatch) {
  const Dataset dataset = MakeDataset(10);
  // Of 10 examples dealt to 3 workers, worker 0 holds 4, worker 1 only 3.
  EXPECT_TRUE(InputPipeline::Create(dataset, Options(4, 0, 3)).ok());
  const Status status = InputPipeline::Create(dataset, Options(4, 1, 3)).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("shard of 3 examples"), std::string::npos) << status.message();
}

TEST(InputPipelineTest, ShardsAreDisjointAndCoverTheDataset) {
  const Dataset dataset = MakeDataset(60);
  std::multiset<int64_t> seen;
  for (int worker = 0; worker < 3; ++worker) {
    auto pipeline = MustCreate(dataset, Options(5, worker, 3));
    EXPECT_EQ(pipeline->shard_size(), 20);
    pipeline->Start();
    const std::vector<int64_t> epoch = ReadEpochs(*pipeline, 1)[0];
    const std::vector<int64_t> shard = ShardExamples(60, worker, 3, /*seed=*/7);
    EXPECT_EQ(std::set<int64_t>(epoch.begin(), epoch.end()),
              std::set<int64_t>(shard.begin(), shard.end()));
    seen.insert(epoch.begin(), epoch.end());
  }
  std::multiset<int64_t> all;
  for (int64_t i = 0; i < 60; ++i) all.insert(i);
  EXPECT_EQ(seen, all);
}

TEST(InputPipelineTest, EachEpochVisitsTheShardOnceDroppingTheRemainder) {
  // Worker 1 of 2 holds 25 examples: 6 batches of 4, 1 left over.
  const Dataset dataset = MakeDataset(50);
  const std::vector<int64_t> shard = ShardExamples(50, 1, 2, /*seed=*/7);
  const std::set<int64_t> mine(shard.begin(), shard.end());
  auto pipeline = MustCreate(dataset, Options(4, 1, 2));
  EXPECT_EQ(pipeline->shard_size(), 25);
  EXPECT_EQ(pipeline->batches_per_epoch(), 6);
  pipeline->Start();
  for (const std::vector<int64_t>& epoch : ReadEpochs(*pipeline, 5)) {
    ASSERT_EQ(epoch.size(), 24u);
    const std::set<int64_t> distinct(epoch.begin(), epoch.end());
    EXPECT_EQ(distinct.size(), 24u);
    for (const int64_t id : epoch) EXPECT_EQ(mine.count(id), 1u) << id;
  }
}

// A file whose labels cycle with the example's index (or that is sorted by
// label) still gives every worker every class, in about equal shares:
// taking every 2nd example of labels 0..9 cycling would give worker 0 the
// even classes only, and a worker that alone trains would learn half of them.
TEST(InputPipelineTest, EveryShardSamplesEveryClass) {
  const Dataset cycling = MakeDataset(1000);  // label i % 10
  Dataset sorted = cycling;
  std::sort(sorted.labels.begin(), sorted.labels.end());
  for (const Dataset* dataset : std::vector<const Dataset*>{&cycling, &sorted}) {
    for (const int workers : {2, 5}) {
      for (int worker = 0; worker < workers; ++worker) {
        std::vector<int> per_class(10);
        for (const int64_t id : ShardExamples(1000, worker, workers, /*seed=*/7)) {
          ++per_class[dataset->labels[id]];
        }
        const int share = 1000 / workers / 10;
        for (int c = 0; c < 10; ++c) {
          EXPECT_GT(per_class[c], share / 2)
              << "class " << c << ", worker " << worker << " of " << workers;
        }
      }
    }
  }
}

TEST(InputPipelineTest, ShardsDependOnTheSeedOnly) {
  EXPECT_EQ(ShardExamples(100, 1, 3, 9), ShardExamples(100, 1, 3, 9));
  EXPECT_NE(ShardExamples(100, 1, 3, 9), ShardExamples(100, 1, 3, 10));
}

TEST(InputPipelineTest, SameSeedGivesSameOrder) {
  const Dataset dataset = MakeDataset(40);
  auto first = MustCreate(dataset, Options(4, 1, 2, /*seed=*/99));
  auto second = MustCreate(dataset, Options(4, 1, 2, /*seed=*/99));
  first->Start();
  second->Start();
  EXPECT_EQ(ReadEpochs(*first, 3), ReadEpochs(*second, 3));
}

TEST(InputPipelineTest, OrderChangesWithEpochAndSeed) {
  const Dataset dataset = MakeDataset(40);
  auto pipeline = MustCreate(dataset, Options(4, 0, 1, /*seed=*/1));
  auto reseeded = MustCreate(dataset, Options(4, 0, 1, /*seed=*/2));
  pipeline->Start();
  reseeded->Start();
  const std::vector<std::vector<int64_t>> epochs = ReadEpochs(*pipeline, 2);
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_NE(epochs[0], ReadEpochs(*reseeded, 1)[0]);
}

TEST(InputPipelineTest, OrderIsPinned) {
  // Guards the promise that a seed means the same order on every platform
  // and release: changing the shuffle must be a deliberate act.
  const Dataset dataset = MakeDataset(10);
  auto pipeline = MustCreate(dataset, Options(10, 0, 1, /*seed=*/42));
  pipeline->Start();
  EXPECT_EQ(ReadEpochs(*pipeline, 1)[0], (std::vector<int64_t>{3, 6, 4, 5, 9, 7, 0, 1, 8, 2}));
}

TEST(InputPipelineTest, QueueIsBoundedAndDestroyingItWhileFullDoesNotHang) {
  const Dataset dataset = MakeDataset(100);
  InputPipelineOptions options = Options(2);
  options.prefetch_depth = 3;
  auto pipeline = MustCreate(dataset, options);
  pipeline->Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pipeline->queued_batches() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(pipeline->queued_batches(), 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(pipeline->queued_batches(), 3);
  pipeline.reset();  // the producer is blocked on the full queue
}

// MakeDataset plus sparse entries: example i has i % 4 entries (none for
// some), entry j with key i * 100 + j, field j % 3 and value i + j / 8.
Dataset WithSparse(Dataset dataset) {
  dataset.num_fields = 3;
  dataset.sparse_offsets = {0};
  for (int64_t i = 0; i < dataset.size; ++i) {
    for (int64_t j = 0; j < i % 4; ++j) {
      dataset.sparse_keys.push_back(i * 100 + j);
      dataset.sparse_fields.push_back(static_cast<int32_t>(j % 3));
      dataset.sparse_values.push_back(static_cast<float>(i) + static_cast<float>(j) / 8);
    }
    dataset.sparse_offsets.push_back(static_cast<int64_t>(dataset.sparse_keys.size()));
  }
  return dataset;
}

// Checks that row k of `batch` carries example `id`'s sparse entries.
void ExpectSparseRow(const Batch& batch, int64_t k, int64_t id) {
  const int64_t begin = batch.sparse_offsets[k], end = batch.sparse_offsets[k + 1];
  ASSERT_EQ(end - begin, id % 4) << "example " << id;
  for (int64_t j = 0; j < end - begin; ++j) {
    EXPECT_EQ(batch.sparse_keys[begin + j], id * 100 + j);
    EXPECT_EQ(batch.sparse_fields[begin + j], j % 3);
    EXPECT_EQ(batch.sparse_values[begin + j], static_cast<float>(id) + static_cast<float>(j) / 8);
  }
}

TEST(InputPipelineTest, BatchesCarryTheirExamplesSparseEntries) {
  const Dataset dataset = WithSparse(MakeDataset(40));
  auto pipeline = MustCreate(dataset, Options(8, 1, 2));
  pipeline->Start();
  std::set<int64_t> seen;
  for (int64_t b = 0; b < 2 * pipeline->batches_per_epoch(); ++b) {
    StatusOr<PipelineBatch> next = pipeline->Next();
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    const Batch& batch = next->batch;
    EXPECT_EQ(batch.num_fields, 3);
    ASSERT_EQ(batch.sparse_offsets.size(), static_cast<size_t>(batch.size + 1));
    EXPECT_EQ(batch.sparse_offsets[0], 0);
    const size_t entries = static_cast<size_t>(batch.sparse_offsets.back());
    EXPECT_EQ(batch.sparse_keys.size(), entries);
    EXPECT_EQ(batch.sparse_fields.size(), entries);
    EXPECT_EQ(batch.sparse_values.size(), entries);
    for (int64_t k = 0; k < batch.size; ++k) {
      const int64_t id = static_cast<int64_t>(batch.features[k * kDim]);
      ExpectSparseRow(batch, k, id);
      seen.insert(id);
    }
  }
  // Two epochs of 2 batches of 8 of worker 1's 20 examples.
  const std::vector<int64_t> shard = ShardExamples(40, 1, 2, /*seed=*/7);
  EXPECT_GE(seen.size(), 16u);
  for (const int64_t id : seen) EXPECT_NE(std::count(shard.begin(), shard.end(), id), 0) << id;
}

TEST(InputPipelineTest, DenseBatchesHaveNoSparseEntries) {
  const Dataset dataset = MakeDataset(10);
  auto pipeline = MustCreate(dataset, Options(5));
  pipeline->Start();
  StatusOr<PipelineBatch> next = pipeline->Next();
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->batch.num_fields, 0);
  EXPECT_TRUE(next->batch.sparse_offsets.empty());
  EXPECT_TRUE(next->batch.sparse_keys.empty());
}

// libsvm's data: sparse entries only, no dense features.
TEST(InputPipelineTest, AcceptsSparseOnlyDataset) {
  Dataset dataset = WithSparse(MakeDataset(20));
  dataset.feature_dim = 0;
  dataset.features.clear();
  auto pipeline = MustCreate(dataset, Options(4));
  pipeline->Start();
  for (int64_t b = 0; b < pipeline->batches_per_epoch(); ++b) {
    StatusOr<PipelineBatch> next = pipeline->Next();
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    EXPECT_EQ(next->batch.feature_dim, 0);
    EXPECT_TRUE(next->batch.features.empty());
    EXPECT_EQ(next->batch.labels.size(), 4u);
    EXPECT_EQ(next->batch.sparse_offsets.size(), 5u);
  }
}

TEST(InputPipelineTest, CreateRejectsInconsistentSparseFields) {
  const Dataset good = WithSparse(MakeDataset(10));
  ASSERT_TRUE(InputPipeline::Create(good, Options(2)).ok());
  auto expect_rejected = [](const Dataset& d, const std::string& what) {
    const Status status = InputPipeline::Create(d, Options(2)).status();
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << what;
    EXPECT_NE(status.message().find("inconsistent dataset"), std::string::npos)
        << what << ": " << status.message();
  };
  Dataset d = good;
  d.sparse_offsets.pop_back();
  expect_rejected(d, "offsets one short");
  d = good;
  d.sparse_values.pop_back();
  expect_rejected(d, "values one short");
  d = good;
  d.sparse_offsets[0] = 1;
  expect_rejected(d, "offsets not from 0");
  d = good;
  std::swap(d.sparse_offsets[3], d.sparse_offsets[4]);
  expect_rejected(d, "offsets decrease");
  d = good;
  d.sparse_fields[2] = 3;
  expect_rejected(d, "field out of range");
  d = good;
  d.num_fields = 0;
  expect_rejected(d, "entries without fields");
  d = MakeDataset(10);
  d.feature_dim = 0;
  d.features.clear();
  expect_rejected(d, "nothing at all");
}

TEST(InputPipelineTest, StopEndsAConsumerOnAnotherThread) {
  const Dataset dataset = MakeDataset(100);
  auto pipeline = MustCreate(dataset, Options(2));
  pipeline->Start();
  Status last;
  std::thread consumer([&] {
    for (;;) {
      StatusOr<PipelineBatch> next = pipeline->Next();
      if (!next.ok()) {
        last = next.status();
        return;
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  pipeline->Stop();
  consumer.join();
  EXPECT_EQ(last.code(), Code::kAborted);
  EXPECT_EQ(pipeline->Next().status().code(), Code::kAborted);
}

// Augmentation. Only training batches are augmented: the pipeline serves
// the worker's training split alone, and the chief evaluates the validation
// and test sets without it.

const InputShape kImage({4, 4, 1});

// `size` 4x4 images, example i's pixels 1 + 16 i + p (none 0, so a crop's
// zero border shows), label i % 10.
Dataset MakeImages(int64_t size) {
  Dataset dataset;
  dataset.size = size;
  dataset.feature_dim = kImage.size();
  dataset.example_shape = kImage;
  dataset.num_classes = 10;
  for (int64_t i = 0; i < size; ++i) {
    for (int64_t p = 0; p < kImage.size(); ++p) {
      dataset.features.push_back(static_cast<float>(1 + 16 * i + p));
    }
    dataset.labels.push_back(static_cast<int32_t>(i % 10));
  }
  return dataset;
}

InputPipelineOptions Augmenting(const std::string& augment, int worker_index = 1) {
  InputPipelineOptions options = Options(4, worker_index, /*num_workers=*/2);
  options.augment = ParseAugmentOptions(augment).value();
  return options;
}

// The pipeline's next `count` batches.
std::vector<PipelineBatch> NextBatches(const Dataset& dataset, const InputPipelineOptions& options,
                                       int64_t count) {
  auto pipeline = MustCreate(dataset, options);
  pipeline->Start();
  std::vector<PipelineBatch> batches;
  for (int64_t b = 0; b < count; ++b) {
    StatusOr<PipelineBatch> next = pipeline->Next();
    CHECK(next.ok()) << next.status().ToString();
    batches.push_back(std::move(next).value());
  }
  return batches;
}

// `plain` augmented as the batch at its position on worker `worker_index`
// of a run seeded 7 (as Options).
Batch AugmentedAs(const AugmentOptions& options, PipelineBatch plain, int worker_index) {
  std::mt19937_64 rng =
      AugmentGenerator(/*seed=*/7, worker_index, plain.epoch, plain.batch_in_epoch);
  AugmentBatch(options, kImage, &rng, &plain.batch);
  return plain.batch;
}

// Worker 1's batches, over two epochs, are the un-augmented ones (same
// examples, same labels) augmented with each batch's own generator, seeded
// by worker 1's index: not worker 0's.
TEST(InputPipelineAugmentTest, AugmentsEachTrainingBatchWithItsOwnGenerator) {
  const Dataset dataset = MakeImages(40);
  const InputPipelineOptions options = Augmenting("crop:1,flip");
  auto pipeline = MustCreate(dataset, options);
  EXPECT_TRUE(pipeline->augments());
  const int64_t count = 2 * pipeline->batches_per_epoch();
  const std::vector<PipelineBatch> augmented = NextBatches(dataset, options, count);
  const std::vector<PipelineBatch> plain = NextBatches(dataset, Options(4, 1, 2), count);
  for (int64_t b = 0; b < count; ++b) {
    EXPECT_EQ(augmented[b].batch.labels, plain[b].batch.labels) << "batch " << b;
    EXPECT_NE(augmented[b].batch.features, plain[b].batch.features) << "batch " << b;
    EXPECT_EQ(augmented[b].batch.features,
              AugmentedAs(options.augment, plain[b], /*worker_index=*/1).features)
        << "batch " << b;
    EXPECT_NE(augmented[b].batch.features,
              AugmentedAs(options.augment, plain[b], /*worker_index=*/0).features)
        << "batch " << b;
  }
}

TEST(InputPipelineAugmentTest, SameSeedAndWorkerGiveTheSameBatches) {
  const Dataset dataset = MakeImages(40);
  const std::vector<PipelineBatch> first = NextBatches(dataset, Augmenting("crop,flip"), 10);
  const std::vector<PipelineBatch> second = NextBatches(dataset, Augmenting("crop,flip"), 10);
  for (size_t b = 0; b < first.size(); ++b) {
    EXPECT_EQ(first[b].batch.features, second[b].batch.features) << "batch " << b;
  }
}

// With --normalize the dataset was standardized at load time, where the
// black background is no longer 0: the batch is augmented as raw pixels
// (zero padding), then standardized, as if the augmentation came first.
TEST(InputPipelineAugmentTest, AugmentsStandardizedImagesAsRawPixels) {
  const Dataset raw = MakeImages(40);
  const Standardization standardization = FitStandardization(raw);
  Dataset standardized = raw;
  Standardize(standardization, &standardized);
  InputPipelineOptions options = Augmenting("crop:2");
  const std::vector<PipelineBatch> from_raw = NextBatches(raw, options, 10);
  options.standardization = standardization;
  const std::vector<PipelineBatch> augmented = NextBatches(standardized, options, 10);
  for (size_t b = 0; b < augmented.size(); ++b) {
    std::vector<float> expected = from_raw[b].batch.features;
    StandardizeRows(standardization, &expected);
    ASSERT_EQ(augmented[b].batch.features.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_NEAR(augmented[b].batch.features[i], expected[i], 1e-4) << "batch " << b << ", " << i;
    }
  }
}

TEST(InputPipelineAugmentTest, RefusesDataThatAreNotImages) {
  Dataset features = MakeDataset(40);
  features.example_shape = kDim;
  const Status status = InputPipeline::Create(features, Augmenting("crop")).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(), "--augment needs images, but the training examples are 2 features");
  EXPECT_FALSE(MustCreate(features, Options(4))->augments());
}

}  // namespace
}  // namespace pst
