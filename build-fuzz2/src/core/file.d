build-fuzz2/src/core/file.o: src/core/file.c src/core/net.h \
  include/convbench.h

src/core/net.h:

include/convbench.h:
