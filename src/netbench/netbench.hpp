// miniamr-netbench's whole run: arguments, config, measurement, results, with miniamr's rules
// for errors (one message on rank 0, the same exit status on every rank).
#pragma once

namespace miniamr::netbench {

// MPI_Init to MPI_Finalize. Returns the exit status: 0 done, 1 a failure while measuring or
// writing, 2 bad input (found before any measurement).
int run(int argc, char** argv);

}  // namespace miniamr::netbench
