// io/plain_files.h: what in a folder is no file to write into, and its removal, the link only.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "file_helpers.h"
#include "io/plain_files.h"

namespace fs = std::filesystem;

TEST_CASE("a link, a named pipe or a device is no plain file: each is removed and listed, a link without what it points at") {
  const fs::path dir = fs::temp_directory_path() / ("ladder_plain_files_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "folder");
  std::ofstream(dir / "target.txt") << "keep\n";
  std::ofstream(dir / "file.csv") << "step\n";
  fs::create_symlink(dir / "target.txt", dir / "linked.png");
  fs::create_directory_symlink(dir / "folder", dir / "linked_folder");
  fs::create_symlink(dir / "nowhere", dir / "dangling.svg");
  ladder::testing::make_fifo((dir / "pipe.md").string());
  CHECK(ladder::io::not_a_file(dir / "linked.png") == "a link");
  CHECK(ladder::io::not_a_file(dir / "linked_folder") == "a link");  // a link to a folder is no folder
  CHECK(ladder::io::not_a_file(dir / "pipe.md") == "not a regular file");
  CHECK(ladder::io::not_a_file("/dev/null") == "not a regular file");
  for (const char* plain : {"file.csv", "folder", "missing.png"}) CHECK(ladder::io::not_a_file(dir / plain).empty());

  const std::string removed = ladder::io::remove_not_files(
      {dir / "file.csv", dir / "linked.png", dir / "folder", dir / "dangling.svg", dir / "pipe.md", dir / "linked_folder", dir / "missing.png"});
  CHECK(removed == "linked.png (a link), dangling.svg (a link), pipe.md (not a regular file), linked_folder (a link)");
  for (const char* gone : {"linked.png", "dangling.svg", "pipe.md", "linked_folder"}) CHECK_FALSE(fs::exists(fs::symlink_status(dir / gone)));
  CHECK(fs::exists(dir / "file.csv"));
  CHECK(fs::is_directory(dir / "folder"));
  std::ifstream target(dir / "target.txt");
  std::string kept;
  std::getline(target, kept);
  CHECK(kept == "keep");  // what the link pointed at is untouched
  CHECK(ladder::io::remove_not_files({dir / "file.csv"}).empty());
  fs::remove_all(dir);
}
