build-fuzz2/src/bench/env.o: src/bench/env.c src/bench/report.h \
  include/convbench.h

src/bench/report.h:

include/convbench.h:
