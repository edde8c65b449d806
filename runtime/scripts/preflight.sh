# preflight: not written yet
pulse_fail 1 "preflight: not implemented yet"
