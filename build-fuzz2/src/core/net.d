build-fuzz2/src/core/net.o: src/core/net.c src/core/net.h \
  include/convbench.h src/core/limits.h src/core/strmap.h

src/core/net.h:

include/convbench.h:

src/core/limits.h:

src/core/strmap.h:
