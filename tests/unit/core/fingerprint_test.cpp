#include "core/fingerprint.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "hone/registry.h"
#include "tune/machine.h"

namespace hone {
namespace {

Fingerprint sample() {
  Fingerprint fp;
  fp.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
  fp.isa = {"amx_bf16", "amx_tile", "avx", "avx2", "avx512bw", "avx512f", "fma"};
  fp.threads = 4;
  fp.libraries = {{"compiler", "gcc 12.2.0"}, {"hone", "0.1.0"}, {"onednn", "2.6.3"}};
  fp.os = "Linux x86_64";
  return fp;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Fingerprint, JsonRoundTripIsExactAndKeyIsStable) {
  const Fingerprint fp = sample();
  auto back = Fingerprint::from_json(fp.to_json());
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(*back, fp);
  EXPECT_EQ(back->to_json(), fp.to_json());
  EXPECT_EQ(back->key(), fp.key());
  EXPECT_EQ(fp.key().size(), 16u);

  Fingerprint other = fp;
  other.threads = 8;
  EXPECT_NE(other.key(), fp.key());
}

TEST(Fingerprint, FromJsonNamesTheBadField) {
  auto not_json = Fingerprint::from_json("{oops");
  ASSERT_FALSE(not_json);
  EXPECT_EQ(not_json.error().code(), ErrorCode::kCorrupt);

  auto no_threads = Fingerprint::from_json(
      R"({"cpu_model": "x", "isa": [], "libraries": {}, "os": "Linux x86_64"})");
  ASSERT_FALSE(no_threads);
  EXPECT_NE(no_threads.error().message().find("'threads'"), std::string::npos);

  auto bad_isa = Fingerprint::from_json(
      R"({"cpu_model": "x", "isa": "avx2", "libraries": {}, "os": "L", "threads": 1})");
  ASSERT_FALSE(bad_isa);
  EXPECT_NE(bad_isa.error().message().find("'isa'"), std::string::npos);

  auto bad_lib = Fingerprint::from_json(
      R"({"cpu_model": "x", "isa": [], "libraries": {"onednn": 3}, "os": "L", "threads": 1})");
  ASSERT_FALSE(bad_lib);
  EXPECT_NE(bad_lib.error().message().find("'onednn'"), std::string::npos);
}

TEST(Fingerprint, IdenticalMachinesHaveNoDifferences) {
  EXPECT_TRUE(fingerprint_differences(sample(), sample()).empty());
  // The compiler builds hone, it does not change what a package computes.
  Fingerprint rebuilt = sample();
  rebuilt.libraries["compiler"] = "clang 16.0.6";
  EXPECT_TRUE(fingerprint_differences(sample(), rebuilt).empty());
}

TEST(Fingerprint, ReportsIsaModelThreadsAndLibraryDifferences) {
  Fingerprint here = sample();
  here.cpu_model = "AMD EPYC 9654";
  here.isa = {"avx", "avx2", "avx512bw", "avx512f", "avx512_vnni", "fma"};
  here.threads = 2;
  here.libraries["onednn"] = "3.1.0";
  here.libraries["openblas"] = "0.3.21";
  const auto d = fingerprint_differences(sample(), here);
  EXPECT_TRUE(has(d, "CPU lacks amx_bf16 (package tuned with it)"));
  EXPECT_TRUE(has(d, "CPU lacks amx_tile (package tuned with it)"));
  EXPECT_TRUE(has(d, "CPU has avx512_vnni (package tuned without it)"));
  EXPECT_TRUE(has(d, "CPU model 'Intel(R) Xeon(R) Platinum 8480+' != 'AMD EPYC 9654'"));
  EXPECT_TRUE(has(d, "threads 4 != 2"));
  EXPECT_TRUE(has(d, "onednn 2.6.3 != 3.1.0"));
  EXPECT_TRUE(has(d, "openblas (absent) != 0.3.21"));
  EXPECT_EQ(d.size(), 7u);
  // Missing features come first: they are the ones that can crash.
  EXPECT_EQ(d.front().rfind("CPU lacks", 0), 0u);
}

TEST(Fingerprint, ParsesCpuinfoKeepingOnlyFlagsThatMatter) {
  const char* cpuinfo =
      "processor\t: 0\n"
      "vendor_id\t: GenuineIntel\n"
      "model name\t: Intel(R) Core(TM) i7-1185G7 @ 3.00GHz\n"
      "flags\t\t: fpu vme sse4_2 avx avx2 fma hypervisor avx512f avx512_vnni f16c bogus\n"
      "\n"
      "processor\t: 1\n"
      "model name\t: something else\n"
      "flags\t\t: fpu amx_tile\n";
  Fingerprint fp;
  parse_cpuinfo(cpuinfo, fp);
  EXPECT_EQ(fp.cpu_model, "Intel(R) Core(TM) i7-1185G7 @ 3.00GHz");
  EXPECT_EQ(fp.isa, (std::vector<std::string>{"avx", "avx2", "avx512_vnni", "avx512f", "f16c",
                                              "fma", "sse4_2"}));

  Fingerprint arm;
  parse_cpuinfo("processor\t: 0\nFeatures\t: fp asimd sve crc32\nCPU part\t: 0xd0c\n\n", arm);
  EXPECT_EQ(arm.cpu_model, "0xd0c");
  EXPECT_EQ(arm.isa, (std::vector<std::string>{"asimd", "sve"}));
}

TEST(Fingerprint, RecordsTheLibrariesItIsGivenWithHoneAndTheCompiler) {
  const Fingerprint fp = current_fingerprint(2, {{"onednn", "9.9.9"}});
  EXPECT_EQ(fp.libraries.at("onednn"), "9.9.9");
  EXPECT_EQ(fp.libraries.count("hone"), 1u);
  EXPECT_EQ(fp.libraries.count("compiler"), 1u);
  EXPECT_EQ(fp.libraries.size(), 3u);
}

// machine_fingerprint() takes the libraries from the backends'
// capabilities: onednn from onednn and aot, openblas from blas.
TEST(Fingerprint, CurrentMachineIsFilledIn) {
  const Fingerprint fp = machine_fingerprint(3);
  EXPECT_EQ(fp.threads, 3);
  EXPECT_FALSE(fp.cpu_model.empty());
  EXPECT_TRUE(std::is_sorted(fp.isa.begin(), fp.isa.end()));
  EXPECT_EQ(fp.libraries.count("hone"), 1u);
  // Each backend's, where the build has it (HONE_WITH_<NAME>).
  const auto built = [](const char* b) { return default_registry().find(b) != nullptr; };
  EXPECT_EQ(fp.libraries.count("onednn"), built("onednn") || built("aot") ? 1u : 0u);
  EXPECT_EQ(fp.libraries.count("aot-runtime"), built("aot") ? 1u : 0u);
  EXPECT_EQ(fp.libraries.count("onnx"), 1u);
  EXPECT_EQ(fp.libraries.count("openblas"), built("blas") ? 1u : 0u);
  EXPECT_NE(fp.os.find(' '), std::string::npos) << fp.os;
  EXPECT_TRUE(fingerprint_differences(fp, machine_fingerprint(3)).empty());
  EXPECT_EQ(fingerprint_differences(fp, machine_fingerprint(1)),
            (std::vector<std::string>{"threads 3 != 1"}));
}

}  // namespace
}  // namespace hone
