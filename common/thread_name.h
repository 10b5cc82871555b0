// Names the calling thread as top -H, gdb and /proc/self/task/*/comm show
// it (at most 15 characters are kept).
#ifndef PST_COMMON_THREAD_NAME_H_
#define PST_COMMON_THREAD_NAME_H_

namespace pst {

void NameThisThread(const char* name);

}  // namespace pst

#endif  // PST_COMMON_THREAD_NAME_H_
