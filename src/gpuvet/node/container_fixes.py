"""What to do where the container layer's GPU set-up failed inside WSL2 (FX68F, issue 46): the container's GPU
comes through the Windows driver and WSL's kernel there, so the Linux host's fixes (reload the driver, read the
kernel log for Xids) do not apply. Merged into vendor_tools.APP_ERROR_FIX."""

CONTAINER_FIX = {
    "container_cli_driver_wsl": "inside WSL2 the container's GPU comes through the Windows driver: run nvidia-smi in "
                                "WSL itself (not in a container) and nvidia-smi.exe on Windows; update the Windows "
                                "NVIDIA driver to one with WSL support and WSL (wsl --update; Windows 10 21H2 or later, "
                                "Windows 11), install no Linux NVIDIA driver inside WSL (it must use /usr/lib/wsl/lib), "
                                "and update the NVIDIA Container Toolkit",
}
