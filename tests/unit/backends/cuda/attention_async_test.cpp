// The cp.async attention kernels (kernels/attention_async.cu): on the packed
// QKV layout a ViT or BERT export gives them (Q, K and V strided rows of one
// [batch, seq, 3, heads, d] half tensor), each gives the same bits as the
// plain _hio kernel it stands in for and matches an f64 reference, with and
// without a mask, at key counts that are and are not multiples of the 64-key
// tile; vector_access() tells which layouts they may read (device-free). The
// key-split kernels (16 query rows a block, four warps over the keys) match
// the reference too.
#include <cmath>
#include <cstdio>
#include <random>

#include "backends/cuda/attention_kernels.h"
#include "backends/cuda/op.h"
#include "cuda_test_util.h"
#include "hone/half.h"

namespace hone::cuda {
namespace {

TEST(CudaAttentionAsyncHost, VectorAccessNamesSixteenByteRows) {
  AttnArgs a;
  a.nb = 1;
  a.k_row = a.v_row = 3 * 4 * 64, a.k_col = a.v_col = 1;  // packed QKV, 4 heads of 64
  a.sk[0] = a.sv[0] = 64;
  a.k = 256 + 4 * 64 * 2, a.v = 256 + 8 * 64 * 2;  // K's and V's offsets in the packed row
  EXPECT_EQ(vector_access(a, 2) & 24, 24);
  a.sk[0] = 36;  // a head stride of 36 elements: 72 bytes, not 16-byte aligned
  EXPECT_EQ(vector_access(a, 2) & 24, 16);
  a.sk[0] = 64;
  a.v += 8;  // V's start 8 bytes off
  EXPECT_EQ(vector_access(a, 2) & 24, 8);
  a.v -= 8;
  a.k_col = 2;  // K read along a stride: no row copies
  EXPECT_EQ(vector_access(a, 2) & 24, 16);
  a.k_col = 1;
  // f32 elements: 16 bytes are four elements.
  a.k_row = a.v_row = 12;
  a.sk[0] = a.sv[0] = 4;
  a.k = a.v = 512;
  EXPECT_EQ(vector_access(a, 4) & 24, 24);
}

struct Case {
  int64_t d, len;
  bool mask;
};

TEST(CudaAttentionAsync, SameBitsAsThePlainHalfKernelAndNearTheTruth) {
  HONE_REQUIRE_CUDA();
  auto drv = Driver::get();
  ASSERT_TRUE(drv) << drv.error().to_string();
  const Driver& d = **drv;
  if (d.cc_major() < 8) GTEST_SKIP() << "the mma kernels need sm_80 or newer";
  ASSERT_TRUE(d.make_current());
  auto plain_module = attention_module(d);
  ASSERT_TRUE(plain_module) << plain_module.error().to_string();
  auto async_module = attention_async_module(d);
  ASSERT_TRUE(async_module) << async_module.error().to_string();
  auto stream = Stream::create(d);
  ASSERT_TRUE(stream) << stream.error().to_string();
  const Api& api = d.api();
  constexpr int64_t B = 2, H = 3;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const int half : {kCudaR16BF, kCudaR16F}) {
    const std::string type = half == kCudaR16BF ? "bf16" : "f16";
    for (const Case& c : {Case{64, 197, false}, Case{64, 130, true}, Case{64, 64, false},
                          Case{32, 77, true}, Case{32, 256, false}}) {
      SCOPED_TRACE(type + " d " + std::to_string(c.d) + " len " + std::to_string(c.len) +
                   (c.mask ? " masked" : ""));
      const int64_t D = c.d, S = c.len, row = 3 * H * D;
      // qkv [B, S, 3, H, D] as half bits, and the values they hold.
      std::vector<uint16_t> qkv(static_cast<size_t>(B * S * row));
      std::vector<float> val(qkv.size());
      for (size_t i = 0; i < qkv.size(); ++i) {
        qkv[i] = half_bits(u(rng), half);
        val[i] = half == kCudaR16BF ? BFloat16::from_bits(qkv[i]).to_float()
                                    : Half::from_bits(qkv[i]).to_float();
      }
      std::vector<float> mask(static_cast<size_t>(B * S));
      for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 5 == 2 ? -1e4f : u(rng);
      auto at = [&](int64_t b, int64_t s, int64_t which, int64_t h, int64_t e) {
        return val[static_cast<size_t>(((b * S + s) * 3 + which) * H * D + h * D + e)];
      };
      const double scale = 1.0 / std::sqrt(static_cast<double>(D));
      // The truth, O [B, H, S, D] contiguous.
      std::vector<double> want(static_cast<size_t>(B * H * S * D));
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t r = 0; r < S; ++r) {
            std::vector<double> sc(static_cast<size_t>(S));
            double mx = -1e300, sum = 0;
            for (int64_t j = 0; j < S; ++j) {
              double x = 0;
              for (int64_t e = 0; e < D; ++e) x += at(b, r, 0, h, e) * at(b, j, 1, h, e);
              x = x * scale + (c.mask ? mask[static_cast<size_t>(b * S + j)] : 0.0);
              sc[static_cast<size_t>(j)] = x;
              mx = std::max(mx, x);
            }
            for (double& x : sc) sum += (x = std::exp(x - mx));
            for (int64_t e = 0; e < D; ++e) {
              double acc = 0;
              for (int64_t j = 0; j < S; ++j) acc += sc[static_cast<size_t>(j)] * at(b, j, 2, h, e);
              want[static_cast<size_t>(((b * H + h) * S + r) * D + e)] = acc / sum;
            }
          }
      auto up = [&](const void* p, size_t bytes) {
        auto buf = DeviceBuffer::allocate(d, bytes);
        EXPECT_TRUE(buf);
        EXPECT_TRUE(d.check(api.cuMemcpyHtoD(buf->ptr(), p, bytes), "cuMemcpyHtoD"));
        return std::move(*buf);
      };
      DeviceBuffer dqkv = up(qkv.data(), qkv.size() * 2), dm = up(mask.data(), mask.size() * 4);
      AttnArgs a;
      a.nb = 2;
      a.bdims[0] = B, a.bdims[1] = H;
      a.len_q = a.len_k = static_cast<int32_t>(S);
      a.scale = static_cast<float>(scale);
      for (int64_t* st : {a.sq, a.sk, a.sv}) st[0] = S * row, st[1] = D;
      a.q_row = a.k_row = a.v_row = row;
      a.q_col = a.k_col = a.v_col = 1;
      a.so[0] = H * S * D, a.so[1] = S * D, a.o_row = D, a.o_col = 1;
      if (c.mask) a.has_mask = 1, a.sm[0] = S, a.sm[1] = 0, a.mask_r = 0, a.mask_c = 1;
      a.q = dqkv.ptr(), a.k = dqkv.ptr() + H * D * 2, a.v = dqkv.ptr() + 2 * H * D * 2;
      a.mask = c.mask ? dm.ptr() : 0;
      std::vector<std::vector<uint16_t>> outs;
      // The plain kernel, the async one, and the key-split one (16-row blocks).
      for (const int kind : {0, 1, 2}) {
        const bool async = kind > 0;
        std::vector<uint16_t> poison(want.size(), 0x7FC0u);
        DeviceBuffer dout = up(poison.data(), poison.size() * 2);
        AttnArgs x = a;
        x.o = dout.ptr();
        x.vec = vector_access(x, 2);
        ASSERT_EQ(x.vec & 31, 31);
        const std::string name = std::string(kind == 2 ? "hone_attn_mma_split_"
                                             : async   ? "hone_attn_mma_async_"
                                                       : "hone_attn_mma_") +
                                 std::to_string(D) + "_" + type + "_hio";
        auto f = (async ? *async_module : *plain_module)->function(name);
        ASSERT_TRUE(f) << f.error().to_string();
        const int64_t rows = kind == 2 ? kAttnSplitRows : kAttnRows;
        const auto blocks = static_cast<unsigned>(B * H * ((S + rows - 1) / rows));
        ASSERT_TRUE(launch_grid(d, *f, stream->get(), blocks, 1, 1, 128, 1, {&x}));
        std::vector<uint16_t> got(want.size());
        ASSERT_TRUE(
            d.check(api.cuMemcpyDtoHAsync(got.data(), dout.ptr(), got.size() * 2, stream->get()),
                    "cuMemcpyDtoHAsync"));
        ASSERT_TRUE(d.check(api.cuStreamSynchronize(stream->get()), "cuStreamSynchronize"));
        double diff = 0, norm = 0;
        size_t unwritten = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          const double g = half == kCudaR16BF ? BFloat16::from_bits(got[i]).to_float()
                                              : Half::from_bits(got[i]).to_float();
          if (!std::isfinite(g)) ++unwritten;
          diff += (g - want[i]) * (g - want[i]);
          norm += want[i] * want[i];
        }
        EXPECT_EQ(unwritten, 0u) << name;
        EXPECT_LE(std::sqrt(diff / norm), half == kCudaR16BF ? 1e-2 : 2e-3) << name;
        outs.push_back(std::move(got));
      }
      // The same arithmetic in the same order: the same bits (the split
      // kernel sums in another order: near the truth only).
      EXPECT_TRUE(outs[0] == outs[1]);
    }
  }
}

}  // namespace
}  // namespace hone::cuda
