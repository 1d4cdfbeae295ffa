// Small text helpers for the line grammar (internal to evk_gi).
#pragma once
#include <string>
#include <vector>

#include "evk/strings.hpp"

namespace evk::gi::text {

using evk::trim;  // common/include/evk/strings.hpp
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

// Word-boundary matching without std::regex (the grammar reads every line of a kernel with these;
// a std::regex is built and run at a high cost). A word character is [A-Za-z0-9_] (ECMAScript \w in
// the "C" locale); `word` is an identifier.
bool is_word_char(char c);
// The first position >= from of `word` with no word character on either side (regex \bword\b).
std::size_t find_word(const std::string& s, const std::string& word, std::size_t from = 0);
inline bool has_word(const std::string& s, const std::string& word) { return find_word(s, word) != std::string::npos; }
// regex \bNAME\s*\( : `name` followed by optional whitespace and '(' (find_call: its first
// position >= from, or npos).
std::size_t find_call(const std::string& s, const std::string& name, std::size_t from = 0);
inline bool has_call(const std::string& s, const std::string& name) { return find_call(s, name) != std::string::npos; }
// regex (\bN\s*([-+*/%&|^]|<<|>>)?=[^=])|(\bN\s*(\+\+|--))|((\+\+|--)\s*N\b)|(&\s*N\b) for N =
// `name`: an assignment, compound assignment, increment or decrement of `name`, or its address taken.
bool assigns(const std::string& s, const std::string& name);
// Anchored statement heads, each the regex named (applied to trimmed code):
//   starts_for:        ^for\s*\(
//   starts_if:         ^(\}\s*)?(else\s+)?if\s*\(
//   starts_keyword:    ^(\}\s*)?(else\s+)?(KW1|KW2|...)\b   (with_else: the (else\s+)? group present)
bool starts_for(const std::string& s);
bool starts_if(const std::string& s);
bool starts_keyword(const std::string& s, const std::vector<std::string>& keywords, bool with_else);
// regex ^[\w\s\*&:<>,]*?\b(\w+)\s*\( : the first word followed by '(' after a prefix of those
// characters (a function head's name), or "" when there is none.
std::string leading_call_name(const std::string& s);
// regex_replace(s, \s*WORD, ""): every occurrence of `word` removed with the whitespace before it.
std::string erase_with_space_before(const std::string& s, const std::string& word);

}  // namespace evk::gi::text
