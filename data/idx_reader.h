// Readers for MNIST in its IDX format (http://yann.lecun.com/exdb/mnist/).
//
// Files may be gzip-compressed or raw; which one is told from the gzip magic
// bytes (0x1f 0x8b), never from the file name. Images are IDX3 unsigned bytes
// (magic 0x00000803, count, rows, cols), labels IDX1 unsigned bytes (magic
// 0x00000801, count), all header integers big-endian.
//
// Errors (each message names the file):
//   NotFound         a file does not exist;
//   InvalidArgument  wrong magic number, image and label counts differ, or a
//                    label outside 0..9;
//   DataLoss         the file is shorter or longer than its header says, or
//                    its gzip stream is corrupt.
// The functions hold no state and are safe to call from any thread.
#ifndef PST_DATA_IDX_READER_H_
#define PST_DATA_IDX_READER_H_

#include <string>

#include "common/status.h"
#include "data/dataset.h"

namespace pst {

// Reads an image file and its label file into a Dataset with 10 classes,
// feature_dim rows*cols and pixels scaled from 0..255 to [0,1].
StatusOr<Dataset> ReadIdxDataset(const std::string& images_path, const std::string& labels_path);

// Reads the MNIST training set (train = true: train-images-idx3-ubyte and
// train-labels-idx1-ubyte) or test set (t10k-*) from `dir`, taking each file
// with or without a ".gz" suffix. When a file is missing the NotFound message
// lists the names looked for and how to fetch them (scripts/get_mnist.sh DIR).
StatusOr<Dataset> LoadMnist(const std::string& dir, bool train);

}  // namespace pst

#endif  // PST_DATA_IDX_READER_H_
