build-fuzz2/src/core/weights.o: src/core/weights.c src/core/net.h \
  include/convbench.h

src/core/net.h:

include/convbench.h:
