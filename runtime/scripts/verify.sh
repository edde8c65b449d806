# verify: not written yet
pulse_fail 1 "verify: not implemented yet"
