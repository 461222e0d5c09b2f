// SentHistory (control/sent_history.hpp), the (time, cumulative bytes)
// samples behind a VM-pair's in-flight count: hand-computed answers of
// bytes_sent_by for none, some and all of the samples, the granularity
// merging samples, the ring dropping its oldest when full, a record after
// every sample was taken; and 100K random
// records and queries against a plain list of every sample, which takes
// them one at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>

#include "control/sent_history.hpp"

namespace ufab {
namespace {

TEST(SentHistory, BytesSentByTakesTheNewestSampleAtOrBeforeT) {
  SentHistory h(10);  // one sample per 10 ns
  EXPECT_EQ(h.bytes_sent_by(5), 0u);  // nothing recorded
  h.record(100, 1000);
  h.record(105, 1500);  // same bucket as 100: the count moves, the time stays
  h.record(110, 2000);
  h.record(130, 3000);
  h.record(160, 4000);
  EXPECT_EQ(h.oldest_time(), 100);
  EXPECT_EQ(h.bytes_sent_by(99), 0u);     // before every sample: none taken
  EXPECT_EQ(h.oldest_time(), 100);
  EXPECT_EQ(h.bytes_sent_by(100), 1500u);  // the first sample, with its merged count
  EXPECT_EQ(h.oldest_time(), 110);
  EXPECT_EQ(h.bytes_sent_by(135), 3000u);  // two at once (110, 130); 160 stays
  EXPECT_EQ(h.oldest_time(), 160);
  EXPECT_EQ(h.bytes_sent_by(150), 3000u);  // nothing new: the last answer
  EXPECT_EQ(h.bytes_sent_by(1000), 4000u);  // the rest
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.bytes_sent_by(2000), 4000u);
}

TEST(SentHistory, AFullRingDropsItsOldestAndASearchFindsTheMiddle) {
  SentHistory h(1);
  // 70 samples at t = 10, 20, ..., 700 with 100 bytes each: the first 6 fall out.
  for (uint64_t i = 1; i <= 70; ++i) h.record(static_cast<Nanos>(10 * i), 100 * i);
  EXPECT_EQ(h.oldest_time(), 70);
  EXPECT_EQ(h.bytes_sent_by(65), 0u);  // the dropped ones are not answered
  // t = 333: samples 70..330 are at or before it (27 of them), the newest 3300 B.
  EXPECT_EQ(h.bytes_sent_by(333), 3300u);
  EXPECT_EQ(h.oldest_time(), 340);
  EXPECT_EQ(h.bytes_sent_by(690), 6900u);
  EXPECT_EQ(h.oldest_time(), 700);
  h.record(710, 7100);  // the ring wrapped: records still append after the oldest
  EXPECT_EQ(h.bytes_sent_by(705), 7000u);
  EXPECT_EQ(h.bytes_sent_by(710), 7100u);
  EXPECT_TRUE(h.empty());
}

// record() finds the newest sample's bucket from the header (the time it
// keeps beside the ring): once bytes_sent_by has taken every sample, a
// record in the bucket of the last one taken starts a sample of its own.
TEST(SentHistory, ARecordAfterEverySampleWasTakenStartsANewOne) {
  SentHistory h(10);
  h.record(100, 1000);
  EXPECT_EQ(h.bytes_sent_by(100), 1000u);
  EXPECT_TRUE(h.empty());
  h.record(104, 1200);  // the bucket of 100, but that sample is gone
  EXPECT_FALSE(h.empty());
  EXPECT_EQ(h.oldest_time(), 104);
  EXPECT_EQ(h.bytes_sent_by(103), 1000u);  // not yet: the last answer
  h.record(109, 1300);  // the bucket of 104: merged
  h.record(114, 1400);  // a new bucket
  EXPECT_EQ(h.bytes_sent_by(110), 1300u);
  EXPECT_EQ(h.oldest_time(), 114);
  EXPECT_EQ(h.bytes_sent_by(114), 1400u);
}

TEST(SentHistory, MatchesAListOfEverySampleTakenOneAtATime) {
  struct Sample {
    Nanos t;
    uint64_t bytes;
  };
  std::mt19937_64 rng(7);
  SentHistory h(4);
  std::deque<Sample> model;
  uint64_t floor = 0, bytes = 0;
  Nanos now = 0, mark = 0;
  for (int i = 0; i < 100000; ++i) {
    if (rng() % 3 != 0) {  // a send
      now += rng() % 12;
      bytes += 1 + rng() % 1500;
      h.record(now, bytes);
      if (!model.empty() && now < model.back().t + 4) {
        model.back().bytes = bytes;
      } else {
        if (model.size() == SentHistory::kSlots) model.pop_front();
        model.push_back({now, bytes});
      }
    } else {  // a query, t not decreasing, sometimes past every sample
      mark = std::max(mark, now > 300 ? now - static_cast<Nanos>(rng() % 300) : 0);
      while (!model.empty() && model.front().t <= mark) {
        floor = model.front().bytes;
        model.pop_front();
      }
      ASSERT_EQ(h.bytes_sent_by(mark), floor) << "query " << i << " at " << mark;
      ASSERT_EQ(h.empty(), model.empty());
      if (!model.empty()) {
        ASSERT_EQ(h.oldest_time(), model.front().t);
      }
    }
  }
}

}  // namespace
}  // namespace ufab
