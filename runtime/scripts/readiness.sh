# readiness: not written yet
pulse_fail 1 "readiness: not implemented yet"
