// Invalid .tape texts, one per rejection the format promises (issue 2, item
// 6), each with the line the reader must blame and a piece of its reason.
// Shared by tests/tape/test_tape_textformat.cpp (the reader) and
// tests/cli/test_cli_tapelab.cpp (`tapelab run` exits 2 with FILE:LINE:).
#pragma once
#include <string>
#include <vector>

namespace tapelab::testdata {

struct BadTape {
  const char* name;  // also a file name stem
  std::string text;
  int line;            // the line the error names
  const char* reason;  // a substring of the reason
};

inline const std::vector<BadTape>& badTapes() {
  using namespace std::string_literals;
  static const std::string h = "tapelab-tape 1\n";
  static const std::vector<BadTape> list = {
      // unknown op
      {"unknown_op", h + "input x 1\nfrob 0\noutput 1\n", 3, "unknown op 'frob'"},
      {"unknown_op_case", h + "input x 1\nADD 0 0\noutput 1\n", 3, "unknown op 'ADD'"},
      {"unknown_op_output_spelling", h + "input x 1\nOutput 0\n", 3, "unknown op 'Output'"},
      // wrong arity
      {"arity_add_one", h + "input x 1\nadd 0\noutput 1\n", 3, "'add' takes 2 arguments, got 1"},
      {"arity_add_three", h + "input x 1\nadd 0 0 0\noutput 1\n", 3, "'add' takes 2 arguments, got 3"},
      {"arity_exp_two", h + "input x 1\nexp 0 0\noutput 1\n", 3, "'exp' takes 1 argument, got 2"},
      {"arity_neg_none", h + "input x 1\nneg\noutput 1\n", 3, "'neg' takes 1 argument, got 0"},
      {"arity_const_none", h + "const\noutput 0\n", 2, "'const' takes 1 argument, got 0"},
      {"arity_randn_two", h + "randn 0 1\noutput 0\n", 2, "'randn' takes 1 argument, got 2"},
      {"arity_input_one", h + "input x\noutput 0\n", 2, "'input' takes 2 arguments, got 1"},
      {"arity_output_two", h + "input x 1\noutput 0 0\n", 3, "'output' takes 1 argument, got 2"},
      // argument not strictly earlier
      {"arg_self", h + "input x 1\nneg 1\noutput 1\n", 3, "argument 1 is not an earlier node"},
      {"arg_later", h + "input x 1\nadd 0 2\nneg 0\noutput 2\n", 3, "argument 2 is not an earlier node"},
      {"arg_second_self", h + "input x 1\nmax 0 1\noutput 1\n", 3, "argument 1 is not an earlier node"},
      // index out of range or overflowing
      {"arg_out_of_range", h + "input x 1\nmul 0 1000\noutput 1\n", 3, "argument 1000 is not an earlier node"},
      {"arg_int32_overflow", h + "input x 1\nmul 0 2147483648\noutput 1\n", 3, "overflows"},
      {"arg_int64_overflow", h + "input x 1\nmul 0 99999999999999999999999\noutput 1\n", 3, "overflows"},
      {"arg_negative", h + "input x 1\nmul 0 -1\noutput 1\n", 3, "negative"},
      {"arg_fraction", h + "input x 1\nmul 0 0.5\noutput 1\n", 3, "is not an integer"},
      {"arg_word", h + "input x 1\nmul 0 x\noutput 1\n", 3, "is not an integer"},
      {"arg_plus", h + "input x 1\nsqrt +0\noutput 1\n", 3, "is not an integer"},
      // negative or non-integer draw index
      {"draw_negative", h + "randn -1\noutput 0\n", 2, "draw index -1 is negative"},
      {"draw_fraction", h + "randn 1.5\noutput 0\n", 2, "not a non-negative integer"},
      {"draw_exponent", h + "randn 1e3\noutput 0\n", 2, "not a non-negative integer"},
      {"draw_word", h + "randn k\noutput 0\n", 2, "not a non-negative integer"},
      {"draw_overflow", h + "randn 4294967296\noutput 0\n", 2, "overflows"},
      {"draw_huge", h + "randn 123456789012345678901234567890\noutput 0\n", 2, "overflows"},
      // NaN / Inf / overflowing / unparsable number
      {"const_nan", h + "const nan\noutput 0\n", 2, "NaN"},
      {"const_negative_nan", h + "const -NaN\noutput 0\n", 2, "NaN"},
      {"const_nan_payload", h + "const nan(0x1)\noutput 0\n", 2, "NaN"},
      {"const_inf", h + "const inf\noutput 0\n", 2, "infinity"},
      {"const_negative_infinity", h + "const -Infinity\noutput 0\n", 2, "infinity"},
      {"const_overflow", h + "const 1e309\noutput 0\n", 2, "overflows"},
      {"const_negative_overflow", h + "const -1.8e308\noutput 0\n", 2, "overflows"},
      {"const_underflow", h + "const 1e-400\noutput 0\n", 2, "underflows to zero"},
      {"input_underflow", h + "input x -2e-999\noutput 0\n", 2, "underflows to zero"},
      {"const_trailing_junk", h + "const 1.5x\noutput 0\n", 2, "is not a number"},
      {"const_two_points", h + "const 1.2.3\noutput 0\n", 2, "is not a number"},
      {"const_word", h + "const pi\noutput 0\n", 2, "is not a number"},
      {"input_nan", h + "input x nan\noutput 0\n", 2, "NaN"},
      {"input_inf", h + "input x -inf\noutput 0\n", 2, "infinity"},
      {"input_overflow", h + "input x 2e308\noutput 0\n", 2, "overflows"},
      {"input_word", h + "input x one\noutput 0\n", 2, "is not a number"},
      // duplicate input name
      {"input_duplicate", h + "input x 1\ninput y 2\ninput x 3\nadd 0 1\noutput 3\n", 4, "duplicate input name 'x'"},
      {"input_bad_name", h + "input 2x 1\noutput 0\n", 2, "input name '2x'"},
      // missing / duplicate / non-final output
      {"output_missing", h + "input x 1\nneg 0\n", 3, "missing 'output'"},
      {"output_missing_after_comments", h + "input x 1\nneg 0\n# no output\n\n", 5, "missing 'output'"},
      {"output_missing_header_only", h, 1, "missing 'output'"},
      {"output_duplicate", h + "input x 1\nneg 0\noutput 1\noutput 1\n", 5, "duplicate 'output'"},
      {"output_not_final", h + "input x 1\noutput 0\nneg 0\n", 4, "'output' must be the last line"},
      {"output_before_input", h + "output 0\ninput x 1\n", 2, "out of range"},
      // output out of range
      {"output_out_of_range", h + "input x 1\nneg 0\noutput 2\n", 4, "output 2 is out of range"},
      {"output_no_nodes", h + "output 0\n", 2, "out of range"},
      {"output_overflow", h + "input x 1\noutput 4294967296\n", 3, "overflows"},
      {"output_negative", h + "input x 1\noutput -1\n", 3, "negative"},
      {"output_word", h + "input x 1\noutput last\n", 3, "is not an integer"},
      // wrong header or version
      {"header_version_2", "tapelab-tape 2\ninput x 1\noutput 0\n", 1, "unsupported version '2'"},
      {"header_version_1_0", "tapelab-tape 1.0\ninput x 1\noutput 0\n", 1, "unsupported version '1.0'"},
      {"header_wrong_word", "tapelab-tap 1\ninput x 1\noutput 0\n", 1, "not a tapelab tape"},
      {"header_missing", "input x 1\noutput 0\n", 1, "not a tapelab tape"},
      {"header_no_version", "tapelab-tape\ninput x 1\noutput 0\n", 1, "header must be 'tapelab-tape 1'"},
      {"header_extra_word", "tapelab-tape 1 2\ninput x 1\noutput 0\n", 1, "header must be 'tapelab-tape 1'"},
      {"header_after_comments", "# a comment\n\ntapelab-tape 3\ninput x 1\noutput 0\n", 3, "unsupported version '3'"},
      // empty or binary file
      {"empty", "", 1, "empty file"},
      {"only_comments", "# nothing here\n\n   \n", 3, "empty file"},
      {"binary_elf", "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0"s, 1, "binary"},
      {"binary_nul_in_body", h + "input x 1\0\noutput 0\n"s, 2, "binary"},
      {"binary_control_bytes", h + "input x 1\nneg 0\n\x01\x02\x03\x04\noutput 1\n", 4, "binary"},
      {"binary_gzip", "\x1f\x8b\x08\0\0\0\0\0\0\x03"s, 1, "binary"},
  };
  return list;
}

}  // namespace tapelab::testdata
