build-fuzz2/src/bench/stats.o: src/bench/stats.c src/bench/stats.h

src/bench/stats.h:
