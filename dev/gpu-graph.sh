# A device call for the whole step as one CUDA graph (fullpass --graph, cb_exec_graph_capture):
# the GPU tests that now include graph_cases (a replayed step against launched ones, on cuda,
# cudnn and auto), then each cell's step launched and as a graph, in one call, with the
# per-layer breakdown's gaps. Results under $OUT (logs.tgz, fp.tgz).
#   bash dev/gpu-graph.sh COMMIT     # SKIP_TESTS=1; CELLS="net:batch:prec:layout[:u] ..."
set -u; B=build-gpu; RES=/tmp/cb-res; mkdir -p $RES $OUT; . scripts/device-env.sh; CB=$B/convbench
t0=$SECONDS; stamp() { echo "== +$((SECONDS - t0)) s $*"; }
[ -x $CB ] || make -j16 BUILD=$B COMMIT=$1 all > $RES/build.log 2>&1 || { tail -20 $RES/build.log; exit 1; }
stamp built
if [ -z "${SKIP_TESTS:-}" ]; then
  timeout 240 $B/tests/test_gpu --part net > $RES/t_net.log 2>&1 &
  timeout 240 $B/tests/test_gpu --part storage > $RES/t_storage.log 2>&1 &
  timeout 240 $B/tests/test_gpu --part rest > $RES/t_rest.log 2>&1 &
  timeout 240 $B/tests/test_ops cuda cudnn auto > $RES/t_ops.log 2>&1 &
  wait
  for f in $RES/t_*.log; do echo "$(basename $f): $(tail -1 $f)"; grep -E "^FAIL" $f | head -5; done
  grep -h "graph" $RES/t_net.log | grep -v "^ok" | head -5
  stamp tests
fi
printf '%-14s %5s %-5s %-5s %9s %9s %7s %9s\n' net batch prec lay launched graph speedup gaps_ms
for c in ${CELLS:-resnet50:256:bf16:nhwc:u}; do IFS=: read n b p l u <<<"$c"
  t=$(basename $n .json)
  timeout 150 $CB fullpass $n --batch $b --backend auto --precision $p --layout $l --no-data-grad --no-criterion \
    ${u:+--update} --warmup 3 --iters ${ITERS:-10} --graph --format json --quiet --output $RES/fp_${t}_${b}_${p}_${l}.json 2> $RES/fp_${t}_${b}.err ||
    { echo "$t b$b: failed: $(tail -1 $RES/fp_${t}_${b}.err)"; continue; }
  python3 -c "
import json,sys; d=json.load(open(sys.argv[1]))
ph={r['phase']: r for r in d['tables']['fullpass']}
bd={r['part']: r for r in d['tables'].get('breakdown', [])}
gap=[r for k, r in bd.items() if k.startswith('gaps')]
s=ph['total']['median_ms']; g=ph['total, one graph (--graph)']['median_ms']
print('%-14s %5s %-5s %-5s %9.3f %9.3f %7.3f %9s' % (sys.argv[2], d['batch'], d['precision'], d['layout'], s, g, s / g,
      '%.3f' % gap[0]['total_ms'] if gap and isinstance(gap[0].get('total_ms'), float) else '-'))" $RES/fp_${t}_${b}_${p}_${l}.json $t 2>&1 | tail -1
done
stamp bench
(cd $RES && tar czf $OUT/logs.tgz *.log *.err 2>/dev/null; tar czf $OUT/fp.tgz fp_*.json 2>/dev/null)
