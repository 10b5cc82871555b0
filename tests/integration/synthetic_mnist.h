// Writes a small, easily learnable data set in MNIST's IDX format (raw,
// uncompressed) so cluster tests run without the real MNIST: each class
// lights its own band of rows, plus noise.
#ifndef PST_TESTS_INTEGRATION_SYNTHETIC_MNIST_H_
#define PST_TESTS_INTEGRATION_SYNTHETIC_MNIST_H_

#include <string>

namespace pst {

// Writes train-{images,labels} and t10k-{images,labels} into `dir`.
void WriteSyntheticMnist(const std::string& dir, int num_train, int num_test);

}  // namespace pst

#endif  // PST_TESTS_INTEGRATION_SYNTHETIC_MNIST_H_
