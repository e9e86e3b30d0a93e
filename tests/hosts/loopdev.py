"""An ext4 filesystem on a loop device, so sysfs work touches a real block device."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from app.exercises.powercut import detach
from tests.hosts.util import sh


@dataclass
class LoopFs:
    """An image file attached to a loop device, formatted ext4 and mounted."""

    image: Path
    mountpoint: Path
    device: str = ""
    size_mb: int = 512
    direct_io: bool = False

    @property
    def name(self) -> str:
        """The kernel name, e.g. loop3."""
        return Path(self.device).name

    @property
    def queue(self) -> Path:
        """The device's sysfs queue directory."""
        return Path("/sys/block") / self.name / "queue"

    def attach(self) -> None:
        """Create, attach, format and mount."""
        with open(self.image, "wb") as fh:
            fh.truncate(self.size_mb * 1024 * 1024)
        argv = ["losetup", "--find", "--show"]
        if self.direct_io:
            argv.append("--direct-io=on")
        self.device = sh(*argv, str(self.image)).strip()
        sh("mkfs.ext4", "-q", "-F", "-L", "innotune-test", self.device)
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        sh("mount", "-o", "noatime", self.device, str(self.mountpoint))

    def detach(self) -> None:
        """Unmount and detach, even after a failed test (lazy unmount as a last resort)."""
        if self.mountpoint.is_mount():
            if subprocess.run(["umount", str(self.mountpoint)], capture_output=True).returncode:
                subprocess.run(["umount", "-l", str(self.mountpoint)], capture_output=True)
        if self.device:
            detach(self.device, self.image)  # waits until the kernel let go of it
            self.device = ""
        self.image.unlink(missing_ok=True)
