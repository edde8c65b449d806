# write-env: not written yet
pulse_fail 1 "write-env: not implemented yet"
