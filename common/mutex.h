// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable
// with clang's thread-safety annotations (and SharedMutex with
// ReaderMutexLock/WriterMutexLock: std::shared_mutex, likewise), so that `clang -Wthread-safety`
// (on, as an error, in every clang build) checks that each member marked
// GUARDED_BY(mu_) is touched only with mu_ held and each function marked
// REQUIRES(mu_) is called only so. The annotations are no-ops for other
// compilers. libstdc++'s own mutex carries none, hence the wrappers.
//
// A wait takes no predicate: write the loop, so the analysis sees the
// condition read under the lock:
//   MutexLock lock(mu_);
//   while (!ready_) changed_.Wait(mu_);
#ifndef PST_COMMON_MUTEX_H_
#define PST_COMMON_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define PST_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define PST_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) PST_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY PST_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) PST_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) PST_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) PST_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) PST_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) PST_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) PST_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) PST_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) PST_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) PST_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// For the rare code whose locking the analysis cannot follow; say why.
#define NO_THREAD_SAFETY_ANALYSIS PST_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace pst {

class CAPABILITY("mutex") Mutex {
 public:
  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope; Unlock() and Lock() let go of it for a while.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.Unlock();
  }
  void Unlock() RELEASE() {
    held_ = false;
    mu_.Unlock();
  }
  void Lock() ACQUIRE() {
    mu_.Lock();
    held_ = true;
  }

  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
  bool held_ = true;
};

// A reader-writer mutex: held exclusively (Lock) to write what it guards,
// or shared (ReaderLock) by any number of threads to read it. A function
// marked REQUIRES_SHARED(mu_) may only read; REQUIRES(mu_) may write.
class CAPABILITY("mutex") SharedMutex {
 public:
  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  void ReaderLock() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void ReaderUnlock() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds `mu` exclusively for its scope.
class SCOPED_CAPABILITY WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~WriterMutexLock() RELEASE() { mu_.Unlock(); }

  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds `mu` shared for its scope.
class SCOPED_CAPABILITY ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.ReaderLock(); }
  ~ReaderMutexLock() RELEASE() { mu_.ReaderUnlock(); }

  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

class CondVar {
 public:
  // Releases `mu` until notified (or a spurious wake-up), then holds it again.
  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, returning false once `deadline` has passed.
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex& mu, std::chrono::time_point<Clock, Duration> deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace pst

#endif  // PST_COMMON_MUTEX_H_
