build-fuzz2/src/cpu/backend.o: src/cpu/backend.c src/core/backend.h \
  include/convbench.h src/cpu/kernels.h src/bench/stats.h

src/core/backend.h:

include/convbench.h:

src/cpu/kernels.h:

src/bench/stats.h:
