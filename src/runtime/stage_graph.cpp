#include "runtime/stage_graph.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace miniamr::runtime {

namespace {

constexpr int kAllAxes[] = {0, 1, 2};

void sort_unique(std::vector<std::size_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

FaceSlot append_face_slot(std::size_t& doubles_per_var, const stencil::BlockShape& shape,
                          const stencil::FaceLink& link) {
  const FaceSlot f{doubles_per_var,
                   stencil::packed_size(shape, link.relation, link.face / 2, 1, false)};
  doubles_per_var += f.size;
  return f;
}

StageGraph build_stage_graph(const mesh::GhostPlan& plan, const stencil::BlockShape& shape,
                             std::size_t blocks, bool edges) {
  StageGraph g;
  g.edges = edges;
  g.groups = edges ? 3 : 1;
  g.blocks = blocks;
  const auto G = std::size_t(g.groups);
  const auto group_of = [&](int axis) { return edges ? axis : 0; };

  // Messages: one per peer for all axes, or one per peer and axis.
  if (edges) {
    for (const int a : kAllAxes) {
      const std::span<const int> axis(&kAllAxes[a], 1);
      for (auto& m : message_layouts(plan, shape, axis, true, true, a))
        g.sends.push_back(std::move(m));
      for (auto& m : message_layouts(plan, shape, axis, true, false, a))
        g.recvs.push_back(std::move(m));
    }
  } else {
    g.sends = message_layouts(plan, shape, kAllAxes, false, true, 0);
    g.recvs = message_layouts(plan, shape, kAllAxes, false, false, 0);
  }

  std::vector<std::vector<GhostFill>> fills(blocks * G);
  std::vector<std::vector<std::size_t>> reads(blocks * G), readers(blocks * G);
  std::vector<std::vector<PackedFace>> packs(blocks * G);
  for (const int a : kAllAxes) {
    const std::size_t grp = std::size_t(group_of(a));
    for (const mesh::LocalLink& l : plan.local[std::size_t(a)]) {
      fills[l.dst * G + grp].push_back({GhostFill::Kind::kLocal, l.src, l.link, 0, 0});
      reads[l.dst * G + grp].push_back(l.src);
      readers[l.src * G + grp].push_back(l.dst);
    }
    for (const mesh::BoundaryFace& b : plan.boundary[std::size_t(a)])
      fills[b.block * G + grp].push_back({GhostFill::Kind::kBoundary,
                                          b.block,
                                          {stencil::GhostRelation::kSameLevel, b.face, {}},
                                          0,
                                          0});
  }
  for (std::size_t m = 0; m < g.recvs.size(); ++m) {
    const MessageLayout& msg = g.recvs[m];
    for (std::size_t f = 0; f < msg.faces.size(); ++f)
      fills[msg.faces[f].block * G + std::size_t(msg.group)].push_back(
          {GhostFill::Kind::kRemote, 0, msg.faces[f].link, std::uint32_t(m), std::uint32_t(f)});
  }
  for (std::size_t m = 0; m < g.sends.size(); ++m) {
    const MessageLayout& msg = g.sends[m];
    for (std::size_t f = 0; f < msg.faces.size(); ++f)
      packs[msg.faces[f].block * G + std::size_t(msg.group)].push_back(
          {std::uint32_t(m), std::uint32_t(f)});
  }
  for (auto& r : reads) sort_unique(r);
  for (auto& r : readers) sort_unique(r);
  g.fills = Adjacency<GhostFill>(fills);
  g.reads = Adjacency<std::size_t>(reads);
  g.readers = Adjacency<std::size_t>(readers);
  g.packs = Adjacency<PackedFace>(packs);
  g.needs_remote = plan.needs_remote;
  g.needs_remote.resize(blocks, 0);
  return g;
}

std::string stage_graph_dot(const StageGraph& graph, const octree::LeafSet& leaves, int rank,
                            int stages) {
  const int G = graph.groups;
  const auto fill = [&](std::size_t b, int g, int s) {
    return fmt::format("r{}_F{}_{}_s{}", rank, b, g, s);
  };
  const auto sweep = [&](std::size_t b, int s) { return fmt::format("r{}_S{}_s{}", rank, b, s); };
  const auto send = [&](int from, int to, int g, int s) {
    return fmt::format("r{}_send{}_{}_s{}", from, to, g, s);
  };
  const auto recv = [&](int at, int from, int g, int s) {
    return fmt::format("r{}_recv{}_{}_s{}", at, from, g, s);
  };
  std::string out =
      fmt::format("  subgraph cluster_rank{} {{\n    label=\"rank {}\";\n", rank, rank);
  for (int s = 0; s < stages; ++s) {
    for (std::size_t b = 0; b < graph.blocks; ++b) {
      const std::string key = octree::to_string(leaves[b]);
      for (int g = 0; g < G; ++g)
        out += fmt::format("    {} [label=\"fill{} {} s{}\" shape=box];\n", fill(b, g, s),
                           G == 1 ? "" : std::string(1, char('x' + g)), key, s);
      out += fmt::format("    {} [label=\"sweep {} s{}\" shape=ellipse];\n", sweep(b, s), key, s);
    }
    for (const MessageLayout& m : graph.sends)
      out += fmt::format("    {} [label=\"send to {} g{} s{}\" shape=cds];\n",
                         send(rank, m.peer, m.group, s), m.peer, m.group, s);
    for (const MessageLayout& m : graph.recvs)
      out += fmt::format("    {} [label=\"recv from {} g{} s{}\" shape=cds];\n",
                         recv(rank, m.peer, m.group, s), m.peer, m.group, s);
  }
  out += "  }\n";
  for (int s = 0; s < stages; ++s) {
    for (std::size_t b = 0; b < graph.blocks; ++b) {
      for (int g = 0; g < G; ++g) {
        const std::size_t n = graph.node(b, g);
        // The producers of what Fill(b, g) reads: b itself and its senders.
        std::vector<std::size_t> from(graph.reads[n].begin(), graph.reads[n].end());
        from.push_back(b);
        for (const std::size_t src : from) {
          if (g == 0 && s > 0)
            out += fmt::format("  {} -> {};\n", sweep(src, s - 1), fill(b, 0, s));
          if (g > 0) out += fmt::format("  {} -> {};\n", fill(src, g - 1, s), fill(b, g, s));
        }
        for (const std::size_t m : graph.readers[n])
          out += fmt::format("  {} -> {} [style=dashed];\n", fill(m, g, s), sweep(b, s));
      }
      out += fmt::format("  {} -> {};\n", fill(b, G - 1, s), sweep(b, s));
    }
    for (const MessageLayout& m : graph.sends) {
      for (const FaceSlice& f : m.faces) {
        if (m.group == 0 && s > 0)
          out += fmt::format("  {} -> {};\n", sweep(f.block, s - 1), send(rank, m.peer, 0, s));
        if (m.group > 0)
          out += fmt::format("  {} -> {};\n", fill(f.block, m.group - 1, s),
                             send(rank, m.peer, m.group, s));
      }
      out += fmt::format("  {} -> {} [color=blue];\n", send(rank, m.peer, m.group, s),
                         recv(m.peer, rank, m.group, s));
    }
    for (std::size_t mi = 0; mi < graph.recvs.size(); ++mi) {
      const MessageLayout& m = graph.recvs[mi];
      std::vector<std::size_t> to;
      for (const FaceSlice& f : m.faces) to.push_back(f.block);
      sort_unique(to);
      for (const std::size_t b : to)
        out += fmt::format("  {} -> {};\n", recv(rank, m.peer, m.group, s), fill(b, m.group, s));
    }
  }
  return out;
}

}  // namespace miniamr::runtime
