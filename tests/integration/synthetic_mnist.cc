#include "tests/integration/synthetic_mnist.h"

#include <glog/logging.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <vector>

namespace pst {
namespace {

void PutBigEndian(std::ofstream& out, uint32_t v) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                         static_cast<char>(v >> 8), static_cast<char>(v)};
  out.write(bytes, 4);
}

void WriteSplit(const std::string& dir, const std::string& prefix, int count, std::mt19937& rng) {
  std::ofstream images(dir + "/" + prefix + "-images-idx3-ubyte", std::ios::binary);
  std::ofstream labels(dir + "/" + prefix + "-labels-idx1-ubyte", std::ios::binary);
  CHECK(images && labels) << "cannot write synthetic MNIST into " << dir;
  PutBigEndian(images, 0x803);
  PutBigEndian(images, count);
  PutBigEndian(images, 28);
  PutBigEndian(images, 28);
  PutBigEndian(labels, 0x801);
  PutBigEndian(labels, count);
  std::uniform_int_distribution<int> noise(0, 90);
  std::vector<char> pixels(28 * 28);
  for (int i = 0; i < count; ++i) {
    const int label = i % 10;
    for (int p = 0; p < 28 * 28; ++p) {
      const int row = p / 28;
      const bool band = row >= 2 + 2 * label && row < 4 + 2 * label;
      pixels[p] = static_cast<char>(band ? 160 + noise(rng) : noise(rng));
    }
    images.write(pixels.data(), pixels.size());
    labels.put(static_cast<char>(label));
  }
}

}  // namespace

void WriteSyntheticMnist(const std::string& dir, int num_train, int num_test) {
  std::mt19937 rng(7);
  WriteSplit(dir, "train", num_train, rng);
  WriteSplit(dir, "t10k", num_test, rng);
}

}  // namespace pst
