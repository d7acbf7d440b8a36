"""`gpuvet doctor`: ordered troubleshooting. Playbooks (data) name the checks in the order an
experienced engineer would run them; checks (code) gather typed evidence and confirm or rule
out causes; the first confirmed cause is the answer (or all of them with --all)."""
