# Can test_gpu's graph case fail? A copy of the tree with one line of the graph capture removed
# (the bump of param_version that makes the recorded forward refresh bf16 storage's weight cast)
# is built beside the real one; --part graph runs on both, at two learning rates
# ($CB_TEST_GRAPH_LR). The mutant must fail its bf16 cases. Needs build-gpu built (its generated
# ONNX code is copied). Logs under $1.
set -u; R=$1; mkdir -p $R
rm -rf /tmp/mut && mkdir /tmp/mut && cp -a Makefile src include tests tools nets data scripts /tmp/mut/ && mkdir -p /tmp/mut/bm && cp -a build-gpu/gen /tmp/mut/bm/
grep -q "    if (update) e->param_version++;" /tmp/mut/src/core/exec.c || { echo "mutant: the line is gone"; exit 1; }
sed -i 's/    if (update) e->param_version++;/    \/\/ mutant: no refresh recorded/' /tmp/mut/src/core/exec.c
(cd /tmp/mut && make -j16 BUILD=bm bm/tests/test_gpu > $R/mut_build.log 2>&1) || { echo "mutant build failed"; tail -5 $R/mut_build.log; exit 1; }
for lr in 0.01 0.1; do
  for t in build-gpu /tmp/mut/bm; do
    CB_TEST_GRAPH_LR=$lr timeout 120 $t/tests/test_gpu --part graph > $R/graph_$(basename $t)_$lr.log 2>&1
    echo "$t lr $lr: $(tail -1 $R/graph_$(basename $t)_$lr.log)"; grep "^FAIL" $R/graph_$(basename $t)_$lr.log | head -3
  done
done
