// A yaml-cpp program for the `drhook wrap -x c++` test: parses documents,
// reads nodes, emits a document, and (mode "throw") catches the exceptions
// yaml-cpp throws through wrapped functions. Its own routines are Dr.Hook
// routines, so the library's calls are nested under them.
//
//   yaml_prog <n> [throw]
//
// parse: n times YAML::Load(std::string) of a small document, then
// Node::operator[] / size() / IsMap() on it; emit: an Emitter with n
// key/value pairs through operator<< (const char *, int, manipulators).
#include <drhook.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

static long parse(int n) {
  long total = 0;
  DRHOOK_START(parse);
  for (int i = 0; i < n; i++) {
    std::string doc = "a: " + std::to_string(i) + "\nb: [1, 2, 3]\n";
    YAML::Node root = YAML::Load(doc);
    if (root.IsMap()) total += root["b"].size();
  }
  DRHOOK_END(0);
  return total;
}

static std::string emit(int n) {
  std::string s;
  DRHOOK_START(emit);
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (int i = 0; i < n; i++) {
    std::string key = "k" + std::to_string(i);
    out << YAML::Key << key.c_str() << YAML::Value << i;
  }
  out << YAML::EndMap;
  s = out.c_str();
  DRHOOK_END(0);
  return s;
}

// Invalid YAML: YAML::Load throws YAML::ParserException through its
// wrapper; the caller catches it unchanged.
static int bad_load(int n) {
  int caught = 0;
  DRHOOK_START(bad_load);
  for (int i = 0; i < n; i++) {
    try {
      YAML::Node bad = YAML::Load("a: [1, 2\nb: }");
      std::printf("no exception\n");
    } catch (const YAML::ParserException &e) {
      if (i == 0) std::printf("caught ParserException at line %d: %s\n", e.mark.line + 1, e.msg.c_str());
      caught++;
    }
  }
  DRHOOK_END(0);
  return caught;
}

int main(int argc, char **argv) {
  DRHOOK_START(main);
  int n = argc > 1 ? std::atoi(argv[1]) : 3;
  bool throws = argc > 2 && std::strcmp(argv[2], "throw") == 0;
  std::printf("parsed %ld\n", parse(n));
  std::string s = emit(n);
  std::printf("emitted %zu bytes, %d lines\n", s.size(), (int)std::count(s.begin(), s.end(), '\n') + 1);
  if (throws) std::printf("caught %d of %d\n", bad_load(n), n);
  DRHOOK_END(0);
  return 0;
}
