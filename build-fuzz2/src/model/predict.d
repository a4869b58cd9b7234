build-fuzz2/src/model/predict.o: src/model/predict.c src/model/model.h \
  include/convbench.h src/cpu/kernels.h

src/model/model.h:

include/convbench.h:

src/cpu/kernels.h:
