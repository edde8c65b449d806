# stop: not written yet
pulse_fail 1 "stop: not implemented yet"
