# start: not written yet
pulse_fail 1 "start: not implemented yet"
