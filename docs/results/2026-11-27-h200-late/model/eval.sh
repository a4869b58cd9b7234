#!/usr/bin/env bash
# The held-out bf16 figures of ../../2026-11-27-h200-late.md (call 2), from the files here, no GPU:
# the calibration as measured (the legacy NHWC batch norm's entries included), and the same with
# those samples removed (the model then prices that batch norm as the Ex API's).
#   docs/results/2026-11-27-h200-late/model/eval.sh      (from the repository root; CB=build/convbench)
exec bash dev/heldout-eval.sh "$(dirname "$0")" bf16 "without the legacy batch norm entries" \
    "s['name'] in ('bn_fwd_train_odd', 'bn_bwd_odd')" bn_fwd_train_odd bn_bwd_odd
