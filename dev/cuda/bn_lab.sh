#!/usr/bin/env bash
# On the GPU machine: dev/cuda/bn_lab.cu (the own NHWC batch norm against memory speed and cuDNN's
# Ex batch norm on ResNet-50's shapes) built with norm_fmt.cu's policy as it is and in VARIANTS
# (each a comma-separated list of -D flags, "-" for none; built in parallel), run one after
# another at BATCHES and PRECS, on SHAPES (HxWxC,...; ResNet-50's where unset) in FORMS (periodic,
# the default, and/or one: one channel a thread where C is not a multiple of the vector); output
# under ${OUT:-lab-out}.
#   VARIANTS="- -DBN_MIN_BLOCKS=4" bash dev/cuda/bn_lab.sh
#   SHAPES=90x90x33,45x45x323 BATCHES=192 FORMS="periodic one" bash dev/cuda/bn_lab.sh
# BUILD_ONLY=1 builds and stops; NOBUILD=1 runs what was built.
set -u
OUT=${OUT:-lab-out}
mkdir -p "$OUT"
. "$(dirname "$0")/lab_build.sh"
lab_build bn_lab
[ "${BUILD_ONLY:-0}" = 1 ] && exit 0
for v in ${VARIANTS:--}; do
    tag=$(tag_of "$v")
    [ -x /tmp/bn_lab_$tag ] || { echo "build $v failed"; continue; }
    for b in ${BATCHES:-64}; do
        for prec in ${PRECS:-bf16}; do
            for form in ${FORMS:-periodic}; do
                f="$OUT/bn_lab_${tag}_${b}_${prec}_$form.txt"
                echo "== variant $v, batch $b, $prec, $form"
                timeout 60 /tmp/bn_lab_$tag $b $prec "${SHAPES:--}" $form > "$f" 2>&1
                tail -1 "$f"
            done
        done
    done
done
