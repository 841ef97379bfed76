// The one main() shared by every test executable.
// The precompiled header (tests/CMakeLists.txt) has read doctest's declarations already, so the
// implementation is asked for by name: WITH_MAIN alone takes effect only on a first include.
#define DOCTEST_CONFIG_IMPLEMENT
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
