build-fuzz2/src/model/algos.o: src/model/algos.c src/model/model.h \
  include/convbench.h src/cpu/kernels.h

src/model/model.h:

include/convbench.h:

src/cpu/kernels.h:
