#include "app/run.hpp"

int main(int argc, char** argv) {
  return miniamr::app::run(argc, argv);
}
