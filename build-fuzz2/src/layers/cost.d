build-fuzz2/src/layers/cost.o: src/layers/cost.c include/convbench.h

include/convbench.h:
