// SyntheticDataTest: a test suite base that writes one small synthetic data
// set in MNIST's format for all the suite's tests (see synthetic_mnist.h).
#ifndef PST_TESTS_INTEGRATION_SYNTHETIC_DATA_TEST_H_
#define PST_TESTS_INTEGRATION_SYNTHETIC_DATA_TEST_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/integration/local_cluster.h"
#include "tests/integration/synthetic_mnist.h"

namespace pst {

class SyntheticDataTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string suite = ::testing::UnitTest::GetInstance()->current_test_suite()->name();
    data_dir_ = new std::string(MakeTestDir(suite + "-data"));
    WriteSyntheticMnist(*data_dir_, 3000, 500);
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*data_dir_);
    delete data_dir_;
    data_dir_ = nullptr;
  }
  static const std::string& data_dir() { return *data_dir_; }
  // A fresh folder named after the running test.
  static std::string TestDir() { return MakeTestDir(TestName()); }
  // A path for another file or folder of the running test (MakeTestPath).
  static std::string TestPath(const std::string& suffix) {
    return MakeTestPath(TestName() + suffix);
  }

 private:
  static std::string TestName() {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  static inline std::string* data_dir_ = nullptr;
};

}  // namespace pst

#endif  // PST_TESTS_INTEGRATION_SYNTHETIC_DATA_TEST_H_
