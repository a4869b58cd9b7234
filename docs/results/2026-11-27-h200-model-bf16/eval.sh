#!/usr/bin/env bash
# The held-out bf16 figures of ../2026-11-27-h200-wcopy.md (call 5), from the files here, no GPU:
# the calibration as measured (its bf16 NHWC pass samples included), and the same with those
# samples removed (the model then prices bf16 passes from fp32's with half the bytes).
#   docs/results/2026-11-27-h200-model-bf16/eval.sh      (from the repository root; CB=build/convbench)
exec bash dev/heldout-eval.sh "$(dirname "$0")" bf16 "without the bf16 passes" "s['kind'] == 'op' and s['precision'] == 'bf16'" '*'
