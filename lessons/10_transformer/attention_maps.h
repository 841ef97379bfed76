// The attention maps of lesson 10's Transformer (part 4): every layer and every head of its three
// attentions while it translates one test source, each kind on one page, and the source token each
// output token weighs most in the last layer's cross attention.
#pragma once

#include "harness/run.h"
#include "data/translation_task.h"
#include "lessons/translation/task_flags.h"
#include "models/translate.h"
#include "models/transformer.h"

namespace ladder::lessons {

// Translates the first test source greedily, then reads the model's weights over that translation
// (Transformer::attention_maps) and writes attention_encoder.png (source against source, the
// matrix the encoder's attention kind implies), attention_decoder.png (output against decoder
// input) and attention_cross.png (output against source): layers down, heads across, one colour
// scale from 0 to 1. Prints, per head of the last layer's cross attention, the source token each
// output token weighs most, and how many output digits weigh most a source position holding the
// same digit.
void show_attention_maps(harness::Run& run, models::Transformer& model, const data::TranslationTask& task);

}  // namespace ladder::lessons
