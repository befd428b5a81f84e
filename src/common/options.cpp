#include "common/options.hpp"

#include <sstream>

#include "common/error.hpp"
#include "common/suggest.hpp"

namespace strata {

void OptionSet::add(const std::string& name, const std::string& metavar, const std::string& help,
                    const std::string& default_value) {
  specs_.push_back({name, metavar, help, default_value, false, false});
}

void OptionSet::add_flag(const std::string& name, const std::string& help) {
  specs_.push_back({name, "", help, "", true, false});
}

void OptionSet::section(const std::string& title) { specs_.push_back({title, "", "", "", false, true}); }

const OptionSet::Spec* OptionSet::find(const std::string& name) const {
  for (const auto& s : specs_) {
    if (!s.is_section && s.name == name) return &s;
  }
  return nullptr;
}

OptionSet::Spec* OptionSet::find(const std::string& name) {
  return const_cast<Spec*>(static_cast<const OptionSet*>(this)->find(name));
}

const OptionSet::Spec* OptionSet::find_letter(char letter) const {
  for (const auto& s : specs_) {
    if (!s.is_section && s.letter == letter) return &s;
  }
  return nullptr;
}

void OptionSet::alias(char letter, const std::string& name) {
  Spec* spec = find(name);
  if (spec == nullptr) throw_usage("internal: alias -" + std::string(1, letter) + " of undeclared --" + name);
  spec->letter = letter;
}

void OptionSet::unknown(const std::string& given) const {
  std::vector<std::string> names;
  for (const auto& s : specs_) {
    if (s.is_section) continue;
    names.push_back("--" + s.name);
    if (s.letter != 0) names.push_back(std::string("-") + s.letter);
  }
  names.push_back("--help");
  throw_usage("unknown option \"" + given + "\"" + did_you_mean(given, names) + " (see --help)");
}

bool OptionSet::declared(const std::string& name) const { return find(name) != nullptr; }

std::vector<std::string> OptionSet::parse(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      help_ = true;
      continue;
    }
    std::string name;
    std::string value;
    bool has_value = false;
    const Spec* spec = nullptr;
    if (a.size() < 3 || a.rfind("--", 0) != 0) {
      if (a.empty() || a[0] != '-' || a.size() == 1) {
        positional.push_back(a);
        continue;
      }
      spec = find_letter(a[1]);  // -L, -L VALUE or -LVALUE
      if (spec == nullptr || (spec->is_flag && a.size() > 2)) unknown(a);
      name = spec->name;
      if (a.size() > 2) {
        value = a.substr(2);
        has_value = true;
      }
    } else {
      name = a.substr(2);
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      spec = find(name);
      if (spec == nullptr) unknown("--" + name);
    }
    if (spec->is_flag) {
      if (has_value) throw_usage("option --" + name + " takes no value");
      values_[name] = "1";
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) throw_usage("option --" + name + " needs a value " + spec->metavar);
      value = args[++i];
    }
    values_[name] = value;
  }
  return positional;
}

bool OptionSet::given(const std::string& name) const { return values_.count(name) != 0; }

bool OptionSet::flag(const std::string& name) const { return given(name); }

std::string OptionSet::get(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  const Spec* spec = find(name);
  return spec ? spec->default_value : std::string();
}

std::string OptionSet::help_text() const {
  std::ostringstream out;
  for (const auto& s : specs_) {
    if (s.is_section) {
      out << "\n" << s.name << ":\n";
      continue;
    }
    std::string left = std::string(s.letter != 0 ? std::string("  -") + s.letter + ", --" : "  --") + s.name +
                       (s.is_flag ? "" : " " + s.metavar);
    out << left;
    if (left.size() < 30) {
      out << std::string(30 - left.size(), ' ');
    } else {
      out << "\n" << std::string(30, ' ');
    }
    out << s.help;
    if (!s.default_value.empty()) out << " (default " << s.default_value << ")";
    out << "\n";
  }
  return out.str();
}

}  // namespace strata
