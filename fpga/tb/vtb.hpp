// A clocked Verilator model under a GoogleTest harness: one object per test,
// its own VerilatedContext, a rising edge per tick(). Shared by the FPGA
// testbenches (fpga/tb/test_*.cpp).
#pragma once

#include <cstdint>
#include <memory>

#include "verilated.h"

namespace ufab::fpga {

template <typename Model>
class Clocked {
 public:
  Clocked() : ctx_(std::make_unique<VerilatedContext>()), m_(std::make_unique<Model>(ctx_.get())) {
    m_->clk = 0;
    if constexpr (requires { m_->rst; }) m_->rst = 1;
    m_->eval();
  }
  ~Clocked() { m_->final(); }
  Clocked(const Clocked&) = delete;
  Clocked& operator=(const Clocked&) = delete;

  Model* operator->() { return m_.get(); }
  Model& dut() { return *m_; }

  // One clock period: inputs set before tick() are sampled at its rising edge.
  void tick() {
    m_->clk = 0;
    m_->eval();
    ctx_->timeInc(1);
    m_->clk = 1;
    m_->eval();
    ctx_->timeInc(1);
    ++cycles_;
  }
  void reset(int cycles = 2)
    requires requires(Model m) { m.rst; }
  {
    m_->rst = 1;
    for (int i = 0; i < cycles; ++i) tick();
    m_->rst = 0;
    m_->eval();
  }
  uint64_t cycles() const { return cycles_; }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Model> m_;
  uint64_t cycles_ = 0;
};

}  // namespace ufab::fpga
