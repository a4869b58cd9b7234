# compute-sanitizer on the final commit: memcheck over cuDNN's and the storages' small cases, and
# the FFT algorithm alone under memcheck and initcheck (memcheck runs of the whole own-kernel set
# saw fft-cufft's backward off by 4.5e-3 on one shape, with no memcheck error). Logs under $OUT/san/.
#   bash dev/gpu-sanitize.sh COMMIT
set -u; . scripts/device-env.sh; B=build-gpu; D=$OUT/san; mkdir -p $D
make -j16 BUILD=$B COMMIT=$1 all > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
S="timeout ${SAN_S:-240} compute-sanitizer --print-limit 20"
$S --tool memcheck $B/tests/test_gpu --backends cudnn-small > $D/memcheck_cudnn-small.log 2>&1 &
$S --tool memcheck $B/tests/test_gpu --part storage-small > $D/memcheck_storage-small.log 2>&1 &
CB_TEST_ALGOS=fft-cufft $S --tool memcheck $B/tests/test_gpu --backends cuda-small > $D/memcheck_fft.log 2>&1 &
CB_TEST_ALGOS=fft-cufft $S --tool initcheck $B/tests/test_gpu --backends cuda-small > $D/initcheck_fft.log 2>&1 &
CB_TEST_ALGOS=fft-cufft timeout 120 $B/tests/test_gpu --backends cuda-small > $D/plain_fft.log 2>&1 &
wait
for f in $D/*.log; do echo "$(basename $f .log): $(grep -E '^[0-9]+ passed|ERROR SUMMARY' $f | tr '\n' ' ')"; grep -E '^FAIL' $f | head -4; grep -E '^=========' $f | grep -v SUMMARY | head -6; done
