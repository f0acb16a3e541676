// `hone keygen KEY`, `hone sign PKG --key KEY` and `hone verify PKG`: Ed25519
// keys, signing a package, and checking who signed it (see hone/signing.h).
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "cli_common.h"
#include "hone/package.h"
#include "hone/signing.h"

namespace hone::cli {
namespace {

int run_keygen(const std::string& key) {
  auto id = generate_signing_key(key);
  if (!id) return report(id.error());
  fmt::print("wrote private key {} and public key {}.pub (key id {})\n", key, key, *id);
  fmt::print(
      "trust it with --trust-key {}.pub, or copy the .pub into ~/.config/hone/trusted-keys/\n",
      key);
  return kExitOk;
}

int run_sign(const std::string& package, const std::string& key) {
  auto id = sign_package(package, key);
  if (!id) return report(id.error());
  fmt::print("signed {} with key {}\n", package, *id);
  return kExitOk;
}

int run_verify(const std::string& package) {
  std::vector<std::filesystem::path> keys(trust_options().trusted_keys.begin(),
                                          trust_options().trusted_keys.end());
  // Everything `infer` checks (manifest schema, model hash, spec, report).
  if (auto whole = package_manifest(package); !whole) return report(whole.error());
  auto st = check_package_signature(package, trusted_key_files(keys));
  if (!st) return report(st.error());
  if (!st->is_signed)
    return report(Error(
        ErrorCode::kFailedPrecondition,
        "'" + package + "' is not signed (sign it with `hone sign " + package + " --key KEY`)"));
  if (!st->trusted)
    return report(Error(ErrorCode::kFailedPrecondition,
                        "'" + package + "' is signed by key " + st->key_id +
                            ", which is not trusted (give its .pub with --trust-key)"));
  fmt::print("{}: intact, signed by key {} (trusted: {})\n", package, st->key_id, st->trusted_by);
  return kExitOk;
}

}  // namespace

void add_signing_commands(CLI::App& root, std::vector<Command>& commands) {
  auto key = std::make_shared<std::string>();
  CLI::App* keygen = root.add_subcommand(
      "keygen", "make an Ed25519 key pair for signing packages (KEY and KEY.pub)");
  keygen->add_option("key", *key, "the private key file to create")->required()->type_name("KEY");
  commands.push_back({keygen, [key] { return run_keygen(*key); }});

  auto sign_pkg = std::make_shared<std::string>();
  auto sign_key = std::make_shared<std::string>();
  CLI::App* sign = root.add_subcommand("sign", "sign a .hone package (in place)");
  sign->add_option("package", *sign_pkg, "the .hone file")->required()->type_name("PKG");
  sign->add_option("--key", *sign_key, "the private key from `hone keygen`")
      ->required()
      ->type_name("KEY");
  commands.push_back({sign, [sign_pkg, sign_key] { return run_sign(*sign_pkg, *sign_key); }});

  auto verify_pkg = std::make_shared<std::string>();
  CLI::App* verify = root.add_subcommand(
      "verify", "check a package is intact and signed by a trusted key (exit 1 if not)");
  verify->add_option("package", *verify_pkg, "the .hone file")->required()->type_name("PKG");
  commands.push_back({verify, [verify_pkg] { return run_verify(*verify_pkg); }});
}

}  // namespace hone::cli
