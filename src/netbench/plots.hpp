// latency.png and bandwidth.png: drawn by a Python script shipped with miniamr
// (tools/netbench_plot.py, installed as miniamr-netbench-plot), since matplotlib draws log-log
// plots far better than anything miniamr could link.
#pragma once

#include <string>

namespace miniamr::netbench {

// Runs the plot script on `out_dir`/results.csv, writing the PNG files beside it. Returns "" on
// success, else why no plot was drawn (no script, no interpreter, the script failed).
std::string draw_plots(const std::string& out_dir);

}  // namespace miniamr::netbench
