// ConfigReader::load: one YAML document per config file. YAML::Load reads the
// first document and drops the rest, so whatever follows it (a second
// document after '---', text after '...', a line after a top-level value
// that ended, a directive) is an error at its line; markers around the one
// document, a %YAML directive before it and empty documents after it are not.
#include "core/config_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <yaml-cpp/yaml.h>

#include "core/error.h"

namespace sim {
namespace {

// The error's text, or "" when the text loads.
std::string error_of(const std::string& yaml) {
  try {
    ConfigReader("cfg/two.yml").load(yaml);
  } catch (const InputError& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  return "";
}

TEST(ConfigReaderLoad, ASecondDocumentIsAnErrorAtItsMarkersLine) {
  EXPECT_EQ(error_of("shape: Ring\nnpus: 8\n---\nshape: Switch\n"),
            "cfg/two.yml:3: a second YAML document begins here; a config file holds one document: remove this one "
            "or move it to a file of its own");
  // After directives, at its '---'; after an empty first document too.
  EXPECT_EQ(error_of("a: 1\n...\n%YAML 1.2\n---\nb: 1\n").rfind("cfg/two.yml:4: a second YAML document begins here;", 0), 0u);
  EXPECT_EQ(error_of("---\n---\na: 1\n").rfind("cfg/two.yml:2: a second YAML document begins here;", 0), 0u);
  EXPECT_EQ(error_of("a: 1\n--- b\n").rfind("cfg/two.yml:2: a second YAML document begins here;", 0), 0u);
  // A '---' at column 0 ends a block scalar: what follows is a second document.
  EXPECT_EQ(error_of("a: |\n  text\n---\nb: 2\n").rfind("cfg/two.yml:3: a second YAML document", 0), 0u);
  // Found at its first event, however large it is or whatever comes after.
  EXPECT_EQ(error_of("a: 1\n---\nb: [" + std::string(200'000, '1') + ",\n").rfind("cfg/two.yml:2: a second", 0), 0u);
}

TEST(ConfigReaderLoad, ADocumentWithoutMarkerAfterTheFirstIsAnError) {
  const std::string after = ", the first having ended before this line (at '...', or where its top-level value ended); "
                            "a config file holds one document: remove this one or move it to a file of its own";
  EXPECT_EQ(error_of("a: 1\n...\nb: 2\n"), "cfg/two.yml:3: a second YAML document begins here" + after);
  // yaml-cpp ends the document where its top-level value ends: these lines
  // were dropped.
  EXPECT_EQ(error_of("{a: 1}\nb: 2\n"), "cfg/two.yml:2: a second YAML document begins here" + after);
  EXPECT_EQ(error_of(" a: 1\nb: 2\n"), "cfg/two.yml:2: a second YAML document begins here" + after);
  EXPECT_EQ(error_of("[1]\nb: 2\n"), "cfg/two.yml:2: a second YAML document begins here" + after);
  EXPECT_EQ(error_of("- 1\na: 1\n"), "cfg/two.yml:2: a second YAML document begins here" + after);
  // A single value is no config (every reader refuses it as not a map): what
  // follows it is not looked for.
  EXPECT_TRUE(ConfigReader("cfg/one.yml").load("\"text\"\nb: 2\n").IsScalar());
  // A directive ends the document too.
  EXPECT_EQ(error_of("a: 1\n%YAML 1.2\nb: 2\n"), "cfg/two.yml:3: a second YAML document begins here" + after);
  // UTF-16 (yaml-cpp reads it by its byte-order mark): no '---' among the
  // bytes, and the message cannot tell that the line is one.
  std::string utf16 = "\xff\xfe";
  for (const char c : std::string("a: 1\n---\nb: 2\n")) utf16 += std::string(1, c) + '\0';
  EXPECT_EQ(error_of(utf16).rfind("cfg/two.yml:2: a second YAML document begins here", 0), 0u);
  // A directive after the document, with no document after it, was dropped.
  EXPECT_EQ(error_of("a: 1\n%b: 2\n"), "cfg/two.yml:2: a line starting with '%' after the document is a YAML "
                                         "directive, and would be ignored; directives go before the document (and "
                                         "its '---')");
  EXPECT_EQ(error_of("%YAML 1.2\n---\na: 1\n...\n%YAML 1.2\n").rfind("cfg/two.yml:5: a line starting with '%'", 0), 0u);
  // Text after '...' that does not parse is invalid YAML, at its line.
  EXPECT_EQ(error_of("a: 1\n...\n]\n").rfind("cfg/two.yml:3: invalid YAML: ", 0), 0u);
}

TEST(ConfigReaderLoad, MarkersAroundOneDocumentAndEmptyDocumentsAfterItLoad) {
  const auto b_of = [](const std::string& yaml) { return ConfigReader("cfg/one.yml").load(yaml)["b"].as<int>(); };
  EXPECT_EQ(b_of("a: 1\nb: 2\n"), 2);
  EXPECT_EQ(b_of("---\na: 1\nb: 2\n"), 2);
  EXPECT_EQ(b_of("--- # one document\na: 1\nb: 2\n...\n"), 2);
  EXPECT_EQ(b_of("%YAML 1.2\n---\nb: 2\n...\n"), 2);
  EXPECT_EQ(b_of("b: 2\n...\n...\n# a comment\n"), 2);
  // Empty documents after it drop nothing: a trailing '---', '--- ~', comments.
  EXPECT_EQ(b_of("b: 2\n---\n"), 2);
  EXPECT_EQ(b_of("b: 2\n--- ~\n---\n# b: 3\n...\n---\n"), 2);
  std::string many = "b: 2\n";
  for (int i = 0; i < 20'000; ++i) many += "---\n";
  EXPECT_EQ(b_of(many), 2);
  // '---' and '...' inside values are text, not markers.
  const YAML::Node n = ConfigReader("cfg/one.yml").load("a: |\n  ---\n  ...\nb: '---'\nc: \"x\n  --- y\"\nd: --- z\n");
  EXPECT_EQ(n["a"].as<std::string>(), "---\n...\n");
  EXPECT_EQ(n["b"].as<std::string>(), "---");
  EXPECT_EQ(n["c"].as<std::string>(), "x --- y");
  EXPECT_EQ(n["d"].as<std::string>(), "--- z");
  // Nothing at all, or only markers, is an empty (null) document.
  EXPECT_TRUE(ConfigReader("cfg/one.yml").load("").IsNull());
  EXPECT_TRUE(ConfigReader("cfg/one.yml").load("---\n...\n").IsNull());
}

}  // namespace
}  // namespace sim
