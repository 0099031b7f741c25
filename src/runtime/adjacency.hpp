// Lists of items per index, stored flat (compressed rows): the shape of every per-block list
// in the stage graph.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace miniamr::runtime {

template <class T>
class Adjacency {
 public:
  Adjacency() = default;
  // From one list per index.
  explicit Adjacency(const std::vector<std::vector<T>>& lists) {
    begin_.reserve(lists.size() + 1);
    begin_.push_back(0);
    for (const auto& l : lists) {
      items_.insert(items_.end(), l.begin(), l.end());
      begin_.push_back(items_.size());
    }
  }
  std::size_t size() const { return begin_.empty() ? 0 : begin_.size() - 1; }
  std::size_t total() const { return items_.size(); }
  std::span<const T> operator[](std::size_t i) const {
    return std::span<const T>(items_).subspan(begin_[i], begin_[i + 1] - begin_[i]);
  }

 private:
  std::vector<std::size_t> begin_;
  std::vector<T> items_;
};

}  // namespace miniamr::runtime
