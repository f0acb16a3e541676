#include "hone/signing.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <system_error>

#include "hone/file_io.h"
#include "hone/read_file.h"
#include "hone/sha256.h"
#include "package/signature.h"

namespace hone {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Signed: this prefix, then the checksums.json bytes. The prefix keeps a
// signature over a package from meaning anything in another protocol.
constexpr std::string_view kSignedPrefix = "hone-package-signature-v1\n";
constexpr const char* kSignatureFormat = "hone-signature";
constexpr uint64_t kMaxKeyFileBytes = 64 * 1024;

using PKey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Bio = std::unique_ptr<BIO, decltype(&BIO_free)>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

std::string to_hex(const unsigned char* p, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * n, '\0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[p[i] >> 4];
    out[2 * i + 1] = kHex[p[i] & 0xf];
  }
  return out;
}

bool from_hex(const std::string& hex, std::vector<unsigned char>& out) {
  if (hex.size() % 2 != 0) return false;
  out.clear();
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nib(hex[i]), lo = nib(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<unsigned char>(hi * 16 + lo));
  }
  return true;
}

Result<std::string> raw_public_key(EVP_PKEY* key) {
  unsigned char raw[64];
  size_t len = sizeof raw;
  if (EVP_PKEY_get_raw_public_key(key, raw, &len) != 1 || len != 32)
    return fail(ErrorCode::kInternal, "cannot read the Ed25519 public key");
  return std::string(reinterpret_cast<const char*>(raw), len);
}

std::string key_id(const std::string& raw_public) {
  return sha256_hex(raw_public).substr(0, 16);
}

Result<std::string> read_key_file(const fs::path& file) {
  HONE_TRY(auto bytes, read_regular_file(file, kMaxKeyFileBytes));
  return std::string(bytes.begin(), bytes.end());
}

Result<PKey> load_private_key(const fs::path& file) {
  HONE_TRY(std::string pem, read_key_file(file));
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  PKey key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr,
           EVP_PKEY_free);
  if (!key || EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519)
    return fail(ErrorCode::kInvalidArgument,
                "'" + file.string() +
                    "' is not an Ed25519 private key in PEM (make one with "
                    "`hone keygen`)");
  return key;
}

/// The raw public key in a public-key PEM file.
Result<std::string> load_public_key(const fs::path& file) {
  HONE_TRY(std::string pem, read_key_file(file));
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  PKey key(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr,
           EVP_PKEY_free);
  if (!key || EVP_PKEY_id(key.get()) != EVP_PKEY_ED25519)
    return fail(ErrorCode::kInvalidArgument,
                "'" + file.string() +
                    "' is not an Ed25519 public key in PEM (the .pub file "
                    "`hone keygen` writes)");
  return raw_public_key(key.get());
}

/// Writes `text` to a new file of mode `mode`; refuses to overwrite.
Result<void> write_new_file(const fs::path& file, const std::string& text, mode_t mode) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    return fail(ErrorCode::kIo, "cannot create '" + file.string() + "': " + std::strerror(errno) +
                                    (errno == EEXIST ? " (keys are never overwritten)" : ""));
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      ::unlink(file.c_str());
      return fail(ErrorCode::kIo, "cannot write '" + file.string() + "'");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(file.c_str());
    return fail(ErrorCode::kIo, "cannot write '" + file.string() + "'");
  }
  return {};
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

}  // namespace

namespace package {

bool is_native_code(std::string_view bytes) {
  return bytes.size() >= 4 && bytes.substr(0, 4) == std::string_view(
                                                        "\x7f"
                                                        "ELF",
                                                        4);
}

Result<SignatureStatus> verify_signature(const ArchiveContents& contents,
                                         const std::vector<fs::path>& trusted_keys) {
  SignatureStatus st;
  if (!contents.signature) return st;
  const json doc = json::parse(*contents.signature, nullptr, false);
  auto bad = [](const std::string& what) {
    return fail(ErrorCode::kCorrupt, "signature.json " + what);
  };
  if (doc.is_discarded() || !doc.is_object()) return bad("is not a JSON object");
  for (const char* key : {"format", "algorithm", "public_key", "signature"})
    if (!doc.contains(key) || !doc[key].is_string())
      return bad(std::string("lacks the string field '") + key + "'");
  if (doc["format"] != kSignatureFormat) return bad("is not a hone signature");
  if (doc["algorithm"] != "ed25519")
    return bad("uses algorithm '" + doc["algorithm"].get<std::string>() + "'; hone uses ed25519");
  std::vector<unsigned char> pub, sig;
  if (!from_hex(doc["public_key"].get<std::string>(), pub) || pub.size() != 32)
    return bad("has a malformed public_key");
  if (!from_hex(doc["signature"].get<std::string>(), sig) || sig.size() != 64)
    return bad("has a malformed signature");
  PKey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, pub.data(), pub.size()),
           EVP_PKEY_free);
  if (!key) return bad("has a public key OpenSSL refuses");
  const std::string message = std::string(kSignedPrefix) + contents.checksums;
  MdCtx ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestVerify(ctx.get(), sig.data(), sig.size(),
                       reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1)
    return fail(ErrorCode::kCorrupt,
                "the package's signature does not verify: it was altered after it was signed");
  const std::string raw(reinterpret_cast<const char*>(pub.data()), pub.size());
  st.is_signed = true;
  st.key_id = key_id(raw);
  for (const fs::path& f : trusted_keys) {
    HONE_TRY(std::string trusted, load_public_key(f));
    if (trusted == raw) {
      st.trusted = true;
      st.trusted_by = f.string();
      break;
    }
  }
  return st;
}

}  // namespace package

Result<std::string> generate_signing_key(const fs::path& private_key) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
      EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr), EVP_PKEY_CTX_free);
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 || EVP_PKEY_keygen(ctx.get(), &raw) != 1)
    return fail(ErrorCode::kInternal, "OpenSSL cannot generate an Ed25519 key");
  PKey key(raw, EVP_PKEY_free);
  Bio priv(BIO_new(BIO_s_mem()), BIO_free), pub(BIO_new(BIO_s_mem()), BIO_free);
  if (!priv || !pub ||
      PEM_write_bio_PrivateKey(priv.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
      PEM_write_bio_PUBKEY(pub.get(), key.get()) != 1)
    return fail(ErrorCode::kInternal, "OpenSSL cannot write the key as PEM");
  const fs::path pub_file = private_key.string() + ".pub";
  std::error_code ec;
  if (fs::exists(pub_file, ec))
    return fail(ErrorCode::kIo, "'" + pub_file.string() + "' exists (keys are never overwritten)");
  HONE_CHECK_OK(write_new_file(private_key, bio_text(priv.get()), 0600));
  if (auto w = write_new_file(pub_file, bio_text(pub.get()), 0644); !w) {
    ::unlink(private_key.c_str());
    return fail(w.error());
  }
  HONE_TRY(std::string raw_pub, raw_public_key(key.get()));
  return key_id(raw_pub);
}

Result<std::string> sign_package(const fs::path& package, const fs::path& private_key) {
  const std::string where = "while signing '" + package.string() + "'";
  HONE_TRY(PKey key, load_private_key(private_key));
  auto contents = package::read_archive_contents(package);
  if (!contents) return fail(std::move(contents).error().add_context(where));
  const std::string message = std::string(kSignedPrefix) + contents->checksums;
  unsigned char sig[64];
  size_t sig_len = sizeof sig;
  MdCtx ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig, &sig_len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 1)
    return fail(Error(ErrorCode::kInternal, "OpenSSL cannot sign").add_context(where));
  HONE_TRY(std::string raw_pub, raw_public_key(key.get()));
  const json doc = {{"format", kSignatureFormat},
                    {"algorithm", "ed25519"},
                    {"signed", "hone-package-signature-v1 + checksums.json"},
                    {"public_key", to_hex(reinterpret_cast<const unsigned char*>(raw_pub.data()),
                                          raw_pub.size())},
                    {"signature", to_hex(sig, sig_len)}};
  // write_archive recomputes checksums.json from the entries: the same
  // entries give the same text, which is what was signed.
  if (package::checksums_text(contents->entries) != contents->checksums)
    return fail(Error(ErrorCode::kUnsupported,
                      "the package's checksums.json is not in the form this hone writes; save "
                      "it again with this hone before signing")
                    .add_context(where));
  HONE_CHECK_OK_CTX(
      package::write_archive(package, std::move(contents->entries), doc.dump(2) + "\n"), where);
  return key_id(raw_pub);
}

std::vector<fs::path> trusted_key_files(const std::vector<fs::path>& explicit_keys) {
  std::vector<fs::path> out = explicit_keys;
  fs::path dir;
  if (const char* d = std::getenv("HONE_TRUSTED_KEYS"); d != nullptr && *d != '\0')
    dir = d;
  else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0')
    dir = fs::path(h) / ".config" / "hone" / "trusted-keys";
  std::error_code ec;
  std::vector<fs::path> found;
  if (!dir.empty())
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".pub") found.push_back(it->path());
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
  return out;
}

Result<SignatureStatus> check_package_signature(const fs::path& package,
                                                const std::vector<fs::path>& trusted_keys) {
  const std::string where = "while checking the signature of '" + package.string() + "'";
  auto contents = package::read_archive_contents(package);
  if (!contents) return fail(std::move(contents).error().add_context(where));
  auto st = package::verify_signature(*contents, trusted_keys);
  if (!st) return fail(std::move(st).error().add_context(where));
  return st;
}

}  // namespace hone
