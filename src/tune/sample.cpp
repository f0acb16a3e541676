#include "hone/sample.h"

#include <map>
#include <memory>

#include <fmt/core.h>

#include "tune/sample_path.h"

namespace hone {
namespace tuning {

bool is_path_key(std::string_view key) {
  return !key.empty() && key.find_first_of(".[]") == std::string_view::npos;
}

std::string child_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string item_path(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::string quote_path(std::string_view path) {
  return path.empty() ? std::string("the root") : "'" + std::string(path) + "'";
}

Result<std::vector<PathSegment>> parse_path(std::string_view path) {
  std::vector<PathSegment> out;
  size_t i = 0;
  auto bad = [&](const std::string& why) {
    return fail(ErrorCode::kInvalidArgument,
                "path '" + std::string(path) + "' at offset " + std::to_string(i) + ": " + why);
  };
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string_view::npos) return bad("'[' without ']'");
      const std::string_view digits = path.substr(i + 1, close - i - 1);
      if (digits.empty() || digits.size() > 9 ||
          digits.find_first_not_of("0123456789") != std::string_view::npos)
        return bad("list index '" + std::string(digits) + "' is not a number below 10^9");
      out.push_back({true, "", static_cast<size_t>(std::stoul(std::string(digits)))});
      i = close + 1;
      continue;
    }
    // A key starts the path or follows a '.'.
    if (!out.empty()) {
      if (path[i] != '.') return bad("expected '.' or '[' after a segment");
      ++i;
    }
    const size_t end = std::min(path.find_first_of(".[]", i), path.size());
    if (end == i) return bad("empty map key");
    out.push_back({false, std::string(path.substr(i, end - i)), 0});
    i = end;
    if (i < path.size() && path[i] == ']') return bad("']' without '['");
  }
  return out;
}

}  // namespace tuning

using tuning::child_path;
using tuning::item_path;

SampleValue::SampleValue() : value_(SampleMap{}) {}
SampleValue::SampleValue(Tensor t) : value_(std::move(t)) {}
SampleValue::SampleValue(double scalar) : value_(scalar) {}
SampleValue::SampleValue(SampleMap m) : value_(std::move(m)) {}
SampleValue::SampleValue(SampleList l) : value_(std::move(l)) {}

namespace {

void collect_leaves(const SampleValue& v, const std::string& path,
                    std::vector<std::pair<std::string, const SampleValue*>>& out) {
  switch (v.kind()) {
    case SampleValue::Kind::kTensor:
    case SampleValue::Kind::kScalar:
      out.emplace_back(path, &v);
      return;
    case SampleValue::Kind::kMap:
      for (const auto& [key, child] : v.map()) collect_leaves(child, child_path(path, key), out);
      return;
    case SampleValue::Kind::kList:
      for (size_t i = 0; i < v.list().size(); ++i)
        collect_leaves(v.list()[i], item_path(path, i), out);
      return;
  }
}

void describe_into(const SampleValue& v, std::string& out) {
  switch (v.kind()) {
    case SampleValue::Kind::kTensor:
      out += v.tensor().describe();
      return;
    case SampleValue::Kind::kScalar:
      out += fmt::format("{}", v.scalar());
      return;
    case SampleValue::Kind::kMap: {
      out += "{";
      bool first = true;
      for (const auto& [key, child] : v.map()) {
        out += (first ? "" : ", ") + key + ": ";
        first = false;
        describe_into(child, out);
      }
      out += "}";
      return;
    }
    case SampleValue::Kind::kList:
      out += "[";
      for (size_t i = 0; i < v.list().size(); ++i) {
        if (i) out += ", ";
        describe_into(v.list()[i], out);
      }
      out += "]";
      return;
  }
}

Result<void> check_into(const SampleValue& v, const std::string& path) {
  switch (v.kind()) {
    case SampleValue::Kind::kTensor:
      if (!v.tensor().defined())
        return fail(ErrorCode::kInvalidArgument,
                    "sample leaf " + tuning::quote_path(path) + " is an undefined (empty) tensor");
      return {};
    case SampleValue::Kind::kScalar:
      return {};
    case SampleValue::Kind::kMap:
      for (const auto& [key, child] : v.map()) {
        if (!tuning::is_path_key(key))
          return fail(ErrorCode::kInvalidArgument,
                      "map key '" + key + "' under " + tuning::quote_path(path) +
                          " cannot be used in a path (keys must be non-empty, without '.', '[' "
                          "or ']')");
        HONE_CHECK_OK(check_into(child, child_path(path, key)));
      }
      return {};
    case SampleValue::Kind::kList:
      for (size_t i = 0; i < v.list().size(); ++i)
        HONE_CHECK_OK(check_into(v.list()[i], item_path(path, i)));
      return {};
  }
  return {};
}

// A tree under construction: each node remembers which path first decided its
// kind, so a conflict names both paths.
struct BuildNode {
  enum class Kind { kUnset, kValue, kMap, kList } kind = Kind::kUnset;
  std::string decided_by;
  SampleValue value;
  std::map<std::string, std::unique_ptr<BuildNode>> keys;
  std::map<size_t, std::unique_ptr<BuildNode>> items;
};

const char* kind_word(BuildNode::Kind k) {
  switch (k) {
    case BuildNode::Kind::kValue:
      return "a leaf";
    case BuildNode::Kind::kMap:
      return "a map";
    case BuildNode::Kind::kList:
      return "a list";
    case BuildNode::Kind::kUnset:
      break;
  }
  return "unset";
}

Result<SampleValue> finish(BuildNode& n, const std::string& path) {
  switch (n.kind) {
    case BuildNode::Kind::kUnset:
      return SampleMap{};
    case BuildNode::Kind::kValue:
      return n.value;
    case BuildNode::Kind::kMap: {
      SampleMap m;
      for (auto& [key, child] : n.keys) {
        HONE_TRY(SampleValue v, finish(*child, child_path(path, key)));
        m.emplace(key, std::move(v));
      }
      return m;
    }
    case BuildNode::Kind::kList: {
      SampleList l;
      size_t expect = 0;
      for (auto& [index, child] : n.items) {
        if (index != expect)
          return fail(ErrorCode::kInvalidArgument,
                      "list " + tuning::quote_path(path) + " has item [" + std::to_string(index) +
                          "] but no item [" + std::to_string(expect) + "]");
        HONE_TRY(SampleValue v, finish(*child, item_path(path, index)));
        l.push_back(std::move(v));
        ++expect;
      }
      return l;
    }
  }
  return SampleMap{};
}

}  // namespace

std::vector<std::pair<std::string, const SampleValue*>> SampleValue::leaves() const {
  std::vector<std::pair<std::string, const SampleValue*>> out;
  collect_leaves(*this, "", out);
  return out;
}

const SampleValue* SampleValue::find(std::string_view path) const {
  auto segments = tuning::parse_path(path);
  if (!segments) return nullptr;
  const SampleValue* at = this;
  for (const tuning::PathSegment& s : *segments) {
    if (s.is_index) {
      if (!at->is_list() || s.index >= at->list().size()) return nullptr;
      at = &at->list()[s.index];
    } else {
      if (!at->is_map()) return nullptr;
      auto it = at->map().find(s.key);
      if (it == at->map().end()) return nullptr;
      at = &it->second;
    }
  }
  return at;
}

SampleValue* SampleValue::find(std::string_view path) {
  return const_cast<SampleValue*>(std::as_const(*this).find(path));
}

std::string SampleValue::describe() const {
  std::string out;
  describe_into(*this, out);
  return out;
}

Result<void> check_sample(const SampleValue& sample) {
  return check_into(sample, "");
}

Result<void> check_path(std::string_view path) {
  HONE_TRY(auto segments, tuning::parse_path(path));
  (void)segments;
  return {};
}

Result<SampleValue> sample_from_leaves(
    const std::vector<std::pair<std::string, SampleValue>>& leaves) {
  BuildNode root;
  for (const auto& [path, value] : leaves) {
    HONE_TRY(auto segments, tuning::parse_path(path));
    BuildNode* at = &root;
    std::string walked;
    for (const tuning::PathSegment& s : segments) {
      const auto want = s.is_index ? BuildNode::Kind::kList : BuildNode::Kind::kMap;
      if (at->kind == BuildNode::Kind::kUnset) {
        at->kind = want;
        at->decided_by = path;
      } else if (at->kind != want) {
        return fail(ErrorCode::kInvalidArgument, "paths '" + at->decided_by + "' and '" + path +
                                                     "' conflict: " + tuning::quote_path(walked) +
                                                     " cannot be both " + kind_word(at->kind) +
                                                     " and " + kind_word(want));
      }
      std::unique_ptr<BuildNode>& next = s.is_index ? at->items[s.index] : at->keys[s.key];
      if (!next) next = std::make_unique<BuildNode>();
      walked = s.is_index ? item_path(walked, s.index) : child_path(walked, s.key);
      at = next.get();
    }
    if (at->kind != BuildNode::Kind::kUnset)
      return fail(ErrorCode::kInvalidArgument,
                  at->decided_by == path
                      ? "path '" + path + "' is given twice"
                      : "paths '" + at->decided_by + "' and '" + path +
                            "' conflict: " + tuning::quote_path(walked) + " cannot be both " +
                            kind_word(at->kind) + " and a leaf");
    at->kind = BuildNode::Kind::kValue;
    at->decided_by = path;
    at->value = value;
  }
  return finish(root, "");
}

}  // namespace hone
