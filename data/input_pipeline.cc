#include "data/input_pipeline.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <utility>

#include "common/thread_name.h"

namespace pst {
namespace {

// Fisher-Yates by hand: std::shuffle and std::uniform_int_distribution are
// implemented differently by each standard library. seed_seq and mt19937_64
// are fully specified by the standard, so the order depends only on `seed`.
// The modulo's bias, below size / 2^64, is negligible.
void Shuffle(std::vector<int64_t>& order, std::seed_seq& seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[rng() % i]);
  }
}

// The sparse fields' invariants (data/dataset.h), checked once so that
// Gather can copy ranges without looking.
Status CheckSparse(const Dataset& d) {
  const size_t entries = d.sparse_keys.size();
  if (d.num_fields < 0) {
    return InvalidArgument("inconsistent dataset: num_fields " + std::to_string(d.num_fields));
  }
  if (d.num_fields == 0) {
    if (d.feature_dim == 0) {
      return InvalidArgument(
          "inconsistent dataset: no dense features (feature_dim 0) and no "
          "sparse fields (num_fields 0)");
    }
    if (!d.sparse_offsets.empty() || entries != 0 || !d.sparse_fields.empty() ||
        !d.sparse_values.empty()) {
      return InvalidArgument("inconsistent dataset: sparse entries but num_fields 0");
    }
    return Status::OK();
  }
  if (static_cast<int64_t>(d.sparse_offsets.size()) != d.size + 1 || d.sparse_offsets[0] != 0 ||
      d.sparse_offsets.back() != static_cast<int64_t>(entries) ||
      d.sparse_fields.size() != entries || d.sparse_values.size() != entries) {
    return InvalidArgument(
        "inconsistent dataset: size " + std::to_string(d.size) + " but " +
        std::to_string(d.sparse_offsets.size()) + " sparse offsets (ending at " +
        (d.sparse_offsets.empty() ? std::string("none") : std::to_string(d.sparse_offsets.back())) +
        "), " + std::to_string(entries) + " keys, " + std::to_string(d.sparse_fields.size()) +
        " fields and " + std::to_string(d.sparse_values.size()) + " values");
  }
  for (int64_t i = 0; i < d.size; ++i) {
    if (d.sparse_offsets[i + 1] < d.sparse_offsets[i]) {
      return InvalidArgument("inconsistent dataset: sparse_offsets decrease at example " +
                             std::to_string(i));
    }
  }
  for (size_t k = 0; k < entries; ++k) {
    if (d.sparse_fields[k] < 0 || d.sparse_fields[k] >= d.num_fields) {
      return InvalidArgument("inconsistent dataset: sparse entry " + std::to_string(k) +
                             " has field " + std::to_string(d.sparse_fields[k]) + ", outside [0, " +
                             std::to_string(d.num_fields) + ")");
    }
  }
  return Status::OK();
}

bool Augments(const AugmentOptions& options) { return options.crop_padding > 0 || options.flip; }

// Augmentation moves pixels about: only an image of the dataset's dense
// features can be augmented.
Status CheckAugmentable(const Dataset& d, const InputPipelineOptions& options) {
  if (!Augments(options.augment)) return Status::OK();
  if (!d.example_shape.is_image() || d.example_shape.size() != d.feature_dim) {
    return InvalidArgument("--augment needs images, but the training examples are " +
                           d.example_shape.ToString());
  }
  if (options.standardization &&
      options.standardization->mean.size() != static_cast<size_t>(d.feature_dim)) {
    return InvalidArgument("a standardization of " +
                           std::to_string(options.standardization->mean.size()) +
                           " features for examples of " + std::to_string(d.feature_dim));
  }
  return Status::OK();
}

// The inverse of StandardizeRows: x = x' / scale + mean (scale is never 0).
void UnstandardizeRows(const Standardization& s, std::vector<float>* rows) {
  const size_t d = s.mean.size();
  for (size_t i = 0; i < rows->size(); ++i) {
    (*rows)[i] = (*rows)[i] / s.scale[i % d] + s.mean[i % d];
  }
}

}  // namespace

