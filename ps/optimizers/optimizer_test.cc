#include "ps/optimizers/optimizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/bfloat16.h"

namespace pst {
namespace {

// One small variable and three gradients, shared by the hand-computed tests.
const std::vector<float> kVar0 = {1.0f, -2.0f, 0.5f};
const std::vector<std::vector<float>> kGrads = {
    {0.1f, -0.2f, 0.3f}, {0.4f, 0.0f, -0.5f}, {-0.3f, 0.6f, 0.2f}};
constexpr double kTol = 1e-6;

std::unique_ptr<Optimizer> Make(const OptimizerConfig& config) {
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(config);
  EXPECT_TRUE(optimizer.ok()) << optimizer.status().ToString();
  return std::move(optimizer).value();
}

OptimizerConfig Config(const std::string& name) {
  OptimizerConfig config;
  config.name = name;
  config.learning_rate = 0.1f;
  return config;
}

void ExpectNear(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], kTol) << "element " << i;
  }
}

// Applies kGrads[step] to var.
void Step(const Optimizer& optimizer, int step, std::vector<float>* var, SlotSet* slots) {
  optimizer.Apply(var->data(), kGrads[step].data(), var->size(), 1.0f, slots);
}

TEST(SgdTest, TwoUpdates) {
  std::unique_ptr<Optimizer> sgd = Make(Config("sgd"));
  std::vector<float> var = kVar0;
  SlotSet slots = sgd->CreateSlots(3);
  Step(*sgd, 0, &var, &slots);  // var - 0.1 * {0.1, -0.2, 0.3}
  ExpectNear(var, {0.99, -1.98, 0.47});
  Step(*sgd, 1, &var, &slots);  // var - 0.1 * {0.4, 0, -0.5}
  ExpectNear(var, {0.95, -1.98, 0.52});
  EXPECT_EQ(slots.updates, 2);
}

TEST(MomentumTest, ThreeUpdates) {
  std::unique_ptr<Optimizer> momentum = Make(Config("momentum"));
  std::vector<float> var = kVar0;
  SlotSet slots = momentum->CreateSlots(3);
  // accum = g; var -= 0.1 * accum
  Step(*momentum, 0, &var, &slots);
  ExpectNear(slots.values[0], {0.1, -0.2, 0.3});
  ExpectNear(var, {0.99, -1.98, 0.47});
  // accum = 0.9 * {0.1, -0.2, 0.3} + {0.4, 0, -0.5}
  Step(*momentum, 1, &var, &slots);
  ExpectNear(slots.values[0], {0.49, -0.18, -0.23});
  ExpectNear(var, {0.941, -1.962, 0.493});
  // accum = 0.9 * {0.49, -0.18, -0.23} + {-0.3, 0.6, 0.2}
  Step(*momentum, 2, &var, &slots);
  ExpectNear(slots.values[0], {0.141, 0.438, -0.007});
  ExpectNear(var, {0.9269, -2.0058, 0.4937});
}

TEST(MomentumTest, NesterovThreeUpdates) {
  OptimizerConfig config = Config("momentum");
  config.use_nesterov = true;
  std::unique_ptr<Optimizer> momentum = Make(config);
  std::vector<float> var = kVar0;
  SlotSet slots = momentum->CreateSlots(3);
  // Same accumulators as above; var -= 0.1 * (g + 0.9 * accum).
  Step(*momentum, 0, &var, &slots);  // 0.1 * 1.9 * g
  ExpectNear(var, {0.981, -1.962, 0.443});
  // var -= 0.1 * ({0.4, 0, -0.5} + 0.9 * {0.49, -0.18, -0.23})
  Step(*momentum, 1, &var, &slots);
  ExpectNear(var, {0.8969, -1.9458, 0.5137});
  // var -= 0.1 * ({-0.3, 0.6, 0.2} + 0.9 * {0.141, 0.438, -0.007})
  Step(*momentum, 2, &var, &slots);
  ExpectNear(var, {0.91421, -2.04522, 0.49433});
}

TEST(AdagradTest, ThreeUpdates) {
  std::unique_ptr<Optimizer> adagrad = Make(Config("adagrad"));
  std::vector<float> var = kVar0;
  SlotSet slots = adagrad->CreateSlots(3);
  ExpectNear(slots.values[0], {0.1, 0.1, 0.1});
  // accum = 0.1 + g^2; var -= 0.1 * g / sqrt(accum)
  Step(*adagrad, 0, &var, &slots);
  ExpectNear(slots.values[0], {0.11, 0.14, 0.19});
  ExpectNear(var, {1.0 - 0.01 / std::sqrt(0.11), -2.0 + 0.02 / std::sqrt(0.14),
                   0.5 - 0.03 / std::sqrt(0.19)});
  Step(*adagrad, 1, &var, &slots);
  ExpectNear(slots.values[0], {0.27, 0.14, 0.44});
  ExpectNear(var,
             {1.0 - 0.01 / std::sqrt(0.11) - 0.04 / std::sqrt(0.27), -2.0 + 0.02 / std::sqrt(0.14),
              0.5 - 0.03 / std::sqrt(0.19) + 0.05 / std::sqrt(0.44)});
  Step(*adagrad, 2, &var, &slots);
  ExpectNear(slots.values[0], {0.36, 0.5, 0.48});
  ExpectNear(var, {0.94286883, -2.03140057, 0.477685603});
}

TEST(AdamTest, ThreeUpdatesAndUpdateCount) {
  std::unique_ptr<Optimizer> adam = Make(Config("adam"));
  std::vector<float> var = kVar0;
  SlotSet slots = adam->CreateSlots(3);
  EXPECT_EQ(slots.updates, 0);
  // t=1: lr_t = 0.1 * sqrt(0.001) / 0.1; m = 0.1 g; v = 0.001 g^2, so the
  // step is lr * sign(g), less a hair for epsilon.
  Step(*adam, 0, &var, &slots);
  EXPECT_EQ(slots.updates, 1);
  ExpectNear(slots.values[0], {0.01, -0.02, 0.03});
  ExpectNear(slots.values[1], {1e-5, 4e-5, 9e-5});
  ExpectNear(var, {0.900000316, -1.90000016, 0.400000105});
  // t=2: lr_t = 0.1 * sqrt(1 - 0.999^2) / (1 - 0.9^2) = 0.0235316725
  Step(*adam, 1, &var, &slots);
  EXPECT_EQ(slots.updates, 2);
  ExpectNear(slots.values[0], {0.049, -0.018, -0.023});
  ExpectNear(slots.values[1], {0.00016999, 3.996e-5, 0.00033991});
  ExpectNear(var, {0.811562735, -1.83299444, 0.42935621});
  // t=3: lr_t = 0.1 * sqrt(1 - 0.999^3) / (1 - 0.9^3) = 0.0202010597
  Step(*adam, 2, &var, &slots);
  EXPECT_EQ(slots.updates, 3);
  ExpectNear(slots.values[0], {0.0141, 0.0438, -0.0007});
  ExpectNear(slots.values[1], {0.00025982001, 0.00039992004, 0.00037957009});
  ExpectNear(var, {0.793891915, -1.87723916, 0.430082025});
}

// Properties every optimizer shares.
class AllOptimizersTest : public testing::TestWithParam<const char*> {};

TEST_P(AllOptimizersTest, LrScaleMultipliesLearningRate) {
  OptimizerConfig halved = Config(GetParam());
  halved.learning_rate = 0.05f;
  std::unique_ptr<Optimizer> scaled = Make(Config(GetParam()));
  std::unique_ptr<Optimizer> plain = Make(halved);
  std::vector<float> a = kVar0, b = kVar0;
  SlotSet slots_a = scaled->CreateSlots(3), slots_b = plain->CreateSlots(3);
  for (int step = 0; step < 3; ++step) {
    scaled->Apply(a.data(), kGrads[step].data(), 3, 0.5f, &slots_a);
    plain->Apply(b.data(), kGrads[step].data(), 3, 1.0f, &slots_b);
  }
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(a[i], b[i]);
  EXPECT_NE(a, kVar0);
}

TEST_P(AllOptimizersTest, CountsUpdates) {
  std::unique_ptr<Optimizer> optimizer = Make(Config(GetParam()));
  std::vector<float> var = kVar0;
  SlotSet slots = optimizer->CreateSlots(3);
  for (int step = 0; step < 3; ++step) {
    Step(*optimizer, step, &var, &slots);
    EXPECT_EQ(slots.updates, step + 1);
  }
}

// A gradient inside a network buffer sits at any 4-byte offset; the result
// must not depend on alignment. 37 floats exercise the vector and tail paths.
TEST_P(AllOptimizersTest, UnalignedPointersGiveSameResult) {
  std::unique_ptr<Optimizer> optimizer = Make(Config(GetParam()));
  constexpr int kN = 37;
  std::vector<float> aligned_var(kN), aligned_grad(kN);
  std::vector<float> shifted_var(kN + 1), shifted_grad(kN + 3);
  for (int i = 0; i < kN; ++i) {
    const float x = static_cast<float>(i);
    aligned_var[i] = shifted_var[i + 1] = 0.1f * x - 1.0f;
    aligned_grad[i] = shifted_grad[i + 3] = std::sin(0.7f * x);
  }
  SlotSet aligned_slots = optimizer->CreateSlots(kN);
  SlotSet shifted_slots = optimizer->CreateSlots(kN);
  for (int step = 0; step < 2; ++step) {
    optimizer->Apply(aligned_var.data(), aligned_grad.data(), kN, 1.0f, &aligned_slots);
    optimizer->Apply(shifted_var.data() + 1, shifted_grad.data() + 3, kN, 1.0f, &shifted_slots);
  }
  for (int i = 0; i < kN; ++i) {
    EXPECT_FLOAT_EQ(shifted_var[i + 1], aligned_var[i]) << "element " << i;
  }
}

// --wire_dtype=bfloat16: a narrowed gradient applied as the same update of
// its widened values, counted once, whichever way an optimizer widens it.
TEST_P(AllOptimizersTest, ABFloat16GradientIsAppliedAsItsWidenedValues) {
  std::unique_ptr<Optimizer> optimizer = Make(Config(GetParam()));
  constexpr int kN = 2 * 2048 + 37;  // blocks (SGD widens 2048 at a time), vectors, a tail
  std::vector<uint16_t> narrow(kN);
  std::vector<float> widened(kN), a(kN), b(kN), scratch;
  for (int i = 0; i < kN; ++i) {
    narrow[i] = FloatToBFloat16(std::sin(0.7f * static_cast<float>(i)));
    widened[i] = BFloat16ToFloat(narrow[i]);
    a[i] = b[i] = 0.1f * static_cast<float>(i) - 1.0f;
  }
  SlotSet slots_a = optimizer->CreateSlots(kN), slots_b = optimizer->CreateSlots(kN);
  for (int step = 0; step < 2; ++step) {
    optimizer->ApplyBFloat16(a.data(), narrow.data(), kN, 0.5f, &slots_a, &scratch);
    optimizer->Apply(b.data(), widened.data(), kN, 0.5f, &slots_b);
  }
  EXPECT_EQ(slots_a.updates, 2);
  for (int i = 0; i < kN; ++i) EXPECT_FLOAT_EQ(a[i], b[i]) << "element " << i;
  EXPECT_NE(a, std::vector<float>(kN, 0.0f));
}

TEST_P(AllOptimizersTest, ConfigIsKept) {
  OptimizerConfig config = Config(GetParam());
  config.learning_rate = 0.25f;
  std::unique_ptr<Optimizer> optimizer = Make(config);
  EXPECT_EQ(optimizer->config().name, GetParam());
  EXPECT_EQ(optimizer->config().learning_rate, 0.25f);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, AllOptimizersTest,
                         testing::Values("sgd", "momentum", "adagrad", "adam", "ftrl"));

TEST(FtrlTest, TwoUpdatesByHand) {
  // lr 0.5, l1 0.05, l2 0.25, beta 0.2, n starts at 0.16 (sqrt 0.4), z at 0.
  // The denominator is q = (beta + sqrt(n)) / lr + 2 * l2.
  OptimizerConfig config = Config("ftrl");
  config.learning_rate = 0.5f;
  config.initial_accumulator = 0.16f;
  config.l1 = 0.05f;
  config.l2 = 0.25f;
  config.ftrl_beta = 0.2f;
  std::unique_ptr<Optimizer> ftrl = Make(config);
  std::vector<float> var = {1.0f, 0.0f, 0.5f};
  SlotSet slots = ftrl->CreateSlots(3);

  // Step 1, g = {0.3, -0.3, 0.03}.
  //  [0]: n = 0.16 + 0.09 = 0.25; sigma = (0.5 - 0.4) / 0.5 = 0.2;
  //       z = 0.3 - 0.2 * 1.0 = 0.1; q = (0.2 + 0.5) / 0.5 + 0.5 = 1.9;
  //       w = (0.05 - 0.1) / 1.9 = -0.0263157895
  //  [1]: n = 0.25; sigma = 0.2; z = -0.3 - 0.2 * 0 = -0.3;
  //       w = (-0.05 + 0.3) / 1.9 = 0.131578947
  //  [2]: n = 0.16 + 0.0009 = 0.1609; sqrt = 0.401123422;
  //       sigma = 0.001123422 / 0.5 = 0.002246845;
  //       z = 0.03 - 0.002246845 * 0.5 = 0.028876578; |z| <= l1: w = 0
  const std::vector<float> g1 = {0.3f, -0.3f, 0.03f};
  ftrl->Apply(var.data(), g1.data(), 3, 1.0f, &slots);
  ExpectNear(slots.values[0], {0.25, 0.25, 0.1609});
  ExpectNear(slots.values[1], {0.1, -0.3, 0.028876578});
  ExpectNear(var, {-0.0263157895, 0.131578947, 0.0});
  EXPECT_EQ(var[2], 0.0f);  // exactly

  // Step 2, g = {-0.6, 0.4, -0.1}.
  //  [0]: n = 0.25 + 0.36 = 0.61; sqrt = 0.781024968;
  //       sigma = 0.281024968 / 0.5 = 0.562049935;
  //       z = 0.1 - 0.6 - 0.562049935 * -0.0263157895 = -0.485209212;
  //       q = (0.2 + 0.781024968) / 0.5 + 0.5 = 2.462049935;
  //       w = (-0.05 + 0.485209212) / 2.462049935 = 0.176767013
  //  [1]: n = 0.25 + 0.16 = 0.41; sqrt = 0.640312424;
  //       sigma = 0.140312424 / 0.5 = 0.280624847;
  //       z = -0.3 + 0.4 - 0.280624847 * 0.131578947 = 0.063075678;
  //       q = (0.2 + 0.640312424) / 0.5 + 0.5 = 2.180624847;
  //       w = (0.05 - 0.063075678) / 2.180624847 = -0.00599629871
  //  [2]: n = 0.1609 + 0.01 = 0.1709; sqrt = 0.413400532; w was 0, so
  //       z = 0.028876578 - 0.1 = -0.071123422;
  //       q = (0.2 + 0.413400532) / 0.5 + 0.5 = 1.726801064;
  //       w = (-0.05 + 0.071123422) / 1.726801064 = 0.0122326902
  const std::vector<float> g2 = {-0.6f, 0.4f, -0.1f};
  ftrl->Apply(var.data(), g2.data(), 3, 1.0f, &slots);
  ExpectNear(slots.values[0], {0.61, 0.41, 0.1709});
  ExpectNear(slots.values[1], {-0.485209212, 0.063075678, -0.071123422});
  ExpectNear(var, {0.176767013, -0.00599629871, 0.0122326902});
  EXPECT_EQ(slots.updates, 2);
}

TEST(FtrlTest, WithoutRegularizationIsAdagradLikeFromZero) {
  // l1 = l2 = beta = 0, one step from w = 0: z = g, w = -z * lr / sqrt(n),
  // the Adagrad step from 0.
  OptimizerConfig config = Config("ftrl");
  std::unique_ptr<Optimizer> ftrl = Make(config);
  std::vector<float> var = {0.0f, 0.0f, 0.0f};
  SlotSet slots = ftrl->CreateSlots(3);
  Step(*ftrl, 0, &var, &slots);
  ExpectNear(var, {-0.01 / std::sqrt(0.11), 0.02 / std::sqrt(0.14), -0.03 / std::sqrt(0.19)});
}

TEST(FtrlTest, L1MakesWeightsExactlyZero) {
  // Small gradients of changing sign: |z| stays below a large l1, so every
  // weight is exactly 0; without l1 none is.
  constexpr int kN = 64;
  OptimizerConfig config = Config("ftrl");
  std::vector<float> sparse(kN, 0.3f), dense(kN, 0.3f), grad(kN);
  config.l1 = 1.0f;
  std::unique_ptr<Optimizer> with_l1 = Make(config);
  config.l1 = 0.0f;
  std::unique_ptr<Optimizer> without_l1 = Make(config);
  SlotSet slots_l1 = with_l1->CreateSlots(kN), slots_plain = without_l1->CreateSlots(kN);
  for (int step = 0; step < 20; ++step) {
    for (int i = 0; i < kN; ++i) grad[i] = 0.05f * std::sin(0.37f * (i + 1) * (step + 1));
    with_l1->Apply(sparse.data(), grad.data(), kN, 1.0f, &slots_l1);
    without_l1->Apply(dense.data(), grad.data(), kN, 1.0f, &slots_plain);
  }
  int zeros_with = 0, zeros_without = 0;
  for (int i = 0; i < kN; ++i) {
    zeros_with += sparse[i] == 0.0f;
    zeros_without += dense[i] == 0.0f;
  }
  EXPECT_EQ(zeros_with, kN);
  EXPECT_EQ(zeros_without, 0);

  // Moderate l1 zeroes the coordinates whose |z| <= l1 and only those.
  config.l1 = 0.05f;
  std::unique_ptr<Optimizer> moderate = Make(config);
  std::vector<float> var(kN, 0.0f);
  SlotSet slots = moderate->CreateSlots(kN);
  for (int i = 0; i < kN; ++i) grad[i] = 0.002f * i;
  moderate->Apply(var.data(), grad.data(), kN, 1.0f, &slots);
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(var[i] == 0.0f, std::abs(slots.values[1][i]) <= 0.05f) << "element " << i;
  }
  EXPECT_EQ(var[0], 0.0f);
  EXPECT_NE(var[kN - 1], 0.0f);
}

TEST(FtrlTest, ZeroLrScaleChangesNothing) {
  std::unique_ptr<Optimizer> ftrl = Make(Config("ftrl"));
  std::vector<float> var = kVar0;
  SlotSet slots = ftrl->CreateSlots(3);
  const SlotSet before = slots;
  ftrl->Apply(var.data(), kGrads[0].data(), 3, 0.0f, &slots);
  EXPECT_EQ(var, kVar0);
  EXPECT_EQ(slots.values, before.values);
}

