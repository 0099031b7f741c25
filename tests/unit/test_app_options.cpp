// Command line and deck parsing: defaults, every option, objects, decks and their overrides,
// every class of usage error (and that its message names the culprit), validation, help text.
#include <array>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/config.hpp"
#include "app/deck.hpp"
#include "app/errors.hpp"
#include "app/options.hpp"

namespace miniamr::app {
namespace {

using ::testing::HasSubstr;

ParsedOptions parse(std::initializer_list<std::string> words) {
  const std::vector<std::string> args(words);
  return parse_options(args);
}

Config cfg(std::initializer_list<std::string> words) {
  return parse(words).config;
}

// The message of the UsageError that parsing `args` throws ("" if none is thrown).
std::string error_of(const std::vector<std::string>& args) {
  try {
    parse_options(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
std::string error_of(std::initializer_list<std::string> words) {
  return error_of(std::vector<std::string>(words));
}

// A deck file in a per-test temporary folder, removed at the end of the test.
class DeckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("miniamr_options_") + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(std::string_view text, std::string_view name = "deck.txt") {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path dir_;
};

// One object: type bounce | centre | move | size | inc, with negative, signed and exponent forms.
const std::vector<std::string> kObjectArgs{"--object", "2",   "0",     // type bounce
                                           "-0.01",    "0.5", "1e-1",  // centre
                                           "0.03",     "0.0", "-.5",   // move
                                           "0.1",      "0.2", "0.3",   // size
                                           "0",        "+2",  "0"};    // inc

// ---- Defaults and every option -----------------------------------------------------------------

TEST(Options, DefaultsMatchTheReference) {
  const ParsedOptions p = parse({});
  EXPECT_FALSE(p.help);
  EXPECT_TRUE(p.warnings.empty());
  const Config& c = p.config;
  EXPECT_EQ(c.nx, 10);
  EXPECT_EQ(c.ny, 10);
  EXPECT_EQ(c.nz, 10);
  EXPECT_EQ(c.init_x, 1);
  EXPECT_EQ(c.npz, 1);
  EXPECT_EQ(c.max_blocks, 0);
  EXPECT_FALSE(c.max_blocks_given);
  EXPECT_EQ(c.num_refine, 5);
  EXPECT_EQ(c.block_change, 0);
  EXPECT_EQ(c.refine_freq, 5);
  EXPECT_EQ(c.lb_opt, 1);
  EXPECT_EQ(c.lb_method, LbMethod::kRcb);
  EXPECT_EQ(c.reorder, -1);
  EXPECT_EQ(c.num_vars, 40);
  EXPECT_EQ(c.comm_vars, 0);
  EXPECT_EQ(c.stencil, 7);
  EXPECT_EQ(c.error_tol, 8);
  EXPECT_EQ(c.num_tsteps, 20);
  EXPECT_FALSE(c.num_tsteps_given);
  EXPECT_FALSE(c.time_given);
  EXPECT_EQ(c.stages_per_ts, 20);
  EXPECT_EQ(c.checksum_freq, 5);
  EXPECT_EQ(c.report_perf, 12);
  EXPECT_EQ(c.plot_freq, 0);
  EXPECT_TRUE(c.objects.empty());
  EXPECT_TRUE(c.deck_path.empty());
}

struct IntCase {
  const char* option;
  int value;
  int Config::*field;
};

TEST(Options, EachIntegerOptionSetsItsField) {
  const std::vector<IntCase> cases{
      {"--nx", 4, &Config::nx},
      {"--ny", 6, &Config::ny},
      {"--nz", 8, &Config::nz},
      {"--init_x", 2, &Config::init_x},
      {"--init_y", 3, &Config::init_y},
      {"--init_z", 4, &Config::init_z},
      {"--npx", 2, &Config::npx},
      {"--npy", 3, &Config::npy},
      {"--npz", 4, &Config::npz},
      {"--max_blocks", 700, &Config::max_blocks},
      {"--num_refine", 3, &Config::num_refine},
      {"--block_change", 2, &Config::block_change},
      {"--uniform_refine", 1, &Config::uniform_refine},
      {"--refine_freq", 0, &Config::refine_freq},
      {"--inbalance", 10, &Config::inbalance},
      {"--lb_opt", 2, &Config::lb_opt},
      {"--num_vars", 9, &Config::num_vars},
      {"--comm_vars", 3, &Config::comm_vars},
      {"--num_tsteps", 7, &Config::num_tsteps},
      {"--stages_per_ts", 16, &Config::stages_per_ts},
      {"--checksum_freq", 0, &Config::checksum_freq},
      {"--stencil", 0, &Config::stencil},
      {"--error_tol", 5, &Config::error_tol},
      {"--report_perf", 15, &Config::report_perf},
      {"--plot_freq", 3, &Config::plot_freq},
      {"--code", 2, &Config::code},
      {"--limit_move", 50, &Config::limit_move},
      {"--reorder", 0, &Config::reorder},
  };
  for (const IntCase& tc : cases) {
    SCOPED_TRACE(tc.option);
    const Config c = cfg({tc.option, std::to_string(tc.value)});
    EXPECT_EQ(c.*(tc.field), tc.value);
  }
}

TEST(Options, GivenMarkersAreSet) {
  EXPECT_TRUE(cfg({"--max_blocks", "9"}).max_blocks_given);
  EXPECT_TRUE(cfg({"--num_tsteps", "9"}).num_tsteps_given);
  const Config c = cfg({"--time", "2.5e-1"});
  EXPECT_TRUE(c.time_given);
  EXPECT_DOUBLE_EQ(c.time, 0.25);
}

TEST(Options, IsaNamesALevel) {
  EXPECT_EQ(cfg({}).isa, "auto");
  EXPECT_EQ(cfg({"--isa", "x86-64-v3"}).isa, "x86-64-v3");
  EXPECT_THROW(cfg({"--isa", "avx2"}), UsageError);
}

TEST(Options, SweepVarsIsPositive) {
  EXPECT_EQ(cfg({}).sweep_vars, 4);
  EXPECT_EQ(cfg({"--sweep_vars", "1"}).sweep_vars, 1);
  EXPECT_THROW(cfg({"--sweep_vars", "0"}), UsageError);
}

TEST(Options, ChunkVarsIsAutomaticOrPositive) {
  EXPECT_EQ(cfg({}).chunk_vars, 0);
  EXPECT_EQ(cfg({"--chunk_vars", "40"}).chunk_vars, 40);
  EXPECT_THROW(cfg({"--chunk_vars", "-1"}), UsageError);
  EXPECT_EQ(cfg({}).batch_tsteps, 5);
  EXPECT_EQ(cfg({"--batch_tsteps", "1"}).batch_tsteps, 1);
  EXPECT_THROW(cfg({"--batch_tsteps", "0"}), UsageError);
}

TEST(Options, MapAheadIsZeroOrOne) {
  EXPECT_EQ(cfg({}).map_ahead, 0);
  EXPECT_EQ(cfg({"--map_ahead", "1"}).map_ahead, 1);
  EXPECT_THROW(cfg({"--map_ahead", "2"}), UsageError);
  EXPECT_THROW(cfg({"--map_ahead", "-1"}), UsageError);
}

TEST(Options, EachFlagSetsItsField) {
  EXPECT_TRUE(cfg({"--report_diffusion"}).report_diffusion);
  EXPECT_TRUE(cfg({"--permute"}).permute);
  EXPECT_TRUE(cfg({"--blocking_send"}).blocking_send);
  EXPECT_TRUE(cfg({"--refine_ghost"}).refine_ghost);
  EXPECT_TRUE(cfg({"--change_dir"}).change_dir);
  EXPECT_TRUE(cfg({"--send_faces"}).send_faces);
  EXPECT_EQ(cfg({"--group_blocks"}).group_blocks, 1);
  EXPECT_EQ(cfg({"--break_ties"}).group_blocks, 2);
  EXPECT_EQ(cfg({"--break_ties", "--group_blocks"}).group_blocks, 1);
  EXPECT_EQ(cfg({"--morton"}).lb_method, LbMethod::kMorton);
  EXPECT_EQ(cfg({"--hilbert"}).lb_method, LbMethod::kHilbert);
  EXPECT_EQ(cfg({"--trunc_hilbert"}).lb_method, LbMethod::kTruncHilbert);
  EXPECT_EQ(cfg({"--morton", "--rcb"}).lb_method, LbMethod::kRcb);
}

TEST(Options, RefineGhostsIsAnAlias) {
  EXPECT_TRUE(cfg({"--refine_ghosts"}).refine_ghost);
}

TEST(Options, AnOptionGivenTwiceIsAnError) {
  EXPECT_EQ(error_of({"--nx", "4", "--ny", "6", "--nx", "12"}),
            "--nx is given twice on the command line; give it once (the command line may "
            "override a deck's value, not its own)");
  EXPECT_THAT(error_of({"--permute", "--permute"}), HasSubstr("--permute is given twice"));
  // Options that add to a list may repeat.
  EXPECT_EQ(cfg({"--slow_rank", "1:2", "--slow_rank", "2:3"}).slow_ranks.size(), 2u);
  const auto range = cfg({"--slow_rank", "2-4:3"}).slow_rank_factors();
  ASSERT_EQ(range.size(), 3u);
  EXPECT_EQ(range.front(), (std::pair<int, double>{2, 3.0}));
  EXPECT_EQ(range.back(), (std::pair<int, double>{4, 3.0}));
}

TEST(Options, PlotFormatVariablesAndFolder) {
  const Config text = cfg({"--plot_freq", "5"});
  EXPECT_EQ(text.plot_format, "text");
  EXPECT_EQ(text.plot_dir, ".");
  EXPECT_EQ(text.plot_variables(), std::vector<int>{0});
  const Config xdmf = cfg({"--plot_format", "xdmf", "--num_vars", "4", "--plot_vars", "3,0,2",
                           "--plot_dir", "out/plots"});
  EXPECT_EQ(xdmf.plot_format, "xdmf");
  EXPECT_EQ(xdmf.plot_variables(), (std::vector<int>{3, 0, 2}));
  EXPECT_EQ(xdmf.plot_dir, "out/plots");
  EXPECT_EQ(error_of({"--plot_format", "vtk"}),
            "--plot_format must be text, xdmf or vtkhdf, got 'vtk'");
  EXPECT_EQ(error_of({"--plot_format", "xdmf", "--num_vars", "2", "--plot_vars", "0,2"}),
            "--plot_vars '0,2': variable 2 does not exist (--num_vars 2: 0 to 1)");
  EXPECT_EQ(error_of({"--plot_format", "xdmf", "--plot_vars", "-1"}),
            "--plot_vars '-1': variable -1 does not exist (--num_vars 40: 0 to 39)");
  EXPECT_EQ(error_of({"--plot_format", "xdmf", "--plot_vars", "1,1"}),
            "--plot_vars '1,1': variable 1 is listed twice");
  EXPECT_EQ(error_of({"--plot_format", "xdmf", "--plot_vars", "0,"}),
            "--plot_vars entry expects an integer, got ''");
  EXPECT_EQ(error_of({"--plot_format", "xdmf", "--plot_vars", "a"}),
            "--plot_vars entry expects an integer, got 'a'");
  EXPECT_EQ(error_of({"--plot_vars", "1"}),
            "--plot_vars chooses the variables of xdmf and vtkhdf plots: add --plot_format xdmf "
            "or vtkhdf");
  EXPECT_EQ(cfg({"--plot_format", "vtkhdf", "--plot_vars", "0"}).plot_format, "vtkhdf");
  EXPECT_EQ(cfg({"--progress_interval", "0.5"}).progress_interval, 0.5);
  EXPECT_EQ(error_of({"--progress_interval", "-1"}),
            "--progress_interval must be 0 to 86400 seconds, got -1");
  EXPECT_EQ(error_of({"--plot_dir", ""}), "--plot_dir expects a value, got ''");
}

TEST(Options, MaxMemoryTakesBinarySuffixes) {
  EXPECT_EQ(cfg({"--max_memory", "4096"}).max_memory, 4096.0);
  EXPECT_EQ(cfg({"--max_memory", "512K"}).max_memory, 512.0 * 1024);
  EXPECT_EQ(cfg({"--max_memory", "1.5g"}).max_memory, 1.5 * 1024 * 1024 * 1024);
  EXPECT_EQ(cfg({"--max_memory", "2T"}).max_memory, 2.0 * 1024 * 1024 * 1024 * 1024);
  for (const char* bad : {"0", "-1G", "G", "1GB", "1e400", "x"})
    EXPECT_THAT(error_of({"--max_memory", bad}),
                HasSubstr("--max_memory expects a positive size such as 512M or 8G"))
        << bad;
}

TEST(Options, BlockSizesKeepIndexArithmeticInRange) {
  EXPECT_EQ(error_of({"--nx", "65538"}), "--nx must be at most 65536 cells, got 65538");
  EXPECT_THAT(error_of({"--nx", "1024", "--ny", "1024", "--nz", "1024", "--num_vars", "2"}),
              HasSubstr("holds 2160091152 values with its ghosts; at most 2147483647"));
  EXPECT_EQ(error_of({"--nx", "1024", "--ny", "1024", "--nz", "1018", "--num_vars", "2"}), "");
}

TEST(OptionErrors, EchoedTextIsEscapedAndCut) {
  EXPECT_EQ(error_of({"--runtime", "a\x1b[2Jb\n"}),
            "--runtime must be static or dynamic, got 'a\\x1b[2Jb\\x0a'");
  const std::string msg = error_of({"--nx", std::string(5000, '7')});
  EXPECT_LT(msg.size(), 150u) << msg;
  EXPECT_THAT(msg, HasSubstr("... (5000 bytes)"));
  // Well-formed UTF-8 is kept; broken UTF-8 is escaped.
  EXPECT_THAT(error_of({"--runtime", "\xc3\xa9t\xe9"}), HasSubstr("got '\xc3\xa9t\\xe9'"));
}

TEST(Options, HelpWinsOverEverything) {
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"--nx", "abc", "-h"}).help);
  EXPECT_TRUE(parse({"missing_deck.txt", "--help"}).help);
}

TEST(Options, TwentySevenPointWarning) {
  const auto p = parse({"--stencil", "27"});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0],
            "WARNING: 27 point stencil with non-uniform refinement: answers may diverge");
  EXPECT_TRUE(parse({"--stencil", "27", "--uniform_refine", "1"}).warnings.empty());
  EXPECT_TRUE(parse({"--stencil", "27", "--num_refine", "0"}).warnings.empty());
}

// ---- Objects -----------------------------------------------------------------------------------

TEST(Options, ObjectValuesIncludingNegativeNumbers) {
  const Config c = parse_options(kObjectArgs).config;
  ASSERT_EQ(c.objects.size(), 1u);
  const Object& o = c.objects[0];
  EXPECT_EQ(o.type, 2);
  EXPECT_EQ(o.bounce, 0);
  EXPECT_DOUBLE_EQ(o.center[0], -0.01);
  EXPECT_DOUBLE_EQ(o.center[1], 0.5);
  EXPECT_DOUBLE_EQ(o.center[2], 0.1);
  EXPECT_DOUBLE_EQ(o.move[0], 0.03);
  EXPECT_DOUBLE_EQ(o.move[1], 0.0);
  EXPECT_DOUBLE_EQ(o.move[2], -0.5);
  EXPECT_DOUBLE_EQ(o.size[0], 0.1);
  EXPECT_DOUBLE_EQ(o.size[1], 0.2);
  EXPECT_DOUBLE_EQ(o.size[2], 0.3);
  EXPECT_DOUBLE_EQ(o.inc[0], 0.0);
  EXPECT_DOUBLE_EQ(o.inc[1], 2.0);
  EXPECT_DOUBLE_EQ(o.inc[2], 0.0);
}

TEST(Options, RepeatedObjectsAccumulateInOrder) {
  std::vector<std::string> args{"--num_objects", "2"};
  args.insert(args.end(), kObjectArgs.begin(), kObjectArgs.end());
  args.insert(args.end(), {"--object", "25", "1", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
                           "11", "12", "--nx", "4"});
  const Config c = parse_options(args).config;
  ASSERT_EQ(c.objects.size(), 2u);
  EXPECT_EQ(c.objects[0].type, 2);
  EXPECT_EQ(c.objects[1].type, 25);
  EXPECT_EQ(c.objects[1].bounce, 1);
  EXPECT_DOUBLE_EQ(c.objects[1].inc[2], 12.0);
  EXPECT_EQ(c.nx, 4);
}

TEST(Options, ObjectCountMismatchNamesTheCounts) {
  std::vector<std::string> fewer{"--num_objects", "2"};
  fewer.insert(fewer.end(), kObjectArgs.begin(), kObjectArgs.end());
  const std::string few = error_of(fewer);
  EXPECT_THAT(few, HasSubstr("fewer --object than --num_objects"));
  EXPECT_THAT(few, HasSubstr("1 given, 2 expected"));

  std::vector<std::string> more(kObjectArgs);
  more.insert(more.end(), kObjectArgs.begin(), kObjectArgs.end());
  more.insert(more.end(), {"--num_objects", "1"});
  const std::string many = error_of(more);
  EXPECT_THAT(many, HasSubstr("more --object than --num_objects"));
  EXPECT_THAT(many, HasSubstr("2 given, 1 expected"));

  EXPECT_THAT(error_of({"--num_objects", "-1"}), HasSubstr("--num_objects"));
  EXPECT_NO_THROW(parse({"--num_objects", "0"}));
}

TEST(Options, ObjectTypeAndBounceAreChecked) {
  std::vector<std::string> args(kObjectArgs);
  args[1] = "16";
  EXPECT_THAT(error_of(args), HasSubstr("unknown object type 16"));
  args[1] = "26";
  EXPECT_THAT(error_of(args), HasSubstr("unknown object type 26"));
  args[1] = "20";
  EXPECT_NO_THROW(parse_options(args));
  args[2] = "3";
  EXPECT_THAT(error_of(args), HasSubstr("bounce"));
  args[2] = "0";
  args[1] = "2.5";  // type is an integer
  EXPECT_THAT(error_of(args), HasSubstr("--object type expects an integer, got '2.5'"));
  args[1] = "2";
  args[7] = "x";
  EXPECT_THAT(error_of(args), HasSubstr("--object my expects a number, got 'x'"));
}

TEST(Options, ShortObjectIsMissingValues) {
  const std::vector<std::string> at_end(kObjectArgs.begin(), kObjectArgs.begin() + 4);
  const std::string end_msg = error_of(at_end);
  EXPECT_THAT(end_msg, HasSubstr("missing values for --object"));
  EXPECT_THAT(end_msg, HasSubstr("got 3"));
  std::vector<std::string> then_option(at_end);
  then_option.insert(then_option.end(), {"--nx", "4"});
  EXPECT_THAT(error_of(then_option), HasSubstr("missing values for --object"));
}

// ---- Command-line errors -----------------------------------------------------------------------

TEST(OptionErrors, UnknownOptionSuggestsTheNearestName) {
  EXPECT_EQ(error_of({"--nz_", "4"}), "unknown option '--nz_' (did you mean '--nz'?)");
  EXPECT_THAT(error_of({"--num_refin", "4"}), HasSubstr("did you mean '--num_refine'?"));
  EXPECT_THAT(error_of({"-nx", "4"}), HasSubstr("unknown option '-nx' (did you mean '--nx'?)"));
  EXPECT_THAT(error_of({"--frobnicate"}), HasSubstr("unknown option '--frobnicate'"));
  EXPECT_THAT(error_of({"--frobnicate"}), ::testing::Not(HasSubstr("did you mean")));
  EXPECT_EQ(error_of({"--frobnicate"}), "unknown option '--frobnicate'");  // no second hint
  EXPECT_THAT(error_of({"--"}), HasSubstr("unknown option '--'"));
}

TEST(Options, KeyEqualsValueForm) {
  const Config c = cfg({"--nx=16", "--runtime=dynamic", "--permute=true", "--time=2.5"});
  EXPECT_EQ(c.nx, 16);
  EXPECT_EQ(c.runtime, "dynamic");
  EXPECT_TRUE(c.permute);
  EXPECT_EQ(c.time, 2.5);
  EXPECT_FALSE(cfg({"--permute=false"}).permute);
  EXPECT_EQ(error_of({"--nx=abc"}), "--nx expects an integer, got 'abc'");
  EXPECT_EQ(error_of({"--nx=4", "--nx", "6"}), error_of({"--nx", "4", "--nx", "6"}));
  EXPECT_EQ(error_of({"--object=2"}), "--object takes 14 values: give them as separate words");
  EXPECT_THAT(error_of({"--nz_=4"}), HasSubstr("unknown option '--nz_=4'"));
}

