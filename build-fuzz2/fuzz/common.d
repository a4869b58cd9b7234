build-fuzz2/fuzz/common.o: fuzz/common.c fuzz/common.h \
  include/convbench.h src/model/model.h src/cpu/kernels.h \
  src/core/json.h

fuzz/common.h:

include/convbench.h:

src/model/model.h:

src/cpu/kernels.h:

src/core/json.h:
