// Which kind of kernel oneDNN picked for a primitive, read from its
// implementation name ("jit:avx2", "brgemm:avx512_core", "ref:any",
// "bnorm_ref:any"): hone avoids oneDNN's reference kernels, slow plain loops.
//
//   dnnl::binary::primitive_desc pd(...);
//   if (is_ref_impl(pd)) { /* another layout, or hone's own step */ }
#pragma once

#include <string_view>

#include <oneapi/dnnl/dnnl.hpp>

namespace hone::onednn {

/// Whether `impl` names one of oneDNN's reference kernels. oneDNN 2.x names
/// them "ref:any", "ref_int8:any", "ref_fused_convolution:any", and by
/// primitive "bnorm_ref:any", "lnorm_ref:any", "lrn_ref:any",
/// "prelu_ref:any", "reduction_ref:any" (GPU: "ocl:ref:any"): a ':'-separated
/// part that is "ref", begins with "ref_" or ends with "_ref". The fast
/// kernels' names ("jit:uni", "simple_nchw:any", "nspc_bnorm:any",
/// "brgemm:avx512_core", "gemm:jit") have no such part.
inline bool is_ref_impl_name(std::string_view impl) {
  while (!impl.empty()) {
    const size_t colon = impl.find(':');
    const std::string_view part = impl.substr(0, colon);
    if (part == "ref" || part.starts_with("ref_") || part.ends_with("_ref")) return true;
    if (colon == std::string_view::npos) break;
    impl.remove_prefix(colon + 1);
  }
  return false;
}

/// Whether oneDNN picked a reference kernel for `pd`.
inline bool is_ref_impl(const dnnl::primitive_desc_base& pd) {
  return is_ref_impl_name(pd.impl_info_str());
}

}  // namespace hone::onednn
