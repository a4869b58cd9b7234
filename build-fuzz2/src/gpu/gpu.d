build-fuzz2/src/gpu/gpu.o: src/gpu/gpu.c
