// ufab_ctx_table (fpga/rtl/ufab_ctx_table.v): random writes and reads against
// a std::vector; registered read (1 cycle), read-during-write returns the old
// word. 64 entries x 88 bits (token 16, window 32, path 8, in flight 32).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "Vufab_ctx_table.h"
#include "fpga/tb/vtb.hpp"

namespace {

using Word = std::array<uint32_t, 3>;  // 88 bits in three 32-bit words

TEST(UfabCtxTable, RandomUpdatesMatchModel) {
  ufab::fpga::Clocked<Vufab_ctx_table> d;
  std::vector<Word> model(64, Word{0, 0, 0});
  std::mt19937 rng(5);
  // initialise every entry
  for (uint32_t a = 0; a < 64; ++a) {
    d->wr_en = 1;
    d->wr_addr = a;
    for (int i = 0; i < 3; ++i) d->wr_data[i] = 0;
    d.tick();
  }
  for (int i = 0; i < 20000; ++i) {
    const uint32_t wa = rng() % 64, ra = rng() % 64;
    const bool we = rng() % 2;
    Word w{static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng() & 0xFFFFFF)};
    d->wr_en = we;
    d->wr_addr = wa;
    for (int k = 0; k < 3; ++k) d->wr_data[k] = w[k];
    d->rd_en = 1;
    d->rd_addr = ra;
    const Word expect = model[ra];  // old word even if written this cycle
    d.tick();
    if (we) model[wa] = w;
    for (int k = 0; k < 3; ++k) ASSERT_EQ(d->rd_data[k], expect[k]) << "read " << ra << " at " << i;
  }
  // rd_en low holds the output
  d->wr_en = 0;
  d->rd_en = 0;
  const uint32_t held = d->rd_data[0];
  d->rd_addr = 3;
  d.tick();
  EXPECT_EQ(d->rd_data[0], held);
}

}  // namespace
