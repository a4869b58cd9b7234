build-fuzz2/src/model/fit.o: src/model/fit.c src/model/model.h \
  include/convbench.h src/cpu/kernels.h src/core/net.h

src/model/model.h:

include/convbench.h:

src/cpu/kernels.h:

src/core/net.h:
