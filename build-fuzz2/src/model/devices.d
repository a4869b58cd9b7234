build-fuzz2/src/model/devices.o: src/model/devices.c src/model/model.h \
  include/convbench.h src/cpu/kernels.h src/core/json.h \
  src/core/limits.h src/core/net.h

src/model/model.h:

include/convbench.h:

src/cpu/kernels.h:

src/core/json.h:

src/core/limits.h:

src/core/net.h:
