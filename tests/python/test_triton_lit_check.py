"""bench/triton/triton_lit_check.py, the reader of Triton's allocation lit tests, on lit text of
our own in the same two styles (FileCheck CHECK lines, -verify-diagnostics remarks): which
statements it reads, the module it hands the importer, and how it compares (the lit files
themselves are not in the repository: docs/validation/triton-lit.md)."""
import importlib.util
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("triton_lit_check", REPO / "bench" / "triton" / "triton_lit_check.py")
lit = importlib.util.module_from_spec(_spec)
sys.modules["triton_lit_check"] = lit  # its dataclasses look their module up
_spec.loader.exec_module(lit)

CHECK_STYLE = """\
// RUN: triton-opt %s -split-input-file -test-print-allocation 2>&1 | FileCheck %s
// RUN: triton-opt %s -test-print-allocation="get-scratch-size-function=ValidConstant" 2>&1 | FileCheck %s --check-prefix=CONST
// CONST: scratch offset = 0, size = 128

#sh = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#bl = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {"ttg.num-warps" = 4 : i32} {

// CHECK-LABEL: two_buffers
tt.func @two_buffers(%p : i1) {
  // CHECK: offset = 0, size = 256
  %x = ttg.local_alloc : () -> !ttg.memdesc<8x16xf16, #sh, #ttg.shared_memory, mutable>
  // CHECK-NEXT: offset = 256, size = 64
  %y = ttg.local_alloc : () -> !ttg.memdesc<16xf32, #sh, #ttg.shared_memory, mutable>
  %t = arith.constant dense<0.0> : tensor<8x16xf16, #bl>
  // CHECK-NEXT: scratch offset = 0, size = 512
  %u = ttg.convert_layout %t : tensor<8x16xf16, #bl> -> tensor<8x16xf16, #bl>
  tt.return
  // CHECK-NEXT: size = 320
}

// CHECK-LABEL: callee
tt.func @callee() {
  // CHECK: offset = 0, size = 64
  %z = ttg.local_alloc : () -> !ttg.memdesc<16xf32, #sh, #ttg.shared_memory, mutable>
  tt.return
  // CHECK-NEXT: size = 64
}

// CHECK-LABEL: caller
tt.func @caller() {
  // CHECK: virtual offset = 0, size = 64
  tt.call @callee() : () -> ()
  tt.return
  // CHECK-NEXT: size = 64
}
}

// -----

#sh = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
// CHECK-LABEL: second_part
tt.func @second_part() {
  // CHECK: offset = 0, size = 16
  %w = ttg.local_alloc : () -> !ttg.memdesc<2xi64, #sh, #ttg.shared_memory, mutable>
  tt.return
  // CHECK-NEXT: size = 16
}
}
"""

REMARK_STYLE = """\
// RUN: triton-opt %s -allow-unregistered-dialect -test-print-allocation -verify-diagnostics -o /dev/null
#sh = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
// expected-remark @below {{branches}}
// expected-remark @below {{size = 96}}
tt.func @branches(%c : i1) {
  // expected-remark @below {{offset = 64, size = 32}}
  %a = ttg.local_alloc : () -> !ttg.memdesc<8xf32, #sh, #ttg.shared_memory, mutable>
  scf.if %c {
    // expected-remark @below {{offset = 0, size = 64}}
    %b = ttg.local_alloc : () -> !ttg.memdesc<16xf32, #sh, #ttg.shared_memory, mutable>
  }
  // expected-remark @below {{0, size = 64}}
  %b = ttg.local_alloc : () -> !ttg.memdesc<16xf32, #sh, #ttg.shared_memory, mutable>
  ttg.local_dealloc %a : !ttg.memdesc<8xf32, #sh, #ttg.shared_memory, mutable>
  tt.return
  // CHECK: size = 12345
}
}
"""


def _modules(text):
    modules, aliases, stray = lit.parse_modules(text)
    return modules, aliases, stray


def test_reads_the_active_prefix_and_skips_test_only_scratch_rules():
    prefixes, remarks = lit.active_prefixes(CHECK_STYLE)
    assert prefixes == ["CHECK"]  # the CONST run uses a test-only scratch-size function
    assert not remarks
    assert lit.active_prefixes(REMARK_STYLE) == ([], True)


def test_splits_parts_modules_and_functions_with_their_statements():
    modules, aliases, stray = _modules(CHECK_STYLE)
    assert [(m.chunk, [f.name for f in m.functions]) for m in modules] == [
        (0, ["two_buffers", "callee", "caller"]), (1, ["second_part"])]
    assert not stray
    two = modules[0].functions[0]
    assert [(e.style, e.text) for e in two.expectations] == [
        ("CHECK", "offset = 0, size = 256"), ("CHECK-NEXT", "offset = 256, size = 64"),
        ("CHECK-NEXT", "scratch offset = 0, size = 512"), ("CHECK-NEXT", "size = 320")]
    assert modules[0].functions[2].callees == ["callee"]
    assert lit.count_statements_text(CHECK_STYLE) == {"two_buffers": 4, "callee": 2, "caller": 2, "second_part": 2}


def test_module_of_a_function_holds_it_as_kernel_and_its_callees_as_private():
    modules, aliases, _ = _modules(CHECK_STYLE)
    text = lit.module_text(modules[0], modules[0].functions[2], aliases)
    assert "tt.func public @caller()" in text
    assert "tt.func private @callee()" in text
    assert "two_buffers" not in text
    assert "CHECK" not in text  # comments are not handed on
    assert text.count("module attributes") == 1 and text.rstrip().endswith("}")


def test_remarks_attach_to_the_op_below_and_ignore_dead_check_lines():
    modules, _, _ = _modules(REMARK_STYLE)
    f = modules[0].functions[0]
    stated = [(e.text, e.op_name, e.op_value) for e in f.expectations]
    assert stated == [("branches", "tt.func", ""), ("size = 96", "tt.func", ""),
                      ("offset = 64, size = 32", "ttg.local_alloc", "%a"),
                      ("offset = 0, size = 64", "ttg.local_alloc", "%b"),
                      ("0, size = 64", "ttg.local_alloc", "%b")]  # "CHECK: size = 12345" is not run


def _ours(buffers, total):
    return lit.Ours(buffers, total)


def test_check_style_comparison_reads_like_filecheck():
    modules, _, _ = _modules(CHECK_STYLE)
    two = modules[0].functions[0]
    # The plan lists the scratch before the explicit buffers; Triton prints in op order.
    ours = _ours([("scratch", "ttg_convert_layout", 0, 512), ("", "x", 0, 256), ("", "y", 256, 64)], 512)
    rep, mis = lit.compare_checks(two.expectations, lit.in_op_order(two, ours).printed())
    assert [e.text for e, _ in rep] == ["offset = 0, size = 256", "offset = 256, size = 64",
                                       "scratch offset = 0, size = 512"]
    assert [(e.text, o) for e, o in mis] == [("size = 320", "size = 512")]


def test_remark_style_matches_buffers_by_name_and_reports_the_difference():
    modules, _, _ = _modules(REMARK_STYLE)
    f = modules[0].functions[0]
    ours = _ours([("", "a", 64, 32), ("", "b", 0, 64), ("", "b_1", 32, 64)], 96)
    rep, mis, extra = lit.compare_remarks(f.name, f.expectations, ours)
    assert len(rep) == 3
    assert [(e.text, o) for e, o in mis] == [("0, size = 64", "offset = 32, size = 64")]
    assert extra == []


def test_report_placements_become_buffers_in_plan_order():
    report = {"spaces": [{"space": "smem", "kind": "SMEM", "peak_bytes": 1088, "placements": [
        {"buffer": "b1_ttg_convert_layout", "copy": 0, "offset": 0, "size_bytes": 1024},
        {"buffer": "b0_cst0", "copy": 0, "offset": 1024, "size_bytes": 64},
        {"buffer": "b2_tt_call", "copy": 0, "offset": 0, "size_bytes": 512}]}]}
    ours = lit.ours_from_report(report)
    assert ours.total == 1088
    assert ours.printed() == ["offset = 1024, size = 64", "scratch offset = 0, size = 1024",
                              "virtual offset = 0, size = 512", "size = 1088"]


def test_stand_ins_rewrite_only_the_test_only_constructs_and_name_them():
    text = """\
// RUN: triton-opt %s -allow-unregistered-dialect -test-print-allocation -verify-diagnostics -o /dev/null
#sh = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
module attributes {"ttg.num-warps" = 4 : i32} {
// expected-remark @below {{size = 48}}
tt.func @views() {
  // expected-remark @below {{offset = 0, size = 32}}
  %a = ttg.local_alloc : () -> !ttg.memdesc<2x4xf32, #sh, #ttg.shared_memory, mutable>
  %i = arith.constant 0 : i32
  %v = ttg.memdesc_subview %a[%i, %i] : !ttg.memdesc<2x4xf32, #sh, #ttg.shared_memory, mutable> -> !ttg.memdesc<4xf32, #sh, #ttg.shared_memory, mutable>
  // expected-remark @below {{offset = 32, size = 16}}
  ttg.local_alloc : () -> !ttg.memdesc<4xf32, #sh, #ttg.shared_memory, mutable>
  "use"(%v) : (!ttg.memdesc<4xf32, #sh, #ttg.shared_memory, mutable>) -> ()
  tt.return
}
}
"""
    modules, aliases, _ = _modules(text)
    f = modules[0].functions[0]
    assert "memdesc_subview" in lit.module_text(modules[0], f, aliases)  # untouched by default
    replaced = []
    out = lit.module_text(modules[0], f, aliases, stand_ins=True, replaced=replaced)
    assert "%v = ttg.memdesc_reinterpret %a : !ttg.memdesc<2x4xf32" in out
    assert "%anon_L11 = ttg.local_alloc" in out
    assert "%use_L12 = ttg.memdesc_reinterpret %v : !ttg.memdesc<4xf32, #sh, #ttg.shared_memory, mutable> -> " in out
    assert [r.split(": ", 1)[0] for r in replaced] == ["line 9", "line 11", "line 12"]
    # The unnamed alloc's remark is matched to the buffer named after its line.
    ours = _ours([("", "a", 0, 32), ("", "anon_L11", 32, 16)], 48)
    rep, mis, extra = lit.compare_remarks(f.name, f.expectations, ours)
    assert (len(rep), mis, extra) == (3, [], [])


def test_buffers_of_a_partition_are_matched_through_its_scope():
    assert lit.value_pattern("%0").fullmatch("_1__0")
    assert lit.value_pattern("%a").fullmatch("a_1")
    assert not lit.value_pattern("%a").fullmatch("ba")
