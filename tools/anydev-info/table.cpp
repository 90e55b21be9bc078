// SPDX-License-Identifier: Apache-2.0
#include "table.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace anydev_info {

Table::Table(std::vector<Column> columns, int indent)
    : columns_(std::move(columns)), indent_(indent) {}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size()) {
    throw std::logic_error("Table::add_row: got " + std::to_string(cells.size()) + " cells for " +
                           std::to_string(columns_.size()) + " columns");
  }
  rows_.push_back(std::move(cells));
}

void Table::write(std::ostream& out) const {
  std::vector<std::size_t> widths(columns_.size());
  std::vector<std::string> headers;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    headers.push_back(columns_[c].header);
    widths[c] = columns_[c].header.size();
    for (const auto& row : rows_) widths[c] = std::max(widths[c], row[c].size());
  }
  write_row(out, headers, widths);
  for (const auto& row : rows_) write_row(out, row, widths);
}

void Table::write_row(std::ostream& out, const std::vector<std::string>& cells,
                      const std::vector<std::size_t>& widths) const {
  std::string line(static_cast<std::size_t>(indent_), ' ');
  for (std::size_t c = 0; c + 1 < cells.size(); ++c) {
    const std::size_t pad = widths[c] - cells[c].size();
    if (columns_[c].align == Align::right) line.append(pad, ' ');
    line += cells[c];
    if (columns_[c].align == Align::left) line.append(pad, ' ');
    line += "  ";
  }
  // The last cell may span several lines: continuation lines start under it.
  const std::size_t last_column_start = line.size();
  const std::string& last = cells.back();
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = last.find('\n', begin);
    if (begin > 0) line.assign(last_column_start, ' ');
    line.append(last, begin, end == std::string::npos ? std::string::npos : end - begin);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
    if (end == std::string::npos) break;
    begin = end + 1;
  }
}

}  // namespace anydev_info
