#!/usr/bin/env bash
# Two convbench builds' held-out evaluation over every stored set, no GPU: the sets of
# ../2026-11-27-h200-stepcheck/ab-eval.sh and the two bf16 H200 sets of 2026-11-28; per set the rows
# (all layers: median / p90) and the steps. The local form (cb_cal_local) was measured with the
# build before it, commit 4ca0b89, against the build with it (2270f1b):
#   bash docs/results/2026-11-28-h200-local/ab-eval.sh /path/before/convbench /path/after/convbench
# (from the repository root; KINDS=conv for the convolutions alone)
EXTRA_SETS="2026-11-28-workspace/model 2026-11-28-h200-local/model" exec bash "$(dirname "$0")/../2026-11-27-h200-stepcheck/ab-eval.sh" "$@"
