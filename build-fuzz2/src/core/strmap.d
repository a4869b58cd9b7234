build-fuzz2/src/core/strmap.o: src/core/strmap.c src/core/strmap.h \
  src/core/net.h include/convbench.h

src/core/strmap.h:

src/core/net.h:

include/convbench.h:
