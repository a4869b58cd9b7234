build-fuzz2/src/core/json.o: src/core/json.c src/core/json.h \
  include/convbench.h src/core/limits.h src/core/net.h

src/core/json.h:

include/convbench.h:

src/core/limits.h:

src/core/net.h:
