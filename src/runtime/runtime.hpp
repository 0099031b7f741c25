// The seam between the driver and the back ends: what to run, not how. A back end is a mapper:
// it decides where and when the tasks of the stage graph (stage_graph.hpp) of a mesh
// (mesh/mesh.hpp) run; the mesh itself (ownership, plans, migration) is the same for every
// mapper.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "comm/mpi.hpp"
#include "mesh/mesh.hpp"
#include "runtime/slowdown.hpp"
#include "runtime/stage_kernels.hpp"
#include "runtime/timers.hpp"

namespace miniamr::runtime {

class Trace;

class Runtime {
 public:
  virtual ~Runtime() = default;

  // The mesh whose stages this runtime runs: its ownership, plans and migration.
  virtual mesh::Mesh& mesh() = 0;
  virtual const mesh::Mesh& mesh() const = 0;
  const comm::Communicator& comm() const { return mesh().comm(); }
  virtual Timers& timers() = 0;

  // Collective. Runs `stages` one after the other on every local block. For each stage with
  // checksum set, the result holds the global sum of each of its variables (empty otherwise).
  // A mapper may start a stage before the previous one has ended wherever the graph allows, and
  // keep checksum reductions in flight meanwhile; everything is complete on return.
  virtual std::vector<std::vector<double>> run_stages(mesh::Domain& domain,
                                                      std::span<const StageWork> stages) = 0;
  // One stage.
  std::vector<double> advance(mesh::Domain& domain, const StageWork& work) {
    return run_stages(domain, std::span(&work, 1)).front();
  }

  // Collective. The stage graph of the current mesh over `stages` stages as Graphviz DOT: the
  // whole graph on rank 0, empty elsewhere.
  virtual std::string graph_dot(const mesh::Domain& domain, bool edges, int stages) = 0;

  // The kernels every stage runs (which back end, and how often each ran).
  virtual const StageKernels& kernels() const = 0;

  // Where task, message, reduction and mesh events go (nullptr: nowhere).
  virtual void set_trace(Trace* trace) = 0;

  // Worker threads per rank.
  virtual int threads() const = 0;

  // This rank's emulated slowness (--slow_rank, --noise), which slows the stages and their
  // copies here and refinement's splits and merges in the driver.
  virtual const Slowdown& slowdown() const = 0;

  virtual std::string name() const = 0;
};

}  // namespace miniamr::runtime
