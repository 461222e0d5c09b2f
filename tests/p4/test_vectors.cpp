// The committed P4 conformance vectors (tests/p4/vectors/<case>/) are what
// the reference model produces today, byte for byte, and each one replays:
// state_in + in.pcap through a fresh SwitchModel gives out.pcap and state_out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "tests/p4/vector_cases.hpp"

namespace ufab::p4vec {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = UFAB_P4_VECTORS_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  EXPECT_TRUE(f.good()) << p;
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(P4Vectors, CommittedFilesEqualRegeneratedOnes) {
  const auto all = make_all_vectors();
  std::set<std::string> names;
  for (const auto& v : all) {
    names.insert(v.name);
    for (size_t i = 0; i < std::size(kVectorFileNames); ++i)
      EXPECT_TRUE(slurp(kDir / v.name / kVectorFileNames[i]) == file_bytes(v, i))
          << v.name << "/" << kVectorFileNames[i] << " differs from the model: rerun ufab-p4-vectors "
          << kDir.string() << " if the change is intended";
  }
  std::set<std::string> committed;
  for (const auto& e : fs::directory_iterator(kDir))
    if (e.is_directory()) committed.insert(e.path().filename().string());
  EXPECT_EQ(committed, names);
}

TEST(P4Vectors, EveryRequiredCaseIsPresent) {
  for (const char* c : {"first_probe", "window_change", "token_change", "finish_ack", "aging", "bank_collision",
                        "max_hops", "malformed", "non_ufab", "query_probe", "failure_notice", "tx_rate"})
    EXPECT_TRUE(fs::is_regular_file(kDir / c / "case.json")) << c;
}

class Replay : public ::testing::TestWithParam<std::string> {};

TEST_P(Replay, CommittedInputGivesCommittedOutputAndState) {
  const fs::path d = kDir / GetParam();
  CaseSpec spec = case_from_json(parse_json(slurp(d / "case.json")));
  const CaseSpec expected = spec;
  const auto state_in = state_from_json(parse_json(slurp(d / "state_in.json")), spec.config.slots);
  const auto in = read_pcap(slurp(d / "in.pcap"));
  const auto out = read_pcap(slurp(d / "out.pcap"));
  const auto state_out = state_from_json(parse_json(slurp(d / "state_out.json")), spec.config.slots);

  const RunResult r = run_case(spec, state_in, in);
  ASSERT_EQ(r.out.size(), out.size());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(r.out[i], out[i]) << "out packet " << i;
  EXPECT_TRUE(r.state_out == state_out);
  ASSERT_EQ(spec.events.size(), expected.events.size());
  for (size_t i = 0; i < spec.events.size(); ++i)
    EXPECT_EQ(spec.events[i].result, expected.events[i].result) << "event " << i << " (ports / drop reason)";
  // The JSON readers lose nothing: writing back gives the committed text.
  EXPECT_EQ(to_text(state_to_json(state_in, spec.config.slots)), slurp(d / "state_in.json"));
  EXPECT_EQ(to_text(case_to_json(expected)), slurp(d / "case.json"));
}

std::vector<std::string> committed_cases() {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(kDir))
    if (e.is_directory()) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}
INSTANTIATE_TEST_SUITE_P(Committed, Replay, ::testing::ValuesIn(committed_cases()),
                         [](const auto& info) { return info.param; });

TEST(P4VectorIo, PcapRoundTripKeepsNanosecondsAndBytes) {
  const std::vector<Packet> p{{1'234'567'891, {1, 2, 3}}, {20 * kSec + 7, std::vector<uint8_t>(1500, 0xee)}};
  EXPECT_EQ(read_pcap(write_pcap(p)), p);
  EXPECT_THROW(read_pcap("not a pcap"), std::runtime_error);
}

TEST(P4VectorIo, JsonRejectsMalformedText) {
  EXPECT_THROW(parse_json("{\"a\": }"), std::runtime_error);
  EXPECT_THROW(parse_json("[1, 2"), std::runtime_error);
  EXPECT_THROW(parse_json("{} x"), std::runtime_error);
  EXPECT_EQ(to_text(parse_json("{\"b\": 1, \"a\": [1, true, \"x\"]}")),
            "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    true,\n    \"x\"\n  ]\n}\n");
  EXPECT_EQ(ip_from_text("10.0.9.1"), 0x0a000901u);
  EXPECT_THROW(ip_from_text("10.0.9"), std::runtime_error);
  EXPECT_THROW(ip_from_text("10.0.9.256"), std::runtime_error);
}

TEST(P4VectorIo, JsonReadersCheckTypesAndRanges) {
  const Json good = parse_json(slurp(kDir / "first_probe" / "case.json"));
  EXPECT_NO_THROW(case_from_json(good));
  const auto with_n_ports = [&](const char* value) {
    Json j = good;
    j["config"]["n_ports"] = parse_json(value);
    return j;
  };
  EXPECT_THROW(case_from_json(with_n_ports("99999999999999999999999")), std::runtime_error);
  EXPECT_THROW(case_from_json(with_n_ports("70000")), std::runtime_error);  // > uint16_t
  EXPECT_THROW(case_from_json(with_n_ports("-1")), std::runtime_error);
  EXPECT_THROW(case_from_json(with_n_ports("8.0")), std::runtime_error);
  EXPECT_THROW(case_from_json(with_n_ports("true")), std::runtime_error);
  Json bad_kind = good;
  bad_kind["events"][0]["kind"] = "teleport";
  EXPECT_THROW(case_from_json(bad_kind), std::runtime_error);
  Json missing = good;
  missing.erase("what");
  EXPECT_THROW(case_from_json(missing), nlohmann::json::out_of_range);
}

}  // namespace
}  // namespace ufab::p4vec
