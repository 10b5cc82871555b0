// Small generated data sets in the formats --dataset reads besides MNIST's
// (for that one see synthetic_mnist.h), each easy to learn.
#ifndef PST_TESTS_INTEGRATION_SYNTHETIC_DATASETS_H_
#define PST_TESTS_INTEGRATION_SYNTHETIC_DATASETS_H_

#include <random>
#include <string>
#include <vector>

namespace pst {

// Class c's examples scatter around a centre of their own: `classes`
// centres of `features` values.
std::vector<std::vector<float>> Centres(int classes, int features, std::mt19937& rng);

// A CSV with a header, the label in the last column, features around their
// class's centre (offset by 100, scaled by 50: --normalize has work to do).
void WriteCsv(const std::string& path, int rows, const std::vector<std::vector<float>>& centres,
              std::mt19937& rng);

// CIFAR-style records (one label byte, then the image, channel-major) of
// 8x8x3 images in 4 classes: class c lights channel c % 3 in the rows of
// band c / 3, over noise.
void WriteRecords(const std::string& path, int count, std::mt19937& rng);

}  // namespace pst

#endif  // PST_TESTS_INTEGRATION_SYNTHETIC_DATASETS_H_
