build-fuzz2/src/bench/train.o: src/bench/train.c src/bench/train.h \
  include/convbench.h src/data/idx.h src/bench/stats.h src/core/net.h

src/bench/train.h:

include/convbench.h:

src/data/idx.h:

src/bench/stats.h:

src/core/net.h:
