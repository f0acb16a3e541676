// Helpers for tests that build control-flow bodies by hand (Graph, not
// GraphBuilder): a body shared as a node's subgraph attribute, and a name it
// reads from the graph that holds it.
//
//   const ValueId t = body_test::captured(then_g, "scores");
//   const ValueId y = body_test::add_if(g, cond, std::move(then_g), std::move(else_g), "if");
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

/// Adds If node `name` on `cond` with branches `then_g` and `else_g` to `g`;
/// its one output (untyped: the caller types it as the exporter would).
inline ValueId add_if(Graph& g, ValueId cond, Graph then_g, Graph else_g, const std::string& name) {
  return g.add_node(
      "If", {cond}, 1,
      {{"then_branch", share(std::move(then_g))}, {"else_branch", share(std::move(else_g))}},
      name)[0];
}

}  // namespace hone::body_test
