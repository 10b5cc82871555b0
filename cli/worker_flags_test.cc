#include "cli/worker_flags.h"

#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli/flags_testing.h"
#include "kernels/kernels.h"

namespace pst {
namespace {

// cli/flags.cc names --cpu_kernels' default without linking the kernels;
// it must parse to the kernels' own default.
TEST(WorkerFlagsTest, CpuKernelsDefaultIsTheKernelsDefault) {
  gflags::CommandLineFlagInfo info;
  ASSERT_TRUE(gflags::GetCommandLineFlagInfo("cpu_kernels", &info));
  const StatusOr<CpuKernelsKind> kind = ParseCpuKernels(info.default_value);
  ASSERT_TRUE(kind.ok()) << kind.status().ToString();
  EXPECT_EQ(*kind, DefaultCpuKernels());
}

TEST(WorkerFlagsTest, DefaultFlagsRunTheDefaultCpuKernels) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  const StatusOr<WorkerOptions> options = WorkerOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->cpu_kernels, DefaultCpuKernels());
  EXPECT_EQ(options->job.data.data_dir, "/mnist");
}

TEST(WorkerFlagsTest, BadFlagIsNamed) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  gflags::SetCommandLineOption("cpu_kernels", "mkl");
  const StatusOr<WorkerOptions> options = WorkerOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().code(), Code::kInvalidArgument);
  EXPECT_NE(options.status().message().find("mkl"), std::string::npos)
      << options.status().ToString();
}

// --follow and --train_files (docs/STREAMING.md): each needs the other, a
// click-log format and --mode=async; each refusal names the flag at fault.
TEST(WorkerFlagsTest, FollowFlags) {
  const auto refusal = [](const std::vector<std::pair<const char*, const char*>>& flags) {
    gflags::FlagSaver saver;
    SetClusterAndData();
    gflags::SetCommandLineOption("dataset", "criteo");
    gflags::SetCommandLineOption("model", "deepfm");
    for (const auto& [name, value] : flags) gflags::SetCommandLineOption(name, value);
    const StatusOr<WorkerOptions> options = WorkerOptionsFromFlags();
    if (options.ok()) {
      EXPECT_EQ(options->job.data.train_files, "logs/part-*");
      EXPECT_TRUE(options->job.data.train_file.empty());
      return std::string();
    }
    EXPECT_EQ(options.status().code(), Code::kInvalidArgument);
    return options.status().message();
  };
  EXPECT_EQ(refusal({{"follow", "true"}, {"train_files", "logs/part-*"}}), "");
  EXPECT_NE(refusal({{"follow", "true"}}).find("--train_files"), std::string::npos);
  EXPECT_NE(refusal({{"train_files", "logs/part-*"}}).find("--follow"), std::string::npos);
  EXPECT_NE(refusal({{"follow", "true"}, {"train_files", "x*"}, {"mode", "sync"}}).find("--mode"),
            std::string::npos);
  EXPECT_NE(refusal({{"follow", "true"}, {"train_files", "x*"}, {"train_file", "t.txt"}})
                .find("--train_file"),
            std::string::npos);
  EXPECT_NE(
      refusal({{"follow", "true"}, {"train_files", "x*"}, {"dataset", "csv"}}).find("--dataset"),
      std::string::npos);
}

TEST(WorkerFlagsTest, ModelParallelFlags) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  gflags::SetCommandLineOption("model_parallel", "2");
  gflags::SetCommandLineOption("micro_batches", "8");
  const StatusOr<WorkerOptions> options = WorkerOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->model_parallel, 2);
  EXPECT_EQ(options->micro_batches, 8);
  for (const char* flag : {"model_parallel", "micro_batches"}) {
    gflags::FlagSaver inner;
    gflags::SetCommandLineOption(flag, "0");
    const StatusOr<WorkerOptions> bad = WorkerOptionsFromFlags();
    ASSERT_FALSE(bad.ok()) << flag;
    EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
    EXPECT_NE(bad.status().message().find(flag), std::string::npos) << bad.status().ToString();
  }
}

// A model spec's augment line is --augment's when the flag is left at its
// default; a given --augment wins.
TEST(WorkerFlagsTest, ModelSpecAugmentAppliesWhenTheFlagIsDefault) {
  gflags::FlagSaver saver;
  SetClusterAndData();
  const std::string path =
      SetModelSpec("worker_flags_test.spec", "dense classes\naugment crop:2,flip\n");
  StatusOr<WorkerOptions> options = WorkerOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->augment.crop_padding, 2);
  EXPECT_TRUE(options->augment.flip);
  {
    gflags::FlagSaver inner;
    gflags::SetCommandLineOption("augment", "crop");
    options = WorkerOptionsFromFlags();
    ASSERT_TRUE(options.ok()) << options.status().ToString();
    EXPECT_EQ(options->augment.crop_padding, 4);
    EXPECT_FALSE(options->augment.flip);
  }
  {
    gflags::FlagSaver inner;
    gflags::SetCommandLineOption("augment", "");  // given: none, whatever the spec says
    options = WorkerOptionsFromFlags();
    ASSERT_TRUE(options.ok()) << options.status().ToString();
    EXPECT_EQ(options->augment.crop_padding, 0);
    EXPECT_FALSE(options->augment.flip);
  }
  std::ofstream(path) << "dense classes\naugment crop,spin\n";
  options = WorkerOptionsFromFlags();
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().code(), Code::kInvalidArgument);
  EXPECT_NE(options.status().message().find("--model_spec=" + path + ": augment crop,spin: "),
            std::string::npos)
      << options.status().ToString();
}

}  // namespace
}  // namespace pst
