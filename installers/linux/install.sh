#!/bin/sh
# Install InnoTune from this unpacked tarball.
#
#   ./install.sh              for you only: ~/.local/opt/innotune, ~/.local/bin/innotune,
#                             ~/.local/share/applications and ~/.local/share/icons
#   sudo ./install.sh --system  for everyone: /opt/innotune, /usr/local/bin/innotune,
#                             /usr/share/applications and /usr/share/icons
#   ./install.sh --uninstall  (or --system --uninstall) removes what the same mode installed
#
# DESTDIR=/some/root puts everything under that root (for packagers and tests).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
mode=user
action=install
for arg in "$@"; do
	case "$arg" in
	--system) mode=system ;;
	--user) mode=user ;;
	--uninstall) action=uninstall ;;
	-h | --help)
		sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "install.sh: unknown option '$arg' (try --help)" >&2
		exit 2
		;;
	esac
done

root=${DESTDIR:-}
if [ "$mode" = system ]; then
	app_dir=$root/opt/innotune
	bin_dir=$root/usr/local/bin
	share=$root/usr/share
	if [ -z "$root" ] && [ "$(id -u)" != 0 ]; then
		echo "install.sh: --system writes to /opt and /usr; run it with sudo." >&2
		exit 1
	fi
else
	: "${HOME:?install.sh: HOME is not set}"
	app_dir=$root$HOME/.local/opt/innotune
	bin_dir=$root$HOME/.local/bin
	share=$root${XDG_DATA_HOME:-$HOME/.local/share}
fi
sizes="16 24 32 48 64 128 256 512"

refresh_caches() {
	# Menus and icon themes pick the new files up without a new login, where these exist.
	if [ -z "$root" ]; then
		command -v update-desktop-database >/dev/null 2>&1 &&
			update-desktop-database -q "$share/applications" 2>/dev/null || true
		command -v gtk-update-icon-cache >/dev/null 2>&1 &&
			gtk-update-icon-cache -q -t "$share/icons/hicolor" 2>/dev/null || true
	fi
	return 0
}

if [ "$action" = uninstall ]; then
	rm -rf "$app_dir"
	[ -L "$bin_dir/innotune" ] && rm -f "$bin_dir/innotune"
	rm -f "$share/applications/innotune.desktop" "$share/icons/hicolor/scalable/apps/innotune.svg"
	for s in $sizes; do rm -f "$share/icons/hicolor/${s}x${s}/apps/innotune.png"; done
	refresh_caches
	echo "InnoTune removed ($mode install). Your data (~/.local/share/InnoTune) is kept."
	exit 0
fi

[ -x "$here/innotune" ] || {
	echo "install.sh: run me from the unpacked tarball (no ./innotune next to me)." >&2
	exit 1
}

# A fresh copy: files of an older version must not linger among the new ones.
mkdir -p "$(dirname "$app_dir")"
tmp="$app_dir.new.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
cp -R "$here/innotune" "$here/_internal" "$tmp/"
rm -rf "$app_dir"
mv "$tmp" "$app_dir"

mkdir -p "$bin_dir" "$share/applications" "$share/icons/hicolor/scalable/apps"
exe=${app_dir#"$root"}/innotune
ln -sfn "$exe" "$bin_dir/innotune"
for s in $sizes; do
	mkdir -p "$share/icons/hicolor/${s}x${s}/apps"
	cp "$here/share/icons/hicolor/${s}x${s}/apps/innotune.png" "$share/icons/hicolor/${s}x${s}/apps/"
done
cp "$here/share/icons/hicolor/scalable/apps/innotune.svg" "$share/icons/hicolor/scalable/apps/"
# The menu entry names the installed program by its full path: ~/.local/bin is not on the
# PATH of every desktop session.
sed -e "s|^Exec=.*|Exec=$exe|" -e "s|^TryExec=.*|TryExec=$exe|" \
	"$here/share/applications/innotune.desktop" >"$share/applications/innotune.desktop"
chmod 0644 "$share/applications/innotune.desktop"
refresh_caches

echo "InnoTune installed in $app_dir ($mode install)."
echo "  - start it from the applications menu, or run: ${bin_dir#"$root"}/innotune"
case ":${PATH:-}:" in
*":${bin_dir#"$root"}:"*) ;;
*) echo "  - ${bin_dir#"$root"} is not on your PATH; add it, or use the full path above." ;;
esac

# The window needs a few system libraries PyInstaller does not bundle (Qt's xcb plug-in).
missing=""
for lib in libxcb-cursor.so.0 libxkbcommon-x11.so.0 libxcb-icccm.so.4 libxcb-keysyms.so.1 \
	libxcb-shape.so.0 libxcb-render-util.so.0 libxcb-image.so.0 libEGL.so.1 libfontconfig.so.1; do
	if command -v ldconfig >/dev/null 2>&1 || [ -x /sbin/ldconfig ]; then
		PATH="$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null | grep -q " $lib " || missing="$missing $lib"
	fi
done
if [ -n "$missing" ]; then
	echo "  - the window needs these system libraries, which are missing:$missing"
	echo "    Debian/Ubuntu: sudo apt install libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 \\"
	echo "      libxcb-keysyms1 libxcb-shape0 libxcb-render-util0 libxcb-image0 libegl1 libfontconfig1"
fi
echo "  - check the installation any time with: innotune --self-test"
