# Simulated qwen3_next_mtp.py override (test/sim): the recipe bind-mounts this over vLLM's own module.
MTP_OVERRIDE = "qwen3-next-mtp-sim"
