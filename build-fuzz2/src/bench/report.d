build-fuzz2/src/bench/report.o: src/bench/report.c src/bench/report.h \
  include/convbench.h src/core/net.h

src/bench/report.h:

include/convbench.h:

src/core/net.h:
