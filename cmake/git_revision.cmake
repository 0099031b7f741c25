# Run at every build (cmake -P): writes the version header with the source tree's git revision
# (git describe --always --dirty), rewriting it only when that changes, so that a commit, a
# checkout or an edit shows in the next build's provenance and an unchanged tree recompiles
# nothing. Without git, or outside a git checkout (a release tarball): "unknown".
# Inputs: GIT_EXECUTABLE (may be empty), SOURCE_DIR, IN, OUT, PROJECT_VERSION.
set(MINIAMR_GIT_REVISION unknown)
if(GIT_EXECUTABLE AND EXISTS ${SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty
                  WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE revision
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE status)
  if(status EQUAL 0)
    set(MINIAMR_GIT_REVISION ${revision})
  endif()
endif()
configure_file(${IN} ${OUT} @ONLY)
