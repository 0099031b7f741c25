// The program: parse, run, report. main() only calls this.
#pragma once

namespace miniamr::app {

// Returns the process exit status: 0 on success, 2 for bad input, 1 for a failed run.
int run(int argc, char** argv);

}  // namespace miniamr::app
