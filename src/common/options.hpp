// Command-line options: declared once, parsed, and printed as --help.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace strata {

class OptionSet {
 public:
  // An option taking a value: --name VALUE or --name=VALUE.
  void add(const std::string& name, const std::string& metavar, const std::string& help,
           const std::string& default_value = "");
  // A boolean switch: --name.
  void add_flag(const std::string& name, const std::string& help);
  // Starts a titled group in the help text.
  void section(const std::string& title);
  // A one-letter spelling of a declared option: -L VALUE (or -LVALUE) for --name VALUE, -L for a
  // flag (IOR's short options on the ior kernel).
  void alias(char letter, const std::string& name);

  // Parses `args`; returns the positional arguments. Throws a usage Error on an unknown
  // option, a missing value or a value given to a flag. "--help" sets help_requested().
  std::vector<std::string> parse(const std::vector<std::string>& args);

  bool help_requested() const { return help_; }
  bool given(const std::string& name) const;  // set on the command line
  bool flag(const std::string& name) const;
  std::string get(const std::string& name) const;  // the value, or its default
  std::string help_text() const;
  bool declared(const std::string& name) const;

  struct Spec {
    std::string name, metavar, help, default_value;
    bool is_flag = false;
    bool is_section = false;  // a help section's title (name), not an option
    char letter = 0;          // its one-letter alias, or 0
  };
  // Every option and section title, as declared (for the catalogue, strata info --catalogue).
  const std::vector<Spec>& specs() const { return specs_; }

 private:
  const Spec* find(const std::string& name) const;
  Spec* find(const std::string& name);
  const Spec* find_letter(char letter) const;
  [[noreturn]] void unknown(const std::string& given) const;
  std::vector<Spec> specs_;
  std::map<std::string, std::string> values_;
  bool help_ = false;
};

}  // namespace strata
