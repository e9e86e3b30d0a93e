"""InnoTune: tune MySQL and MariaDB write performance, safely."""

__version__ = "0.1.0"
APP_NAME = "InnoTune"
