build-fuzz2/src/model/calshapes.o: src/model/calshapes.c \
  src/model/model.h include/convbench.h src/cpu/kernels.h

src/model/model.h:

include/convbench.h:

src/cpu/kernels.h:
