build-fuzz2/src/cpu/fc.o: src/cpu/fc.c src/cpu/kernels.h

src/cpu/kernels.h:
