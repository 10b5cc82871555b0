// InputPipeline: one worker's stream of shuffled minibatches, prepared ahead
// of time by a prefetch thread so that a training step does not wait on input.
//
// Sharding: ShardExamples (below) deals the examples out to the workers, so
// the workers' shards are disjoint and together cover the dataset. Each epoch the
// worker visits its whole shard once, in an order shuffled by a generator
// seeded from (seed, worker_index, epoch): the same options give the same
// batches on every run and platform. The last shard_size % batch_size examples
// of each epoch's order are dropped, so all batches have batch_size examples.
//
// Augmentation (--augment, data/augment.h): each batch of images is
// augmented as it is gathered, with its own generator from (seed,
// worker_index, epoch, batch_in_epoch). The pipeline serves the training
// data only: validation and test examples never pass through it.
//
// Ownership: the pipeline borrows the Dataset, which must outlive it.
// Threads: the owner calls Start() to launch the prefetch thread and Stop()
// (also run by the destructor) to wake every waiter and join it, even with
// the queue full. Next() and queued_batches() may be called from any thread;
// after Stop() Next() returns Aborted. A thread still inside Next() must have
// returned before the pipeline is destroyed: when another thread may be
// waiting in Next(), call Stop() and join that thread first.
#ifndef PST_DATA_INPUT_PIPELINE_H_
#define PST_DATA_INPUT_PIPELINE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "common/batch.h"
#include "common/mutex.h"
#include "common/status.h"
#include "data/augment.h"
#include "data/dataset.h"
#include "data/standardize.h"

namespace pst {

// The examples (indices in [0, size)) that worker `worker_index` of
// `num_workers` trains on, ascending: all of them shuffled by `seed` alone
// (the same deck on every worker) and dealt out, worker k taking positions
// k, k + num_workers, ... Disjoint, covering, and each a random sample, in
// whatever order the file holds the examples (sorted by label, or labels
// cycling with the index, where taking every num_workers-th example would
// give a worker some classes only).
std::vector<int64_t> ShardExamples(int64_t size, int worker_index, int num_workers, uint64_t seed);

struct InputPipelineOptions {
  int64_t batch_size = 32;
  int worker_index = 0;  // in [0, num_workers)
  int num_workers = 1;
  uint64_t seed = 0;
  int prefetch_depth = 4;  // batches the queue holds at most
  AugmentOptions augment;  // none by default; images only
  // What the dataset was standardized with at load time (--normalize), if it
  // was: augmentation undoes it, so that the zero padding is the raw
  // pixels' black background, and redoes it on the augmented batch.
  std::optional<Standardization> standardization;
};

// A batch and where it sits in the worker's sequence.
struct PipelineBatch {
  Batch batch;
  int64_t epoch = 0;              // from 0
  int64_t batch_in_epoch = 0;     // in [0, batches_per_epoch)
  int64_t batches_per_epoch = 0;  // shard_size / batch_size
};

class InputPipeline {
 public:
  // InvalidArgument when an option is out of range, the dataset's vectors do
  // not match its size and feature_dim, its sparse fields break the rules of
  // data/dataset.h, it has neither dense features nor sparse fields, or the
  // worker's shard holds fewer than batch_size examples, or augmentation is
  // asked for examples that are not images (the error names --augment).
  // Does not start the thread. Each batch carries its examples' sparse
  // entries (offsets from 0).
  static StatusOr<std::unique_ptr<InputPipeline>> Create(const Dataset& dataset,
                                                         const InputPipelineOptions& options);

  ~InputPipeline();
  InputPipeline(const InputPipeline&) = delete;
  InputPipeline& operator=(const InputPipeline&) = delete;

  // Starts the prefetch thread; call at most once.
  void Start();
  // Stops and joins the prefetch thread; idempotent.
  void Stop();

  // Blocks until the next batch is ready. Aborted once Stop() has been
  // called. Requires Start().
  StatusOr<PipelineBatch> Next();

  int64_t shard_size() const { return static_cast<int64_t>(shard_.size()); }
  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  // Whether the batches are augmented (options.augment asks for something).
  bool augments() const { return augments_; }
  // Batches ready in the queue now: near zero means input cannot keep up.
  int queued_batches() const;

 private:
  InputPipeline(const Dataset& dataset, const InputPipelineOptions& options,
                std::vector<int64_t> shard);

  void PrefetchLoop();
  // The shard's examples in epoch `epoch`'s order.
  std::vector<int64_t> ShuffledShard(int64_t epoch) const;
  Batch Gather(const std::vector<int64_t>& order, int64_t batch_in_epoch) const;
  // options_.augment on the batch's raw pixels, with the batch's generator.
  void Augment(int64_t epoch, int64_t batch_in_epoch, Batch* batch) const;

  const Dataset& dataset_;
  const InputPipelineOptions options_;
  const std::vector<int64_t> shard_;  // example indices, ascending
  const int64_t batches_per_epoch_;
  const bool augments_;

  std::thread thread_;  // touched only by Start() and Stop()

  mutable Mutex mu_;
  std::deque<PipelineBatch> queue_ GUARDED_BY(mu_);
  bool started_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  CondVar not_empty_;  // queue_ gained a batch, or stopping_
  CondVar not_full_;   // queue_ lost a batch, or stopping_
};

}  // namespace pst

#endif  // PST_DATA_INPUT_PIPELINE_H_
