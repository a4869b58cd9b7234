build-fuzz2/src/model/simulate.o: src/model/simulate.c src/model/model.h \
  include/convbench.h src/cpu/kernels.h

src/model/model.h:

include/convbench.h:

src/cpu/kernels.h:
