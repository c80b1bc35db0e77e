// release_json frees a document from the back without allocating: what the
// JSON readers use when memory has run out (docs/reliability.md).
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/strict_json.h"

namespace sim {
namespace {

TEST(StrictJsonRelease, EmptiesNestedArraysAndObjects) {
  nlohmann::json j = parse_json_strict(R"({"a": [1, {"b": [2, 3], "c": "text"}, []], "d": {"e": null}})", "t.json");
  release_json(j);
  EXPECT_TRUE(j.is_object());
  EXPECT_TRUE(j.empty());
}

TEST(StrictJsonRelease, DeeperThanItsRingOfAncestors) {
  // 3,000 levels, each with a sibling after the nested part: past the
  // 1,024-entry ring the walk starts again from the root.
  std::string text;
  for (int i = 0; i < 3000; ++i) text.append("[").append(std::to_string(i)).append(", ");
  text += "{}";
  for (int i = 0; i < 3000; ++i) text += ", \"x\"]";
  nlohmann::json j = parse_json_strict(text, "deep.json", 4000);
  release_json(j);
  EXPECT_TRUE(j.is_array());
  EXPECT_TRUE(j.empty());
}

TEST(StrictJsonRelease, ScalarIsLeftAlone) {
  nlohmann::json j = 5;
  release_json(j);
  EXPECT_EQ(j, 5);
}

TEST(StrictJsonRelease, ErrorsStillNameTheFile) {
  try {
    parse_json_strict(R"({"a": [1, 2, {"b": 1, "b": 2}]})", "dup.json");
    FAIL() << "expected a duplicate-key error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "dup.json:1: duplicate key 'b'");
  }
}

}  // namespace
}  // namespace sim
