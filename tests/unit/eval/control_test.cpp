// If, Loop and Scan reference kernels, with bodies built from test-only Add
// and Identity kernels (control_test_util.h).
#include <gtest/gtest.h>

#include "control_test_util.h"

namespace hone::eval::testing {
namespace {

using Attrs = std::map<std::string, Attribute>;

// A branch returning the constant `t`.
std::shared_ptr<const Graph> const_branch(const std::string& name, Tensor t) {
  Graph g(name);
  ValueId c = g.add_initializer(name + "_c", std::move(t));
  g.add_output(g.add_node("Identity", {c}, 1)[0]);
  return share(std::move(g));
}

Graph if_graph() {
  Graph g("if");
  ValueId cond = g.add_input("cond", DType::kBool, scalar_shape());
  Attrs attrs{{"then_branch", const_branch("then", Tensor::from<float>({2}, {1, 2}))},
              {"else_branch", const_branch("else", Tensor::from<float>({3}, {7, 8, 9}))}};
  g.add_output(g.add_node("If", {cond}, 1, attrs, "if")[0]);
  return g;
}

TEST(ControlIf, TakesTheBranchTheConditionNames) {
  Graph g = if_graph();
  auto yes = run_values(g, {RuntimeValue::of(Tensor::scalar<bool>(true))});
  ASSERT_TRUE(yes) << yes.error().to_string();
  EXPECT_EQ(values_of<float>((*yes)[0].tensor), (std::vector<float>{1, 2}));
  auto no = run_values(g, {RuntimeValue::of(Tensor::scalar<bool>(false))});
  ASSERT_TRUE(no) << no.error().to_string();
  EXPECT_EQ(values_of<float>((*no)[0].tensor), (std::vector<float>{7, 8, 9}));
}

TEST(ControlIf, RejectsAConditionWithManyElements) {
  Graph g("if");
  ValueId cond = g.add_input("cond", DType::kBool, std::nullopt);
  Attrs attrs{{"then_branch", const_branch("then", Tensor::scalar<float>(1))},
              {"else_branch", const_branch("else", Tensor::scalar<float>(2))}};
  g.add_output(g.add_node("If", {cond}, 1, attrs, "if")[0]);
  auto r = run_values(g, {RuntimeValue::of(Tensor::from<bool>({2}, {true, false}))});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("one element"), std::string::npos) << r.error().to_string();
}

TEST(ControlIf, BranchesSeeOuterNames) {
  Graph g("if");
  ValueId cond = g.add_input("cond", DType::kBool, scalar_shape());
  g.add_input("outer_x", DType::kF32, std::nullopt);
  Graph then_g("then");
  ValueId cap = then_g.add_value(declared("outer_x"));
  ValueId one = then_g.add_initializer("one", Tensor::scalar<float>(1));
  then_g.add_output(then_g.add_node("Add", {cap, one}, 1)[0]);
  Attrs attrs{{"then_branch", share(std::move(then_g))},
              {"else_branch", const_branch("else", Tensor::scalar<float>(0))}};
  g.add_output(g.add_node("If", {cond}, 1, attrs, "if")[0]);
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<bool>(true)),
                          RuntimeValue::of(Tensor::from<float>({2}, {3, 4}))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0].tensor), (std::vector<float>{4, 5}));
}

TEST(ControlIf, BranchesMayReturnSequencesAndOptionals) {
  Graph then_g("then");
  ValueId a = then_g.add_initializer("a", Tensor::scalar<float>(1));
  ValueId b = then_g.add_initializer("b", Tensor::scalar<float>(2));
  ValueId seq = then_g.add_node("SequenceConstruct", {a, b}, 1)[0];
  then_g.add_output(then_g.add_node("Optional", {seq}, 1)[0]);
  Graph else_g("else");
  else_g.add_output(
      else_g.add_node("Optional", {}, 1, {{"type", std::string("seq(tensor(float))")}})[0]);
  Graph g("if");
  ValueId cond = g.add_input("cond", DType::kBool, scalar_shape());
  g.add_output(g.add_node(
      "If", {cond}, 1,
      {{"then_branch", share(std::move(then_g))}, {"else_branch", share(std::move(else_g))}},
      "if")[0]);
  auto yes = run_values(g, {RuntimeValue::of(Tensor::scalar<bool>(true))});
  ASSERT_TRUE(yes) << yes.error().to_string();
  EXPECT_TRUE((*yes)[0].optional);
  ASSERT_TRUE((*yes)[0].is_sequence());
  EXPECT_EQ((*yes)[0].sequence.size(), 2u);
  auto no = run_values(g, {RuntimeValue::of(Tensor::scalar<bool>(false))});
  ASSERT_TRUE(no) << no.error().to_string();
  EXPECT_TRUE((*no)[0].optional);
  EXPECT_TRUE((*no)[0].is_none());
  EXPECT_EQ((*no)[0].elem_type, DType::kF32);
}

TEST(ControlIf, CapturedValueOutlivesItsLastDirectReader) {
  // `a` is read directly only by the node before If; the interpreter must not
  // free it while the branch still captures it.
  Graph g("if");
  ValueId cond = g.add_input("cond", DType::kBool, scalar_shape());
  ValueId x = g.add_input("x", DType::kF32, std::nullopt);
  ValueId a = g.add_node("Identity", {x}, 1, {}, "make_a")[0];  // named "make_a_out0"
  ValueId b = g.add_node("Identity", {a}, 1, {}, "read_a")[0];
  Graph then_g("then");
  ValueId cap = then_g.add_value(declared("make_a_out0"));
  then_g.add_output(then_g.add_node("Identity", {cap}, 1)[0]);
  ValueId y = g.add_node("If", {cond}, 1,
                         {{"then_branch", share(std::move(then_g))},
                          {"else_branch", const_branch("else", Tensor::scalar<float>(0))}},
                         "if")[0];
  g.set_outputs({b, y});
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<bool>(true)),
                          RuntimeValue::of(Tensor::scalar<float>(6))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[1].tensor.data<float>()[0], 6.0f);
}

TEST(ControlIf, RunsAfterTheProducerOfACapturedValue) {
  // The If node comes first in the node list (as a pass appending nodes could
  // leave it); its branch captures a value produced by a later node.
  Graph g("if");
  ValueId cond = g.add_input("cond", DType::kBool, scalar_shape());
  ValueId x = g.add_input("x", DType::kF32, std::nullopt);
  Graph then_g("then");
  ValueId cap = then_g.add_value(declared("late_out0"));
  then_g.add_output(then_g.add_node("Identity", {cap}, 1)[0]);
  ValueId y = g.add_node("If", {cond}, 1,
                         {{"then_branch", share(std::move(then_g))},
                          {"else_branch", const_branch("else", Tensor::scalar<float>(0))}},
                         "if")[0];
  ValueId mid = g.add_node("Identity", {x}, 1, {}, "early")[0];
  g.add_node("Identity", {mid}, 1, {}, "late");
  g.set_outputs({y});
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<bool>(true)),
                          RuntimeValue::of(Tensor::scalar<float>(4))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].tensor.data<float>()[0], 4.0f);
}

// Body: x' = x + step; scan output = x (the value before the update);
// cond' = the body's constant `keep_going`.
std::shared_ptr<const Graph> counting_body(float step, bool keep_going) {
  Graph b("body");
  b.add_input("iter", DType::kI64, scalar_shape());
  ValueId cond_in = b.add_input("cond_in", DType::kBool, scalar_shape());
  ValueId x = b.add_input("x", DType::kF32, std::nullopt);
  ValueId s = b.add_initializer("step", Tensor::scalar<float>(step));
  ValueId c = b.add_initializer("keep", Tensor::scalar<bool>(keep_going));
  (void)cond_in;
  ValueId cond_out = b.add_node("Identity", {c}, 1)[0];
  ValueId next = b.add_node("Add", {x, s}, 1)[0];
  ValueId scan = b.add_node("Identity", {x}, 1)[0];
  b.set_outputs({cond_out, next, scan});
  return share(std::move(b));
}

Graph loop_graph(bool with_m, bool with_cond, std::shared_ptr<const Graph> body) {
  Graph g("loop");
  ValueId m = with_m ? g.add_input("M", DType::kI64, scalar_shape()) : kNoValue;
  ValueId cond = with_cond ? g.add_input("cond", DType::kBool, scalar_shape()) : kNoValue;
  ValueId x = g.add_input("x", DType::kF32, std::nullopt);
  auto outs = g.add_node("Loop", {m, cond, x}, 2, {{"body", std::move(body)}}, "loop");
  g.set_outputs(outs);
  return g;
}

TEST(ControlLoop, RunsMTimesAndStacksScanOutputs) {
  Graph g =
      loop_graph(true, false, counting_body(1.0f, false));  // cond output ignored without cond
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<int64_t>(3)),
                          RuntimeValue::of(Tensor::from<float>({2}, {10, 20}))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0].tensor), (std::vector<float>{13, 23}));
  EXPECT_EQ((*r)[1].tensor.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values_of<float>((*r)[1].tensor), (std::vector<float>{10, 20, 11, 21, 12, 22}));
}

TEST(ControlLoop, StopsWhenTheBodyConditionIsFalse) {
  Graph g = loop_graph(true, true, counting_body(2.0f, false));
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<int64_t>(5)),
                          RuntimeValue::of(Tensor::scalar<bool>(true)),
                          RuntimeValue::of(Tensor::from<float>({1}, {1}))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0].tensor), (std::vector<float>{3}));  // one iteration
  EXPECT_EQ((*r)[1].tensor.shape(), (std::vector<int64_t>{1, 1}));
}

TEST(ControlLoop, FalseInitialConditionRunsZeroTimes) {
  Graph g = loop_graph(false, true, counting_body(2.0f, true));
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<bool>(false)),
                          RuntimeValue::of(Tensor::from<float>({1}, {1}))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0].tensor), (std::vector<float>{1}));
  EXPECT_EQ((*r)[1].tensor.numel(), 0);
  EXPECT_EQ((*r)[1].tensor.dim(0), 0);
}

// PyTorch's TorchScript exporter declares iteration_num [1] (tensor_split's
// Loop): such a body gets it as one element of rank 1, a scalar body a scalar.
TEST(ControlLoop, GivesTheIterationNumberTheShapeTheBodyDeclares) {
  for (const bool one_d : {true, false}) {
    Graph b("body");
    ValueId iter = b.add_input("iter", DType::kI64,
                               one_d ? std::optional<Shape>(Shape::of({1})) : scalar_shape());
    ValueId cond_in = b.add_input("cond_in", DType::kBool, scalar_shape());
    ValueId x = b.add_input("x", DType::kF32, std::nullopt);
    b.set_outputs({b.add_node("Identity", {cond_in}, 1)[0], b.add_node("Identity", {x}, 1)[0],
                   b.add_node("Identity", {iter}, 1)[0]});
    Graph g = loop_graph(true, false, share(std::move(b)));
    auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<int64_t>(3)),
                            RuntimeValue::of(Tensor::scalar<float>(1))});
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ((*r)[1].tensor.shape(),
              one_d ? (std::vector<int64_t>{3, 1}) : (std::vector<int64_t>{3}));
    EXPECT_EQ(values_of<int64_t>((*r)[1].tensor), (std::vector<int64_t>{0, 1, 2}));
  }
}

TEST(ControlLoop, ZeroTripCountKeepsTheInitialValue) {
  Graph g = loop_graph(true, false, counting_body(2.0f, true));
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<int64_t>(0)),
                          RuntimeValue::of(Tensor::from<float>({1}, {5}))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0].tensor), (std::vector<float>{5}));
  EXPECT_EQ((*r)[1].tensor.dim(0), 0);
}

TEST(ControlLoop, TripCountOnlyWithAScanOfTheIterationNumber) {
  // Inputs [M] only (cond and loop-carried values omitted at the end).
  Graph b("body");
  ValueId iter = b.add_input("iter", DType::kI64, scalar_shape());
  ValueId cond_in = b.add_input("cond_in", DType::kBool, scalar_shape());
  b.set_outputs({b.add_node("Identity", {cond_in}, 1)[0], b.add_node("Identity", {iter}, 1)[0]});
  Graph g("loop");
  ValueId m = g.add_input("M", DType::kI64, scalar_shape());
  g.set_outputs(g.add_node("Loop", {m}, 1, {{"body", share(std::move(b))}}, "loop"));
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<int64_t>(3))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].tensor.shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(values_of<int64_t>((*r)[0].tensor), (std::vector<int64_t>{0, 1, 2}));
}

TEST(ControlLoop, NeitherMNorCondIsAnError) {
  Graph g = loop_graph(false, false, counting_body(1.0f, true));
  auto r = run_values(g, {RuntimeValue::of(Tensor::from<float>({1}, {5}))});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("never stops"), std::string::npos);
}

TEST(ControlLoop, CarriesASequenceAndSeesTheIterationNumber) {
  // seq' = SequenceInsert(seq, iter); 4 iterations give [0, 1, 2, 3].
  Graph b("body");
  ValueId iter = b.add_input("iter", DType::kI64, scalar_shape());
  ValueId cond_in = b.add_input("cond_in", DType::kBool, scalar_shape());
  Value seq_decl = declared("seq", ValueKind::kSequence, DType::kI64);
  ValueId seq = b.add_value(seq_decl);
  b.set_inputs({iter, cond_in, seq});
  ValueId cond_out = b.add_node("Identity", {cond_in}, 1)[0];
  ValueId next = b.add_node("SequenceInsert", {seq, iter}, 1)[0];
  b.set_outputs({cond_out, next});

  Graph g("loop");
  ValueId m = g.add_input("M", DType::kI64, scalar_shape());
  ValueId empty = g.add_node("SequenceEmpty", {}, 1, {{"dtype", int64_t{7}}})[0];
  g.set_outputs(g.add_node("Loop", {m, kNoValue, empty}, 1, {{"body", share(std::move(b))}}));
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<int64_t>(4))});
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_TRUE((*r)[0].is_sequence());
  ASSERT_EQ((*r)[0].sequence.size(), 4u);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ((*r)[0].sequence[i].data<int64_t>()[0], i);
}

TEST(ControlLoop, ScanOutputsOfDifferentShapesAreAnError) {
  // x' = concat(x, x) doubles x every iteration, so the scan output (x)
  // changes shape between iterations and cannot be stacked.
  Graph b("body");
  b.add_input("iter", DType::kI64, scalar_shape());
  ValueId cond_in = b.add_input("cond_in", DType::kBool, scalar_shape());
  ValueId x = b.add_input("x", DType::kF32, std::nullopt);
  ValueId twice = b.add_node("SequenceConstruct", {x, x}, 1)[0];
  ValueId doubled = b.add_node("ConcatFromSequence", {twice}, 1, {{"axis", int64_t{0}}})[0];
  b.set_outputs(
      {b.add_node("Identity", {cond_in}, 1)[0], doubled, b.add_node("Identity", {x}, 1)[0]});
  Graph g = loop_graph(true, false, share(std::move(b)));
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<int64_t>(2)),
                          RuntimeValue::of(Tensor::from<float>({1}, {1}))});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("must match to be stacked"), std::string::npos)
      << r.error().to_string();
}

TEST(ControlLoop, BodyReadsOuterValuesAndCarriesOptionals) {
  // x' = x + outer_step (captured); o is an empty optional carried unchanged.
  Graph b("body");
  b.add_input("iter", DType::kI64, scalar_shape());
  ValueId cond_in = b.add_input("cond_in", DType::kBool, scalar_shape());
  ValueId x = b.add_input("x", DType::kF32, std::nullopt);
  ValueId o = b.add_value(declared("o", ValueKind::kOptional, DType::kF32));
  b.set_inputs({b.inputs()[0], cond_in, x, o});
  ValueId step = b.add_value(declared("outer_step"));
  ValueId has = b.add_node("OptionalHasElement", {o}, 1)[0];
  b.set_outputs({b.add_node("Identity", {cond_in}, 1)[0], b.add_node("Add", {x, step}, 1)[0],
                 b.add_node("Identity", {o}, 1)[0], has});

  Graph g("loop");
  ValueId m = g.add_input("M", DType::kI64, scalar_shape());
  ValueId x0 = g.add_input("x0", DType::kF32, std::nullopt);
  g.add_input("outer_step", DType::kF32, std::nullopt);
  ValueId none = g.add_node("Optional", {}, 1, {{"type", std::string("tensor(float)")}})[0];
  g.set_outputs(
      g.add_node("Loop", {m, kNoValue, x0, none}, 3, {{"body", share(std::move(b))}}, "loop"));
  auto r = run_values(
      g, {RuntimeValue::of(Tensor::scalar<int64_t>(2)), RuntimeValue::of(Tensor::scalar<float>(1)),
          RuntimeValue::of(Tensor::scalar<float>(0.5f))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].tensor.data<float>()[0], 2.0f);
  EXPECT_TRUE((*r)[1].optional);
  EXPECT_TRUE((*r)[1].is_none());
  EXPECT_EQ(values_of<bool>((*r)[2].tensor), (std::vector<bool>{false, false}));
}

TEST(ControlLoop, WrongBodyArityIsAnError) {
  Graph b("body");
  b.add_input("iter", DType::kI64, scalar_shape());
  ValueId cond_in = b.add_input("cond_in", DType::kBool, scalar_shape());
  b.set_outputs({cond_in});
  Graph g = loop_graph(true, false, share(std::move(b)));
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<int64_t>(1)),
                          RuntimeValue::of(Tensor::scalar<float>(1))});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("must take 2 + 1 inputs"), std::string::npos)
      << r.error().to_string();
}

// Scan body: s' = s + x_t, scan output = s'.
std::shared_ptr<const Graph> cumsum_body() {
  Graph b("body");
  ValueId s = b.add_input("s", DType::kF32, std::nullopt);
  ValueId x = b.add_input("x", DType::kF32, std::nullopt);
  ValueId next = b.add_node("Add", {s, x}, 1)[0];
  b.set_outputs({next, b.add_node("Identity", {next}, 1)[0]});
  return share(std::move(b));
}

Graph scan_graph(int64_t opset, Attrs attrs, bool with_lens = false) {
  Graph g("scan");
  g.opsets()[""] = opset;
  std::vector<ValueId> ins;
  if (opset < 9)
    ins.push_back(with_lens ? g.add_input("lens", DType::kI64, std::nullopt) : kNoValue);
  ins.push_back(g.add_input("s0", DType::kF32, std::nullopt));
  ins.push_back(g.add_input("xs", DType::kF32, std::nullopt));
  attrs["body"] = cumsum_body();
  attrs["num_scan_inputs"] = int64_t{1};
  g.set_outputs(g.add_node("Scan", ins, 2, attrs, "scan"));
  return g;
}

TEST(ControlScan, CumulativeSumAlongAxis0) {
  Graph g = scan_graph(11, {});
  auto r = run_values(g, {RuntimeValue::of(Tensor::from<float>({2}, {0, 0})),
                          RuntimeValue::of(Tensor::from<float>({3, 2}, {1, 2, 3, 4, 5, 6}))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0].tensor), (std::vector<float>{9, 12}));
  EXPECT_EQ((*r)[1].tensor.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values_of<float>((*r)[1].tensor), (std::vector<float>{1, 2, 4, 6, 9, 12}));
}

TEST(ControlScan, InputAxisDirectionsAndOutputAxis) {
  // Scan the columns (axis 1) in reverse; stack the sums along axis 1 in reverse.
  Graph g = scan_graph(11, {{"scan_input_axes", std::vector<int64_t>{1}},
                            {"scan_input_directions", std::vector<int64_t>{1}},
                            {"scan_output_axes", std::vector<int64_t>{-1}},
                            {"scan_output_directions", std::vector<int64_t>{1}}});
  auto r = run_values(g, {RuntimeValue::of(Tensor::from<float>({2}, {0, 0})),
                          RuntimeValue::of(Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6}))});
  ASSERT_TRUE(r) << r.error().to_string();
  // Steps visit columns 2, 1, 0: sums [3,6], [5,11], [6,15]; reversed stacking
  // puts the last step first along axis 1.
  EXPECT_EQ(values_of<float>((*r)[0].tensor), (std::vector<float>{6, 15}));
  EXPECT_EQ((*r)[1].tensor.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values_of<float>((*r)[1].tensor), (std::vector<float>{6, 5, 3, 15, 11, 6}));
}