TEST(OptionErrors, MissingValue) {
  EXPECT_EQ(error_of({"--nx"}), "missing value for --nx: expects an integer");
  EXPECT_EQ(error_of({"--nx", "--ny", "4"}), "missing value for --nx: expects an integer");
  EXPECT_THAT(error_of({"--nx", "4", "--time"}), HasSubstr("missing value for --time"));
}

TEST(OptionErrors, StrayWord) {
  EXPECT_THAT(error_of({"--nx", "4", "6"}), HasSubstr("unexpected argument '6'"));
  EXPECT_THAT(error_of({"--nx", "4", "-6"}), HasSubstr("unexpected argument '-6'"));
  EXPECT_THAT(error_of({"--permute", "true"}),
              HasSubstr("unexpected argument 'true' after --permute (--permute takes no value)"));
}

TEST(OptionErrors, TextWhereANumberIsExpected) {
  EXPECT_EQ(error_of({"--nx", "abc"}), "--nx expects an integer, got 'abc'");
  EXPECT_EQ(error_of({"--nx", "3.9"}), "--nx expects an integer, got '3.9'");
  EXPECT_EQ(error_of({"--nx", "1e2"}), "--nx expects an integer, got '1e2'");
  EXPECT_EQ(error_of({"--time", "1x"}), "--time expects a number, got '1x'");
  EXPECT_EQ(error_of({"--time", "inf"}), "--time expects a number, got 'inf'");
  EXPECT_THAT(error_of({"--nx", "99999999999"}), HasSubstr("--nx value '99999999999' is out"));
  EXPECT_EQ(cfg({"--nx", "+6"}).nx, 6);
}

// ---- Validation --------------------------------------------------------------------------------

struct BadValue {
  std::vector<std::string> args;
  std::string expected;  // a substring of the message
};

TEST(OptionErrors, ValidationNamesTheOption) {
  const std::vector<BadValue> cases{
      {{"--nx", "7"}, "--nx must be a positive even number"},
      {{"--ny", "0"}, "--ny must be a positive even number"},
      {{"--nz", "-2"}, "--nz must be a positive even number"},
      {{"--init_x", "0"}, "--init_x must be at least 1"},
      {{"--init_z", "0"}, "--init_z must be at least 1"},
      {{"--npy", "0"}, "--npy must be at least 1"},
      {{"--num_refine", "-1"}, "--num_refine must be between 0 and 20"},
      {{"--num_refine", "21"}, "block keys"},
      {{"--npx", "2", "--init_x", "2049"}, "root grid too large in x"},
      {{"--init_z", "4097"}, "at most 4096 per direction"},
      {{"--block_change", "-1"}, "--block_change"},
      {{"--num_vars", "0"}, "--num_vars must be at least 1"},
      {{"--comm_vars", "-1"}, "--comm_vars"},
      {{"--stencil", "5"}, "--stencil must be 0, 7 or 27"},
      {{"--stencil", "0", "--num_vars", "7"}, "--stencil 0 needs --num_vars"},
      {{"--code", "3"}, "--code must be between 0 and 2"},
      {{"--lb_opt", "-1"}, "--lb_opt"},
      {{"--refine_freq", "-1"}, "--refine_freq"},
      {{"--checksum_freq", "-1"}, "--checksum_freq"},
      {{"--stages_per_ts", "0"}, "--stages_per_ts"},
      {{"--num_tsteps", "0"}, "--num_tsteps must be at least 1"},
      {{"--time", "1", "--num_tsteps", "0"}, "--num_tsteps must be at least 1"},
      {{"--time", "0"}, "--time must be positive"},
      {{"--time", "-1"}, "--time must be positive"},
      {{"--plot_freq", "-1"}, "--plot_freq"},
      {{"--inbalance", "-1"}, "--inbalance"},
      {{"--limit_move", "101"}, "--limit_move"},
      {{"--report_perf", "16"}, "--report_perf"},
      {{"--error_tol", "-1"}, "--error_tol"},
      {{"--max_blocks", "0"}, "--max_blocks must be at least 1"},
      {{"--init_x", "2", "--init_y", "2", "--max_blocks", "3"}, "--max_blocks 3 is smaller"},
      {{"--reorder", "2"}, "--reorder must be -1, 0 or 1"},
  };
  for (const BadValue& tc : cases) {
    SCOPED_TRACE(tc.args[0]);
    EXPECT_THAT(error_of(tc.args), HasSubstr(tc.expected));
  }
}

TEST(Options, EdgeValuesThatAreValid) {
  EXPECT_NO_THROW(parse({"--refine_freq", "0"}));
  EXPECT_NO_THROW(parse({"--stencil", "0", "--num_vars", "8"}));
  EXPECT_NO_THROW(parse({"--num_refine", "20"}));
  EXPECT_NO_THROW(parse({"--npx", "2", "--init_x", "2048"}));
  EXPECT_NO_THROW(parse({"--time", "1.5"}));
  EXPECT_NO_THROW(parse({"--max_blocks", "8", "--init_x", "2", "--init_y", "2", "--init_z", "2"}));
  EXPECT_NO_THROW(parse({"--limit_move", "100", "--report_perf", "0", "--comm_vars", "0"}));
}

TEST(Options, ValidateConfigOnItsOwn) {
  EXPECT_NO_THROW(validate_config(Config{}));
  Config c;
  c.nx = 3;
  EXPECT_THROW(validate_config(c), UsageError);
}

// ---- Decks -------------------------------------------------------------------------------------

TEST_F(DeckTest, CommentsFlagsObjectsAndBlankLines) {
  const std::string path = write(
      "# a whole-line comment\n"
      "\n"
      "nx = 16   # trailing comment\n"
      "  ny=8\n"
      "\tnz =\t4\r\n"
      "time = 0.5\n"
      "permute = true\n"
      "morton = true\n"
      "send_faces = false\n"
      "num_objects = 2\n"
      "object = 2 0 -0.01 0.5 0.5 0.03 0 0 0.1 0.1 0.1 0 0 0\n"
      "object = 21 1 0.5 0.5 0.5 0 0 0 0.2 0.2 0.2 0 0 -0.001\n");
  const Config c = cfg({path});
  EXPECT_EQ(c.deck_path, path);
  EXPECT_EQ(c.nx, 16);
  EXPECT_EQ(c.ny, 8);
  EXPECT_EQ(c.nz, 4);
  EXPECT_TRUE(c.time_given);
  EXPECT_DOUBLE_EQ(c.time, 0.5);
  EXPECT_TRUE(c.permute);
  EXPECT_FALSE(c.send_faces);
  EXPECT_EQ(c.lb_method, LbMethod::kMorton);
  ASSERT_EQ(c.objects.size(), 2u);
  EXPECT_EQ(c.objects[0].type, 2);
  EXPECT_DOUBLE_EQ(c.objects[0].center[0], -0.01);
  EXPECT_EQ(c.objects[1].type, 21);
  EXPECT_DOUBLE_EQ(c.objects[1].inc[2], -0.001);
}

TEST_F(DeckTest, FalseTurnsAFlagBackOff) {
  const Config c =
      cfg({write("permute = false\nmorton = true\nhilbert = false\nrefine_ghosts = true\n")});
  EXPECT_FALSE(c.permute);
  EXPECT_EQ(c.lb_method, LbMethod::kMorton);  // hilbert = false undoes only its own choice
  EXPECT_TRUE(c.refine_ghost);
  EXPECT_EQ(cfg({write("hilbert = true\n"), "--hilbert"}).lb_method, LbMethod::kHilbert);
}

TEST_F(DeckTest, CommandLineOverridesScalars) {
  const std::string path = write("nx = 16\nny = 8\npermute = true\n");
  const Config c = cfg({path, "--nx", "4", "--morton"});
  EXPECT_EQ(c.nx, 4);
  EXPECT_EQ(c.ny, 8);
  EXPECT_TRUE(c.permute);
  EXPECT_EQ(c.lb_method, LbMethod::kMorton);
}

TEST_F(DeckTest, CommandLineObjectsReplaceTheDecks) {
  const std::string path = write(
      "num_objects = 2\n"
      "object = 0 0 0 0 0 0 0 0 1 1 1 0 0 0\n"
      "object = 1 0 0 0 0 0 0 0 1 1 1 0 0 0\n");
  std::vector<std::string> args{path};
  args.insert(args.end(), kObjectArgs.begin(), kObjectArgs.end());
  const Config c = parse_options(args).config;  // the deck's num_objects went with its objects
  ASSERT_EQ(c.objects.size(), 1u);
  EXPECT_EQ(c.objects[0].type, 2);

  EXPECT_EQ(cfg({path}).objects.size(), 2u);
  EXPECT_EQ(cfg({path, "--nx", "4"}).objects.size(), 2u);

  args.insert(args.end(), {"--num_objects", "2"});
  EXPECT_THAT(error_of(args), HasSubstr("fewer --object than --num_objects"));
}

TEST_F(DeckTest, ErrorsNameFileLineAndKey) {
  const auto deck_error = [&](std::string_view text) {
    const std::string path = write(text);
    return std::pair{error_of({path}), path};
  };
  {
    const auto [msg, path] = deck_error("nx = 16\n\nnz_ = 4\n");
    EXPECT_EQ(msg, path + ":3: unknown key 'nz_' (did you mean 'nz'?)");
  }
  {
    const auto [msg, path] = deck_error("# c\nnx 16\n");
    EXPECT_EQ(msg, path + ":2: expected 'key = value', got 'nx 16'");
  }
  {
    const auto [msg, path] = deck_error("nx = 16 18\n");
    EXPECT_EQ(msg, path + ":1: too many values for 'nx': expects 1, got 2");
  }
  {
    const auto [msg, path] = deck_error("nx =\n");
    EXPECT_EQ(msg, path + ":1: missing value for 'nx': expects an integer");
  }
  {
    const auto [msg, path] = deck_error("nx = abc\n");
    EXPECT_EQ(msg, path + ":1: 'nx' expects an integer, got 'abc'");
  }
  {
    const auto [msg, path] = deck_error("\n\npermute = yes\n");
    EXPECT_EQ(msg, path + ":3: 'permute' expects true or false, got 'yes'");
  }
  {
    const auto [msg, path] = deck_error("permute =\n");
    EXPECT_THAT(msg, HasSubstr(":1: missing value for 'permute'"));
  }
  {
    const auto [msg, path] = deck_error("object = 2 0 0.5\n");
    EXPECT_THAT(msg, HasSubstr(":1: missing values for 'object': expects 14 values"));
  }
  {
    const auto [msg, path] = deck_error("object = 2 0 0 0 0 0 0 0 1 1 1 0 0 0 7\n");
    EXPECT_THAT(msg, HasSubstr(":1: too many values for 'object': expects 14, got 15"));
  }
  {
    const auto [msg, path] = deck_error("= 4\n");
    EXPECT_THAT(msg, HasSubstr(":1: missing key"));
  }
  {
    const auto [msg, path] = deck_error("--nx = 4\n");
    EXPECT_THAT(msg, HasSubstr(":1: write deck keys without dashes: 'nx'"));
  }
  {
    const auto [msg, path] = deck_error("-- = 4\n");
    EXPECT_THAT(msg, HasSubstr(":1: unknown key '--'"));
  }
}

TEST_F(DeckTest, MissingOrUnreadableDeck) {
  const std::string missing = (dir_ / "nope.txt").string();
  EXPECT_THAT(error_of({missing}), HasSubstr("cannot read deck file '" + missing + "'"));
  EXPECT_THAT(error_of({dir_.string()}), HasSubstr("is a directory"));
  EXPECT_THAT(error_of({"/dev/zero"}), HasSubstr("it is not a regular file"));
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(error_of({fifo}), HasSubstr("it is not a regular file"));  // and does not block
  const std::string big = write(std::string(kMaxDeckBytes + 1, '#'), "big.txt");
  EXPECT_THAT(error_of({big}), HasSubstr("it is larger than 1024 KiB"));
  EXPECT_EQ(error_of({write(std::string(kMaxDeckBytes, '#'), "limit.txt")}), "");
}

TEST_F(DeckTest, ByteOrderMarkNulAndRepeatedKeys) {
  EXPECT_EQ(cfg({write("\xEF\xBB\xBFnx = 4\n")}).nx, 4);
  const std::string nul = write(std::string("nx = 4\n\n# x\0\n", 14));
  EXPECT_EQ(error_of({nul}), nul + ":3: a NUL byte: a deck is a text file");
  const std::string twice = write("nx = 4\n# again\nnx = 6\n");
  EXPECT_EQ(error_of({twice}), twice + ":3: 'nx' is given twice in the deck (first on line 1)");
  // The command line still overrides a deck's value, and a deck may list many objects.
  EXPECT_EQ(cfg({write("nx = 4\n"), "--nx", "6"}).nx, 6);
  const std::string objects = write(
      "object = 2 0 0.5 0.5 0.5 0 0 0 0.1 0.1 0.1 0 0 0\n"
      "object = 3 0 0.5 0.5 0.5 0 0 0 0.1 0.1 0.1 0 0 0\n");
  EXPECT_EQ(cfg({objects}).objects.size(), 2u);
}

TEST_F(DeckTest, DeckPathOnlyFirst) {
  const std::string path = write("nx = 4\n");
  EXPECT_THAT(error_of({"--ny", "4", path}), HasSubstr("unexpected argument '" + path + "'"));
}

