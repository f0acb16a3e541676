// is_ref_impl_name over oneDNN 2.x's implementation names (impl_name.h): the
// reference kernels named "ref:any" and the per-primitive "<prim>_ref:any"
// forms, and fast kernels' names that merely hold the letters "ref"; and a
// real BatchNormalization descriptor oneDNN 2.6 serves by its reference
// kernel (channels-last 3D), next to one it runs by a fast kernel.
#include "backends/onednn/impl_name.h"

#include <string>

#include <gtest/gtest.h>

namespace hone::onednn {
namespace {

TEST(OnednnImplName, ReferenceKernelsByEveryNamingForm) {
  for (const char* name :
       {"ref:any", "ref_int8:any", "ref_fused_convolution:any", "bnorm_ref:any", "lnorm_ref:any",
        "lrn_ref:any", "prelu_ref:any", "reduction_ref:any", "ocl:ref:any", "ref"})
    EXPECT_TRUE(is_ref_impl_name(name)) << name;
  for (const char* name :
       {"jit:uni", "jit:avx2", "jit_dw:any", "brgemm:avx512_core", "brdgmm_dw:any", "gemm:jit",
        "simple_nchw:any", "simple_nhwc:any", "ncsp_bnorm:any", "nspc_bnorm:any",
        "simple_layer_normalization:any", "jit_uni_reduction:avx2", "prefetch:any", "refine:any",
        "jit:pref_any", ""})
    EXPECT_FALSE(is_ref_impl_name(name)) << name;
}

dnnl::batch_normalization_forward::primitive_desc bnorm(const dnnl::memory::dims& dims,
                                                        dnnl::memory::format_tag tag) {
  using dnnl::normalization_flags;
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  const dnnl::memory::desc md(dims, dnnl::memory::data_type::f32, tag);
  return {dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, 1e-5f,
                                                  normalization_flags::use_global_stats |
                                                      normalization_flags::use_scale |
                                                      normalization_flags::use_shift),
          eng};
}

TEST(OnednnImplName, ABatchNormOnTheReferenceKernelIsSeenAsOne) {
  // PatchTST's BatchNorm1d over transposed tokens: [N, C, W] stored as acb.
  const auto slow = bnorm({7, 64, 42}, dnnl::memory::format_tag::acb);
  const std::string name = slow.impl_info_str();
  EXPECT_EQ(name, "bnorm_ref:any");  // the form a "starts with ref" test missed
  EXPECT_TRUE(is_ref_impl(slow)) << name;
  const auto fast = bnorm({2, 16, 8, 8}, dnnl::memory::format_tag::nchw);
  EXPECT_FALSE(is_ref_impl(fast)) << fast.impl_info_str();
}

}  // namespace
}  // namespace hone::onednn
