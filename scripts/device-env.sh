# Sourced on the GPU machine (`. scripts/device-env.sh`): its image lacks the cJSON, OpenBLAS and
# zlib headers and the Fashion-MNIST package, so a carried .devpack/ (ignored by git) supplies
# them: deps.tar.xz (a .deps/{include,lib} tree) and fashion-mnist/*.gz. Make it here with
#   mkdir -p .devpack/fashion-mnist && cp /usr/share/datasets/fashion-mnist/*.gz .devpack/fashion-mnist/
#   tar -cJf .devpack/deps.tar.xz .deps      # .deps: headers and libraries copied from Debian
#                                            # (cJSON, OpenBLAS, zlib, protobuf-c, SQLite)
#   mkdir -p .devpack/gen && cp build/gen/onnx.pb-c.[ch] .devpack/gen/
# and name .devpack in the device call's carry. The device takes 64 MiB in all (the tracked tree
# with what is carried): where the whole .devpack no longer fits beside the tree, carry
# .devpack/deps.tar.xz and .devpack/gen alone; only the data set's users (the ECE408 lab, `infer`,
# `train` on Fashion-MNIST) need fashion-mnist/, and without it they skip.
if [ ! -d .deps ] && [ -f .devpack/deps.tar.xz ]; then tar -xJf .devpack/deps.tar.xz; fi
if [ -d .deps ]; then
    export CPATH="$PWD/.deps/include${CPATH:+:$CPATH}" LIBRARY_PATH="$PWD/.deps/lib${LIBRARY_PATH:+:$LIBRARY_PATH}"
    export LD_LIBRARY_PATH="$PWD/.deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ -d .devpack/fashion-mnist ]; then export CB_FASHION_DATA="$PWD/.devpack/fashion-mnist"; fi
# the ONNX reader's protobuf-c code, generated here from libonnx-dev's onnx.proto (the image has
# neither): .devpack/gen/onnx.pb-c.{c,h} from build/gen, copied into the device build's gen folder
if [ -d .devpack/gen ]; then mkdir -p "${B:-build-gpu}/gen" && cp .devpack/gen/onnx.pb-c.* "${B:-build-gpu}/gen/"; fi
