#!/usr/bin/env bash
# Issue 3's benchmarks on the GPU machine, side by side with the PyTorch peer in the same run:
#   nets      fullpass of AlexNet b128, Overfeat b128, VGG-A b64, GoogLeNet b128 (forward + backward,
#             no data grad, no criterion: the peer's y.sum().backward()) and VGG-16 b16 with the
#             update, per backend and precision:layout (MODES, default fp32:nchw tf32:nhwc bf16:nhwc)
#   layers    convnet-benchmarks' L1-L5 per backend and precision, with the best per layer
#   profiles  every conv layer of the five nets, all directions, own (cuda) vs cudnn per precision
#   peer      bench/peer_pytorch.py: the same workloads in PyTorch + cuDNN (PEER_MODES, as MODES)
#   diag      where the time goes, for DIAG="net:batch:prec:layout ...": convbench's per-layer
#             profile (backend DIAG_BE, default auto, all directions), the kernels of a fullpass
#             under nsys when the machine has it, and PyTorch's kernels (bench/peer_kernels.py)
# Usage (after a build into $B): B=build-gpu RES=dir scripts/gpu-bench.sh [SECTION...]
# Every result is a JSON file in $RES; scripts/gpu-summary.py turns them into tables.
set -u
B=${B:-build-gpu}
RES=${RES:-gpu-res}
CB=$B/convbench
ITERS=${ITERS:-10}
mkdir -p "$RES"
# the device image's missing libraries (a carried .devpack): without them every run fails to load
# (libcjson.so.1), as one call of 2026-11-28 (wgtma, call 5) found
[ -f scripts/device-env.sh ] && . scripts/device-env.sh
sections=${*:-nets layers profiles peer}

NETS="alexnet:128 overfeat-fast:128 vgg-a:64 googlenet:128 vgg16:16"
PRECS=${PRECS:-fp32 tf32 bf16}
NET_BACKENDS=${NET_BACKENDS:-auto cudnn cuda}
PEER_LAYERS=${PEER_LAYERS-L1,L2,L3,L4,L5}
DEADLINE=${DEADLINE:-100000} # seconds: later runs are skipped (a device call has a hard limit)
start=$SECONDS
stamp() { echo "== $(date -u +%T) (+$((SECONDS - start)) s) $*"; }
late() { [ $((SECONDS - start)) -ge "$DEADLINE" ] && { echo "skip (past ${DEADLINE} s): $*"; return 0; }; return 1; }

for sec in $sections; do
case $sec in
nets)
    # MODES: precision:layout pairs (the peer's anchors are fp32 NCHW, tf32 and bf16 NHWC); files
    # are fullpass_NET_BACKEND_PREC_LAYOUT.json. The own `cuda` backend runs NCHW only.
    for mode in ${MODES:-fp32:nchw tf32:nhwc bf16:nhwc}; do
        prec=${mode%%:*} lay=${mode##*:}
        for be in $NET_BACKENDS; do
            [ "$be" = cuda ] && [ "$lay" = nhwc ] && continue
            for nb in $NETS; do
                net=${nb%%:*} batch=${nb##*:}
                extra="--no-criterion"
                [ "$net" = vgg16 ] && extra="--no-criterion --update"
                late "fullpass $net $be $prec $lay" && continue
                stamp "fullpass $net b$batch $be $prec $lay"
                timeout 120 $CB fullpass $net --batch $batch --backend $be --precision $prec --layout $lay --no-data-grad \
                    $extra --warmup 3 --iters $ITERS --format json --quiet \
                    --output "$RES/fullpass_${net}_${be}_${prec}_${lay}.json" || echo "fullpass $net $be $prec $lay failed"
            done
        done
    done ;;
layers)
    for prec in $PRECS; do
        late "layers $prec" && continue
        stamp "layers $prec"
        timeout 180 $CB layers --backend cuda,cudnn --precision $prec --warmup 2 --iters $ITERS --format json --quiet \
            --output "$RES/layers_${prec}.json" || echo "layers $prec failed"
    done ;;
profiles)
    # PROFILE_NETS: net:batch pairs (default all five); each net in every precision before the next
    for nb in ${PROFILE_NETS:-$NETS}; do
        for prec in $PRECS; do
            net=${nb%%:*} batch=${nb##*:}
            late "profile $net $prec" && continue
            stamp "profile $net b$batch $prec"
            timeout 150 $CB profile $net --batch $batch --backend cuda,cudnn --precision $prec --direction all \
                --warmup 1 --iters 5 --format json --quiet --output "$RES/profile_${net}_${prec}.json" \
                || echo "profile $net $prec failed"
        done
    done ;;
peer)
    # one run per precision:layout pair (PEER_MODES), each its own peer_MODE_LAYOUT.json
    for mode in ${PEER_MODES:-fp32:nchw tf32:nhwc bf16:nhwc}; do
        prec=${mode%%:*} lay=${mode##*:}
        late "peer $prec $lay" && continue
        stamp "PyTorch peer $prec $lay"
        PYTHONUNBUFFERED=1 timeout ${PEER_S:-300} python3 bench/peer_pytorch.py "$RES/peer_${prec}_${lay}.json" \
            --layers "$PEER_LAYERS" --nets "${PEER_NETS-alexnet,overfeat,vgg_a,googlenet,vgg16-train}" --modes $prec --layouts $lay 2>&1 \
            | tee "$RES/peer_${prec}_${lay}.out" | tail -2 # the .out keeps each result line should the run be cut short
    done ;;
diag)
    peer_name() { case $1 in vgg-a) echo vgg_a ;; overfeat-fast) echo overfeat ;; *) echo $1 ;; esac; }
    for d in ${DIAG:-vgg-a:64:bf16:nhwc}; do
        IFS=: read -r net batch prec lay <<<"$d"
        late "diag $d" && continue
        tag=${net}_${prec}_${lay}
        upd=""; [ "$net" = vgg16 ] && upd="--update"
        stamp "diag $d: convbench profile (${DIAG_BE:-auto})"
        timeout 150 $CB profile $net --batch $batch --backend ${DIAG_BE:-auto} --precision $prec --layout $lay --direction all \
            --warmup 1 --iters 5 --format md --quiet --output "$RES/diag_profile_$tag.md" || echo "profile $d failed"
        if command -v nsys >/dev/null; then
            stamp "diag $d: nsys fullpass"
            timeout 150 nsys profile -t cuda -o /tmp/diag_$tag -f true $CB fullpass $net --batch $batch --backend ${DIAG_BE:-auto} \
                --precision $prec --layout $lay --no-data-grad --no-criterion $upd --warmup 2 --iters 5 --quiet >/dev/null 2>&1
            nsys stats -r cuda_gpu_kern_sum -f csv /tmp/diag_$tag.nsys-rep 2>/dev/null | head -45 >"$RES/diag_nsys_$tag.csv"
        fi
        stamp "diag $d: PyTorch kernels"
        timeout 120 python3 bench/peer_kernels.py $(peer_name $net) $prec $lay --batch $batch $upd >"$RES/diag_peer_$tag.md" 2>&1 \
            || echo "peer_kernels $d failed"
        head -3 "$RES/diag_peer_$tag.md"
    done ;;
suite)
    # A named suite of whole-network training steps, each cell NET:BATCH:PREC:LAYOUT[:update] (NET a
    # built-in's name or a network file, named by its base name: dev/nets/resnet101.json), run
    # on every backend of SUITE_BACKENDS and by the PyTorch peer, eager and torch.compile (default
    # mode), in the same call. Fair mode: no input gradient on either side (PyTorch computes none:
    # convbench runs --no-data-grad), no criterion (the peer's y.sum().backward() is convbench's
    # --no-criterion), the SGD update (momentum 0.9, weight decay) where the cell says so.
    # scripts/suite-summary.py prints the ratios and their geometric means. SUITE_GRAPH=1: each
    # fullpass also times its step as one CUDA graph (--graph), a column of its own.
    # SUITE_COMPILE_MODES=default,reduce-overhead: torch.compile's CUDA-graph mode as a peer too.
    peer_name() { case $1 in vgg-a) echo vgg_a ;; overfeat-fast) echo overfeat ;; *) echo $1 ;; esac; }
    SUITE=${SUITE:-"alexnet:128:bf16:nhwc vgg-a:64:bf16:nhwc googlenet:128:bf16:nhwc resnet50:64:bf16:nhwc resnet50:256:bf16:nhwc:update"}
    for cell in $SUITE; do
        IFS=: read -r net batch prec lay upd <<<"$cell"
        for be in ${SUITE_BACKENDS:-auto cudnn}; do
            [ "$be" = cuda ] && [ "$lay" = nhwc ] && continue
            late "suite $cell $be" && continue
            stamp "suite fullpass $cell $be"
            timeout ${SUITE_S:-240} $CB fullpass $net --batch $batch --backend $be --precision $prec --layout $lay --no-data-grad \
                --no-criterion ${upd:+--update} ${SUITE_GRAPH:+--graph} --warmup 3 --iters $ITERS --format json --quiet \
                --output "$RES/suite_$(basename $net .json)_${batch}_${prec}_${lay}${upd:+_update}_${be}.json" || echo "fullpass $cell $be failed"
        done
    done
    # a network file the peer has no definition of: its expanded graph, which bench/peer_graph.py
    # builds as a PyTorch module (the same layers, pads, groups, fused batch norm and activation)
    mkdir -p "$RES/graphs"
    for c in $SUITE; do
        IFS=: read -r n b p l u <<<"$c"
        case $n in *.json) $CB summary $n --graph --batch $b --format json --quiet --output "$RES/graphs/$(basename $n .json).graph.json" ||
            echo "summary --graph $n failed" ;; esac
    done
    # the peer: one process per precision:layout, every cell of it eager then compiled
    for mode in $(for c in $SUITE; do IFS=: read -r n b p l u <<<"$c"; echo $p:$l; done | sort -u); do
        nets=$(for c in $SUITE; do IFS=: read -r n b p l u <<<"$c"; [ "$p:$l" = "$mode" ] && echo -n "$(peer_name $(basename $n .json)):$b${u:+:train},"; done)
        late "suite peer $mode" && continue
        stamp "suite peer $mode: ${nets%,}"
        PYTHONUNBUFFERED=1 timeout ${PEER_S:-420} python3 bench/peer_pytorch.py "$RES/suitepeer_${mode/:/_}.json" --layers '' \
            --nets "${nets%,}" --modes ${mode%%:*} --layouts ${mode##*:} ${SUITE_COMPILE---compile} --compile-modes ${SUITE_COMPILE_MODES:-default} \
            --graph-dir "$RES/graphs" 2>&1 \
            | tee "$RES/suitepeer_${mode/:/_}.out" | grep -v '^{' | tail -3
    done
    python3 scripts/suite-summary.py "$RES" | tee "$RES/suite_summary.md" ;;
*) echo "gpu-bench: unknown section '$sec' (nets, layers, profiles, peer, diag, suite)"; exit 2 ;;
esac
done
