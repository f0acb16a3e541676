// Helpers for tests that build control-flow bodies by hand (Graph, not
// GraphBuilder): a body shared as a node's subgraph attribute, and a name it
// reads from the graph that holds it.
//
//   const ValueId t = body_test::captured(then_g, "scores");
//   g.add_node("If", {cond}, 1, {{"then_branch", body_test::share(std::move(then_g))}, ...});
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "hone/graph.h"

namespace hone::body_test {

inline std::shared_ptr<const Graph> share(Graph g) {
  return std::make_shared<const Graph>(std::move(g));
}

/// A name `body` reads from the graph that holds it: a value with no producer.
inline ValueId captured(Graph& body, const std::string& name) {
  Value v;
  v.name = name;
  return body.add_value(std::move(v));
}

}  // namespace hone::body_test
