#include "worker/stream_file.h"

#include <algorithm>

#include "data/example_range.h"
#include "model/ctr/binary_metrics.h"

namespace pst {

StatusOr<StreamFile> StreamFile::Read(const DataOptions& data, int num_fields,
                                      const std::string& path, int64_t batch_size) {
  DataOptions file = data;
  file.train_file.clear();
  file.test_file = path;
  file.validation_examples = 0;
  file.min_fields = num_fields;
  StatusOr<Dataset> examples = LoadTestSet(file, /*num_classes=*/2);
  if (!examples.ok()) {
    return Status(examples.status().code(), path + ": " + examples.status().message());
  }
  if (examples->num_fields != num_fields) {
    return InvalidArgument(path + " has " + std::to_string(examples->num_fields) +
                           " fields, the job " + std::to_string(num_fields));
  }
  return StreamFile(path, std::move(examples).value(), batch_size);
}

StreamFile::StreamFile(std::string path, Dataset examples, int64_t batch_size)
    : path_(std::move(path)),
      stream_(StreamIdOf(path_)),
      examples_(std::move(examples)),
      batch_size_(std::max<int64_t>(1, batch_size)) {}

StreamBatch StreamFile::Mark(int64_t b) const {
  const int64_t begin = (b - 1) * batch_size_;
  return StreamBatch{stream_, b, batch_size_, std::min(batch_size_, examples_.size - begin),
                     b == batches()};
}

void StreamFile::Fill(int64_t b, Batch* batch) const {
  CopyExamples(examples_, (b - 1) * batch_size_, Mark(b).examples, batch);
}

void StreamFile::Score(int64_t b, const std::vector<float>& probabilities) {
  const int64_t begin = (b - 1) * batch_size_;
  const int64_t n = std::min<int64_t>(Mark(b).examples, probabilities.size());
  probabilities_.insert(probabilities_.end(), probabilities.begin(), probabilities.begin() + n);
  labels_.insert(labels_.end(), examples_.labels.begin() + begin,
                 examples_.labels.begin() + begin + n);
}

FileResult StreamFile::Result() const {
  FileResult r;
  r.path = path_;
  r.examples = static_cast<int64_t>(labels_.size());
  if (r.examples == 0) return r;
  const BinaryMetrics m = ComputeBinaryMetrics(probabilities_, labels_);
  r.auc = m.auc;
  r.log_loss = m.log_loss;
  r.positives = std::count(labels_.begin(), labels_.end(), 1);
  return r;
}

}  // namespace pst
