// Private to src/passes: the dynamo exporter's EmbeddingBag Loop, matched by
// embedding_bag_dynamo.cpp for lower_embedding_bag (embedding_bag.cpp, which
// lowers TorchScript's form itself).
#pragma once

#include <string>

#include "hone/graph.h"
#include "passes/rewrite.h"
#include "passes/shape_values.h"

namespace hone::passes {

/// A proven dynamo EmbeddingBag: its result (the ConcatFromSequence's output)
/// is Reduce(Reshape(rows, [-1, length, width]), axes=[1], keepdims=0).
struct DynamoBag {
  ValueId rows = kNoValue;       // [N, width], the bags' rows one after another
  int64_t length = 0;            // every bag's length L >= 1
  int64_t width = 0;             // D
  const Node* reduce = nullptr;  // the body's ReduceSum / ReduceMean / ReduceMax
  NodeId concat = -1;            // the ConcatFromSequence after the Loop
};

/// "" with `bag` filled when the Loop `loop` of `g` is that form; else why not.
/// `values` reads a copy of `g` whose shapes were propagated (same ids).
std::string match_dynamo_embedding_bag(const Graph& g, NodeId loop, const Uses& uses,
                                       ShapeValues& values, DynamoBag* bag);

}  // namespace hone::passes