TEST(Deck, ParseDeckKeepsLineNumbersAndWords) {
  const Deck deck = parse_deck("# x\n a = 1  2 \n\nb=3#c\n", "d.txt");
  EXPECT_EQ(deck.name, "d.txt");
  ASSERT_EQ(deck.entries.size(), 2u);
  EXPECT_EQ(deck.entries[0].key, "a");
  EXPECT_EQ(deck.entries[0].values, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(deck.entries[0].line, 2);
  EXPECT_EQ(deck.entries[1].key, "b");
  EXPECT_EQ(deck.entries[1].values, (std::vector<std::string>{"3"}));
  EXPECT_EQ(deck.entries[1].line, 4);
  EXPECT_THROW(parse_deck("a b = 1\n", "d.txt"), UsageError);
}

Config input_deck(const std::string& name) {
  return cfg({std::string(MINIAMR_INPUTS) + "/" + name});
}

// Every deck shipped in inputs/ is one the options accept (parsing validates the whole run).
TEST(InputDecks, EveryShippedDeckParses) {
  int decks = 0;
  for (const auto& entry : std::filesystem::directory_iterator(MINIAMR_INPUTS)) {
    if (entry.path().extension() != ".deck") continue;
    ++decks;
    EXPECT_EQ(error_of({entry.path().string()}), "") << entry.path();
  }
  EXPECT_GE(decks, 8);
}

// The weak-scaling deck is the cluster deck as the problem of one rank: one root block (so
// `miniamr-study weak` gives each rank one), everything else the same.
TEST(InputDecks, TheWeakDeckIsTheClusterDeckOnOneRootBlock) {
  const Config weak = input_deck("two_spheres-weak.deck");
  const Config cluster = input_deck("two_spheres-cluster.deck");
  EXPECT_EQ(weak.root_blocks(), (std::array<int, 3>{1, 1, 1}));
  EXPECT_NE(cluster.root_blocks(), weak.root_blocks());
  EXPECT_EQ(weak.objects, cluster.objects);
  EXPECT_EQ(weak.block_shape(), cluster.block_shape());
  EXPECT_EQ(weak.num_refine, cluster.num_refine);
  EXPECT_EQ(weak.num_tsteps, cluster.num_tsteps);
  EXPECT_EQ(weak.refine_freq, cluster.refine_freq);
  EXPECT_EQ(weak.stages_per_ts, cluster.stages_per_ts);
  EXPECT_EQ(weak.checksum_freq, cluster.checksum_freq);
}

// ---- Help --------------------------------------------------------------------------------------

TEST(Options, HelpMentionsEveryOption) {
  const std::string help = help_text();
  constexpr std::array<std::string_view, 47> kNames{
      "nx",
      "ny",
      "nz",
      "init_x",
      "init_y",
      "init_z",
      "npx",
      "npy",
      "npz",
      "max_blocks",
      "num_refine",
      "block_change",
      "uniform_refine",
      "refine_freq",
      "inbalance",
      "lb_opt",
      "num_vars",
      "comm_vars",
      "num_tsteps",
      "time",
      "stages_per_ts",
      "checksum_freq",
      "stencil",
      "error_tol",
      "report_diffusion",
      "report_perf",
      "plot_freq",
      "code",
      "permute",
      "blocking_send",
      "refine_ghost",
      "refine_ghosts",
      "change_dir",
      "group_blocks",
      "break_ties",
      "limit_move",
      "send_faces",
      "rcb",
      "morton",
      "hilbert",
      "trunc_hilbert",
      "reorder",
      "num_objects",
      "object",
      "--help",
      "-h",
      "type bounce cx cy cz mx my mz sx sy sz ix iy iz"};
  for (const std::string_view name : kNames) {
    const std::string needle = name.starts_with('-') || name.find(' ') != std::string_view::npos
                                   ? std::string(name)
                                   : "--" + std::string(name) + " ";
    EXPECT_THAT(help, HasSubstr(needle)) << name;
  }
  EXPECT_THAT(help, HasSubstr("--report_perf M"));
  EXPECT_THAT(help, HasSubstr("[default: 12]"));
}

// The options of `help`'s section `group` ("mesh options:" up to the next heading), in order.
std::vector<std::string> options_under(const std::string& help, const std::string& group) {
  std::vector<std::string> names;
  const auto start = help.find(std::string("\n").append(group).append(" options:\n"));
  if (start == std::string::npos) return names;
  const auto end = help.find(" options:\n", start + group.size() + 12);
  const std::string section = help.substr(start, end == std::string::npos ? end : end - start);
  for (auto at = section.find("\n  --"); at != std::string::npos;
       at = section.find("\n  --", at + 1)) {
    const auto stop = section.find_first_of(" \n", at + 5);
    names.push_back(section.substr(at + 5, stop - at - 5));
  }
  return names;
}

TEST(Options, HelpGroupsTheOptionsByTopic) {
  const std::string help = help_text();
  std::size_t previous = 0;
  std::size_t listed = 0;
  for (const char* group : {"run", "mesh", "objects", "runtime", "balancer", "output", "launch",
                            "checkpoint", "simulation", "compatibility", "other"}) {
    const auto at = help.find(std::string("\n").append(group).append(" options:\n"));
    ASSERT_NE(at, std::string::npos) << group;
    EXPECT_GT(at, previous) << group << " out of order";
    previous = at;
    listed += options_under(help, group).size();
  }
  // Every option once, under one topic (and --help, --version under "other").
  std::size_t all = 0;
  for (auto at = help.find("\n  --"); at != std::string::npos; at = help.find("\n  --", at + 1))
    ++all;
  EXPECT_EQ(listed, all);
  EXPECT_EQ(options_under(help, "mesh")[0], "nx");
  EXPECT_THAT(options_under(help, "runtime"), ::testing::Contains("runtime"));
  EXPECT_THAT(options_under(help, "output"), ::testing::Contains("plot_format"));
  // The options that change nothing, and only they, in a group of their own.
  EXPECT_EQ(options_under(help, "compatibility"),
            (std::vector<std::string>{"code", "permute", "change_dir", "group_blocks", "break_ties",
                                      "limit_move", "send_faces", "rcb", "reorder"}));
  // Lines fit a terminal (the --object head alone is wider).
  std::size_t line_start = 0;
  for (auto end = help.find('\n'); end != std::string::npos; end = help.find('\n', end + 1)) {
    const std::string line = help.substr(line_start, end - line_start);
    if (line.find("--object type") == std::string::npos) {
      EXPECT_LE(line.size(), 80u) << line;
    }
    line_start = end + 1;
  }
}

// Defaults and meanings say what happens: --rcb gives the curve cut, --npx does not ask for
// npx*npy*npz ranks.
TEST(Options, HelpSaysWhatHappens) {
  const std::string help = help_text();
  // An option's entry, its wrapped lines joined.
  const auto option = [&help](const std::string& name) {
    const auto at = help.find(std::string("\n  --").append(name).append(" "));
    std::string entry;
    for (const char c : help.substr(at, help.find("\n  --", at + 1) - at))
      if (!(c == ' ' || c == '\n') || (!entry.empty() && entry.back() != ' '))
        entry += (c == '\n' ? ' ' : c);
    return entry;
  };
  EXPECT_THAT(option("rcb"), HasSubstr("not implemented"));
  EXPECT_THAT(option("rcb"), HasSubstr("[default: the curve cut]"));
  EXPECT_THAT(option("npx"), HasSubstr("any number of ranks"));
  EXPECT_THAT(option("npx"), ::testing::Not(HasSubstr("= number of ranks")));
  EXPECT_THAT(option("morton"), HasSubstr("[default: on]"));
}

}  // namespace
}  // namespace miniamr::app