// Row-sparse applies: on a [kRows, kDim] table with its row slots, ApplyRow
// over rows 1 and 3 equals the dense Apply of each of those rows as its own
// kDim-element variable with its own SlotSet (Adam: `updates` counts the
// table's applies, as the dense SlotSet counts its own), and every other row
// and its slots stay bit for bit as they were.
class RowApplyTest : public testing::TestWithParam<const char*> {
 protected:
  static constexpr int kRows = 5;
  static constexpr int kDim = 7;  // odd: vector and tail paths

  OptimizerConfig RowConfig() const {
    OptimizerConfig config = Config(GetParam());
    config.l1 = 0.001f;  // ftrl only; others ignore them
    config.l2 = 0.01f;
    config.ftrl_beta = 0.5f;
    return config;
  }
};

TEST_P(RowApplyTest, InitRowSlotsMatchesCreateSlots) {
  std::unique_ptr<Optimizer> optimizer = Make(RowConfig());
  const int slots_per_row = optimizer->RowSlots();
  SlotSet dense = optimizer->CreateSlots(kDim);
  ASSERT_EQ(static_cast<int>(dense.values.size()), slots_per_row);
  std::vector<float> row_slots(slots_per_row * kDim, -7.0f);
  optimizer->InitRowSlots(row_slots.data(), kDim);
  for (int s = 0; s < slots_per_row; ++s) {
    EXPECT_EQ(std::vector<float>(row_slots.begin() + s * kDim, row_slots.begin() + (s + 1) * kDim),
              dense.values[s])
        << "slot " << dense.names[s];
  }
}

