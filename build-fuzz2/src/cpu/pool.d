build-fuzz2/src/cpu/pool.o: src/cpu/pool.c src/cpu/kernels.h

src/cpu/kernels.h:
