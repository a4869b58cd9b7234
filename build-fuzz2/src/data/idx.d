build-fuzz2/src/data/idx.o: src/data/idx.c src/data/idx.h \
  include/convbench.h src/core/limits.h src/core/net.h

src/data/idx.h:

include/convbench.h:

src/core/limits.h:

src/core/net.h:
