#!/usr/bin/env bash
# Installs moto's EC2 server, which the AWS provisioner's tests and benchmarks run against, in a
# Python venv at a pinned version under .tools/ (npm test and npm run bench run it; the demo does not).
# The wrapper reports that version, so a later run skips the install in a fraction of a second.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools/bin"
log() { printf 'setup-moto: %s\n' "$*" >&2; }

moto_version="5.2.5"
moto_wrapper="$tools/bin/moto_server"
if [ "$("$moto_wrapper" --version 2>/dev/null)" != "$moto_version" ]; then
  command -v python3 >/dev/null || { log "python3 is needed to install moto (the EC2 emulator)"; exit 1; }
  log "installing moto[server] $moto_version into .tools/moto (first time only; about a minute)"
  rm -rf "$tools/moto" "$moto_wrapper"
  python3 -m venv "$tools/moto"
  "$tools/moto/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$moto_version" >&2
  cat >"$moto_wrapper" <<SH
#!/usr/bin/env bash
# moto's server from .tools/moto; \`moto_server --version\` prints the installed moto version.
if [ "\${1:-}" = "--version" ]; then
  exec "$tools/moto/bin/python" -c 'import importlib.metadata as m; print(m.version("moto"))'
fi
exec "$tools/moto/bin/moto_server" "\$@"
SH
  chmod +x "$moto_wrapper"
fi
log "ready: moto $("$moto_wrapper" --version)"
