// The click model: gradients of every variable and every table row against
// central finite differences (sum and mean combiners, per-field dims), the
// row-id mapping (one table, and a table per dim), duplicate keys,
// predictions and input checks.
#include "model/ctr/ctr_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "model/layers/initializer.h"

namespace pst {
namespace {

// 5 examples, 4 dense features, 3 fields; example 0 has two entries in
// field 1 (one with weight 0.5), example 3 repeats a key of example 1, and
// field 2 of example 4 is empty.
Batch SparseBatch() {
  Batch b;
  b.size = 5;
  b.feature_dim = 4;
  b.num_fields = 3;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 0; i < 20; ++i) b.features.push_back(u(rng));
  b.labels = {1, 0, 0, 1, 1};
  const std::vector<std::vector<std::tuple<int64_t, int, float>>> entries = {
      {{11, 0, 1}, {-7, 1, 1}, {40, 1, 0.5f}, {13, 2, 1}},
      {{21, 0, 1}, {22, 1, 1}, {23, 2, 1}},
      {{31, 0, 1}, {32, 1, 1}, {33, 2, 1}},
      {{21, 0, 1}, {-7, 1, 1}, {43, 2, 1}},
      {{51, 0, 1}, {52, 1, 1}}};
  b.sparse_offsets = {0};
  for (const auto& example : entries) {
    for (const auto& [key, field, value] : example) {
      b.sparse_keys.push_back(key);
      b.sparse_fields.push_back(field);
      b.sparse_values.push_back(value);
    }
    b.sparse_offsets.push_back(static_cast<int64_t>(b.sparse_keys.size()));
  }
  return b;
}

std::unique_ptr<CtrModel> MakeClickModel(const CtrModelConfig& config) {
  StatusOr<std::unique_ptr<CtrModel>> model = CtrModel::Create(config);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return std::move(model).value();
}

// wide_deep's shape, small: dim 3, one hidden layer of 5.
CtrModelConfig SmallConfig(Combiner combiner = Combiner::kSum, int64_t table_rows = 0) {
  CtrModelConfig config;
  config.dense_features = 4;
  config.num_fields = 3;
  config.embedding_dim = 3;
  config.hidden = {5};
  config.combiner = combiner;
  config.table_rows = table_rows;
  return config;
}

std::unique_ptr<CtrModel> MakeClickModel(bool mean, int64_t table_rows = 0) {
  return MakeClickModel(SmallConfig(mean ? Combiner::kMean : Combiner::kSum, table_rows));
}

// The dense variables' initial values (biases random), then random rows for the batch's ids.
std::vector<Tensor> Params(const CtrModel& model, const Batch& batch) {
  std::vector<Tensor> params;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-0.5, 0.5);
  for (const VariableSpec& spec : model.variables()) {
    params.push_back(InitializeVariable(spec, 4));
    // Biases off zero: a ReLU whose input is all zeros would otherwise sit
    // on its kink, where finite differences see half its slope.
    if (spec.name.size() > 5 && spec.name.substr(spec.name.size() - 5) == "/bias") {
      for (int64_t i = 0; i < params.back().num_elements(); ++i) params.back().f32()[i] = u(rng);
    }
  }
  const TableRowIds ids = model.RowIds(batch);
  for (size_t k = 0; k < model.tables().size(); ++k) {
    Tensor rows(DType::kFloat32, {static_cast<int64_t>(ids[k].size()), model.tables()[k].dim});
    for (int64_t i = 0; i < rows.num_elements(); ++i) rows.f32()[i] = u(rng);
    params.push_back(rows);
  }
  return params;
}

void CheckGradients(const CtrModelConfig& config) {
  auto model = MakeClickModel(config);
  const Batch batch = SparseBatch();
  std::vector<Tensor> params = Params(*model, batch);
  std::vector<Tensor> grads;
  ASSERT_TRUE(model->ComputeGradients(params, batch, &grads).ok());
  ASSERT_EQ(grads.size(), params.size());
  const auto loss = [&]() {
    std::vector<Tensor> scratch;
    return double{model->ComputeGradients(params, batch, &scratch).value()};
  };
  const float eps = 1e-3f;
  for (size_t v = 0; v < params.size(); ++v) {
    if (v < model->variables().size() && model->variables()[v].moving_average) continue;
    const std::string name = v < model->variables().size()
                                 ? model->variables()[v].name
                                 : model->tables()[v - model->variables().size()].name;
    for (int64_t i = 0; i < params[v].num_elements(); ++i) {
      float* p = &params[v].f32()[i];
      const float saved = *p;
      *p = saved + eps;
      const double hi = loss();
      *p = saved - eps;
      const double lo = loss();
      *p = saved;
      const double numeric = (hi - lo) / (2 * eps);
      EXPECT_NEAR(grads[v].f32()[i], numeric, 3e-4 + 1e-2 * std::abs(numeric))
          << name << " element " << i;
    }
  }
}

