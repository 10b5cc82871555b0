#include "common/status.h"

#include <cerrno>
#include <cstring>

namespace pst {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kNotFound: return "NotFound";
    case Code::kDeadlineExceeded: return "DeadlineExceeded";
    case Code::kFailedPrecondition: return "FailedPrecondition";
    case Code::kDataLoss: return "DataLoss";
    case Code::kUnavailable: return "Unavailable";
    case Code::kInternal: return "Internal";
    case Code::kAborted: return "Aborted";
    case Code::kResourceExhausted: return "ResourceExhausted";
    case Code::kPermissionDenied: return "PermissionDenied";
    case Code::kOutOfRange: return "OutOfRange";
  }
  return "Unknown";
}

Status::Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
Status DeadlineExceeded(std::string m) { return {Code::kDeadlineExceeded, std::move(m)}; }
Status FailedPrecondition(std::string m) { return {Code::kFailedPrecondition, std::move(m)}; }
Status DataLoss(std::string m) { return {Code::kDataLoss, std::move(m)}; }
Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
Status Aborted(std::string m) { return {Code::kAborted, std::move(m)}; }
Status ResourceExhausted(std::string m) { return {Code::kResourceExhausted, std::move(m)}; }
Status PermissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
Status OutOfRange(std::string m) { return {Code::kOutOfRange, std::move(m)}; }

Status FileError(const std::string& what, int error_number) {
  std::string message = what + ": " + std::strerror(error_number);
  switch (error_number) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG: return ResourceExhausted(std::move(message));
    case EACCES:
    case EPERM:
    case EROFS: return PermissionDenied(std::move(message));
    default: return Internal(std::move(message));
  }
}

}  // namespace pst
