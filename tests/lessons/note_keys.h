// The figures a lesson's note marks (<!-- run: KEY -->), each found in the smoke test's --quick run:
// the check `ladder_check_notes --quick` makes, made on the run the smoke test already has, so that
// the suite runs each lesson once. The run must have the note's run-quick flags. The wall time, the
// load and the cores are what check-notes measures around a run it starts (timing.json): the suite's
// check_notes_keys test checks those, on lesson 00.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "core/error.h"
#include "lessons/lesson_runner.h"
#include "markers.h"
#include "run_folder.h"

namespace ladder::testing {

inline void check_note_keys(const std::filesystem::path& run) {
  const std::string lesson = summary_of(run)["lesson"];
  const std::string note = "docs/" + lesson + ".md";
  const check_notes::Markers markers = check_notes::read_markers(note, read_text(std::filesystem::path(LADDER_SOURCE_DIR) / note));
  for (const std::string& problem : markers.problems) FAIL_CHECK(problem);
  REQUIRE_MESSAGE(!markers.found.empty(), note, " marks no figure of its run");
  const check_notes::RunFolder folder(run);
  for (const check_notes::Marker& m : markers.found) {
    if (check_notes::measured_around_run(m.source)) continue;
    try {
      folder.check_exists(m.source);
    } catch (const Error& e) {
      FAIL_CHECK(note << ":" << m.line << ": " << m.key_text << ": " << e.what());
    }
  }
}

}  // namespace ladder::testing
