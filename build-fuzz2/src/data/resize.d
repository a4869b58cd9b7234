build-fuzz2/src/data/resize.o: src/data/resize.c src/data/idx.h \
  include/convbench.h src/core/net.h

src/data/idx.h:

include/convbench.h:

src/core/net.h:
