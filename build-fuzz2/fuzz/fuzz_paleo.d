build-fuzz2/fuzz/fuzz_paleo.o: fuzz/fuzz_paleo.c fuzz/common.h \
  include/convbench.h src/model/model.h src/cpu/kernels.h

fuzz/common.h:

include/convbench.h:

src/model/model.h:

src/cpu/kernels.h:
