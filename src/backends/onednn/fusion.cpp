#include "backends/onednn/fusion.h"

#include <optional>

#include "backends/onednn/pattern.h"

namespace hone::onednn {

using dnnl::algorithm;

std::optional<algorithm> binary_alg(const std::string& op) {
  if (op == "Add") return algorithm::binary_add;
  if (op == "Sub") return algorithm::binary_sub;
  if (op == "Mul") return algorithm::binary_mul;
  if (op == "Div") return algorithm::binary_div;
  return std::nullopt;
}

std::optional<BufferRef> post_op_operand(PlanBuilder& b, ValueId other, const dims_t& dst,
                                         const dims_t& logical) {
  if (!b.has(other)) return std::nullopt;
  dims_t od = b.value(other).dims;
  if (!logical.empty() && od.size() <= logical.size()) {
    // Under a flattened result (a MatMul run as one product of fewer dims),
    // an operand of the result's own dims is the same bytes as dst, and an
    // operand's leading 1s add nothing (past the result's rank they would
    // add dims).
    if (pad_left(od, logical.size()) == logical)
      return BufferRef{b.plain(other).buffer, plain_md(dst)};
    while (od.size() > dst.size() && od.front() == 1) od.erase(od.begin());
  }
  if (od.size() > dst.size()) return std::nullopt;
  const dims_t padded = pad_left(od, dst.size());
  for (size_t i = 0; i < dst.size(); ++i)
    if (padded[i] != 1 && padded[i] != dst[i]) return std::nullopt;
  BufferRef r = b.plain(other);
  return BufferRef{r.buffer, plain_md(padded)};
}

std::string dense_kind(const char* op, dnnl::memory::data_type dt) {
  return dt == dnnl::memory::data_type::bf16 ? std::string(op) + "[bf16]" : std::string(op);
}

namespace {

/// A post_ops of its own with `src`'s entries: dnnl::post_ops is a handle,
/// so a copied Fusion appending to it would append to the seed's too (a
/// seed of no post-ops then carried a whole chain's).
dnnl::post_ops copy_of(const dnnl::post_ops& src) {
  dnnl::post_ops out;
  for (int i = 0; i < src.len(); ++i) {
    float scale = 1.0f, alpha = 0.0f, beta = 0.0f;
    algorithm alg = algorithm::undef;
    md_t md;
    switch (src.kind(i)) {
      case dnnl::primitive::kind::sum:
        src.get_params_sum(i, scale);
        out.append_sum(scale);
        break;
      case dnnl::primitive::kind::eltwise:
        src.get_params_eltwise(i, scale, alg, alpha, beta);
        out.append_eltwise(scale, alg, alpha, beta);
        break;
      default:  // binary: the only other kind the dense ops append
        src.get_params_binary(i, alg, md);
        out.append_binary(alg, md);
    }
  }
  return out;
}

}  // namespace

Fusion collect(PlanBuilder& b, ValueId from, const dims_t& dst, Fusion seed, bool full_size_binary,
               const md_t* residual, const CanSum& can_sum, int max_links) {
  Fusion f = std::move(seed);
  f.ops = copy_of(f.ops);
  f.out = from;
  for (; f.links < max_links; ++f.links) {
    // HardSwish spelled out reads the value twice, so it has no sole consumer.
    if (std::vector<const Node*> hs; match_hardswish(b.graph(), f.out, &hs)) {
      f.ops.append_eltwise(1.0f, algorithm::eltwise_hardswish, 0.0f, 0.0f);
      ++f.count;
      f.kind += "+eltwise";
      f.nodes.insert(f.nodes.end(), hs.begin(), hs.end());
      f.out = hs.back()->outputs[0];
      continue;
    }
    // So does SiLU (x * sigmoid(x)), oneDNN's swish with alpha 1.
    if (std::vector<const Node*> sw; match_swish(b.graph(), f.out, &sw)) {
      f.ops.append_eltwise(1.0f, algorithm::eltwise_swish, 1.0f, 0.0f);
      ++f.count;
      f.kind += "+eltwise";
      f.nodes.insert(f.nodes.end(), sw.begin(), sw.end());
      f.out = sw.back()->outputs[0];
      continue;
    }
    const Node* c = b.sole_consumer(f.out);
    if (c == nullptr || c->outputs.size() != 1) break;
    EltwiseSpec es;
    if (eltwise_spec(b, *c, &es) && c->inputs[0] == f.out) {
      f.ops.append_eltwise(1.0f, es.alg, es.alpha, es.beta);
      ++f.count;
      if (es.then_clip01) {
        f.ops.append_eltwise(1.0f, algorithm::eltwise_clip, 0.0f, 1.0f);
        ++f.count;
      }
      f.kind += "+eltwise";
    } else if (auto alg = binary_alg(c->op_type); alg && c->inputs.size() == 2) {
      if (c->inputs[0] == c->inputs[1]) break;
      const bool first = c->inputs[0] == f.out;
      if (!first && (*alg == algorithm::binary_sub || *alg == algorithm::binary_div)) break;
      const ValueId other = first ? c->inputs[1] : c->inputs[0];
      if (!full_size_binary && b.has(other) && pad_left(b.value(other).dims, dst.size()) == dst) {
        if (residual == nullptr || !(b.value(other).ref.md == *residual)) break;
        if (*alg == algorithm::binary_add && f.sum_into < 0 && can_sum && can_sum(other)) {
          // The skip dies here: the op accumulates onto it (oneDNN keeps its
          // kernel for a sum post-op, while a binary one may change it).
          f.ops.append_sum(1.0f);
          f.sum_into = b.value(other).ref.buffer;
          ++f.count;
          f.kind += "+sum";
        } else {
          f.ops.append_binary(*alg, *residual);
          f.src1.push_back({f.count++, b.value(other).ref});
          f.kind += "+binary";
        }
        f.nodes.push_back(c);
        f.out = c->outputs[0];
        continue;
      }
      auto operand = post_op_operand(b, other, dst, f.logical);
      if (!operand) break;
      f.ops.append_binary(*alg, operand->md);
      f.src1.push_back({f.count++, *operand});
      f.kind += "+binary";
    } else {
      break;
    }
    f.nodes.push_back(c);
    f.out = c->outputs[0];
  }
  return f;
}

dnnl::primitive_attr make_attr(const Fusion& f, float scale) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (scale != 1.0f) attr.set_output_scales(0, {scale});
  attr.set_post_ops(f.ops);
  return attr;
}

void finish(PlanBuilder& b, const Fusion& f, std::vector<std::pair<int, BufferRef>> args,
            std::string kind, dnnl::primitive prim, const dnnl::primitive_desc_base& pd,
            PValue out) {
  for (const auto& [idx, ref] : f.src1)
    args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1, ref});
  b.add_step(kind + f.kind, std::move(prim), pd, std::move(args));
  for (const Node* n : f.nodes) b.absorb(n);
  b.set(f.out, std::move(out));
}

}  // namespace hone::onednn
