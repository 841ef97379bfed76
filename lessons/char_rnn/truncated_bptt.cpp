#include "lessons/char_rnn/truncated_bptt.h"

#include "core/error.h"
#include "core/ops.h"

namespace ladder::lessons {

harness::Carried bptt_carried(models::CharRNN& model, data::ContiguousBatcher& windows) {
  return {[&model, &windows] {
            std::map<std::string, Tensor> state = {{"position", scalar(static_cast<float>(windows.position()))}};
            const auto [h, c] = model.carried_state();
            if (h.defined()) state["h"] = h;
            if (c.defined()) state["c"] = c;
            return state;
          },
          [&model, &windows](const std::map<std::string, Tensor>& state) {
            if (!state.count("position")) fail("bptt_carried", "the checkpoint has no stream position");
            windows.seek(static_cast<int64_t>(state.at("position").item()));
            model.set_carried_state(state.count("h") ? state.at("h") : Tensor(), state.count("c") ? state.at("c") : Tensor());
          }};
}

}  // namespace ladder::lessons
