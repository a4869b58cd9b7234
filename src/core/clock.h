// The host's monotonic clock, for the CPU backends' timers and the tools.
#ifndef CB_CORE_CLOCK_H
#define CB_CORE_CLOCK_H

double cb_now_ms(void); // monotonic host clock, ms

#endif
