#!/usr/bin/env bash
# The narrow class's effect (the model's entries of their own for convolutions of at most 8 input
# channels, cb_conv_narrow) on every stored evaluation set, without a GPU: ab-eval.sh's held-out
# evaluation by a convbench built without it (CB_OLD: commit 61ef2b3) and with it (CB: commit
# 6eda701; reverted in the next, b0b68c3).
#   CB_OLD=/path/61ef2b3/convbench CB=/path/6eda701/convbench docs/results/2026-11-27-h200-stepcheck/narrow-eval.sh
#   (from the repository root)
exec bash "$(dirname "$0")/ab-eval.sh" "$CB_OLD" "${CB:-$PWD/build/convbench}"
