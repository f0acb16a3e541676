// A C++ program using an installed hone: tune an ONNX model on random samples
// at two batch sizes, save the package, load it back and check the loaded
// model gives the same outputs as the tuned one.
//
//   consumer MODEL.onnx OUT.hone
#include <cstdio>
#include <random>
#include <vector>

#include <hone/onnx.h>
#include <hone/package.h>
#include <hone/random_samples.h>
#include <hone/tune.h>

namespace {

hone::Result<int> run(const char* model_path, const char* package_path) {
  HONE_TRY(hone::Graph graph, hone::onnx::load_model(model_path));
  std::vector<int64_t> batch_sizes = {1, 4};
  HONE_TRY(std::vector<hone::Sample> samples, hone::random_samples(graph, {}, batch_sizes, 7));
  hone::TuneOptions options;
  options.batch_sizes = batch_sizes;
  options.threads = 1;
  options.use_cache = false;
  HONE_TRY(hone::TunedModel tuned, hone::tune(graph, samples, hone::MaxThroughput(), options));
  std::printf("tuned %s: chose %s\n", graph.name().c_str(), tuned.decision().backend.c_str());
  HONE_CHECK_OK(hone::save(tuned, package_path));
  HONE_TRY(hone::TunedModel loaded, hone::load(package_path));
  for (const hone::Sample& s : samples) {
    HONE_TRY(hone::SampleValue a, tuned.infer(s));
    HONE_TRY(hone::SampleValue b, loaded.infer(s));
    const auto la = a.leaves(), lb = b.leaves();
    if (la.size() != lb.size()) return 1;
    for (size_t i = 0; i < la.size(); ++i) {
      if (!la[i].second->tensor().bitwise_equal(lb[i].second->tensor())) {
        std::fprintf(stderr, "output '%s' differs after load\n", la[i].first.c_str());
        return 1;
      }
      const hone::Graph& g = loaded.graph();
      std::printf("output '%s': %s\n", g.value(g.outputs()[i]).name.c_str(),
                  lb[i].second->tensor().describe().c_str());
    }
  }
  std::printf("saved %s, loaded it, outputs match\n", package_path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: consumer MODEL.onnx OUT.hone\n");
    return 2;
  }
  auto r = run(argv[1], argv[2]);
  if (!r) {
    std::fprintf(stderr, "error: %s\n", r.error().to_string().c_str());
    return 1;
  }
  return *r;
}