std::vector<int64_t> ShardExamples(int64_t size, int worker_index, int num_workers, uint64_t seed) {
  std::vector<int64_t> all(static_cast<size_t>(std::max<int64_t>(size, 0)));
  std::iota(all.begin(), all.end(), 0);
  // No worker index in the seed: every worker deals from the same deck.
  std::seed_seq deck{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  Shuffle(all, deck);
  std::vector<int64_t> shard;
  for (size_t i = static_cast<size_t>(worker_index); i < all.size();
       i += static_cast<size_t>(num_workers)) {
    shard.push_back(all[i]);
  }
  std::sort(shard.begin(), shard.end());
  return shard;
}

StatusOr<std::unique_ptr<InputPipeline>> InputPipeline::Create(
    const Dataset& dataset, const InputPipelineOptions& options) {
  if (options.batch_size < 1) {
    return InvalidArgument("batch_size must be at least 1, got " +
                           std::to_string(options.batch_size));
  }
  if (options.num_workers < 1) {
    return InvalidArgument("num_workers must be at least 1, got " +
                           std::to_string(options.num_workers));
  }
  if (options.worker_index < 0 || options.worker_index >= options.num_workers) {
    return InvalidArgument("worker_index " + std::to_string(options.worker_index) +
                           " is outside [0, " + std::to_string(options.num_workers) + ")");
  }
  if (options.prefetch_depth < 1) {
    return InvalidArgument("prefetch_depth must be at least 1, got " +
                           std::to_string(options.prefetch_depth));
  }
  if (dataset.size < 0 || dataset.feature_dim < 0 ||
      static_cast<int64_t>(dataset.features.size()) != dataset.size * dataset.feature_dim ||
      static_cast<int64_t>(dataset.labels.size()) != dataset.size) {
    return InvalidArgument("inconsistent dataset: size " + std::to_string(dataset.size) +
                           ", feature_dim " + std::to_string(dataset.feature_dim) + ", but " +
                           std::to_string(dataset.features.size()) + " features and " +
                           std::to_string(dataset.labels.size()) + " labels");
  }
  PST_RETURN_IF_ERROR(CheckSparse(dataset));
  PST_RETURN_IF_ERROR(CheckAugmentable(dataset, options));
  std::vector<int64_t> shard =
      ShardExamples(dataset.size, options.worker_index, options.num_workers, options.seed);
  if (static_cast<int64_t>(shard.size()) < options.batch_size) {
    return InvalidArgument("worker " + std::to_string(options.worker_index) + " of " +
                           std::to_string(options.num_workers) + " has a shard of " +
                           std::to_string(shard.size()) + " examples (of " +
                           std::to_string(dataset.size) + "), fewer than batch_size " +
                           std::to_string(options.batch_size));
  }
  return std::unique_ptr<InputPipeline>(new InputPipeline(dataset, options, std::move(shard)));
}

InputPipeline::InputPipeline(const Dataset& dataset, const InputPipelineOptions& options,
                             std::vector<int64_t> shard)
    : dataset_(dataset),
      options_(options),
      shard_(std::move(shard)),
      batches_per_epoch_(static_cast<int64_t>(shard_.size()) / options.batch_size),
      augments_(Augments(options.augment)) {}

InputPipeline::~InputPipeline() { Stop(); }

void InputPipeline::Start() {
  {
    MutexLock lock(mu_);
    CHECK(!started_) << "InputPipeline::Start() called twice";
    started_ = true;
  }
  thread_ = std::thread(&InputPipeline::PrefetchLoop, this);
}

void InputPipeline::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  not_empty_.NotifyAll();
  not_full_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

StatusOr<PipelineBatch> InputPipeline::Next() {
  MutexLock lock(mu_);
  CHECK(started_) << "InputPipeline::Next() before Start()";
  while (!stopping_ && queue_.empty()) not_empty_.Wait(mu_);
  if (stopping_) return Aborted("input pipeline stopped");
  PipelineBatch next = std::move(queue_.front());
  queue_.pop_front();
  lock.Unlock();
  not_full_.NotifyOne();
  return next;
}

int InputPipeline::queued_batches() const {
  MutexLock lock(mu_);
  return static_cast<int>(queue_.size());
}

void InputPipeline::PrefetchLoop() {
  NameThisThread("input");
  const size_t depth = options_.prefetch_depth;
  for (int64_t epoch = 0;; ++epoch) {
    const std::vector<int64_t> order = ShuffledShard(epoch);
    for (int64_t b = 0; b < batches_per_epoch_; ++b) {
      // Built outside the lock so that Next() never waits on a copy.
      PipelineBatch item{Gather(order, b), epoch, b, batches_per_epoch_};
      if (augments_) Augment(epoch, b, &item.batch);
      MutexLock lock(mu_);
      while (!stopping_ && queue_.size() >= depth) not_full_.Wait(mu_);
      if (stopping_) return;
      queue_.push_back(std::move(item));
      lock.Unlock();
      not_empty_.NotifyOne();
    }
  }
}

std::vector<int64_t> InputPipeline::ShuffledShard(int64_t epoch) const {
  const uint64_t seed = options_.seed;
  const uint64_t e = static_cast<uint64_t>(epoch);
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(options_.worker_index), static_cast<uint32_t>(e),
                    static_cast<uint32_t>(e >> 32)};
  std::vector<int64_t> order = shard_;
  Shuffle(order, seq);
  return order;
}

