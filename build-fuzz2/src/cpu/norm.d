build-fuzz2/src/cpu/norm.o: src/cpu/norm.c src/cpu/kernels.h

src/cpu/kernels.h:
