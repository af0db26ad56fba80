// SPDX-License-Identifier: Apache-2.0
// A coverage-blind mutation fuzzer that drives the libFuzzer targets of this folder without clang:
// it runs every seed of a corpus, then, for a given time, inputs made from random seeds by random
// byte edits (flips, interesting bytes, inserted, deleted and repeated runs, truncation, splices
// with another seed, long digit runs in numbers). CI builds it with g++ under ASan and UBSan (the
// sanitizer pass), so that every target gets a short fuzz run on every CI machine; the
// coverage-guided libFuzzer build (VN_FUZZ, clang) is for the longer runs of scripts/fuzz.sh.
//
// Usage: mutate_<target> SECONDS CORPUS_DIR [SEED]. An input that trips a sanitizer is written to
// the standard error as hex before the report, so that the failing case can be replayed.
#include <sanitizer/common_interface_defs.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

const std::string* g_current = nullptr;

void dump_current() {
  if (!g_current) return;
  std::fprintf(stderr, "\nmutate: the input that failed (%zu bytes, hex):\n", g_current->size());
  for (unsigned char c : *g_current) std::fprintf(stderr, "%02x", c);
  std::fprintf(stderr, "\n");
}

void run(const std::string& input) {
  g_current = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  g_current = nullptr;
}

// One random edit of `s`.
void mutate(std::string& s, std::mt19937_64& rng, const std::vector<std::string>& corpus) {
  static const unsigned char kInteresting[] = {0, 1, 0x7f, 0x80, 0xff, '0', '9', '-', '.', 'e', '"', '{', '}',
                                               '[', ']', ',', ':', '\\', '\n'};
  const auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  switch (rng() % 9) {
    case 0:
      if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << (rng() % 8));
      break;
    case 1:
      if (!s.empty()) s[pick(s.size())] = static_cast<char>(kInteresting[pick(sizeof(kInteresting))]);
      break;
    case 2: {
      std::string run(1 + pick(16), '\0');
      for (char& c : run) c = static_cast<char>(rng());
      s.insert(pick(s.size() + 1), run);
      break;
    }
    case 3:
      if (!s.empty()) {
        const size_t at = pick(s.size());
        s.erase(at, 1 + pick(std::min<size_t>(s.size() - at, 64)));
      }
      break;
    case 4:
      if (!s.empty()) {
        const size_t at = pick(s.size()), len = 1 + pick(std::min<size_t>(s.size() - at, 64));
        s.insert(pick(s.size() + 1), s.substr(at, len));
      }
      break;
    case 5:
      s.resize(pick(s.size() + 1));
      break;
    case 6: {
      const std::string& other = corpus[pick(corpus.size())];
      s = s.substr(0, pick(s.size() + 1)) + other.substr(pick(other.size() + 1));
      break;
    }
    case 7: {
      // A number grown past any sane size: declared dimensions and counts.
      const size_t at = s.find_first_of("0123456789", pick(s.size() + 1));
      if (at != std::string::npos) s.insert(at, rng() % 2 ? "99999999999" : "-1");
      break;
    }
    default:
      for (int i = 0; i < 4 && !s.empty(); ++i) s[pick(s.size())] = static_cast<char>(rng());
      break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SECONDS CORPUS_DIR [SEED]\n", argv[0]);
    return 2;
  }
  const double seconds = std::atof(argv[1]);
  const uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : std::random_device{}();
  std::vector<std::string> corpus;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(argv[2], ec)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (ec || corpus.empty()) {
    std::fprintf(stderr, "%s: no seeds in %s\n", argv[0], argv[2]);
    return 2;
  }
  __sanitizer_set_death_callback(dump_current);
  for (const std::string& input : corpus) run(input);
  std::mt19937_64 rng(seed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  long mutated = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::string input = corpus[static_cast<size_t>(rng() % corpus.size())];
    for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0; --edits) mutate(input, rng, corpus);
    run(input);
    ++mutated;
  }
  std::printf("%s: %zu seed(s) and %ld mutated input(s) in %.1f s, none failed (seed %llu)\n", argv[0], corpus.size(),
              mutated, seconds, static_cast<unsigned long long>(seed));
  return 0;
}