Batch InputPipeline::Gather(const std::vector<int64_t>& order, int64_t batch_in_epoch) const {
  const int64_t size = options_.batch_size;
  const int64_t dim = dataset_.feature_dim;
  Batch batch;
  batch.size = size;
  batch.feature_dim = dim;
  // Appended row by row: a resize would first zero the whole batch, which
  // took a third of this thread's time (perf, the README's job).
  batch.features.reserve(size * dim);
  batch.labels.resize(size);
  for (int64_t k = 0; k < size; ++k) {
    const int64_t example = order[batch_in_epoch * size + k];
    const auto row = dataset_.features.begin() + example * dim;
    batch.features.insert(batch.features.end(), row, row + dim);
    batch.labels[k] = dataset_.labels[example];
  }
  batch.num_fields = dataset_.num_fields;
  if (dataset_.num_fields == 0) return batch;
  // The batch's rows of the compressed rows, offsets rebased to the batch.
  batch.sparse_offsets.resize(size + 1);
  batch.sparse_offsets[0] = 0;
  for (int64_t k = 0; k < size; ++k) {
    const int64_t example = order[batch_in_epoch * size + k];
    batch.sparse_offsets[k + 1] = batch.sparse_offsets[k] + dataset_.sparse_offsets[example + 1] -
                                  dataset_.sparse_offsets[example];
  }
  const int64_t entries = batch.sparse_offsets[size];
  batch.sparse_keys.resize(entries);
  batch.sparse_fields.resize(entries);
  batch.sparse_values.resize(entries);
  for (int64_t k = 0; k < size; ++k) {
    const int64_t example = order[batch_in_epoch * size + k];
    const int64_t from = dataset_.sparse_offsets[example], to = batch.sparse_offsets[k];
    const int64_t n = batch.sparse_offsets[k + 1] - to;
    std::copy_n(dataset_.sparse_keys.begin() + from, n, batch.sparse_keys.begin() + to);
    std::copy_n(dataset_.sparse_fields.begin() + from, n, batch.sparse_fields.begin() + to);
    std::copy_n(dataset_.sparse_values.begin() + from, n, batch.sparse_values.begin() + to);
  }
  return batch;
}

void InputPipeline::Augment(int64_t epoch, int64_t batch_in_epoch, Batch* batch) const {
  const std::optional<Standardization>& standardization = options_.standardization;
  if (standardization) UnstandardizeRows(*standardization, &batch->features);
  std::mt19937_64 rng =
      AugmentGenerator(options_.seed, options_.worker_index, epoch, batch_in_epoch);
  AugmentBatch(options_.augment, dataset_.example_shape, &rng, batch);
  if (standardization) StandardizeRows(*standardization, &batch->features);
}

}  // namespace pst
