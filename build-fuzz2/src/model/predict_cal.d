build-fuzz2/src/model/predict_cal.o: src/model/predict_cal.c \
  src/model/model.h include/convbench.h src/cpu/kernels.h

src/model/model.h:

include/convbench.h:

src/cpu/kernels.h:
