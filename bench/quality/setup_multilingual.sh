#!/usr/bin/env bash
# Install the Debian packages the multilingual quality corpus is built from (build_multilingual.py).
# Usage: bench/quality/setup_multilingual.sh        (as root; a no-op when all are installed)
# Translated man pages (zh_CN/zh_TW, ja, ru, de), the Debian Reference in Simplified and
# Traditional Chinese, Japanese, German and English, fortune files (en, de, ru, zh), and
# OpenCC (bench/writing_standards.py converts Simplified texts to Traditional with it).
# Nothing else is downloaded: the translated package summaries come from the AppStream data
# apt already keeps under /var/lib/apt/lists (refreshed by `apt-get update`).
set -euo pipefail
PKGS=(
  manpages-zh manpages-ja manpages-ru manpages-de
  debian-reference-zh-cn debian-reference-zh-tw debian-reference-ja
  debian-reference-de debian-reference-en
  fortunes fortunes-de fortunes-ru fortunes-zh
  opencc
  groff-base
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "multilingual sources: all ${#PKGS[@]} packages installed"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "missing packages (run as root to install): ${missing[*]}" >&2
  exit 2
fi
# manpages and docs are excluded by some minimal images: make sure dpkg keeps them
if grep -qs 'path-exclude=/usr/share/man' /etc/dpkg/dpkg.cfg.d/* 2>/dev/null; then
  echo "warning: dpkg excludes /usr/share/man on this machine (/etc/dpkg/dpkg.cfg.d)" >&2
fi
ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
echo "multilingual sources: installed ${missing[*]}"
