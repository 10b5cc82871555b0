#include "tests/integration/synthetic_datasets.h"

#include <cstdint>
#include <fstream>

namespace pst {

std::vector<std::vector<float>> Centres(int classes, int features, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> centres(classes, std::vector<float>(features));
  for (auto& centre : centres) {
    for (float& x : centre) x = 2.0f * normal(rng);
  }
  return centres;
}

void WriteCsv(const std::string& path, int rows, const std::vector<std::vector<float>>& centres,
              std::mt19937& rng) {
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::ofstream out(path);
  const size_t features = centres[0].size();
  for (size_t j = 0; j < features; ++j) out << "x" << j << ",";
  out << "species\n";
  for (int i = 0; i < rows; ++i) {
    const int label = i % static_cast<int>(centres.size());
    for (size_t j = 0; j < features; ++j) out << 100 + 50 * (centres[label][j] + noise(rng)) << ",";
    out << label << "\n";
  }
}

void WriteRecords(const std::string& path, int count, std::mt19937& rng) {
  std::uniform_int_distribution<int> noise(0, 80);
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < count; ++i) {
    const int label = i % 4;
    std::vector<uint8_t> record(1 + 8 * 8 * 3);
    record[0] = static_cast<uint8_t>(label);
    for (int c = 0; c < 3; ++c) {
      for (int p = 0; p < 64; ++p) {
        const bool lit = c == label % 3 && p / 8 / 4 == label / 3;
        record[1 + c * 64 + p] = static_cast<uint8_t>(noise(rng) + (lit ? 170 : 0));
      }
    }
    out.write(reinterpret_cast<const char*>(record.data()), record.size());
  }
}

}  // namespace pst
