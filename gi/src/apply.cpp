// Applying a genome: edits left to right onto the grammar, then the grammar inverted to source.
#include <algorithm>

#include "evk/gi/genome.hpp"
#include "text.hpp"

namespace evk::gi {

// Engine code in front of every evolved source (docs/GI.md, "Evaluation"):
// - evk_gi_deadline: a %globaltimer deadline (ns) checked by the loop guards every 256 iterations, so
//   a runaway loop ends itself (the answer is then wrong and gets a penalty instead of a watchdog
//   kill); set per launch by evk_gi_stamp(budget_ns); never expires unless stamped. Only with
//   -DEVK_GI_DEADLINE=1 (`gi run --deadline`): the check keeps short fixed-count loops from being
//   unrolled (reg_deform's guarded tile kernel ran ~1.8x slower with it on an H200, and a search
//   with it found "faster" variants that validated at 1.00x), so by default the search, validate,
//   minimize, tune and the tools compile plain counting guards.
// - evk_gi_sm_ticks: per SM (index %smid) the first clock64() start and the last end seen by any warp
//   of the kernel, and the number of warps (the papers' per-multiprocessor clock timing; the kernel's
//   ticks are the longest span of any SM). evk_gi_stamp resets it. Off by default (-DEVK_GI_TICKS=1,
//   i.e. `gi run --ticks`, turns it on): its per-warp atomics cost up to half the time of a short
//   kernel (seen on reg_deform's 36 us tile kernel on an H200), which would distort fitness, and
//   evolved variants the tools ship must not carry it.
const char* const kPrelude = R"(// ---- evk gi engine: loop-guard deadline and per-SM clock ticks ----
#ifndef EVK_GI_TICKS
#define EVK_GI_TICKS 0
#endif
#ifndef EVK_GI_DEADLINE
#define EVK_GI_DEADLINE 0
#endif
#define EVK_GI_MAX_SM 256
__device__ unsigned long long evk_gi_deadline = 0xffffffffffffffffull;
__device__ unsigned long long evk_gi_sm_ticks[3 * EVK_GI_MAX_SM];
__device__ __forceinline__ unsigned long long evk_gi_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __noinline__ bool evk_gi_in_time() { return evk_gi_now() < *(volatile unsigned long long*)&evk_gi_deadline; }
struct evk_gi_tick_scope {
#if EVK_GI_TICKS
  unsigned long long t0;
  __device__ __forceinline__ evk_gi_tick_scope() : t0(clock64()) {}
  __device__ __forceinline__ ~evk_gi_tick_scope() {  // runs at every return of the kernel
    const unsigned long long t1 = clock64();
    const unsigned m = __activemask();
    unsigned lane, sm;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    if (lane == static_cast<unsigned>(__ffs(m) - 1) && sm < EVK_GI_MAX_SM) {
      atomicMin(&evk_gi_sm_ticks[3 * sm], t0);
      atomicMax(&evk_gi_sm_ticks[3 * sm + 1], t1);
      atomicAdd(&evk_gi_sm_ticks[3 * sm + 2], 1ull);
    }
  }
#endif
};
extern "C" __global__ void evk_gi_stamp(unsigned long long budget_ns) {
  for (int i = threadIdx.x; i < EVK_GI_MAX_SM; i += blockDim.x) {
    evk_gi_sm_ticks[3 * i] = 0xffffffffffffffffull;
    evk_gi_sm_ticks[3 * i + 1] = 0;
    evk_gi_sm_ticks[3 * i + 2] = 0;
  }
  if (threadIdx.x == 0) evk_gi_deadline = budget_ns ? evk_gi_now() + budget_ns : 0xffffffffffffffffull;
}
// ---- end of the engine's prelude ----
)";

namespace {
struct LineState {
  bool deleted = false;
  bool replaced = false;
  std::string replacement;
  std::vector<std::string> inserted;
};

std::string rebuild_signature(const Grammar& g, const std::string& joined, bool restrict_on,
                              const std::vector<std::string>& const_args, int lb) {
  // as the grammar found it (parse_signature): the entry's `name (` after __global__
  auto at = text::find_call(joined, g.entry, joined.find("__global__"));
  auto open = joined.find('(', at);
  auto close = text::match_paren(joined, open);
  std::string head = joined.substr(0, open + 1);
  if (lb >= 0) {
    auto gpos = head.find("__global__");
    std::string bounds = "__launch_bounds__(" + g.options.launch_threads + (lb > 0 ? ", " + std::to_string(lb) : "") + ") ";
    head.insert(gpos + std::string("__global__ ").size(), bounds);
  }
  std::string args;
  auto parts = text::split_top(joined.substr(open + 1, close - open - 1), ',');
  for (std::size_t k = 0; k < parts.size(); ++k) {
    std::string a = parts[k];
    bool dummy = false;
    std::string code = text::trim(text::code_part(a, dummy));
    auto ids = text::identifiers(code);
    std::string name = ids.empty() ? "" : ids.back();
    bool is_ptr = code.find('*') != std::string::npos;
    if (is_ptr && code.find('[') == std::string::npos) {
      bool has = a.find("__restrict__") != std::string::npos;
      if (restrict_on && !has) {
        auto star = a.rfind('*');
        a.insert(star + 1, " __restrict__");
      } else if (!restrict_on && has) {
        a = text::erase_with_space_before(a, "__restrict__");
      }
    }
    for (const auto& c : const_args)
      if (c == name && !is_ptr) {
        auto first = a.find_first_not_of(" \t\n");
        a.insert(first, "const ");
      }
    args += (k ? "," : "") + a;
  }
  return head + args + joined.substr(close);
}
}  // namespace

// Last line (0-based) of the loop whose header is line i: the matching close brace of its body, or
// the end of its single-statement body (a statement ending in ';', after nested unbraced headers).
static int loop_end(const Grammar& g, int i) {
  const int n = static_cast<int>(g.lines.size());
  int depth = 0;
  bool opened = false, in_block = false;
  for (int j = i; j < n; ++j) {
    std::string code = text::trim(text::code_part(g.lines[j].text, in_block));
    std::size_t from = 0;
    if (j == i) {  // skip the header's parentheses (they hold the ';' of the for parts)
      auto open = code.find('(');
      from = open == std::string::npos ? code.size() : text::match_paren(code, open);
      if (from == std::string::npos) from = code.size();
    }
    for (std::size_t k = from; k < code.size(); ++k) {
      if (code[k] == '{') {
        ++depth;
        opened = true;
      } else if (code[k] == '}') {
        if (--depth <= 0 && opened) return j;
      }
    }
    if (!opened && depth == 0 && !code.empty() && code.back() == ';' && (j > i || from < code.size())) return j;
  }
  return n - 1;
}

namespace {
// What a genome's edits do to the grammar's lines and rules.
struct Edits {
  std::vector<LineState> st;          // per line
  std::map<int, std::string> cond;    // IF rule -> condition text
  std::map<int, std::string> for_part;  // for rule -> text
  std::map<int, int> pragma;          // pragma rule -> -1 none, 0 bare, 1..11
  bool restrict_on = false, volatile_on = false;
  int lb = -1;
  std::map<std::string, bool> const_on;
};

// Gathers the genome's edits per line and rule, in the genome's order.
Edits apply_edits(const Grammar& g, const Genome& x) {
  Edits ed;
  ed.st.resize(g.lines.size());
  ed.restrict_on = g.restrict_default;
  for (const auto& e : x.edits) {
    int t = g.find(e.target);
    if (t < 0) continue;
    const Rule& tr = g.rules[t];
    int li = tr.line - 1;
    int s = e.source.empty() ? -1 : g.find(e.source);
    switch (tr.type) {
      case RuleType::line:
        if (e.op == Edit::Op::del) {
          ed.st[li].deleted = true;
        } else if (s >= 0 && e.op == Edit::Op::replace) {
          ed.st[li].deleted = false;
          ed.st[li].replaced = true;
          ed.st[li].replacement = g.rules[s].text;
        } else if (s >= 0) {
          ed.st[li].inserted.push_back(g.rules[s].text);
        }
        break;
      case RuleType::if_cond:
        ed.cond[t] = e.op == Edit::Op::del ? "(false)" : (s >= 0 ? g.rules[s].text : tr.text);
        break;
      case RuleType::for1:
      case RuleType::for2:
      case RuleType::for3:
        if (s >= 0) ed.for_part[t] = g.rules[s].text;
        break;
      case RuleType::pragma:
        ed.pragma[t] = e.op == Edit::Op::del ? -1 : std::stoi(e.source.substr(std::string("pragma_K").size()));
        break;
      case RuleType::launch_bounds:
        ed.lb = e.op == Edit::Op::del ? -1 : std::stoi(e.source.substr(std::string("launchbounds_K").size()));
        break;
      case RuleType::restrict_args: ed.restrict_on = e.source == "restrict_on"; break;
      case RuleType::volatile_shared: ed.volatile_on = e.source == "volatile_on"; break;
      case RuleType::const_arg: ed.const_on[tr.text] = e.source == "const_on"; break;
    }
  }
  return ed;
}

// The for lines that get a loop guard.
std::vector<bool> apply_guarded(const Grammar& g, const Edits& ed) {
  int n = static_cast<int>(g.lines.size());
  // Which loops get a guard: only those an edit can have made endless, i.e. loops whose header or
  // body (nested lines included) carries an edit, and loops without a condition. An untouched loop
  // is the human loop, whose termination does not depend on the genome; guarding it would change
  // its code (unrolling, registers) and so the fitness of every candidate and of the reference.
  std::vector<bool> touched(n, false);
  for (int i = 0; i < n; ++i)
    if (ed.st[i].deleted || ed.st[i].replaced || !ed.st[i].inserted.empty()) touched[i] = true;
  for (const auto& kv : ed.cond) touched[g.rules[kv.first].line - 1] = true;
  for (const auto& kv : ed.for_part) touched[g.rules[kv.first].line - 1] = true;
  std::vector<bool> guarded(n, false);
  for (int i = 0; i < n; ++i) {
    const Line& L = g.lines[i];
    if (!L.evolvable || L.prefix.empty() || L.rule >= 0) continue;  // for lines only
    std::string c = L.for_rules[1] >= 0 && ed.for_part.count(L.for_rules[1]) ? ed.for_part.at(L.for_rules[1]) : L.for_parts[1];
    bool t = text::trim(c).empty();
    int end = loop_end(g, i);
    for (int j = i; j <= end && !t; ++j) t = touched[j];
    guarded[i] = t;
  }
  return guarded;
}

// The text of for header line i (L): its #pragma unroll, then the header with its edited parts and guard.
std::string apply_for_line(const Line& L, int i, const Edits& ed, bool guarded) {
  std::string out;
  // for header: pragma, guarded condition
  if (L.pragma_rule >= 0) {
    auto it = ed.pragma.find(L.pragma_rule);
    if (it != ed.pragma.end() && it->second >= 0)
      out += L.indent + "#pragma unroll" + (it->second > 0 ? " " + std::to_string(it->second) : "") + "\n";
  }
  std::string p[3];
  for (int k = 0; k < 3; ++k) {
    p[k] = L.for_parts[k];
    if (L.for_rules[k] >= 0) {
      auto it = ed.for_part.find(L.for_rules[k]);
      if (it != ed.for_part.end()) p[k] = it->second;
    }
  }
  std::string c = p[1];
  if (guarded) {
    std::string guard = "EVK_GI_OK(evk_gi_guard_" + std::to_string(i + 1) + ")";
    c = p[1].empty() ? guard : guard + " && (" + p[1] + ")";
  }
  out += L.prefix + p[0] + "; " + c + "; " + p[2] + L.suffix + "\n";
  return out;
}
}  // namespace

