#!/bin/sh
# Build the Linux tarball: dist/innotune-<version>-linux-<arch>.tar.gz (make dist runs this).
#
# The frozen program (PyInstaller, onedir) plus the freedesktop files and install.sh. Build on
# the oldest distribution you support: the bundle needs at least the glibc it was built with.
set -eu

cd "$(dirname "$0")/../.."
python=${1:-.venv/bin/python}  # the venv with PyInstaller (make dist passes it)
version=$("$python" -c 'import app; print(app.__version__)')
arch=$(uname -m)
name=innotune-$version-linux-$arch
stage=dist/$name

"$python" -m PyInstaller --noconfirm --clean --log-level WARN \
	--distpath dist --workpath build/pyinstaller installers/innotune.spec

rm -rf "$stage" "$stage.tar.gz"
mkdir -p "$stage/share/applications" "$stage/share/icons/hicolor/scalable/apps"
cp -R dist/innotune/innotune dist/innotune/_internal "$stage/"
cp installers/linux/install.sh "$stage/"
cp installers/linux/innotune.desktop "$stage/share/applications/"
cp resources/icons/innotune.svg "$stage/share/icons/hicolor/scalable/apps/"
for s in 16 24 32 48 64 128 256 512; do
	mkdir -p "$stage/share/icons/hicolor/${s}x${s}/apps"
	cp "resources/icons/innotune-$s.png" "$stage/share/icons/hicolor/${s}x${s}/apps/innotune.png"
done
cat >"$stage/README.txt" <<TXT
InnoTune $version for Linux ($arch)

Run it in place:      ./innotune            (the wizard)   ./innotune --help   (the command line)
Install for you:      ./install.sh          (~/.local; remove with ./install.sh --uninstall)
Install for everyone: sudo ./install.sh --system   (/opt/innotune, /usr/local/bin, menu entry)
Check it works:       ./innotune --self-test

The window needs these system packages (Debian/Ubuntu names): libxcb-cursor0 libxkbcommon-x11-0
libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-render-util0 libxcb-image0 libegl1 libgl1
libfontconfig1 libdbus-1-3. The command line needs none of them.
TXT
if command -v desktop-file-validate >/dev/null 2>&1; then
	desktop-file-validate "$stage/share/applications/innotune.desktop"
fi
tar -C dist -czf "$stage.tar.gz" "$name"
# The size users download and unpack (tests/frozen checks it: at most 150 MiB and 70 MiB).
mib() { du -s --apparent-size --block-size=1M "$1" | cut -f1; }
echo "built $stage.tar.gz ($(mib "$stage") MiB unpacked, $(mib "$stage.tar.gz") MiB packed)"
