// Hostile packages: manifests that lie, models swapped, external data, and
// tampered native code (which must never run), plus signing.
#include <nlohmann/json.hpp>

#include <functional>

#include "hone/sha256.h"
#include "hostile_fixture.h"
#include "package/archive.h"

namespace hone_hostile_test {
namespace {

using nlohmann::json;
using Entries = std::vector<hone::package::Entry>;

/// Packages tuned once for the whole suite, in the build folder.
fs::path base_dir() {
  return fs::path(HONE_HOSTILE_CACHE) / "packages";
}

/// Base package `name` exists and was made by the hone under test: one made
/// by an older build (another environment fingerprint) is made again.
bool made_by_this_hone(const std::string& name) {
  std::error_code ec;
  const fs::path p = base_dir() / name;
  return fs::exists(p) &&
         fs::last_write_time(p, ec) >= fs::last_write_time(fs::path(HONE_CLI_PATH), ec);
}

class HostilePackage : public Hostile {
 protected:
  static void SetUpTestSuite() {
    fs::create_directories(base_dir());
    const std::string env = "HONE_CACHE_DIR='" + cache_dir().string() + "' ";
    const std::string tune = env + "timeout 300 " + std::string(HONE_CLI_PATH) + " tune " +
                             HONE_SOURCE_DIR + "/models/mlp.onnx --no-cache --batch-sizes 1,2 ";
    if (!made_by_this_hone("ref.hone"))
      std::system((tune + "--backends reference -o " + (base_dir() / "ref.hone").string() +
                   " >/dev/null 2>&1")
                      .c_str());
    if (!made_by_this_hone("aot.hone"))
      std::system(
          (tune + "--backends aot -o " + (base_dir() / "aot.hone").string() + " >/dev/null 2>&1")
              .c_str());
  }

  /// Copies base package `name` to dir_/p.hone with `edit` applied to its
  /// entries; the sums are recomputed, as an attacker would.
  void make(const std::string& name, const std::function<void(Entries&)>& edit,
            const std::string& out = "p.hone") {
    auto entries = hone::package::read_archive(base_dir() / name);
    ASSERT_TRUE(entries.has_value()) << "the base package " << name << " was not tuned";
    edit(*entries);
    ASSERT_TRUE(hone::package::write_archive(dir_ / out, std::move(*entries)).has_value());
  }
  static std::string& entry(Entries& e, const std::string& path) {
    for (auto& x : e)
      if (x.path == path) return x.bytes;
    ADD_FAILURE() << "no entry " << path;
    static std::string none;
    return none;
  }
  void edit_manifest(const std::function<void(json&)>& fn) {
    make("ref.hone", [&](Entries& e) {
      json m = json::parse(entry(e, "manifest.json"));
      fn(m);
      entry(e, "manifest.json") = m.dump(2);
    });
  }
  void expect_refused(std::initializer_list<std::string> needles) {
    expect_clean_error(hone("describe p.hone"), 1, needles);
    expect_clean_error(hone("infer p.hone --random-inputs 1"), 1, needles);
  }
};

TEST_F(HostilePackage, BasePackagesWork) {
  ASSERT_TRUE(fs::exists(base_dir() / "ref.hone"));
  fs::copy_file(base_dir() / "ref.hone", dir_ / "p.hone");
  const Ran r = hone("infer p.hone --random-inputs 1");
  EXPECT_EQ(r.code, 0) << r.err;
  expect_no_leftovers();
}

TEST_F(HostilePackage, FormatVersionAsString) {
  edit_manifest([](json& m) { m["format_version"] = "1"; });
  expect_refused({"manifest.json", "format_version", "integer"});
}

TEST_F(HostilePackage, ThreadCount20000) {
  edit_manifest([](json& m) { m["threads"] = 20000; });
  expect_refused({"manifest.json", "threads", "20000"});
}

TEST_F(HostilePackage, ManifestFieldsOfWrongTypeOrRange) {
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& m) { m["format_version"] = 999; }, "format version 999"},
      {[](json& m) { m["format_version"] = -1; }, "format_version"},
      {[](json& m) { m["format_version"] = 1.5; }, "format_version"},
      {[](json& m) { m["threads"] = -1; }, "threads"},
      {[](json& m) { m["threads"] = "4"; }, "threads"},
      {[](json& m) { m.erase("decision"); }, "decision"},
      {[](json& m) { m["decision"]["backend"] = 5; }, "decision.backend"},
      {[](json& m) { m["decision"]["backend"] = ""; }, "decision.backend"},
      {[](json& m) {
         m["decision"]["config_fields"] = {{"threads", 3}};
       },
       "decision.config_fields.threads"},
      {[](json& m) {
         m["decision"]["figures"] = {{{"batch", 1}, {"p50_ms", "fast"}}};
       },
       "decision.figures[0]"},
      {[](json& m) { m["decision"]["losers"] = json::array({1}); }, "decision.losers"},
      {[](json& m) {
         m["batch_sizes"] = {1, -8};
       },
       "batch_sizes[1]"},
      {[](json& m) { m["model"]["sha256"] = "zz"; }, "model.sha256"},
      {[](json& m) { m["model"] = "model.onnx"; }, "'model'"},
      {[](json& m) { m["spec"] = json::array(); }, "spec"},
      {[](json& m) {
         m["spec"] = {{"format", "hone.graph_spec"}};
       },
       "spec"},
      {[](json& m) {
         m["fingerprint"] = {{"cpu_model", 3}};
       },
       "fingerprint"},
      {[](json& m) { m["format"] = "other"; }, "not a hone manifest"},
      {[](json& m) {
         m = json::array({1, 2});
       },
       "not a JSON object"},
  };
  for (const auto& [edit, needle] : cases) {
    SCOPED_TRACE(needle);
    edit_manifest(edit);
    expect_refused({needle});
  }
}

TEST_F(HostilePackage, ManifestDeeplyNestedOrNotJson) {
  make("ref.hone", [](Entries& e) { entry(e, "manifest.json") = std::string(100000, '['); });
  expect_refused({"manifest.json"});
  make("ref.hone", [](Entries& e) {
    entry(e, "manifest.json") = std::string(50000, '[') + std::string(50000, ']');
  });
  expect_refused({"manifest.json"});
}

TEST_F(HostilePackage, ModelSwappedAgainstTheManifestHash) {
  make("ref.hone",
       [](Entries& e) { entry(e, "model.onnx") = one_node_model("Relu").SerializeAsString(); });
  expect_refused({"does not match the model hash"});
}

// model.onnx with external data: it would resolve against some folder of
// this machine, so a package may not have any.
TEST_F(HostilePackage, ModelWithExternalData) {
  fs::create_directories(dir_ / "tmp" / "rel" / "secret");
  spit(dir_ / "tmp" / "rel" / "secret" / "w.bin", std::string(32, '\0'));
  make("ref.hone", [](Entries& e) {
    auto m = one_node_model("MatMul", true);
    make_external(m, "rel/secret/w.bin");
    entry(e, "model.onnx") = m.SerializeAsString();
    json man = json::parse(entry(e, "manifest.json"));
    man["model"]["sha256"] = hone::sha256_hex(entry(e, "model.onnx"));
    entry(e, "manifest.json") = man.dump(2);
  });
  fs::remove_all(dir_ / "tmp" / "rel");
  expect_clean_error(hone("infer p.hone --random-inputs 1"), 1, {"tensor 'w'", "external data"});
}

TEST_F(HostilePackage, ReportAndChecksumsThatLie) {
  make("ref.hone", [](Entries& e) { entry(e, "report.json") = "{\"model\": 5}"; });
  expect_refused({"report"});
  make("ref.hone", [](Entries& e) { e.erase(e.begin()); });  // drops an entry
  expect_refused({});
}

// A decision for cuda whose recorded kernel choices are malformed: refused
// when the package loads, before any device is looked for, naming the field
// and the entry.
TEST_F(HostilePackage, MalformedCudaKernelChoices) {
  for (const std::string& bad :
       {std::string("not a choice"), std::string("'fc' (Gemm)|[1,8]|fp64=gemm.f32.cuda.sgemm"),
        std::string("'fc' (Gemm)|[1,8]|fp32=k;'fc' (Gemm)|[1,8]|fp32=j")}) {
    SCOPED_TRACE(bad);
    edit_manifest([&](json& m) {
      m["decision"]["backend"] = "cuda";
      m["decision"]["config_fields"] = {{"kernel_choices", bad}};
    });
    expect_clean_error(hone("infer p.hone --random-inputs 1"), 1,
                       {"kernel_choices entry '", bad.substr(0, 10)});
  }
}

// --- native code ---------------------------------------------------------------------------

/// A shared library whose constructor writes `marker`: what an attacker
/// would put in place of model.so.
std::string evil_library(const fs::path& dir, const fs::path& marker) {
  const fs::path src = dir / "evil.c", so = dir / "evil.so";
  spit(src,
       "#include <stdio.h>\n__attribute__((constructor)) static void evil(void) {\n"
       "  FILE* f = fopen(\"" +
           marker.string() + "\", \"w\"); if (f) fclose(f);\n}\n");
  const std::string cmd = "cc -shared -fPIC -o '" + so.string() + "' '" + src.string() + "'";
  if (std::system(cmd.c_str()) != 0) return {};
  std::string bytes = slurp(so);
  fs::remove(src);
  fs::remove(so);
  return bytes;
}

/// Replaces block 0's model.so with `so`, fixing block.json's hash: every
/// sum inside the package agrees, as in the attack.
void swap_library(Entries& e, const std::string& so) {
  for (auto& x : e) {
    if (x.path == "backend/block_0/model.so") x.bytes = so;
    if (x.path == "backend/block_0/block.json") {
      json b = json::parse(x.bytes);
      b["sha"]["model.so"] = hone::sha256_hex(so);
      x.bytes = b.dump(2);
    }
  }
}

class HostileNative : public HostilePackage {
 protected:
  void SetUp() override {
    HostilePackage::SetUp();
    if (!fs::exists(base_dir() / "aot.hone")) GTEST_SKIP() << "no aot package (no C compiler?)";
    marker_ = dir_ / "pwned";
    evil_ = evil_library(dir_, marker_);
    if (evil_.empty()) GTEST_SKIP() << "cc cannot build a shared library here";
  }
  fs::path marker_;
  std::string evil_;
};

