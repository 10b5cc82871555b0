// Status and StatusOr: how run-time failures (network, deadline, verification,
// I/O, bad input) travel. Broken invariants use glog CHECK instead.
#ifndef PST_COMMON_STATUS_H_
#define PST_COMMON_STATUS_H_

#include <glog/logging.h>

#include <optional>
#include <string>
#include <utility>

namespace pst {

// Codes travel on the wire: never renumber.
enum class Code : int {
  kOk = 0,
  kInvalidArgument = 1,
  kNotFound = 2,
  kDeadlineExceeded = 3,
  kFailedPrecondition = 4,
  kDataLoss = 5,
  kUnavailable = 6,
  kInternal = 7,
  kAborted = 8,
  kResourceExhausted = 9,
  kPermissionDenied = 10,
  kOutOfRange = 11,
};

const char* CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message);

  static Status OK() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "DeadlineExceeded: no reply from ps:1 (127.0.0.1:2222) within 5000 ms"
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status DeadlineExceeded(std::string message);
Status FailedPrecondition(std::string message);
Status DataLoss(std::string message);
Status Unavailable(std::string message);
Status Internal(std::string message);
Status Aborted(std::string message);
Status ResourceExhausted(std::string message);
Status PermissionDenied(std::string message);
Status OutOfRange(std::string message);

// A failed system call on a file, as a storage error: ResourceExhausted for a
// full disk or quota (ENOSPC, EDQUOT, EFBIG), PermissionDenied for EACCES,
// EPERM and EROFS, Internal otherwise. The message is "<what>: <strerror>".
// Never Unavailable or DeadlineExceeded, which mean a peer is gone.
Status FileError(const std::string& what, int error_number);

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    CHECK(!status_.ok()) << "StatusOr built from an OK status without value";
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    CHECK(ok()) << status_.ToString();
    return *value_;
  }
  const T& value() const& {
    CHECK(ok()) << status_.ToString();
    return *value_;
  }
  T&& value() && {
    CHECK(ok()) << status_.ToString();
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace pst

#define PST_CONCAT_INNER(a, b) a##b
#define PST_CONCAT(a, b) PST_CONCAT_INNER(a, b)

#define PST_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::pst::Status pst_status_ = (expr);        \
    if (!pst_status_.ok()) return pst_status_; \
  } while (0)

#define PST_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#define PST_ASSIGN_OR_RETURN(lhs, expr) \
  PST_ASSIGN_OR_RETURN_IMPL(PST_CONCAT(pst_statusor_, __LINE__), lhs, expr)

#endif  // PST_COMMON_STATUS_H_
