// The streamed JSON writer lays documents out as nlohmann::json::dump(2)
// does and reads back to the same values.
#include "report/json_stream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

namespace sim {
namespace {

TEST(JsonStream, MatchesTheLibraryLayoutAndValues) {
  std::ostringstream out;
  JsonStream j(out);
  j.begin_object();
  j.key("units").begin_object().field("time", "ns").end_object();
  j.field("name", "a \"quoted\"\\ name\n\twith\x01 control");
  j.field("count", std::uint64_t{18446744073709551615ull}).field("neg", std::int64_t{-5});
  j.field("half", 0.5).field("whole", 2.0).field("tiny", 1.25e-7).field("exact", 21471.52);
  j.key("empty_array").begin_array().end_array();
  j.key("empty_object").begin_object().end_object();
  j.key("rows").begin_array();
  j.begin_object().field("rank", 0).field("ok", true).end_object();
  j.begin_object().field("rank", 1).field("ok", false).end_object();
  j.end_array();
  j.key("list").begin_array().value("x").value(3).end_array();
  j.end_object();

  nlohmann::ordered_json expected;
  expected["units"] = {{"time", "ns"}};
  expected["name"] = "a \"quoted\"\\ name\n\twith\x01 control";
  expected["count"] = 18446744073709551615ull;
  expected["neg"] = -5;
  expected["half"] = 0.5;
  expected["whole"] = 2.0;
  expected["tiny"] = 1.25e-7;
  expected["exact"] = 21471.52;
  expected["empty_array"] = nlohmann::ordered_json::array();
  expected["empty_object"] = nlohmann::ordered_json::object();
  expected["rows"] = {{{"rank", 0}, {"ok", true}}, {{"rank", 1}, {"ok", false}}};
  expected["list"] = {"x", 3};
  EXPECT_EQ(out.str(), expected.dump(2));
  EXPECT_EQ(nlohmann::ordered_json::parse(out.str()), expected);
}

TEST(JsonStream, NonFiniteNumbersAreNull) {
  std::ostringstream out;
  JsonStream j(out);
  j.begin_array().value(std::nan("")).value(std::numeric_limits<double>::infinity()).end_array();
  EXPECT_EQ(out.str(), "[\n  null,\n  null\n]");
}

}  // namespace
}  // namespace sim