TEST_F(HostileNative, UnsignedTamperedLibraryNeverRuns) {
  make("aot.hone", [&](Entries& e) { swap_library(e, evil_); });
  // Unsigned: the shipped library is withheld and rebuilt from source.
  const Ran r = hone("infer p.hone --random-inputs 1 --log-level info");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("not signed"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("ran on aot"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(marker_)) << "the tampered library's code ran";
  expect_no_leftovers();
  // describe and export verify the same and never load it either.
  EXPECT_EQ(hone("describe p.hone").code, 0);
  EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(HostileNative, AllowUnsignedNativeIsExplicit) {
  make("aot.hone", [&](Entries& e) { swap_library(e, evil_); });
  // Only the user's explicit flag loads unsigned native code (here: the
  // stand-in, which lacks hone's ABI and is refused after loading).
  expect_clean_error(hone("--allow-unsigned-native infer p.hone --random-inputs 1"), 1,
                     {"lacks the symbol"});
  EXPECT_TRUE(fs::exists(marker_));
}

TEST_F(HostileNative, SignedPackagesLoadTheirLibraryAndRefuseTampering) {
  ASSERT_EQ(hone("keygen me.key").code, 0);
  EXPECT_TRUE(fs::exists(dir_ / "me.key.pub"));
  expect_clean_error(hone("keygen me.key"), 1, {"never overwritten"});
  fs::copy_file(base_dir() / "aot.hone", dir_ / "p.hone");
  expect_clean_error(hone("verify p.hone"), 1, {"not signed"});
  ASSERT_EQ(hone("sign p.hone --key me.key").code, 0);
  expect_clean_error(hone("verify p.hone"), 1, {"not trusted"});
  const Ran ok = hone("--trust-key me.key.pub verify p.hone");
  EXPECT_EQ(ok.code, 0) << ok.err;
  const Ran run = hone("--trust-key me.key.pub infer p.hone --random-inputs 1 --log-level debug");
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find("signed by trusted key"), std::string::npos) << run.err;
  // The keys folder trusts it too.
  fs::create_directories(dir_ / "home" / ".config" / "hone" / "trusted-keys");
  fs::copy_file(dir_ / "me.key.pub",
                dir_ / "home" / ".config" / "hone" / "trusted-keys" / "me.pub");
  EXPECT_EQ(hone("verify p.hone").code, 0);

  // Tampered after signing, sums recomputed: the signature no longer verifies.
  auto signed_entries = hone::package::read_archive_contents(dir_ / "p.hone");
  ASSERT_TRUE(signed_entries.has_value());
  ASSERT_TRUE(signed_entries->signature.has_value());
  Entries e = signed_entries->entries;
  swap_library(e, evil_);
  ASSERT_TRUE(hone::package::write_archive(dir_ / "p.hone", std::move(e), signed_entries->signature)
                  .has_value());
  expect_clean_error(hone("infer p.hone --random-inputs 1"), 1, {"altered after it was signed"});
  expect_clean_error(hone("describe p.hone"), 1, {"altered after it was signed"});
  expect_clean_error(hone("verify p.hone"), 1, {"altered after it was signed"});
  EXPECT_FALSE(fs::exists(marker_));
}

TEST_F(HostileNative, BlockJsonThatLies) {
  for (const std::string& bad :
       {std::string("[]"), std::string("{\"hash\": \"fnv1a64\"}"),
        std::string("{\"hash\": \"sha256\", \"sha\": {\"model.so\": 5}}"),
        std::string("{\"hash\": \"sha256\", \"sha\": [], \"cpu_features\": 3}")}) {
    SCOPED_TRACE(bad);
    make("aot.hone", [&](Entries& e) { entry(e, "backend/block_0/block.json") = bad; });
    expect_clean_error(hone("infer p.hone --random-inputs 1"), 1, {"block.json"});
  }
  // Well formed up to the runtime it names, which is not a string.
  const std::string sha(64, 'a');
  const std::string wrong_runtime = "{\"hash\": \"sha256\", \"sha\": {\"model.so\": \"" + sha +
                                    "\", \"weights.bin\": \"" + sha + "\", \"model.c\": \"" + sha +
                                    "\"}, \"cpu_features\": [], \"runtime\": 5}";
  make("aot.hone", [&](Entries& e) { entry(e, "backend/block_0/block.json") = wrong_runtime; });
  expect_clean_error(hone("infer p.hone --random-inputs 1"), 1,
                     {"block.json", "field 'runtime' must be a string"});
}

// --- leftovers -----------------------------------------------------------------------------

TEST_F(HostilePackage, StaleStagingFoldersOfDeadProcessesAreSwept) {
  // A pid that surely ended: a child that already exited and was reaped.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  const fs::path stale = dir_ / "tmp" / ("hone-pkg-" + std::to_string(child) + "-abcdef");
  fs::create_directories(stale / "block_0");
  spit(stale / "block_0" / "model.so", "left by a kill -9");
  fs::copy_file(base_dir() / "ref.hone", dir_ / "p.hone");
  const Ran r = hone("infer p.hone --random-inputs 1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(stale));
  expect_no_leftovers();
}

}  // namespace
}  // namespace hone_hostile_test
