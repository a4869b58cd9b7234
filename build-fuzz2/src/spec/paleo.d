build-fuzz2/src/spec/paleo.o: src/spec/paleo.c src/core/net.h \
  include/convbench.h src/core/json.h src/core/limits.h \
  src/core/strmap.h

src/core/net.h:

include/convbench.h:

src/core/json.h:

src/core/limits.h:

src/core/strmap.h:
