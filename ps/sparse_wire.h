// How a pull or push request's tensors divide into dense variables and
// embedding-table rows (schema/messages.fbs, TensorRole), as the ps reads
// them. The views point into the request: it must outlive them.
#ifndef PST_PS_SPARSE_WIRE_H_
#define PST_PS_SPARSE_WIRE_H_

#include <vector>

#include "common/status.h"
#include "ps/embedding_tables.h"
#include "ps/variable_store.h"
#include "transport/message.h"

namespace pst {

// A pull request's RowIds tensors (int64 [k] each). InvalidArgument for
// any other tensor in a pull request.
StatusOr<std::vector<RowRequest>> RowRequestsOf(const ReceivedMessage& request);

// A push's dense gradients (Value tensors) and row gradients (RowIds,
// Value, RowVersions triples of one table's name). InvalidArgument for a
// triple out of order, of another name, or of the wrong dtypes or sizes.
Status GradientsOf(const ReceivedMessage& request, std::vector<Gradient>* dense,
                   std::vector<SparseGradient>* sparse);

}  // namespace pst

#endif  // PST_PS_SPARSE_WIRE_H_
