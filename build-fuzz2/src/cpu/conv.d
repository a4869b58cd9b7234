build-fuzz2/src/cpu/conv.o: src/cpu/conv.c src/cpu/kernels.h

src/cpu/kernels.h:
