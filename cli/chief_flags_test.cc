#include "cli/chief_flags.h"

#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli/flags_testing.h"

namespace pst {
namespace {

// Points --model_spec at a file holding `text`.
void SetSpec(const std::string& text) { SetModelSpec("chief_flags_test.spec", text); }

TEST(ChiefFlagsTest, DefaultScheduleWithoutASpec) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  const StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->shard.lr_schedule, "constant");
  EXPECT_EQ(options->shard.weight_decay, 0.0f);
  EXPECT_FLOAT_EQ(options->shard.optimizer.learning_rate, 0.3f);  // mlp's
}

// Each setting of a spec's lr_schedule and weight_decay lines applies when
// its flag is left at its default; a flag given wins, even at the default's
// value.
// --train_steps=0 is "until stopped" with --follow, and refused without.
TEST(ChiefFlagsTest, ZeroTrainStepsFollowsUntilStopped) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  gflags::SetCommandLineOption("dataset", "criteo");
  gflags::SetCommandLineOption("model", "deepfm");
  gflags::SetCommandLineOption("test_file", "test.txt");
  gflags::SetCommandLineOption("train_steps", "0");
  EXPECT_EQ(ChiefOptionsFromFlags().status().code(), Code::kInvalidArgument);
  gflags::SetCommandLineOption("follow", "true");
  gflags::SetCommandLineOption("train_files", "logs/part-*");
  const StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->train_steps, kUntilStopped);
}

TEST(ChiefFlagsTest, ModelSpecTrainingSettingsApplyWhenTheFlagsAreDefault) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  SetSpec(
      "dense classes\nlearning_rate 0.2\n"
      "lr_schedule step decay_steps 500 decay_rate 0.5 warmup_steps 20 min 0.01\n"
      "weight_decay 0.0005\n");
  StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_FLOAT_EQ(options->shard.optimizer.learning_rate, 0.2f);
  EXPECT_EQ(options->shard.lr_schedule, "step");
  EXPECT_EQ(options->shard.lr_decay_steps, 500);
  EXPECT_FLOAT_EQ(options->shard.lr_decay_rate, 0.5f);
  EXPECT_EQ(options->shard.lr_warmup_steps, 20);
  EXPECT_FLOAT_EQ(options->shard.lr_min, 0.01f);
  EXPECT_FLOAT_EQ(options->shard.weight_decay, 0.0005f);

  gflags::SetCommandLineOption("lr_schedule", "cosine");
  gflags::SetCommandLineOption("lr_decay_steps", "1000");
  gflags::SetCommandLineOption("weight_decay", "0");
  options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->shard.lr_schedule, "cosine");
  EXPECT_EQ(options->shard.lr_decay_steps, 1000);
  EXPECT_FLOAT_EQ(options->shard.lr_decay_rate, 0.5f);  // still the spec's
  EXPECT_EQ(options->shard.lr_warmup_steps, 20);
  EXPECT_FLOAT_EQ(options->shard.lr_min, 0.01f);
  EXPECT_EQ(options->shard.weight_decay, 0.0f);
}

// A schedule that the spec and the flags make together is checked as a
// whole, and the error says what came from the spec.
TEST(ChiefFlagsTest, BadScheduleFromTheSpecIsNamed) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  SetSpec("dense classes\nlearning_rate 0.1\nlr_schedule step\n");
  StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().code(), Code::kInvalidArgument);
  EXPECT_NE(options.status().message().find("--lr_decay_steps must be > 0"), std::string::npos)
      << options.status().ToString();
  EXPECT_NE(options.status().message().find("(from the model spec: --lr_schedule=step)"),
            std::string::npos)
      << options.status().ToString();
  gflags::SetCommandLineOption("lr_decay_steps", "100");
  options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->shard.lr_schedule, "step");
  EXPECT_EQ(options->shard.lr_decay_steps, 100);

  SetSpec("dense classes\nlearning_rate 0.1\naugment crop:x\n");
  options = ChiefOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find(": augment crop:x: "), std::string::npos)
      << options.status().ToString();
}

// Cosine and exponential without --lr_decay_steps (from the flags or the
// model spec) decay over the whole run, --train_steps; given decay steps
// win; a step schedule has no natural period and still needs them.
TEST(ChiefFlagsTest, WholeRunSchedulesDefaultTheirDecayStepsToTheTrainSteps) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  gflags::SetCommandLineOption("train_steps", "3000");
  for (const char* schedule : {"cosine", "exponential"}) {
    gflags::FlagSaver each;
    gflags::SetCommandLineOption("lr_schedule", schedule);
    StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
    ASSERT_TRUE(options.ok()) << schedule << ": " << options.status().ToString();
    EXPECT_EQ(options->shard.lr_decay_steps, 3000) << schedule;
    gflags::SetCommandLineOption("lr_decay_steps", "700");
    options = ChiefOptionsFromFlags();
    ASSERT_TRUE(options.ok()) << schedule << ": " << options.status().ToString();
    EXPECT_EQ(options->shard.lr_decay_steps, 700) << schedule;
  }
  SetSpec("dense classes\nlearning_rate 0.1\nlr_schedule cosine decay_steps 400\n");
  StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->shard.lr_decay_steps, 400);  // the spec's

  SetSpec("dense classes\nlearning_rate 0.1\n");
  gflags::SetCommandLineOption("lr_schedule", "step");
  options = ChiefOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("--lr_schedule=step: --lr_decay_steps must be > 0"),
            std::string::npos)
      << options.status().ToString();
  gflags::SetCommandLineOption("lr_schedule", "constant");
  options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->shard.lr_decay_steps, 0);
}

// --early_stopping_patience reaches the chief's options (it once did not),
// and only with a validation set to count evaluations of.
TEST(ChiefFlagsTest, EarlyStoppingPatienceNeedsAValidationSet) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  gflags::SetCommandLineOption("early_stopping_patience", "3");
  StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_NE(
      options.status().message().find("--early_stopping_patience needs --validation_examples"),
      std::string::npos)
      << options.status().ToString();
  gflags::SetCommandLineOption("validation_examples", "100");
  options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->early_stopping_patience, 3);
  gflags::SetCommandLineOption("early_stopping_patience", "-1");
  EXPECT_EQ(ChiefOptionsFromFlags().status().code(), Code::kInvalidArgument);
}

// --lr_schedule=plateau decides on the validation loss of the chief's
// evaluations: without a validation set or evaluations it is refused,
// naming both flags; with them its options reach the chief.
TEST(ChiefFlagsTest, PlateauNeedsValidationAndEvaluations) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  gflags::SetCommandLineOption("lr_schedule", "plateau");
  const std::string needs =
      "--lr_schedule=plateau needs --validation_examples > 0 and --eval_every_steps > 0";
  StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().code(), Code::kInvalidArgument);
  EXPECT_NE(options.status().message().find(needs), std::string::npos)
      << options.status().ToString();
  gflags::SetCommandLineOption("validation_examples", "100");
  gflags::SetCommandLineOption("eval_every_steps", "0");
  options = ChiefOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find(needs), std::string::npos)
      << options.status().ToString();

  gflags::SetCommandLineOption("eval_every_steps", "50");
  gflags::SetCommandLineOption("lr_decay_rate", "0.5");
  gflags::SetCommandLineOption("lr_plateau_patience", "2");
  gflags::SetCommandLineOption("lr_plateau_min_delta", "0.01");
  gflags::SetCommandLineOption("lr_plateau_cooldown", "3");
  options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->shard.lr_schedule, "plateau");
  EXPECT_FLOAT_EQ(options->shard.lr_decay_rate, 0.5f);
  EXPECT_EQ(options->lr_plateau.patience, 2);
  EXPECT_DOUBLE_EQ(options->lr_plateau.min_delta, 0.01);
  EXPECT_EQ(options->lr_plateau.cooldown, 3);

  // Plateau's factor is one lowering's: it must lower.
  gflags::SetCommandLineOption("lr_decay_rate", "1");
  options = ChiefOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("--lr_decay_rate must be in (0, 1) for plateau"),
            std::string::npos)
      << options.status().ToString();
}

TEST(ChiefFlagsTest, BadPlateauOptionsAreRefusedNamingTheFlag) {
  struct Case {
    const char* flag;
    const char* value;
    const char* message;
  };
  const Case cases[] = {
      {"lr_plateau_patience", "0", "--lr_plateau_patience=0 must be >= 1"},
      {"lr_plateau_min_delta", "-0.5", "--lr_plateau_min_delta=-0.5 must be finite and >= 0"},
      {"lr_plateau_min_delta", "nan", "--lr_plateau_min_delta=nan must be finite and >= 0"},
      {"lr_plateau_cooldown", "-1", "--lr_plateau_cooldown=-1 must be >= 0"}};
  for (const Case& c : cases) {
    gflags::FlagSaver saver;
    SetClusterAndData();
    gflags::SetCommandLineOption("lr_schedule", "plateau");
    gflags::SetCommandLineOption("validation_examples", "100");
    gflags::SetCommandLineOption(c.flag, c.value);
    const StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
    ASSERT_FALSE(options.ok()) << c.flag;
    EXPECT_EQ(options.status().code(), Code::kInvalidArgument);
    EXPECT_NE(options.status().message().find(c.message), std::string::npos)
        << options.status().ToString();
  }
}

// A spec may state a plateau schedule as it states the others.
TEST(ChiefFlagsTest, PlateauFromTheModelSpec) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  gflags::SetCommandLineOption("validation_examples", "100");
  SetSpec("dense classes\nlearning_rate 0.2\nlr_schedule plateau decay_rate 0.3\n");
  const StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->shard.lr_schedule, "plateau");
  EXPECT_FLOAT_EQ(options->shard.lr_decay_rate, 0.3f);
  EXPECT_EQ(options->lr_plateau.patience, 5);
}

// --features: parsed for --dataset, its min_count and rows standing unless a flag given says
// otherwise.
TEST(ChiefFlagsTest, FeaturesFlag) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  const std::string dir = testing::TempDir();
  const std::string features = dir + "/chief_flags_test.features";
  std::ofstream(features) << "items multi_hot 2 combiner=mean min_count=3\n";
  const std::string data = dir + "/chief_flags_test.ffm";
  std::ofstream(data) << "1 2:5:1\n";
  gflags::SetCommandLineOption("dataset", "libffm");
  gflags::SetCommandLineOption("train_file", data.c_str());
  gflags::SetCommandLineOption("test_file", data.c_str());
  gflags::SetCommandLineOption("features", features.c_str());
  gflags::SetCommandLineOption("model", "wide_deep");
  gflags::SetCommandLineOption("embedding_capacity", "1000");
  StatusOr<ChiefOptions> options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  ASSERT_TRUE(options->job.data.features.has_value());
  EXPECT_EQ(options->job.data.features->summary.num_fields, 1);
  EXPECT_EQ(options->tables.min_count, 3);
  {
    gflags::FlagSaver inner;
    gflags::SetCommandLineOption("embedding_min_count", "2");
    options = ChiefOptionsFromFlags();
    ASSERT_FALSE(options.ok());
    EXPECT_NE(options.status().message().find(
                  "--embedding_min_count=2 differs from the feature file's min_count=3"),
              std::string::npos)
        << options.status().ToString();
  }
  std::ofstream(features) << "items multi_hot 2 buckets=100\nuser categorical 0 buckets=50\n";
  gflags::SetCommandLineOption("embedding_capacity", "0");
  options = ChiefOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  gflags::SetCommandLineOption("embedding_rows", "1000");
  options = ChiefOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("--embedding_rows=1000 differs from the 150 rows"),
            std::string::npos)
      << options.status().ToString();
  gflags::SetCommandLineOption("embedding_rows", "150");
  EXPECT_TRUE(ChiefOptionsFromFlags().ok());
  std::ofstream(features) << "items multi_hot 2 combiner=max\n";
  options = ChiefOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.status().message().find("--features: " + features +
                                            ":1: column items: bad combiner 'max'"),
            std::string::npos)
      << options.status().ToString();
}

}  // namespace
}  // namespace pst
