# memory: one sample of MemAvailable against the gate (the caller polls). vm.watermark_scale_factor is reported
# because a higher factor lowers MemAvailable for the same free memory. Input: PULSE_GATE_GIB.
# Record: memory{memAvailableKiB,gateGiB,watermarkScaleFactor,ok}. Exit 13 while below the gate.
kib=$(awk '$1 == "MemAvailable:" { print $2; exit }' /proc/meminfo)
[[ $kib =~ ^[0-9]+$ ]] || pulse_fail 1 'no MemAvailable line in /proc/meminfo'
wsf=$(cat /proc/sys/vm/watermark_scale_factor 2>/dev/null || echo null)
ok=$(awk -v k="$kib" -v g="$PULSE_GATE_GIB" 'BEGIN { print (k >= g * 1048576) ? "true" : "false" }')
pulse_record memory memAvailableKiB:="$kib" gateGiB:="$PULSE_GATE_GIB" watermarkScaleFactor:="$wsf" ok:="$ok"
[[ $ok == true ]] || exit "$PULSE_EXIT_NOT_READY"
