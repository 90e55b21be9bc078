// SPDX-License-Identifier: Apache-2.0
// A plain-text table with a header row and aligned columns, for terminal
// output: columns are as wide as their widest cell, separated by two spaces,
// indented by `indent`; the last column is never padded, so long text (paths,
// reasons) does not push trailing blanks; a newline in a last-column cell
// continues the text under that column. Widths count bytes, which is exact
// for the ASCII that anydev reports.
//
// A Table owns copies of its cells. Not thread-safe; use one per thread.
#ifndef ANYDEV_TOOLS_ANYDEV_INFO_TABLE_H_
#define ANYDEV_TOOLS_ANYDEV_INFO_TABLE_H_

#include <ostream>
#include <string>
#include <vector>

namespace anydev_info {

class Table {
 public:
  enum class Align { left, right };
  struct Column {
    std::string header;
    Align align = Align::left;
  };

  explicit Table(std::vector<Column> columns, int indent = 2);

  // Adds a row; it must have exactly one cell per column.
  void add_row(std::vector<std::string> cells);
  bool empty() const noexcept { return rows_.empty(); }

  void write(std::ostream& out) const;

 private:
  void write_row(std::ostream& out, const std::vector<std::string>& cells,
                 const std::vector<std::size_t>& widths) const;

  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
  int indent_;
};

}  // namespace anydev_info

#endif  // ANYDEV_TOOLS_ANYDEV_INFO_TABLE_H_
