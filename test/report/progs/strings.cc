// strings.cc - test_report_text.py, test_report_pool.py (libstdc++'s exception pool beside): allocations inside libstdc++'s inline
// code, whose DWARF paths read /usr/lib/gcc/.../../../../include/c++/...
#include <string>
#include <vector>

int main() {
  std::vector<std::string> v;
  for (int i = 0; i < 1000; i++) v.push_back(std::string(100, 'x'));
  return v.size() != 1000;
}
