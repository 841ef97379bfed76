// kSanitized (helpers.h) for one of the two executables a suite is linked into: CMake compiles this
// file once with LADDER_SANITIZED=0 and once with 1 (tests/CMakeLists.txt).
namespace ladder::testing {

extern const bool kSanitized = LADDER_SANITIZED != 0;

}  // namespace ladder::testing