TEST(CtrModelTest, GradientsMatchFiniteDifferencesWithTheSumCombiner) {
  CheckGradients(SmallConfig(Combiner::kSum));
}

TEST(CtrModelTest, GradientsMatchFiniteDifferencesWithTheMeanCombiner) {
  CheckGradients(SmallConfig(Combiner::kMean));
}

TEST(CtrModelTest, GradientsMatchFiniteDifferencesWithTheSqrtnCombiner) {
  CheckGradients(SmallConfig(Combiner::kSqrtN));
}

TEST(CtrModelTest, GradientsMatchFiniteDifferencesWithACombinerPerField) {
  CtrModelConfig config = SmallConfig();
  config.field_combiners = {Combiner::kSum, Combiner::kSqrtN, Combiner::kMean};
  CheckGradients(config);
}

TEST(CtrModelTest, FmGradientsMatchFiniteDifferences) {
  CtrModelConfig config = SmallConfig();
  config.fm = true;
  config.hidden = {};  // fm: one linear layer
  CheckGradients(config);
}

TEST(CtrModelTest, DeepFmGradientsMatchFiniteDifferencesWithBatchNorm) {
  CtrModelConfig config = SmallConfig(Combiner::kMean);
  config.fm = true;
  config.hidden = {5, 4};
  config.batchnorm = true;
  CheckGradients(config);
}

TEST(CtrModelTest, StackedDcnV2GradientsMatchFiniteDifferences) {
  CtrModelConfig config = SmallConfig();
  config.wide = false;
  config.cross_layers = 2;
  CheckGradients(config);
}

TEST(CtrModelTest, ParallelLowRankDcnV2GradientsMatchFiniteDifferences) {
  CtrModelConfig config = SmallConfig();
  config.cross_layers = 2;
  config.cross_rank = 2;
  config.cross_parallel = true;
  CheckGradients(config);
}

TEST(CtrModelTest, DlrmGradientsMatchFiniteDifferences) {
  CtrModelConfig config = SmallConfig();
  config.wide = false;
  config.dot = true;
  config.bottom = {4, 3};  // the last: the embedding dim
  CheckGradients(config);
}

TEST(CtrModelTest, DlrmWithoutDenseFeaturesTakesTheFieldsDotsAlone) {
  CtrModelConfig config = SmallConfig();
  config.dot = true;
  config.dense_features = 0;
  auto model = MakeClickModel(config);
  Batch batch = SparseBatch();
  batch.feature_dim = 0;
  batch.features.clear();
  std::vector<Tensor> grads;
  EXPECT_TRUE(model->ComputeGradients(Params(*model, batch), batch, &grads).ok());
  // 3 fields: 3 dot products into the top's first layer.
  EXPECT_EQ(model->variables().front().shape, (Shape{3, 5}));
}

TEST(CtrModelTest, CreateRefusesPartsThatDoNotGoTogether) {
  CtrModelConfig dot_without_bottom = SmallConfig();
  dot_without_bottom.dot = true;
  StatusOr<std::unique_ptr<CtrModel>> model = CtrModel::Create(dot_without_bottom);
  EXPECT_EQ(model.status().code(), Code::kInvalidArgument);
  EXPECT_NE(model.status().message().find("bottom"), std::string::npos) << model.status().message();
  CtrModelConfig dot_and_fm = SmallConfig();
  dot_and_fm.dot = dot_and_fm.fm = true;
  dot_and_fm.bottom = {3};
  EXPECT_EQ(CtrModel::Create(dot_and_fm).status().code(), Code::kInvalidArgument);
  CtrModelConfig parallel_alone = SmallConfig();
  parallel_alone.cross_parallel = true;
  EXPECT_EQ(CtrModel::Create(parallel_alone).status().code(), Code::kInvalidArgument);
  CtrModelConfig combiners = SmallConfig();
  combiners.field_combiners = {Combiner::kSum};
  EXPECT_EQ(CtrModel::Create(combiners).status().code(), Code::kInvalidArgument);
}

