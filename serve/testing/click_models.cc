#include "serve/testing/click_models.h"

#include <glog/logging.h>

#include <algorithm>
#include <fstream>

#include "data/criteo_reader.h"
#include "job/export_files.h"

namespace pst {
namespace {

std::unique_ptr<Model> JobModel(const Job& job) {
  StatusOr<std::unique_ptr<Model>> model = MakeJobModel(job);
  CHECK(model.ok()) << model.status().ToString();
  return std::move(model).value();
}

}  // namespace

std::vector<std::string> CriteoLines(int n, int seed) {
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) {
    std::string line = std::to_string((i + seed) % 2);
    for (int j = 0; j < kCriteoIntegerFeatures; ++j) {
      // Some integers empty, some negative, as in Criteo's logs.
      const int x = (i * 31 + j * 17 + seed * 7) % 50 - 5;
      line += "\t" + ((i + j) % 5 == 0 ? std::string() : std::to_string(x));
    }
    for (int f = 0; f < kCriteoCategoricalFields; ++f) {
      line += "\tv" + std::to_string((i * 13 + f * 5 + seed) % 40);
    }
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> LibffmLines(int n, int seed) {
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i) {
    const int k = i * 7 + seed * 3;
    std::string line = std::to_string((i + seed) % 2) + " 0:" + std::to_string(k % 17) +
                       ":1 1:" + std::to_string(k % 29) + ":1";
    for (int h = 0; h < 2 + i % 2; ++h) line += " 2:" + std::to_string((k + h * 5) % 29) + ":1";
    line += " 3:" + std::to_string(k % 9) + ":0." + std::to_string(10 + k % 90);
    line += " 3:" + std::to_string((k + 4) % 9) + ":1.25";
    lines.push_back(line);
  }
  return lines;
}

void WriteLines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary);
  for (const std::string& line : lines) out << line << "\n";
  CHECK(out.good()) << path;
}

Job ClickJob(const std::string& train_file, const std::string& features_file,
             const std::string& format) {
  JobOptions options;
  options.data.format = format;
  options.data.train_file = train_file;
  options.model = "wide_deep";
  options.embedding_rows = 50;
  if (!features_file.empty()) {
    StatusOr<FeatureColumns> features = ReadFeatureColumns(features_file, format);
    CHECK(features.ok()) << features.status().ToString();
    options.data.features = *features;
  }
  StatusOr<Job> job = LoadJob(options, /*with_test=*/false);
  CHECK(job.ok()) << job.status().ToString();
  return std::move(job).value();
}

float ClickParamValue(float k, int64_t i) { return k / 100 + ((i * 7) % 23 - 11) / 1000.0f; }

std::vector<Tensor> ClickParams(const Job& job, float k) {
  const std::unique_ptr<Model> model = JobModel(job);
  std::vector<Tensor> params;
  for (const VariableSpec& v : model->variables()) params.emplace_back(v.dtype, v.shape);
  for (const EmbeddingTableSpec& t : model->tables()) {
    params.emplace_back(DType::kFloat32, Shape{t.rows, t.dim});
  }
  for (Tensor& p : params) {
    for (int64_t i = 0; i < p.num_elements(); ++i) p.f32()[i] = ClickParamValue(k, i);
  }
  return params;
}

TrainedModel ClickModel(const Job& job, float k) {
  return TrainedModelOf(job, ClickParams(job, k));
}

std::unique_ptr<ServedModel> ServedClickModel(const Job& job, float k, int64_t step) {
  auto served = std::make_unique<ServedModel>();
  served->trained = ClickModel(job, k);
  served->source = "k" + std::to_string(k) + ".bin";
  served->step = served->base_step = step;
  served->written_at = served->loaded_at = std::chrono::system_clock::now();
  SetFieldNames(served.get());
  return served;
}

void WriteExportBase(const std::string& dir, int64_t step, const Job& job, float k) {
  const std::unique_ptr<Model> model = JobModel(job);
  const Status written =
      WriteModelFile(dir + "/" + BaseFileName(step), job, *model, ClickParams(job, k));
  CHECK(written.ok()) << written.ToString();
}

void WriteExportDelta(const std::string& dir, int64_t step, int64_t base, int64_t previous,
                      const Job& job, float k) {
  const std::unique_ptr<Model> model = JobModel(job);
  const std::vector<Tensor> params = ClickParams(job, k);
  NamedTensors dense;
  for (size_t i = 0; i < model->variables().size(); ++i) {
    dense.emplace_back(model->variables()[i].name, params[i]);
  }
  std::vector<ChangedTableRows> tables;
  for (size_t t = 0; t < model->tables().size(); ++t) {
    const Tensor& table = params[model->variables().size() + t];
    const int64_t dim = table.shape()[1];
    Tensor ids(DType::kInt64, {1});
    ids.i64()[0] = 0;
    Tensor rows(DType::kFloat32, {1, dim});
    std::copy(table.f32(), table.f32() + dim, rows.f32());
    tables.push_back({model->tables()[t].name, ids, rows});
  }
  const Status written =
      WriteDeltaFile(dir + "/" + DeltaFileName(step), base, previous, dense, tables);
  CHECK(written.ok()) << written.ToString();
}

}  // namespace pst
