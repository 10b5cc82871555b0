// Test-only helpers for the role option tests (cli/*_flags_test.cc): the
// flags every task needs, and a model spec file to point --model_spec at.
#ifndef PST_CLI_FLAGS_TESTING_H_
#define PST_CLI_FLAGS_TESTING_H_

#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace pst {

// A cluster of one task each, and a data folder (only its name is read).
inline void SetClusterAndData() {
  gflags::SetCommandLineOption("ps_hosts", "127.0.0.1:1");
  gflags::SetCommandLineOption("worker_hosts", "127.0.0.1:2");
  gflags::SetCommandLineOption("chief_host", "127.0.0.1:3");
  gflags::SetCommandLineOption("data_dir", "/mnist");
}

// Points --model_spec at a file `name` in the test's temporary folder
// holding `text`; returns its path.
inline std::string SetModelSpec(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  gflags::SetCommandLineOption("model_spec", path.c_str());
  return path;
}

}  // namespace pst

#endif  // PST_CLI_FLAGS_TESTING_H_
