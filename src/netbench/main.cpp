#include "netbench/netbench.hpp"

int main(int argc, char** argv) {
  return miniamr::netbench::run(argc, argv);
}
