# memory: not written yet
pulse_fail 1 "memory: not implemented yet"
