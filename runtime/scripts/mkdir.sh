# mkdir: not written yet
pulse_fail 1 "mkdir: not implemented yet"
