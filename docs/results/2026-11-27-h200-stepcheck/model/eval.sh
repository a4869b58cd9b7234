#!/usr/bin/env bash
# The held-out bf16 figures of ../../2026-11-27-h200-stepcheck.md (call 4), from the files here, no
# GPU: the calibration as measured (bf16 convolutions on the channel-padded input the backend runs),
# and the same without the first-layer grid entries (input channels 3 and 4, padded to 8).
#   docs/results/2026-11-27-h200-stepcheck/model/eval.sh      (from the repository root; CB=build/convbench)
exec bash dev/heldout-eval.sh "$(dirname "$0")" bf16 "without the first-layer entries" \
    "s['kind'] == 'conv' and s['shape'][1] == 8 and s['precision'] == 'bf16'"