TEST(CtrModelTest, TheMeanAndSqrtnCombinersDivideByTheWeights) {
  // Example 0's field 1 has rows r1 (weight 1) and r2 (weight 0.5); with
  // fm alone over one linear layer whose weights are zero, the logit is
  // the FM term, which reads the pooled vectors.
  Batch batch = SparseBatch();
  for (Combiner c : {Combiner::kSum, Combiner::kMean, Combiner::kSqrtN}) {
    CtrModelConfig config = SmallConfig(c);
    config.fm = true;
    config.wide = false;
    config.hidden = {};
    auto model = MakeClickModel(config);
    std::vector<Tensor> params = Params(*model, batch);
    for (size_t v = 0; v < model->variables().size(); ++v) {
      std::fill(params[v].f32(), params[v].f32() + params[v].num_elements(), 0.0f);
    }
    const float* rows = params.back().f32();  // ids: 11, -7, 40, 13, ...
    const float divisor = c == Combiner::kSum    ? 1.0f
                          : c == Combiner::kMean ? 1.5f
                                                 : std::sqrt(1.25f);
    double fm = 0;
    for (int k = 0; k < 3; ++k) {
      const float field0 = rows[0 * 3 + k];
      const float field1 = (rows[1 * 3 + k] + 0.5f * rows[2 * 3 + k]) / divisor;
      const float field2 = rows[3 * 3 + k];
      fm += field0 * field1 + field0 * field2 + field1 * field2;
    }
    std::vector<float> p;
    ASSERT_TRUE(model->Predict(params, batch, &p).ok());
    EXPECT_NEAR(p[1], 1 / (1 + std::exp(-fm)), 1e-5) << "combiner " << static_cast<int>(c);
  }
}

TEST(CtrModelTest, RowIdsAreUniqueInFirstSeenOrderAndFixedTablesTakeKeysModRows) {
  const Batch batch = SparseBatch();
  // Dynamic: the keys themselves; 21 and -7 appear twice but once here.
  const TableRowIds dynamic = MakeClickModel(false)->RowIds(batch);
  ASSERT_EQ(dynamic.size(), 2u);  // deep, wide: the same ids
  EXPECT_EQ(dynamic[0], (std::vector<int64_t>{11, -7, 40, 13, 21, 22, 23, 31, 32, 33, 43, 51, 52}));
  EXPECT_EQ(dynamic[1], dynamic[0]);
  // Fixed, 10 rows: key mod 10 in [0, 10) (-7 -> 3, as ONNX's Mod).
  const std::vector<int64_t> fixed = MakeClickModel(false, 10)->RowIds(batch)[0];
  const int64_t minus7 = 3;
  ASSERT_GE(fixed.size(), 2u);
  EXPECT_EQ(fixed[0], 1);
  EXPECT_EQ(fixed[1], minus7);
  for (int64_t id : fixed) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 10);
  }
  std::vector<int64_t> sorted = fixed;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "ids not unique";
}

TEST(CtrModelTest, ARowUsedTwiceGetsTheSumOfItsGradients) {
  // Key 21 is in example 1 and example 3: its row gradient is the sum of
  // what each example alone gives it.
  auto model = MakeClickModel(false);
  const Batch batch = SparseBatch();
  const std::vector<Tensor> params = Params(*model, batch);
  std::vector<Tensor> grads;
  ASSERT_TRUE(model->ComputeGradients(params, batch, &grads).ok());
  const std::vector<int64_t> ids = model->RowIds(batch)[1];  // the wide table's
  const int64_t slot = std::find(ids.begin(), ids.end(), 21) - ids.begin();
  const Tensor& wide = grads.back();  // [ids, 1]
  // The wide weight's gradient is the sum over its entries of
  // (p - y) / B: examples 1 (y 0) and 3 (y 1).
  std::vector<float> probabilities;
  ASSERT_TRUE(model->Predict(params, batch, &probabilities).ok());
  const float expected = (probabilities[2 * 1 + 1] - 0 + probabilities[2 * 3 + 1] - 1) / 5.0f;
  EXPECT_NEAR(wide.f32()[slot], expected, 1e-6);
}

TEST(CtrModelTest, PredictGivesTwoClassProbabilities) {
  auto model = MakeClickModel(false);
  const Batch batch = SparseBatch();
  std::vector<float> p;
  ASSERT_TRUE(model->Predict(Params(*model, batch), batch, &p).ok());
  ASSERT_EQ(p.size(), 10u);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(p[2 * i] + p[2 * i + 1], 1.0f, 1e-6);
  EXPECT_EQ(model->num_classes(), 2);
}

TEST(CtrModelTest, RefusesRowsThatDoNotFitTheBatchAndBadLabels) {
  auto model = MakeClickModel(false);
  Batch batch = SparseBatch();
  std::vector<Tensor> params = Params(*model, batch);
  std::vector<Tensor> grads;
  params.back() = Tensor(DType::kFloat32, {3, 1});
  StatusOr<float> wrong = model->ComputeGradients(params, batch, &grads);
  EXPECT_EQ(wrong.status().code(), Code::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("wide/weights"), std::string::npos);
  params = Params(*model, batch);
  batch.labels[0] = 2;
  EXPECT_EQ(model->ComputeGradients(params, batch, &grads).status().code(), Code::kInvalidArgument);
  batch.labels[0] = 1;
  batch.sparse_fields[0] = 3;
  EXPECT_EQ(model->ComputeGradients(params, batch, &grads).status().code(), Code::kInvalidArgument);
}

