// Small text helpers for the line grammar (internal to evk_gi).
#pragma once
#include <string>
#include <vector>

namespace evk::gi::text {

std::string trim(const std::string& s);
std::string leading_ws(const std::string& s);
bool starts_with(const std::string& s, const std::string& p);
bool ends_with(const std::string& s, const std::string& p);
// The code part of a line: string/char literals kept, `//` comments and one-line `/* */` removed.
// `in_block` carries an open multi-line /* comment across lines.
std::string code_part(const std::string& line, bool& in_block);
// Identifiers in code, skipping literals, numbers and member names after `.` or `->`.
std::vector<std::string> identifiers(const std::string& code);
bool is_keyword(const std::string& id);
// Index of the parenthesis matching the '(' at `open`, or npos.
std::size_t match_paren(const std::string& s, std::size_t open);
// Splits at `sep` outside (), [], {} and literals; pieces keep their exact text.
std::vector<std::string> split_top(const std::string& s, char sep);
// Names declared by a statement such as "const int a = 1, *b;" (empty when it is no declaration).
std::vector<std::string> declared_names(const std::string& code);
// Braces '{' minus '}' outside literals.
int brace_delta(const std::string& code, int* opens = nullptr, int* closes = nullptr);
std::vector<std::string> split_ws(const std::string& s);

}  // namespace evk::gi::text