Variant apply(const Grammar& g, const Genome& x, const ApplyOptions& ao) {
  int n = static_cast<int>(g.lines.size());
  const Edits ed = apply_edits(g, x);
  const std::vector<LineState>& st = ed.st;
  const auto& cond = ed.cond;
  const bool restrict_on = ed.restrict_on, volatile_on = ed.volatile_on;
  const int lb = ed.lb;
  const std::vector<bool> guarded = apply_guarded(g, ed);
  // where each guarded loop's counter declaration goes: before the loop, or before an explicit #pragma
  std::map<int, std::vector<int>> guard_before;
  int begin = -1;
  for (int i = 0; i < n; ++i) {
    if (text::trim(g.lines[i].text) == "//@gi begin") begin = i;
    const Line& L = g.lines[i];
    if (!L.evolvable || L.prefix.empty() || L.rule >= 0 || !guarded[i]) continue;  // guarded for lines only
    int pos = i;
    for (int p = i - 1; p > begin; --p) {
      std::string t = text::trim(g.lines[p].text);
      if (t.empty()) continue;
      if (!text::starts_with(t, "#pragma")) break;
      pos = p;
    }
    guard_before[pos].push_back(i + 1);
  }
  std::vector<std::string> const_args;
  for (auto& [a, on] : ed.const_on)
    if (on) const_args.push_back(a);
  bool sig_changed = restrict_on != g.restrict_default || lb >= 0 || !const_args.empty();

  // the kernel body's opening brace: the per-SM clock tick scope goes right after it
  int body_open = -1;
  for (int i = g.signature_end; i >= 0 && i < n && i <= g.signature_end + 2; ++i) {
    bool dummy = false;
    std::string c = text::trim(text::code_part(g.lines[i].text, dummy));
    if (!c.empty() && c.back() == '{') {
      body_open = i;
      break;
    }
  }
  // the engine's prelude and tick scope only in the searched form; the readable form defines the
  // guard macro only when a loop carries a guard
  const bool any_guard = std::find(guarded.begin(), guarded.end(), true) != guarded.end();
  std::string out = ao.engine ? kPrelude : "";
  const char* const tick_scope = ao.engine ? "  evk_gi_tick_scope evk_gi_ticks_;\n" : "";
  for (int i = 0; i < n; ++i) {
    const Line& L = g.lines[i];
    if (i == body_open + 1 && body_open >= 0 && !(sig_changed && body_open == g.signature_end)) out += tick_scope;
    if (i == begin && ao.engine) {
      out += "#ifndef EVK_GI_LOOP_LIMIT\n#define EVK_GI_LOOP_LIMIT " + std::to_string(g.options.loop_limit) + "u\n#endif\n"
             "#if EVK_GI_DEADLINE\n"
             "#define EVK_GI_OK(g) ((g)++ < EVK_GI_LOOP_LIMIT && (((g) & 255u) != 0u || evk_gi_in_time()))\n"
             "#else\n"
             "#define EVK_GI_OK(g) ((g)++ < EVK_GI_LOOP_LIMIT)\n"
             "#endif\n";
    } else if (i == begin && any_guard) {
      out += "// gi: loops an edit touches get a guard (at most EVK_GI_LOOP_LIMIT iterations per entry)\n"
             "#ifndef EVK_GI_LOOP_LIMIT\n#define EVK_GI_LOOP_LIMIT " + std::to_string(g.options.loop_limit) + "u\n#endif\n"
             "#define EVK_GI_OK(g) ((g)++ < EVK_GI_LOOP_LIMIT)\n";
    }
    if (sig_changed && i == g.signature_begin) {
      std::string joined;
      for (int j = g.signature_begin; j <= g.signature_end; ++j) joined += g.lines[j].text + (j < g.signature_end ? "\n" : "");
      out += rebuild_signature(g, joined, restrict_on, const_args, lb) + "\n";
      i = g.signature_end;
      if (body_open == i) out += tick_scope;
      continue;
    }
    if (auto it = guard_before.find(i); it != guard_before.end())
      for (int fl : it->second) out += L.indent + "unsigned evk_gi_guard_" + std::to_string(fl) + " = 0;\n";
    if (!L.evolvable) {
      const std::size_t shared = volatile_on && begin >= 0 && i > begin ? text::find_word(L.text, "__shared__") : std::string::npos;
      if (shared != std::string::npos && L.text.find("volatile") == std::string::npos &&
          L.text.find("//@gi fixed") == std::string::npos) {
        std::string t = L.text;
        t.insert(shared + std::string("__shared__").size(), " volatile");
        out += t + "\n";
      } else {
        out += L.text + "\n";
      }
      continue;
    }
    if (L.rule >= 0 && g.rules[L.rule].type == RuleType::line) {
      const LineState& s = st[i];
      for (const auto& ins : s.inserted) out += L.indent + ins + "\n";
      if (s.deleted) out += L.indent + ";  // gi: <" + g.rules[L.rule].name + "> deleted\n";
      else if (s.replaced) out += L.indent + s.replacement + "\n";
      else out += L.text + "\n";
      continue;
    }
    if (L.rule >= 0) {  // IF
      auto it = cond.find(L.rule);
      out += L.prefix + (it == cond.end() ? g.rules[L.rule].text : it->second) + L.suffix + "\n";
      continue;
    }
    out += apply_for_line(L, i, ed, guarded[i]);
  }
  std::vector<std::string> opts = nvrtc_options(x.options);
  if (!opts.empty()) {
    std::string line = "// evk-gi-nvrtc-options:";
    for (const auto& o : opts) line += " " + o;
    out = line + "\n" + out;
  }
  return {out, x.config, opts};
}

}  // namespace evk::gi
