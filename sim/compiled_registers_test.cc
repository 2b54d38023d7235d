// CompiledRegisterTable and the fit engine with a compiler's registers in place of the graph's
// estimate: one behaviour per test on the shipped Triton matmul graph on the H200.
#include "sim/compiled_registers.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "sim/engine.h"
#include "sim/test_util.h"

namespace scratchsim {
namespace {

class CompiledRegistersTest : public ::testing::Test {
 protected:
  CompiledConfig* Add(const std::vector<std::string>& sets, int registers, int64_t spill_bytes = 0) {
    CompiledConfig* c = compiled_.add_configs();
    for (const std::string& s : sets) c->add_sets(s);
    c->set_registers(registers);
    c->set_spill_bytes(spill_bytes);
    return c;
  }
  absl::StatusOr<CompiledRegisterTable> Build() {
    return CompiledRegisterTable::Build(graph_, device_, compiled_, "ptxas.textproto");
  }
  // The table of compiled_ is refused with a message containing `message`.
  void ExpectRefused(const std::string& message) {
    auto table = Build();
    ASSERT_FALSE(table.ok());
    EXPECT_TRUE(absl::StrContains(table.status().message(), message)) << table.status();
  }
  // The engine's verdict on `sets` (the tile, a shape) with the table built from compiled_, or
  // with the graph's estimate alone.
  FitResult Evaluate(const std::vector<std::string>& sets, bool with_table = true) {
    EngineOptions options;
    options.spills_fatal = true;
    if (with_table) {
      auto table = Build();
      EXPECT_TRUE(table.ok()) << table.status();
      options.compiled_registers = std::make_shared<const CompiledRegisterTable>(*std::move(table));
    }
    auto engine = FitEngine::Create(graph_, device_, options);
    EXPECT_TRUE(engine.ok()) << engine.status();
    auto values = BindParameters(graph_, sets);
    EXPECT_TRUE(values.ok()) << values.status();
    FitEngine::Scratch scratch;
    FitResult fit;
    absl::Status status = engine->Evaluate(*values, scratch, &fit);
    EXPECT_TRUE(status.ok()) << status;
    return fit;
  }
  std::vector<std::string> WithShape(std::vector<std::string> sets) {
    for (const char* s : {"M=4096", "N=4096", "K=4096"}) sets.push_back(s);
    return sets;
  }

  CompiledGraph graph_ = testing::CompileExampleGraph("triton_matmul.pbtxt");
  DeviceModel device_ = testing::ShippedDevice("h200");
  CompiledRegisters compiled_ = [] {
    CompiledRegisters c;
    c.set_graph("triton_matmul");
    c.set_target("sm_90");
    c.set_compiler("Triton 3.6.0");
    return c;
  }();
  // f32 32 x 256 x 32, 3 stages, 4 warps: ptxas allocates 167 registers (the H200 sweeps'
  // compiles, tests/data/planner/h200-heldout12-2026-11-30).
  const std::vector<std::string> tile_ = {"BLOCK_M=32", "BLOCK_N=256", "BLOCK_K=32", "NUM_STAGES=3",
                                          "NUM_WARPS=4", "ELT=4"};
};

TEST_F(CompiledRegistersTest, AConfigurationItCompiledHasTheCompilersRegisters) {
  Add(tile_, 167);
  const FitResult fit = Evaluate(WithShape(tile_));
  EXPECT_TRUE(fit.registers_compiled);
  EXPECT_EQ(fit.register_demand, 167);
  EXPECT_EQ(fit.registers_allocated, 167);
}

TEST_F(CompiledRegistersTest, OneItDidNotCompileKeepsTheGraphsEstimate) {
  Add(tile_, 167);
  std::vector<std::string> other = tile_;
  other[3] = "NUM_STAGES=4";
  const FitResult with = Evaluate(WithShape(other));
  const FitResult without = Evaluate(WithShape(other), /*with_table=*/false);
  EXPECT_FALSE(with.registers_compiled);
  EXPECT_EQ(with.register_demand, without.register_demand);
}

TEST_F(CompiledRegistersTest, TheCompilersRegistersSetTheBlocksACoreHolds) {
  // 167 registers x 128 threads: 3 blocks of the 65,536-register file; 255 allow 2.
  Add(tile_, 255);
  EXPECT_EQ(Evaluate(WithShape(tile_)).blocks_per_core(), 2);
  compiled_.mutable_configs(0)->set_registers(167);
  EXPECT_EQ(Evaluate(WithShape(tile_)).blocks_per_core(), 3);
}

TEST_F(CompiledRegistersTest, SpillStoresBreakTheRegisterBudget) {
  Add(tile_, 255, 24);
  const FitResult fit = Evaluate(WithShape(tile_));
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.limit, Limit::kRegisterSpill);
  EXPECT_EQ(fit.register_demand, 261);  // 255 and a register for each 4 bytes spilled
}

TEST_F(CompiledRegistersTest, TheShapeIsNotPartOfTheKey) {
  Add(tile_, 167);
  std::vector<std::string> sets = tile_;
  for (const char* s : {"M=64", "N=28672", "K=8192"}) sets.push_back(s);
  EXPECT_TRUE(Evaluate(sets).registers_compiled);
}

TEST_F(CompiledRegistersTest, AProblemTheCompilesAssumedHasTheCompilersRegisters) {
  Add(tile_, 167);
  compiled_.add_compiled_where("N % 16 == 0");
  const FitResult fit = Evaluate(WithShape(tile_));
  EXPECT_TRUE(fit.registers_compiled);
  EXPECT_FALSE(fit.registers_for_other_problems);
}

TEST_F(CompiledRegistersTest, AProblemTheCompilesDidNotAssumeKeepsTheGraphsEstimate) {
  // Triton's JIT compiles another kernel for an N that 16 does not divide (B element by element).
  Add(tile_, 167);
  compiled_.add_compiled_where("N % 16 == 0");
  std::vector<std::string> sets = tile_;
  for (const char* s : {"M=16", "N=49155", "K=4096"}) sets.push_back(s);
  const FitResult with = Evaluate(sets);
  const FitResult without = Evaluate(sets, /*with_table=*/false);
  EXPECT_FALSE(with.registers_compiled);
  EXPECT_TRUE(with.registers_for_other_problems);
  EXPECT_EQ(with.register_demand, without.register_demand);
}

TEST_F(CompiledRegistersTest, AnAssumptionNotOverTheGraphsParametersIsAnErrorNamingIt) {
  Add(tile_, 167);
  compiled_.add_compiled_where("N % 16 == 0");
  compiled_.add_compiled_where("stride_bk % 16 == 0");
  ExpectRefused("ptxas.textproto: compiled_where[1]: 'stride_bk % 16 == 0'");
}

TEST_F(CompiledRegistersTest, AnotherTargetsFiguresAreAnErrorNamingIt) {
  Add(tile_, 167);
  compiled_.set_target("sm_80");
  ExpectRefused("ptxas.textproto: target: 'sm_80'");
}

TEST_F(CompiledRegistersTest, AnotherGraphsFiguresAreAnError) {
  Add(tile_, 167);
  compiled_.set_graph("gemm");
  ExpectRefused("graph: 'gemm' is not the planned graph");
}

TEST_F(CompiledRegistersTest, RegistersOutOfRangeAreAnErrorNamingTheConfig) {
  Add(tile_, 167);
  std::vector<std::string> other = tile_;
  other[3] = "NUM_STAGES=4";
  Add(other, 300);
  ExpectRefused("configs[1].registers: 300 is outside 1..255");
}

TEST_F(CompiledRegistersTest, NegativeSpillBytesAreAnError) {
  Add(tile_, 167, -4);
  ExpectRefused("configs[0].spill_bytes: -4 is negative");
}

TEST_F(CompiledRegistersTest, AConfigurationRepeatedWithOtherFiguresIsAnError) {
  Add(tile_, 167);
  Add(tile_, 167);  // the same figures again: one entry
  EXPECT_EQ(Build()->size(), 1);
  Add(tile_, 160);
  ExpectRefused("configs[2]: repeats an earlier configuration");
}

TEST_F(CompiledRegistersTest, AnUnknownParameterIsAnErrorNamingTheSets) {
  Add({"BLOCK_Q=64"}, 167);
  ExpectRefused("configs[0].sets: 'BLOCK_Q=64'");
}

TEST_F(CompiledRegistersTest, ConfigurationsKeyedByOtherParametersAreAnError) {
  Add(tile_, 167);
  Add({"BLOCK_M=64", "BLOCK_N=128"}, 100);
  ExpectRefused("configs[1].sets: names other parameters");
}

}  // namespace
}  // namespace scratchsim