TEST(ControlScan, Opset8BatchesAndPadsShortSequences) {
  Graph g = scan_graph(8, {}, true);
  auto r = run_values(g, {RuntimeValue::of(Tensor::from<int64_t>({2}, {3, 1})),
                          RuntimeValue::of(Tensor::from<float>({2, 1}, {0, 100})),
                          RuntimeValue::of(Tensor::from<float>({2, 3, 1}, {1, 2, 3, 4, 5, 6}))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0].tensor), (std::vector<float>{6, 104}));
  EXPECT_EQ((*r)[1].tensor.shape(), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(values_of<float>((*r)[1].tensor), (std::vector<float>{1, 3, 6, 104, 0, 0}));
}

TEST(ControlScan, Opset8ZeroLengthFirstRowTakesItsShapeFromAnother) {
  Graph g = scan_graph(8, {}, true);
  auto r = run_values(g, {RuntimeValue::of(Tensor::from<int64_t>({2}, {0, 2})),
                          RuntimeValue::of(Tensor::from<float>({2, 1}, {7, 0})),
                          RuntimeValue::of(Tensor::from<float>({2, 2, 1}, {1, 2, 3, 4}))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0].tensor), (std::vector<float>{7, 7}));
  EXPECT_EQ((*r)[1].tensor.shape(), (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(values_of<float>((*r)[1].tensor), (std::vector<float>{0, 0, 3, 7}));
}

TEST(ControlScan, Opset8ReverseDirection) {
  Graph g = scan_graph(8, {{"directions", std::vector<int64_t>{1}}});
  auto r = run_values(g, {RuntimeValue::of(Tensor::from<float>({1, 1}, {0})),
                          RuntimeValue::of(Tensor::from<float>({1, 3, 1}, {1, 2, 3}))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[1].tensor), (std::vector<float>{3, 5, 6}));
}

TEST(ControlScan, ZeroLengthKeepsTheStateAndGivesEmptyOutputs) {
  Graph g = scan_graph(11, {});
  auto r = run_values(g, {RuntimeValue::of(Tensor::from<float>({2}, {3, 4})),
                          RuntimeValue::of(Tensor::zeros(DType::kF32, {0, 2}))});
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<float>((*r)[0].tensor), (std::vector<float>{3, 4}));
  EXPECT_EQ((*r)[1].tensor.numel(), 0);
}

TEST(ControlScan, MismatchedLengthsAreAnError) {
  Graph g("scan");
  ValueId s = g.add_input("s0", DType::kF32, std::nullopt);
  ValueId a = g.add_input("a", DType::kF32, std::nullopt);
  ValueId b2 = g.add_input("b", DType::kF32, std::nullopt);
  Graph b("body");
  ValueId bs = b.add_input("s", DType::kF32, std::nullopt);
  b.add_input("x", DType::kF32, std::nullopt);
  b.add_input("y", DType::kF32, std::nullopt);
  b.set_outputs({b.add_node("Identity", {bs}, 1)[0]});
  g.set_outputs(g.add_node("Scan", {s, a, b2}, 1,
                           {{"body", share(std::move(b))}, {"num_scan_inputs", int64_t{2}}}));
  auto r = run_values(g, {RuntimeValue::of(Tensor::scalar<float>(0)),
                          RuntimeValue::of(Tensor::zeros(DType::kF32, {3})),
                          RuntimeValue::of(Tensor::zeros(DType::kF32, {4}))});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("disagree on the sequence length"), std::string::npos)
      << r.error().to_string();
}

}  // namespace
}  // namespace hone::eval::testing
