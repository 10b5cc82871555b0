#include "common/thread_name.h"

#include <pthread.h>

#include <string>

namespace pst {

void NameThisThread(const char* name) {
  // pthread_setname_np refuses names longer than 15 characters.
  pthread_setname_np(pthread_self(), std::string(name).substr(0, 15).c_str());
}

}  // namespace pst
