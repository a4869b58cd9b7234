build-fuzz2/src/cpu/elementwise.o: src/cpu/elementwise.c \
  src/cpu/kernels.h

src/cpu/kernels.h:
