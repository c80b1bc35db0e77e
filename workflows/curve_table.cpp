#include "workflows/curve_table.h"

#include "core/error.h"
#include "workload/rank_graph.h"

namespace sim::workflows {

std::vector<CsvRow> parse_csv(const std::string& text, const std::string& source) {
  std::vector<CsvRow> rows;
  std::size_t row_line = 1;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  std::size_t line = 1, quote_line = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      quote_line = line;
      any = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        row.push_back(std::move(field));
        rows.push_back(CsvRow{row_line, std::move(row)});
      }
      row.clear();
      field.clear();
      any = false;
      row_line = ++line;
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted) throw InputError(source + ":" + std::to_string(quote_line) + ": unterminated quoted field");
  if (any || !field.empty()) {
    row.push_back(std::move(field));
    rows.push_back(CsvRow{row_line, std::move(row)});
  }
  return rows;
}

std::string canonical_collective(const std::string& name) {
  CollectiveType t;
  return parse_collective_name(name, t) ? collective_name(t) : "";
}

}  // namespace sim::workflows
