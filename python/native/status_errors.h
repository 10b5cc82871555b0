// A pst::Status that is not OK as a Python exception carrying its message:
// NotFound -> FileNotFoundError, PermissionDenied -> PermissionError,
// InvalidArgument, FailedPrecondition and DataLoss (a file that is not what
// it should be) -> ValueError, ResourceExhausted -> MemoryError, anything
// else -> RuntimeError with the code's name. Call with the GIL held.
#ifndef PST_PYTHON_NATIVE_STATUS_ERRORS_H_
#define PST_PYTHON_NATIVE_STATUS_ERRORS_H_

#include "common/status.h"

namespace pst_python {

// Raises (throws pybind11::error_already_set) unless `status` is OK.
void RaiseIfError(const pst::Status& status);

}  // namespace pst_python

#endif  // PST_PYTHON_NATIVE_STATUS_ERRORS_H_
