# Writes OUTPUT, the header that tells --version which commit was built:
#   #define PST_GIT_COMMIT "1a2b3c4"   ("1a2b3c4 (dirty)" with uncommitted
#                                        changes to tracked files)
# cli/CMakeLists.txt runs it at every build, not only at configure time, so
# the commit is the one built. The file is rewritten only when its text
# changes: an unchanged checkout recompiles nothing. Without git
# (GIT_EXECUTABLE empty), or when SOURCE_DIR is not the top of a git
# checkout (a source tarball, even one unpacked inside another repository),
# the commit is GIVEN_COMMIT when set (the image's build: .dockerignore
# leaves .git out, and the Dockerfile's PST_GIT_COMMIT build argument names
# the commit), else "unknown". A git checkout's own commit wins over it.
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -DGIT_EXECUTABLE=... [-DGIVEN_COMMIT=...] -P build_info.cmake
set(commit "unknown")
if(GIVEN_COMMIT)
  set(commit "${GIVEN_COMMIT}")
endif()
if(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --show-toplevel --short=7 HEAD
                  WORKING_DIRECTORY "${SOURCE_DIR}"
                  RESULT_VARIABLE failed OUTPUT_VARIABLE lines ERROR_QUIET
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\n" ";" lines "${lines}")
  list(LENGTH lines count)
  if(NOT failed AND count EQUAL 2)
    list(GET lines 0 top)
    list(GET lines 1 hash)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" source)
    if(top STREQUAL source)
      set(commit "${hash}")
      execute_process(COMMAND "${GIT_EXECUTABLE}" status --porcelain --untracked-files=no
                      WORKING_DIRECTORY "${SOURCE_DIR}"
                      OUTPUT_VARIABLE changes ERROR_QUIET)
      if(changes)
        string(APPEND commit " (dirty)")
      endif()
    endif()
  endif()
endif()

set(text "// Generated at build time by cli/build_info.cmake.\n"
         "#define PST_GIT_COMMIT \"${commit}\"\n")
string(CONCAT text ${text})
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
