#!/bin/sh
# Build InnoTune.app and a disk image on macOS (12 or later): dist/innotune-<version>-macos-<arch>.dmg
#
# Run from anywhere in the checkout, with a Python 3.11+ from python.org or Homebrew:
#   python3 -m venv .venv && .venv/bin/pip install -e '.[dist]' && sh installers/macos/build.sh
# The spec's BUNDLE step writes dist/InnoTune.app with its Info.plist. Set CODESIGN_IDENTITY
# ("Developer ID Application: ...") to sign for distribution; without it the app is signed
# ad hoc, which runs on the machine that built it (others must right-click > Open once).
set -eu

cd "$(dirname "$0")/../.."
python=${1:-.venv/bin/python}  # the venv with PyInstaller
version=$("$python" -c 'import app; print(app.__version__)')
arch=$(uname -m)

"$python" -m PyInstaller --noconfirm --clean --log-level WARN \
	--distpath dist --workpath build/pyinstaller installers/innotune.spec

codesign --force --deep --options runtime --sign "${CODESIGN_IDENTITY:--}" dist/InnoTune.app
dist/InnoTune.app/Contents/MacOS/innotune --self-test

dmg=dist/innotune-$version-macos-$arch.dmg
rm -f "$dmg"
stage=$(mktemp -d)
cp -R dist/InnoTune.app "$stage/"
ln -s /Applications "$stage/Applications"
hdiutil create -volname "InnoTune $version" -srcfolder "$stage" -ov -format UDZO "$dmg"
rm -rf "$stage"
echo "built $dmg"
