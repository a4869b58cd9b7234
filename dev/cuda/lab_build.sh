# Sourced by the dev/cuda/*_lab.sh scripts on the GPU machine: CUDA_HOME, tag_of (a variant's -D
# flags as a file-name tag) and lab_build NAME, which builds dev/cuda/NAME.cu once for each of
# VARIANTS (comma-separated -D flags, "-" for none; in parallel) into /tmp/NAME_TAG, keeping a
# binary built before when NOBUILD=1.
CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
tag_of() { echo "$1" | tr -c 'A-Za-z0-9_\n' '_'; }
lab_build() {
    local v flags
    for v in ${VARIANTS:--}; do
        flags=$([ "$v" = - ] || echo "$v" | tr ',' ' ')
        [ "${NOBUILD:-0}" = 1 ] && [ -x "/tmp/$1_$(tag_of "$v")" ] && continue # (built before: BUILD_ONLY=1)
        nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude $flags "dev/cuda/$1.cu" -L"$CUDA_HOME/lib64" \
            -L"$CUDA_HOME/lib" -Xlinker -rpath,"$CUDA_HOME/lib64:$CUDA_HOME/lib" -lcudnn -o "/tmp/$1_$(tag_of "$v")" &
    done
    wait
}