// Fields 0 and 2 of dim 3, field 1 of dim 2: two deep tables (the first
// dim's keeps the old name), the wide table between them.
CtrModelConfig PerFieldDims(int64_t table_rows) {
  CtrModelConfig config = SmallConfig(Combiner::kMean, table_rows);
  config.field_dims = {3, 2, 3};
  if (table_rows > 0) config.field_ranges = {{0, 10}, {10, 10}, {20, 10}};
  return config;
}

TEST(CtrModelTest, GradientsMatchFiniteDifferencesWithPerFieldDims) {
  CheckGradients(PerFieldDims(0));
  CheckGradients(PerFieldDims(30));
  CtrModelConfig cross = PerFieldDims(30);
  cross.cross_layers = 1;
  CheckGradients(cross);
}

TEST(CtrModelTest, FieldsOfEachDimShareATableHoldingTheirKeyRanges) {
  auto model = MakeClickModel(PerFieldDims(30));
  ASSERT_EQ(model->tables().size(), 3u);
  EXPECT_EQ(model->tables()[0].name, "deep/embedding");
  EXPECT_EQ(model->tables()[0].dim, 3);
  EXPECT_EQ(model->tables()[0].rows, 20);  // fields 0 and 2: keys [0, 10) and [20, 30)
  EXPECT_EQ(model->tables()[1].name, "wide/weights");
  EXPECT_EQ(model->tables()[1].rows, 30);
  EXPECT_EQ(model->tables()[2].name, "deep/embedding_dim2");
  EXPECT_EQ(model->tables()[2].dim, 2);
  EXPECT_EQ(model->tables()[2].rows, 10);
  Batch batch = SparseBatch();
  batch.size = 1;  // example 0: keys 11 (field 0), -7 and 40 (field 1), 13 (field 2)
  batch.sparse_offsets.resize(2);
  const int64_t n = batch.sparse_offsets[1];
  batch.sparse_keys.resize(n);
  batch.sparse_fields.resize(n);
  batch.sparse_values.resize(n);
  batch.features.resize(4);
  batch.labels.resize(1);
  const TableRowIds ids = model->RowIds(batch);
  // A key's id is key mod 30 (-7: 23, 40: 10); in its field's table, the
  // first row of the field's range plus (id - range start) mod its rows:
  // field 0's [0, 10) from row 0 (11: 1), field 2's [20, 30) from row 10
  // (13: 10 + 3); field 1's [10, 20) from row 0 of its own table (23: 3,
  // 10: 0). The wide table's rows are the ids.
  EXPECT_EQ(ids[0], (std::vector<int64_t>{1, 13}));
  EXPECT_EQ(ids[2], (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(ids[1], (std::vector<int64_t>{11, 23, 10, 13}));
  // Dynamic tables: each dim's table holds its fields' keys.
  const TableRowIds dynamic = MakeClickModel(PerFieldDims(0))->RowIds(batch);
  EXPECT_EQ(dynamic[0], (std::vector<int64_t>{11, 13}));
  EXPECT_EQ(dynamic[2], (std::vector<int64_t>{-7, 40}));
  EXPECT_EQ(dynamic[1], (std::vector<int64_t>{11, -7, 40, 13}));
}

TEST(CtrModelTest, PerFieldDimsAreRefusedWhereTheModelNeedsOneDim) {
  CtrModelConfig fm = PerFieldDims(0);
  fm.fm = true;
  StatusOr<std::unique_ptr<CtrModel>> made = CtrModel::Create(fm);
  ASSERT_EQ(made.status().code(), Code::kInvalidArgument);
  EXPECT_NE(made.status().message().find("fm needs one embedding dim for every field: field 1 "
                                         "has 2, field 0 3"),
            std::string::npos)
      << made.status().message();
  CtrModelConfig unranged = PerFieldDims(30);
  unranged.field_ranges.clear();
  EXPECT_EQ(CtrModel::Create(unranged).status().code(), Code::kInvalidArgument);
  CtrModelConfig outside = PerFieldDims(30);
  outside.field_ranges[2] = {25, 10};
  EXPECT_EQ(CtrModel::Create(outside).status().code(), Code::kInvalidArgument);
}

TEST(CtrModelTest, CreateRefusesDataWithoutFields) {
  CtrModelConfig config;
  config.dense_features = 4;
  EXPECT_EQ(CtrModel::Create(config).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pst
