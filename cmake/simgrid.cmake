# The simulation build (-DMINIAMR_SIMGRID=ON): SimGrid's SMPI stands in for MPI. Every rank is
# an actor of one simulator process, its messages cross a modelled platform and its computation
# takes simulated time, so miniamr runs on more ranks than this machine has cores.
#
# This does what smpicxx does (`smpicxx -show`) without its forced include of smpi_helpers.h,
# whose macros (malloc, free, exit, clock_gettime) rename C++ standard library calls: SMPI's
# headers and library, position-independent code, and miniamr linked as the shared object that
# smpirun loads into its simulator (smpimain). Time comes from MPI_Wtime (comm/clock.hpp).
find_path(SIMGRID_INCLUDE_DIR smpi/mpi.h)
find_library(SIMGRID_LIBRARY simgrid)
if(NOT SIMGRID_INCLUDE_DIR OR NOT SIMGRID_LIBRARY)
  message(FATAL_ERROR "MINIAMR_SIMGRID needs SimGrid's SMPI (Debian's libsimgrid-dev and simgrid: "
                      "bash tools/bootstrap.sh simulate installs them)")
endif()
find_program(SMPIRUN smpirun)

set(CMAKE_POSITION_INDEPENDENT_CODE ON)
# The MPI target every layer links: SMPI's mpi.h (a system include: its warnings are not ours).
add_library(MPI::MPI_CXX INTERFACE IMPORTED)
target_include_directories(MPI::MPI_CXX SYSTEM INTERFACE ${SIMGRID_INCLUDE_DIR}/smpi
                                                         ${SIMGRID_INCLUDE_DIR})
target_link_libraries(MPI::MPI_CXX INTERFACE ${SIMGRID_LIBRARY})
target_compile_definitions(MPI::MPI_CXX INTERFACE MINIAMR_SIMGRID)

# Left out of this build (src/CMakeLists.txt): checkpoints, whose parallel HDF5 links the real
# Open MPI, and miniamr-netbench; refused at run time: --launch spawn (SMPI has no
# MPI_Comm_spawn) and more than one thread per rank.
set(MINIAMR_BUILD_TESTS OFF)
set(MINIAMR_BUILD_BENCH OFF)
message(STATUS "miniamr: simulation build with SMPI (${SIMGRID_LIBRARY}); smpirun: ${SMPIRUN}")
