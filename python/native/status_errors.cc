#include "python/native/status_errors.h"

#include <pybind11/pybind11.h>

namespace pst_python {

void RaiseIfError(const pst::Status& status) {
  if (status.ok()) return;
  PyObject* type = PyExc_RuntimeError;
  std::string message = status.message();
  switch (status.code()) {
    case pst::Code::kNotFound: type = PyExc_FileNotFoundError; break;
    case pst::Code::kPermissionDenied: type = PyExc_PermissionError; break;
    case pst::Code::kInvalidArgument:
    case pst::Code::kFailedPrecondition:
    case pst::Code::kDataLoss: type = PyExc_ValueError; break;
    case pst::Code::kResourceExhausted: type = PyExc_MemoryError; break;
    default: message = status.ToString();
  }
  PyErr_SetString(type, message.c_str());
  throw pybind11::error_already_set();
}

}  // namespace pst_python