TEST_P(RowApplyTest, RowsEqualDenseApplyAndOthersStayPut) {
  std::unique_ptr<Optimizer> optimizer = Make(RowConfig());
  const int slot_floats = optimizer->RowSlots() * kDim;
  std::vector<float> table(kRows * kDim), table_slots(kRows * slot_floats);
  for (int i = 0; i < kRows * kDim; ++i) table[i] = std::cos(0.3f * i);
  for (int r = 0; r < kRows; ++r)
    optimizer->InitRowSlots(table_slots.data() + r * slot_floats, kDim);
  const std::vector<float> table0 = table, slots0 = table_slots;

  const int kTouched[] = {1, 3};
  std::vector<std::vector<float>> dense_vars;
  std::vector<SlotSet> dense_slots;
  for (int r : kTouched) {
    dense_vars.emplace_back(table.begin() + r * kDim, table.begin() + (r + 1) * kDim);
    dense_slots.push_back(optimizer->CreateSlots(kDim));
  }
  std::vector<float> grad(kDim);
  for (int step = 0; step < 3; ++step) {
    for (int k = 0; k < 2; ++k) {
      const int r = kTouched[k];
      for (int j = 0; j < kDim; ++j) grad[j] = std::sin(0.7f * (j + 1) + 1.3f * r + 0.4f * step);
      const float lr_scale = step == 1 ? 0.5f : 1.0f;
      optimizer->ApplyRow(&table[r * kDim], table_slots.data() + r * slot_floats, grad.data(), kDim,
                          lr_scale, /*updates=*/step);
      optimizer->Apply(dense_vars[k].data(), grad.data(), kDim, lr_scale, &dense_slots[k]);
    }
  }

  for (int r = 0; r < kRows; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    const int k = r == 1 ? 0 : r == 3 ? 1 : -1;
    for (int j = 0; j < kDim; ++j) {
      if (k < 0) {
        // Untouched: bit-identical, value and slots.
        EXPECT_EQ(table[r * kDim + j], table0[r * kDim + j]);
        continue;
      }
      // The same arithmetic; float-equal (4 ulps), since Eigen may split a
      // row into vector and scalar parts differently at another address.
      EXPECT_FLOAT_EQ(table[r * kDim + j], dense_vars[k][j]) << "element " << j;
      EXPECT_NE(table[r * kDim + j], table0[r * kDim + j]) << "element " << j;
    }
    for (int s = 0; s < optimizer->RowSlots(); ++s) {
      for (int j = 0; j < kDim; ++j) {
        const int at = r * slot_floats + s * kDim + j;
        if (k < 0) {
          EXPECT_EQ(table_slots[at], slots0[at]);
        } else {
          EXPECT_FLOAT_EQ(table_slots[at], dense_slots[k].values[s][j])
              << "slot " << dense_slots[k].names[s] << " element " << j;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, RowApplyTest,
                         testing::Values("sgd", "momentum", "adagrad", "adam", "ftrl"));

TEST(RowApplyAdamTest, UpdatesIsTheBiasCorrectionStep) {
  // A row applied with updates = 2 moves as a dense variable at its third
  // update (t = 3) would from the same m, v: the lr_t of step t only.
  std::unique_ptr<Optimizer> adam = Make(Config("adam"));
  std::vector<float> row = kVar0, dense = kVar0;
  std::vector<float> row_slots(6, 0.0f);
  SlotSet slots = adam->CreateSlots(3);
  slots.updates = 2;
  adam->ApplyRow(row.data(), row_slots.data(), kGrads[0].data(), 3, 1.0f, /*updates=*/2);
  adam->Apply(dense.data(), kGrads[0].data(), 3, 1.0f, &slots);
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(row[i], dense[i]);
  // t = 3 differs from t = 1.
  std::vector<float> first = kVar0;
  std::vector<float> first_slots(6, 0.0f);
  adam->ApplyRow(first.data(), first_slots.data(), kGrads[0].data(), 3, 1.0f, /*updates=*/0);
  EXPECT_NE(first, row);
}

TEST(SlotsTest, NamesAndSizes) {
  const struct {
    const char* optimizer;
    std::vector<std::string> names;
    float initial_value;
  } kCases[] = {
      {"sgd", {}, 0.0f},
      {"momentum", {"momentum"}, 0.0f},
      {"adagrad", {"accumulator"}, 0.1f},
      {"adam", {"m", "v"}, 0.0f},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.optimizer);
    SlotSet slots = Make(Config(c.optimizer))->CreateSlots(5);
    EXPECT_EQ(slots.names, c.names);
    ASSERT_EQ(slots.values.size(), c.names.size());
    for (const std::vector<float>& values : slots.values) {
      EXPECT_EQ(values, std::vector<float>(5, c.initial_value));
    }
    EXPECT_EQ(slots.updates, 0);
  }
  // FTRL's two slots start apart: n at initial_accumulator, z at zero.
  SlotSet ftrl = Make(Config("ftrl"))->CreateSlots(5);
  EXPECT_EQ(ftrl.names, (std::vector<std::string>{"accumulator", "linear"}));
  ASSERT_EQ(ftrl.values.size(), 2u);
  EXPECT_EQ(ftrl.values[0], std::vector<float>(5, 0.1f));
  EXPECT_EQ(ftrl.values[1], std::vector<float>(5, 0.0f));
}

TEST(SlotsTest, InitialAccumulatorIsConfigurable) {
  OptimizerConfig config = Config("adagrad");
  config.initial_accumulator = 0.5f;
  EXPECT_EQ(Make(config)->CreateSlots(2).values[0], std::vector<float>(2, 0.5f));
}

TEST(SlotsDeathTest, ForeignSlotsAreABug) {
  std::unique_ptr<Optimizer> momentum = Make(Config("momentum"));
  SlotSet adagrad_slots = Make(Config("adagrad"))->CreateSlots(3);
  SlotSet short_slots = momentum->CreateSlots(2);
  std::vector<float> var = kVar0;
  EXPECT_DEATH(Step(*momentum, 0, &var, &adagrad_slots), "accumulator");
  EXPECT_DEATH(Step(*momentum, 0, &var, &short_slots), "slot momentum");
}

// Expects InvalidArgument whose message names the field and the value.
void ExpectRejected(const OptimizerConfig& config, const std::string& field,
                    const std::string& value) {
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(config);
  ASSERT_FALSE(optimizer.ok()) << field;
  EXPECT_EQ(optimizer.status().code(), Code::kInvalidArgument);
  const std::string& message = optimizer.status().message();
  EXPECT_NE(message.find(field), std::string::npos) << message;
  EXPECT_NE(message.find(value), std::string::npos) << message;
}

TEST(MakeOptimizerTest, RejectsBadConfigs) {
  OptimizerConfig config = Config("rmsprop");
  ExpectRejected(config, "name", "rmsprop");

  for (const char* name : {"sgd", "momentum", "adagrad", "adam", "ftrl"}) {
    config = Config(name);
    config.learning_rate = 0.0f;
    ExpectRejected(config, "learning_rate", "0");
    config.learning_rate = -1.0f;
    ExpectRejected(config, "learning_rate", "-1");
    config.learning_rate = std::numeric_limits<float>::quiet_NaN();
    ExpectRejected(config, "learning_rate", "nan");
  }

  config = Config("momentum");
  config.momentum = 1.0f;
  ExpectRejected(config, "momentum", "1");

  config = Config("adagrad");
  config.initial_accumulator = 0.0f;
  ExpectRejected(config, "initial_accumulator", "0");

  config = Config("adam");
  config.beta1 = 1.0f;
  ExpectRejected(config, "beta1", "1");
  config = Config("adam");
  config.beta2 = -0.5f;
  ExpectRejected(config, "beta2", "-0.5");
  config = Config("adam");
  config.epsilon = 0.0f;
  ExpectRejected(config, "epsilon", "0");

  config = Config("ftrl");
  config.initial_accumulator = 0.0f;
  ExpectRejected(config, "initial_accumulator", "0");
  config = Config("ftrl");
  config.l1 = -1.0f;
  ExpectRejected(config, "l1", "-1");
  config = Config("ftrl");
  config.l2 = std::numeric_limits<float>::quiet_NaN();
  ExpectRejected(config, "l2", "nan");
  config = Config("ftrl");
  config.l2 = std::numeric_limits<float>::infinity();
  ExpectRejected(config, "l2", "inf");
  config = Config("ftrl");
  config.ftrl_beta = -0.5f;
  ExpectRejected(config, "ftrl_beta", "-0.5");
}

TEST(MakeOptimizerTest, FtrlAcceptsZeroRegularization) {
  OptimizerConfig config = Config("ftrl");
  config.l1 = config.l2 = config.ftrl_beta = 0.0f;
  EXPECT_TRUE(MakeOptimizer(config).ok());
  config.l1 = 1.0f;
  config.l2 = 2.0f;
  config.ftrl_beta = 3.0f;
  EXPECT_TRUE(MakeOptimizer(config).ok());
}

TEST(MakeOptimizerTest, IgnoresFieldsOfOtherOptimizers) {
  OptimizerConfig config = Config("sgd");
  config.momentum = 5.0f;
  config.initial_accumulator = -1.0f;
  config.beta1 = 2.0f;
  config.epsilon = 0.0f;
  config.l1 = -1.0f;
  config.l2 = -1.0f;
  config.ftrl_beta = -1.0f;
  EXPECT_TRUE(MakeOptimizer(config).ok());
  config.name = "adam";
  config.beta1 = 0.9f;
  config.epsilon = 1e-8f;
  EXPECT_TRUE(MakeOptimizer(config).ok());  // adam reads no ftrl field
}

TEST(MakeOptimizerTest, UnknownNameListsKnownOnes) {
  StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(Config("Adam"));
  ASSERT_FALSE(optimizer.ok());
  EXPECT_NE(optimizer.status().message().find("sgd, momentum, adagrad, adam, ftrl"),
            std::string::npos)
      << optimizer.status().message();
}

}  // namespace
}  // namespace pst
