// Reader for fixed-length binary records, as CIFAR-10's binary version
// stores them: each record is `label_bytes` of label (the first byte is the
// class; CIFAR-100's coarse + fine labels are two bytes, the last one used)
// followed by H*W*C pixel bytes, channel-major (all of channel 0, row by
// row, then channel 1, ...). Pixels are scaled from 0..255 to [0,1] and
// stored HWC, as the models read images (NHWC). With RecordDtype::kFloat32
// each value is instead a little-endian IEEE float32 (4 bytes), taken as it
// is (not scaled): numpy arrays of features round-trip exactly. The shape
// may also be D plain features (one channel-major "image" of 1x1xD).
//
// Errors (each names the file): NotFound for a missing file; InvalidArgument
// for a bad shape, a label beyond num_classes or a float32 value that is not
// finite (naming the record); DataLoss for a file whose size is not a whole
// number of records (a truncated record). Safe to call from any thread.
#ifndef PST_DATA_RECORDS_READER_H_
#define PST_DATA_RECORDS_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/input_shape.h"
#include "common/status.h"
#include "data/dataset.h"

namespace pst {

// How each value of a record is stored.
enum class RecordDtype { kUint8, kFloat32 };

// "uint8" or "float32" (--record_dtype); InvalidArgument naming the choices.
StatusOr<RecordDtype> ParseRecordDtype(const std::string& name);

struct RecordsOptions {
  InputShape image = InputShape({32, 32, 3});  // H, W, C (or D); CIFAR-10's by default
  int64_t label_bytes = 1;
  // Labels must lie in [0, num_classes); 0: any, and num_classes becomes
  // the largest label + 1.
  int num_classes = 0;
  RecordDtype dtype = RecordDtype::kUint8;
};

// Reads every file of `paths`, in order, into one Dataset.
StatusOr<Dataset> ReadRecordsDataset(const std::vector<std::string>& paths,
                                     const RecordsOptions& options);

}  // namespace pst

#endif  // PST_DATA_RECORDS_READER_H_
