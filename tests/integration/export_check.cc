#include "tests/integration/export_check.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "job/export_files.h"
#include "job/model_file.h"

namespace pst {

void ExpectExportIsTheModel(const std::string& export_dir, const std::string& model_file,
                            bool with_deltas) {
  StatusOr<ExportedModel> exported = LoadExport(export_dir);
  ASSERT_TRUE(exported.ok()) << exported.status().ToString();
  if (with_deltas) EXPECT_GT(exported->deltas, 0);
  StatusOr<TrainedModel> written = ReadModelFile(model_file);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  ASSERT_EQ(exported->trained.params.size(), written->params.size());
  const std::vector<Tensor>& keys = written->dynamic.keys;
  ASSERT_EQ(exported->trained.dynamic.keys.size(), keys.size());
  for (size_t t = 0; t < keys.size(); ++t) {
    const Tensor& a = exported->trained.dynamic.keys[t];
    ASSERT_EQ(a.shape(), keys[t].shape()) << "table " << t << "'s keys";
    EXPECT_EQ(std::memcmp(a.data(), keys[t].data(), a.num_bytes()), 0) << "table " << t;
  }
  for (size_t i = 0; i < written->params.size(); ++i) {
    const Tensor& a = exported->trained.params[i];
    const Tensor& b = written->params[i];
    ASSERT_EQ(a.shape(), b.shape()) << exported->param_names[i];
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.num_bytes()), 0) << exported->param_names[i];
  }
}

}  // namespace pst
