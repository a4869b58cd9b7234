build-fuzz2/src/cpu/ref.o: src/cpu/ref.c src/cpu/kernels.h \
  src/cpu/ref_impl.h

src/cpu/kernels.h:

src/cpu/ref_impl.h:
