#include "ps/sparse_wire.h"

#include <string>

namespace pst {
namespace {

Status CheckIdsTensor(const TensorView& t, const char* what) {
  if (t.dtype != DType::kInt64 || t.shape.size() != 1) {
    return InvalidArgument(std::string(what) + " of table '" + std::string(t.name) +
                           "' must be int64 [k], got " + DTypeName(t.dtype) +
                           ShapeToString(t.shape));
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::vector<RowRequest>> RowRequestsOf(const ReceivedMessage& request) {
  std::vector<RowRequest> requests;
  for (const TensorView& t : request.tensors()) {
    if (t.role != wire::TensorRole::RowIds) {
      return InvalidArgument("a pull request carries only row ids, got tensor '" +
                             std::string(t.name) + "'");
    }
    PST_RETURN_IF_ERROR(CheckIdsTensor(t, "row ids"));
    requests.push_back({t.name, t.i64(), t.shape[0]});
  }
  return requests;
}

Status GradientsOf(const ReceivedMessage& request, std::vector<Gradient>* dense,
                   std::vector<SparseGradient>* sparse) {
  const std::vector<TensorView>& tensors = request.tensors();
  dense->reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorView& t = tensors[i];
    if (t.role == wire::TensorRole::Value) {
      dense->push_back({t.name, t.dtype, t.shape, t.version, t.data});
      continue;
    }
    const std::string table(t.name);
    if (t.role != wire::TensorRole::RowIds || i + 2 >= tensors.size() ||
        tensors[i + 1].role != wire::TensorRole::Value ||
        tensors[i + 2].role != wire::TensorRole::RowVersions || tensors[i + 1].name != t.name ||
        tensors[i + 2].name != t.name) {
      return InvalidArgument("row gradient of table '" + table +
                             "' must be row ids, rows and row versions, in that order");
    }
    const TensorView& rows = tensors[i + 1];
    const TensorView& versions = tensors[i + 2];
    PST_RETURN_IF_ERROR(CheckIdsTensor(t, "row ids"));
    PST_RETURN_IF_ERROR(CheckIdsTensor(versions, "row versions"));
    if (versions.shape != t.shape) {
      return InvalidArgument("row gradient of table '" + table + "' has " +
                             std::to_string(t.shape[0]) + " ids but " +
                             std::to_string(versions.shape[0]) + " versions");
    }
    sparse->push_back(
        {t.name, t.i64(), t.shape[0], rows.dtype, rows.shape, rows.data, versions.i64()});
    i += 2;
  }
  return Status::OK();
}

}  // namespace pst
