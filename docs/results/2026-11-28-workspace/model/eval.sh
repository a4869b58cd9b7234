#!/usr/bin/env bash
# The held-out bf16 figures of ../../2026-11-28-workspace.md (call 1), from the files here, no
# GPU: the calibration as measured (its first with the backward epilogue's fused pass,
# act_bias_grad), and the same without that entry (the model then prices the pass as the ReLU's
# gradient, as before 69f2237).
#   docs/results/2026-11-28-workspace/model/eval.sh      (from the repository root; CB=build/convbench)
exec bash dev/heldout-eval.sh "$(dirname "$0")" bf16 "without act_bias_grad" "s['kind'] == 'op' and s['name'] == 'act_bias_grad'" act_bias_grad
