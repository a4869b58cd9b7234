build-fuzz2/src/core/exec.o: src/core/exec.c src/core/backend.h \
  include/convbench.h src/core/net.h src/bench/stats.h

src/core/backend.h:

include/convbench.h:

src/core/net.h:

src/bench/stats.h:
