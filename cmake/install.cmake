# `cmake --install build --prefix P` gives a working prefix: the program, its tools, the decks,
# the documentation and a man page generated from --help.
include(GNUInstallDirs)

install(TARGETS miniamr miniamr-netbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/miniamr-study
                 ${PROJECT_SOURCE_DIR}/tools/miniamr-plan-server DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/plot_results.py DESTINATION ${CMAKE_INSTALL_BINDIR}
        RENAME miniamr-plot)
# miniamr-netbench looks for its plot script beside itself.
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/netbench_plot.py DESTINATION ${CMAKE_INSTALL_BINDIR}
        RENAME miniamr-netbench-plot)
install(FILES ${PROJECT_SOURCE_DIR}/bench/netbench.yaml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/miniamr/bench)
# The Python packages (the study tool, the results reader with its key list) where Debian keeps
# Python packages: lib/python3/dist-packages, on the system python3's path for the prefix /usr;
# the tools in bin/ find them there for any other prefix.
set(MINIAMR_PYTHON_DIR lib/python3/dist-packages CACHE STRING
    "where the Python packages go, relative to the install prefix")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tools/miniamr_study ${PROJECT_SOURCE_DIR}/tools/miniamr_results
        DESTINATION ${MINIAMR_PYTHON_DIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "results_keys.txt" PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/inputs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/miniamr/inputs
        FILES_MATCHING PATTERN "*.deck")
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
              ${PROJECT_SOURCE_DIR}/CITATION.cff DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")

# The man page is --help and --version as help2man formats them (Debian's help2man), with the
# synopsis, exit status, files and examples of cmake/miniamr.h2m.
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(man_page ${PROJECT_BINARY_DIR}/miniamr.1)
  add_custom_command(
    OUTPUT ${man_page}
    COMMAND ${CMAKE_COMMAND} -E env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
            ${HELP2MAN} --no-info --no-discard-stderr --include ${PROJECT_SOURCE_DIR}/cmake/miniamr.h2m
            --version-string "miniamr ${PROJECT_VERSION}"
            --output ${man_page} $<TARGET_FILE:miniamr>
    DEPENDS miniamr ${PROJECT_SOURCE_DIR}/cmake/miniamr.h2m
    COMMENT "Man page from miniamr --help")
  add_custom_target(miniamr_man ALL DEPENDS ${man_page})
  install(FILES ${man_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# The citation file states the version too: it must be project(VERSION)'s.
file(READ ${PROJECT_SOURCE_DIR}/CITATION.cff citation)
string(REGEX MATCH "\nversion: ([0-9.]+)" _ "${citation}")
if(NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "CITATION.cff says version ${CMAKE_MATCH_1}, CMakeLists.txt ${PROJECT_VERSION}")
endif()
